// Dashboard (brief §6 仪表盘): cluster GPUs, free memory, slice utilisation,
// node online rate, task completion, health and fragmentation from
// GET /api/v1/scheduler/summary every 10 s, plus last-hour trend charts from
// the metrics store. Ratios the server reports as null (nothing to divide)
// show as "n/a", never as 0.
import { useCallback } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Alert, Card, Col, Progress, Row, Space, Statistic, Tag, Tooltip, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { nodesApi, type SchedulerSummary } from '../../api/nodes';
import type { Labels } from '../../api/prometheus';
import { errorText } from '../../components/notify';
import { formatTime } from '../../components/format';
import { TASK_STATES } from '../../api/types';
import SeriesChart from '../nodes/SeriesChart';
import ActiveAlertsCard from '../alerts/ActiveAlertsCard';
import { CLUSTER_QUERIES, formatMiB, formatPercent, useRange } from '../nodes/promql';

const HOUR = 3600;

function pct(v: number | null | undefined): number | null {
  return v === null || v === undefined ? null : Math.round(v * 1000) / 10;
}

function RatioCard({ title, value, help, extra, testId }: { title: string; value: number | null; help?: string; extra?: string; testId: string }) {
  const { t } = useTranslation();
  return (
    <Card size="small" data-testid={testId}>
      <Tooltip title={help}>
        <Typography.Text type="secondary">{title}</Typography.Text>
      </Tooltip>
      <div style={{ fontSize: 24, fontWeight: 600, margin: '4px 0' }} data-testid={`${testId}-value`}>
        {value === null ? t('dash.notApplicable') : `${value}%`}
      </div>
      <Progress percent={value ?? 0} showInfo={false} size="small" status={value === null ? 'normal' : undefined} />
      {extra && <Typography.Text type="secondary">{extra}</Typography.Text>}
    </Card>
  );
}

function Summary({ s }: { s: SchedulerSummary }) {
  const { t } = useTranslation();
  const fragPct = pct(s.fragmentation.score) ?? 0;
  return (
    <Row gutter={[16, 16]}>
      <Col xs={24} md={12} xl={8}>
        <Card size="small" title={t('dash.gpus')} data-testid="dash-gpus">
          <Row>
            <Col span={8}>
              <Statistic title={t('dash.gpuTotal')} value={s.gpus.total} valueRender={(n) => <span data-testid="dash-gpu-total">{n}</span>} />
            </Col>
            <Col span={8}>
              <Statistic title={t('dash.gpuOnline')} value={s.gpus.online} valueRender={(n) => <span data-testid="dash-gpu-online">{n}</span>} />
            </Col>
            <Col span={8}>
              <Statistic title={t('dash.gpuBusy')} value={s.gpus.busy} valueRender={(n) => <span data-testid="dash-gpu-busy">{n}</span>} />
            </Col>
          </Row>
        </Card>
      </Col>
      <Col xs={24} md={12} xl={8}>
        <Card size="small" title={t('dash.freeMemory')} data-testid="dash-memory">
          <Statistic value={formatMiB(s.memory_mib.free)} />
          <Typography.Text type="secondary">{t('dash.ofTotal', { total: formatMiB(s.memory_mib.total) })}</Typography.Text>
        </Card>
      </Col>
      <Col xs={24} md={12} xl={8}>
        <Card size="small" title={t('dash.scheduler')} data-testid="dash-scheduler">
          <Space direction="vertical" size={2}>
            {/* holder is "<host>/<instance id>": the host is what a user recognises. */}
            <Tooltip title={t('dash.holderId', { holder: s.scheduler.holder })}>
              {s.scheduler.leader ? (
                <Tag color="green" data-testid="dash-leader">
                  {t('dash.leader', { host: s.scheduler.holder.split('/')[0] || s.scheduler.holder })}
                </Tag>
              ) : (
                <Tag data-testid="dash-leader">{t('dash.noLeader')}</Tag>
              )}
            </Tooltip>
            {s.scheduler.last_tick && (
              <Typography.Text type="secondary">{t('dash.lastTick', { at: formatTime(s.scheduler.last_tick) })}</Typography.Text>
            )}
          </Space>
        </Card>
      </Col>
      <Col xs={24} sm={12} xl={6}>
        <RatioCard title={t('dash.sliceUtil')} help={t('dash.sliceUtilHelp')} value={pct(s.slice_utilization)} testId="dash-slice-util" />
      </Col>
      <Col xs={24} sm={12} xl={6}>
        <RatioCard
          title={t('dash.nodeOnline')}
          value={pct(s.nodes.online_rate)}
          extra={t('dash.nodesOnline', { online: s.nodes.online, total: s.nodes.total })}
          testId="dash-node-online"
        />
      </Col>
      <Col xs={24} sm={12} xl={6}>
        <RatioCard title={t('dash.completion')} help={t('dash.completionHelp')} value={pct(s.task_completion_rate)} testId="dash-completion" />
      </Col>
      <Col xs={24} sm={12} xl={6}>
        <Card size="small" data-testid="dash-frag">
          <Tooltip title={t('dash.fragHelp')}>
            <Typography.Text type="secondary">{t('dash.fragmentation')}</Typography.Text>
          </Tooltip>
          <div style={{ fontSize: 24, fontWeight: 600, margin: '4px 0' }} data-testid="dash-frag-value">
            {s.fragmentation.score.toFixed(2)}
          </div>
          <Progress percent={fragPct} showInfo={false} size="small" status={fragPct > 30 ? 'exception' : 'normal'} />
          <Typography.Text type="secondary">{t('dash.devicesState', s.fragmentation)}</Typography.Text>
        </Card>
      </Col>
      <Col xs={24} md={12}>
        <Card size="small" title={t('dash.health')} data-testid="dash-health">
          <Space wrap>
            {Object.entries(s.nodes.health).length === 0 && <Typography.Text type="secondary">{t('dash.noNodes')}</Typography.Text>}
            {Object.entries(s.nodes.health).map(([word, n]) => (
              <Tag key={word} color={word === 'ok' ? 'green' : 'orange'} data-testid="dash-health-word" data-word={word}>
                {t(`nodes.healthWord.${word}`, { defaultValue: word })}: {n}
              </Tag>
            ))}
          </Space>
        </Card>
      </Col>
      <Col xs={24} md={12}>
        <Card size="small" title={t('dash.tasks')} data-testid="dash-tasks">
          <Space wrap>
            {TASK_STATES.map((st) => (
              <Tag key={st}>
                {t(`taskState.${st}`)}: {s.tasks[st] ?? 0}
              </Tag>
            ))}
          </Space>
        </Card>
      </Col>
    </Row>
  );
}

export default function DashboardPage() {
  const { t } = useTranslation();
  const summary = useQuery({
    queryKey: ['scheduler', 'summary'],
    queryFn: nodesApi.summary,
    refetchInterval: 10_000,
    meta: { inlineErrors: true },
  });
  const gpuUtil = useRange(CLUSTER_QUERIES.gpuUtil, HOUR, 30_000);
  const nodesUp = useRange(CLUSTER_QUERIES.nodesUp, HOUR, 30_000);
  const frag = useRange(CLUSTER_QUERIES.frag, HOUR, 30_000);
  const byVendor = useCallback((m: Labels) => m.hw_vendor ?? '—', []);
  const upName = useCallback(() => t('dash.gpuOnline'), [t]);
  const fragName = useCallback(() => t('dash.fragmentation'), [t]);
  const count = useCallback((v: number) => v.toFixed(0), []);
  const ratio = useCallback((v: number) => v.toFixed(2), []);

  return (
    <Space direction="vertical" size="middle" style={{ width: '100%' }}>
      <Card
        title={t('dash.title')}
        extra={<Typography.Text type="secondary">{t('dash.autoRefresh')}</Typography.Text>}
      >
        {summary.error && <Alert type="error" showIcon message={errorText(summary.error)} data-testid="dash-error" />}
        {summary.data && summary.data.nodes.total === 0 && (
          <Alert type="info" showIcon message={t('dash.noNodes')} style={{ marginBottom: 16 }} />
        )}
        {summary.data && <Summary s={summary.data} />}
      </Card>
      <ActiveAlertsCard />
      <Row gutter={[16, 16]}>
        <Col xs={24} xl={12}>
          <SeriesChart title={t('dash.chartGpuUtil')} query={gpuUtil} legend={byVendor} format={formatPercent} yMax={100} emptyText={t('mon.empty')} testId="dash-chart-gpu" />
        </Col>
        <Col xs={24} md={12} xl={6}>
          <SeriesChart title={t('dash.chartNodesUp')} query={nodesUp} legend={upName} format={count} integer emptyText={t('mon.empty')} testId="dash-chart-nodes" />
        </Col>
        <Col xs={24} md={12} xl={6}>
          <SeriesChart title={t('dash.chartFrag')} query={frag} legend={fragName} format={ratio} yMax={1} emptyText={t('mon.empty')} testId="dash-chart-frag" />
        </Col>
      </Row>
    </Space>
  );
}
