// Alert statistics over the last 30 days: counts by level, by day, by rule
// and by node (ECharts), and the mean time to acknowledge and to resolve.
import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Alert, Card, Col, Row, Statistic } from 'antd';
import { useTranslation } from 'react-i18next';
import * as echarts from 'echarts/core';
import { BarChart, PieChart } from 'echarts/charts';
import { alertsApi } from '../../api/alerts';
import EChart from '../../components/EChart';
import { errorText } from '../../components/notify';
import { formatSeconds } from './LevelTag';

echarts.use([BarChart, PieChart]);

const LEVEL_COLORS: Record<string, string> = { INFO: '#1677ff', WARN: '#fa8c16', ERROR: '#f5222d' };

function bars(data: Record<string, number>, top = 10) {
  const rows = Object.entries(data)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .reverse();
  return {
    tooltip: {},
    grid: { left: 140, right: 20, top: 10, bottom: 20 },
    xAxis: { type: 'value', minInterval: 1 },
    yAxis: { type: 'category', data: rows.map((r) => r[0]) },
    series: [{ type: 'bar', data: rows.map((r) => r[1]) }],
  };
}

export default function StatsTab() {
  const { t } = useTranslation();
  const since = useMemo(() => new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString(), []);
  const q = useQuery({ queryKey: ['alert-stats', since], queryFn: () => alertsApi.stats({ since }), refetchInterval: 30_000 });
  if (q.error) return <Alert type="error" message={errorText(q.error)} />;
  const s = q.data;
  if (!s) return null;
  const byLevel = {
    tooltip: {},
    series: [
      {
        type: 'pie',
        radius: ['40%', '70%'],
        data: Object.entries(s.by_level).map(([k, v]) => ({ name: t(`alerts.levels.${k}`, { defaultValue: k }), value: v, itemStyle: { color: LEVEL_COLORS[k] } })),
      },
    ],
  };
  const byDay = {
    tooltip: { trigger: 'axis' },
    grid: { left: 40, right: 20, top: 10, bottom: 30 },
    xAxis: { type: 'category', data: s.by_day.map((d) => d.day) },
    yAxis: { type: 'value', minInterval: 1 },
    series: [{ type: 'bar', data: s.by_day.map((d) => d.count) }],
  };
  return (
    <Row gutter={[16, 16]} data-testid="alert-stats">
      <Col xs={12} md={6}>
        <Card size="small">
          <Statistic title={`${t('alerts.stats.total')} · ${t('alerts.stats.window')}`} value={s.total} valueRender={(n) => <span data-testid="stats-total">{n}</span>} />
        </Card>
      </Col>
      <Col xs={12} md={6}>
        <Card size="small">
          <Statistic title={t('alerts.stats.open')} value={s.open} />
        </Card>
      </Col>
      <Col xs={12} md={6}>
        <Card size="small">
          <Statistic title={t('alerts.stats.meanAck')} value={formatSeconds(s.mean_ack_seconds)} />
        </Card>
      </Col>
      <Col xs={12} md={6}>
        <Card size="small">
          <Statistic title={t('alerts.stats.meanResolve')} value={formatSeconds(s.mean_resolve_seconds)} />
        </Card>
      </Col>
      <Col xs={24} md={8}>
        <Card size="small" title={t('alerts.stats.byLevel')}>
          <EChart option={byLevel} height={240} />
        </Card>
      </Col>
      <Col xs={24} md={16}>
        <Card size="small" title={t('alerts.stats.byDay')}>
          <EChart option={byDay} height={240} />
        </Card>
      </Col>
      <Col xs={24} md={12}>
        <Card size="small" title={t('alerts.stats.byRule')}>
          <EChart option={bars(s.by_rule)} height={260} />
        </Card>
      </Col>
      <Col xs={24} md={12}>
        <Card size="small" title={t('alerts.stats.byNode')}>
          <EChart option={bars(s.by_node)} height={260} />
        </Card>
      </Col>
    </Row>
  );
}
