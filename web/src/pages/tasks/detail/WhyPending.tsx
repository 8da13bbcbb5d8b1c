// "Why pending" (GET /tasks/{id}/why): the last failed scheduling cycle of
// a waiting task — per-node reasons grouped by reason with counts, the quota
// message, gang state, preemption, the held placement and the next attempt.
import { useQuery } from '@tanstack/react-query';
import { Alert, Collapse, Descriptions, Empty, Space, Spin, Table, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { sched, type NodeReason } from '../../../api/scheduling';
import { errorText } from '../../../components/notify';
import { formatTime } from '../../../components/format';
import { serverText } from '../../../i18n/server';

export default function WhyPending({ taskId, live }: { taskId: number; live: boolean }) {
  const { t } = useTranslation();
  const { data, error, isLoading } = useQuery({
    queryKey: ['task', taskId, 'why'],
    queryFn: () => sched.why(taskId),
    refetchInterval: live ? 2_000 : false,
    meta: { inlineErrors: true },
  });
  if (isLoading) return <Spin />;
  if (error) return <Alert type="error" showIcon message={errorText(error)} data-testid="why-error" />;
  if (!data) return null;
  const a = data.last_attempt;
  if (!data.pending && !a) return <Empty description={t('sched.why.notPending')} data-testid="why-not-pending" />;
  const groups = Object.entries(a?.by_reason ?? {}).sort((x, y) => y[1] - x[1]);
  const byReason = (reason: string): NodeReason[] => (a?.nodes ?? []).filter((n) => n.reason === reason);
  return (
    <div data-testid="why-pending">
      {!data.pending && <Alert type="info" showIcon message={t('sched.why.lastCycleOnly')} style={{ marginBottom: 12 }} />}
      <Descriptions column={1} size="small" bordered style={{ marginBottom: 12 }}>
        <Descriptions.Item label={t('sched.why.reason')}>
          <span data-testid="why-reason">{serverText(data.reason) || '—'}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('sched.why.summary')}>
          <span data-testid="why-summary">{a?.summary ? serverText(a.summary) : t('sched.why.noCycle')}</span>
        </Descriptions.Item>
        {a && (
          <Descriptions.Item label={t('sched.why.kind')}>
            {a.never_fits ? (
              <Space direction="vertical" size={0} data-testid="why-never-fits">
                <Tag color="red">{t('sched.why.neverFits')}</Tag>
                <Typography.Text type="danger">{serverText(a.never_fits)}</Typography.Text>
                <Typography.Text type="secondary">{t('sched.why.neverFitsHint')}</Typography.Text>
              </Space>
            ) : (
              <Space direction="vertical" size={0} data-testid="why-busy-now">
                <Tag color="orange">{t('sched.why.busyNow')}</Tag>
                <Typography.Text type="secondary">{t('sched.why.busyNowHint')}</Typography.Text>
              </Space>
            )}
          </Descriptions.Item>
        )}
        {a && (
          <Descriptions.Item label={t('sched.why.nodes')}>{t('sched.why.nodesChecked', { n: a.total_nodes })}</Descriptions.Item>
        )}
        {a?.quota && (
          <Descriptions.Item label={t('sched.why.quota')}>
            <Typography.Text type="danger" data-testid="why-quota">
              {serverText(a.quota)}
            </Typography.Text>
          </Descriptions.Item>
        )}
        {a?.gang && (
          <Descriptions.Item label={t('sched.why.gang')}>
            <span data-testid="why-gang">
              {t('sched.why.gangState', { name: a.gang.name, reserved: a.gang.reserved, size: a.gang.size })}
            </span>
          </Descriptions.Item>
        )}
        {a?.preemption && (
          <Descriptions.Item label={t('sched.why.preemption')}>
            <Tag>{a.preemption.mode}</Tag>
            {a.preemption.victims?.length
              ? t('sched.why.victims', { node: a.preemption.node, ids: a.preemption.victims.map((v) => `#${v}`).join(', ') })
              : t('sched.why.noVictims')}
          </Descriptions.Item>
        )}
        {a?.held && (
          <Descriptions.Item label={t('sched.why.held')}>
            {a.held.node}:{' '}
            {a.held.slices.map((s) => `#${s.device_index} ${s.compute_milli / 10}%/${s.memory_mib}MiB ${s.isolation}`).join(', ')}
          </Descriptions.Item>
        )}
        {a && (
          <Descriptions.Item label={t('sched.why.attempts')}>
            {t('sched.why.attemptLine', { n: a.attempts, at: formatTime(a.at) })}
          </Descriptions.Item>
        )}
        <Descriptions.Item label={t('sched.why.next')}>
          <span data-testid="why-next">{a?.next_attempt_at ? formatTime(a.next_attempt_at) : '—'}</span>
        </Descriptions.Item>
        {data.preemptions ? (
          <Descriptions.Item label={t('sched.why.preempted')}>{data.preemptions}</Descriptions.Item>
        ) : null}
      </Descriptions>
      {groups.length > 0 && (
        <>
          <Typography.Title level={5}>{t('sched.why.byReason')}</Typography.Title>
          <Table
            size="small"
            pagination={false}
            rowKey="reason"
            data-testid="why-by-reason"
            dataSource={groups.map(([reason, count]) => ({ reason, count }))}
            columns={[
              { title: t('sched.why.reason'), dataIndex: 'reason', render: (r: string) => serverText(r) },
              { title: t('sched.why.count'), dataIndex: 'count', width: 80 },
            ]}
            expandable={{
              rowExpandable: (r) => byReason(r.reason).length > 0,
              expandedRowRender: (r) => (
                <Collapse
                  ghost
                  size="small"
                  defaultActiveKey={['n']}
                  items={[
                    {
                      key: 'n',
                      label: t('sched.why.nodeList'),
                      children: byReason(r.reason).map((n) => (
                        <div key={`${n.node}-${n.plugin}`}>
                          <Typography.Text code>{n.node}</Typography.Text> <Tag>{n.plugin}</Tag>
                        </div>
                      )),
                    },
                  ]}
                />
              ),
            }}
          />
        </>
      )}
    </div>
  );
}
