// Defragmentation planner: GET /scheduler/defrag proposes moves that free
// whole devices; operators may ask the server to execute them (POST
// {"execute":true}), which it does only when its configuration allows —
// otherwise its refusal is shown here as it was sent.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Descriptions, Empty, Popconfirm, Space, Table, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { sched, type DefragMove } from '../../api/scheduling';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { errorText } from '../../components/notify';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export default function DefragPanel() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const qc = useQueryClient();
  const plan = useQuery({ queryKey: ['defrag'], queryFn: sched.defragPlan, meta: { inlineErrors: true } });
  const exec = useMutation({
    mutationFn: sched.defragExecute,
    onError: () => undefined, // shown inline below instead of a toast
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['slices'] });
      void qc.invalidateQueries({ queryKey: ['defrag'] });
    },
  });
  const p = plan.data?.plan;
  const pol = plan.data?.policy;
  const policyText = () => {
    if (!pol?.automatic) return t('sched.defrag.manualOnly');
    const quiet = pol.quiet_hours.length
      ? t('sched.defrag.quiet', { hours: pol.quiet_hours.join(', '), tz: pol.time_zone })
      : t('sched.defrag.noQuiet');
    const limit = pol.max_moves_per_hour ? t('sched.defrag.perHour', { n: pol.max_moves_per_hour }) : t('sched.defrag.noLimit');
    return `${t('sched.defrag.auto', { threshold: pct(pol.threshold) })} · ${limit} · ${quiet}${pol.quiet_now ? ` (${t('sched.defrag.quietNow')})` : ''}`;
  };
  const moves = (p?.freed ?? []).flatMap((f) => f.moves.map((m) => ({ ...m, freed: `${f.node} #${f.device_index}` })));
  return (
    <Card
      title={t('sched.defrag.title')}
      data-testid="defrag-panel"
      extra={
        <Space>
          <Button onClick={() => plan.refetch()} loading={plan.isFetching} data-testid="defrag-plan">
            {t('sched.defrag.plan')}
          </Button>
          {atLeast(user?.role, 'operator') && (
            <Popconfirm
              title={t('sched.defrag.confirm')}
              okText={t('common.yes')}
              cancelText={t('common.no')}
              onConfirm={() => exec.mutate()}
            >
              <Button danger loading={exec.isPending} data-testid="defrag-execute">
                {t('sched.defrag.execute')}
              </Button>
            </Popconfirm>
          )}
        </Space>
      }
    >
      {plan.error && <Alert type="error" showIcon message={errorText(plan.error)} style={{ marginBottom: 12 }} />}
      {exec.error && (
        <Alert
          type="error"
          showIcon
          data-testid="defrag-error"
          message={t('sched.defrag.refused')}
          description={errorText(exec.error)}
          style={{ marginBottom: 12 }}
        />
      )}
      {exec.data && (
        <Alert
          type="success"
          showIcon
          data-testid="defrag-done"
          message={t('sched.defrag.requeued', { ids: (exec.data.requeued ?? []).map((i) => `#${i}`).join(', ') || '—' })}
          style={{ marginBottom: 12 }}
        />
      )}
      {p && (
        <>
          <Descriptions size="small" column={3} style={{ marginBottom: 12 }}>
            <Descriptions.Item label={t('sched.defrag.before')}>{pct(p.score_before)}</Descriptions.Item>
            <Descriptions.Item label={t('sched.defrag.after')}>{pct(p.score_after)}</Descriptions.Item>
            <Descriptions.Item label={t('sched.defrag.allowed')}>
              {plan.data?.execute_allowed ? <Tag color="green">{t('common.yes')}</Tag> : <Tag>{t('sched.defrag.notAllowed')}</Tag>}
            </Descriptions.Item>
            <Descriptions.Item label={t('sched.defrag.workloadBefore')}>
              {(p.workload_fragmentation_before ?? 0).toFixed(1)}%
            </Descriptions.Item>
            <Descriptions.Item label={t('sched.defrag.workloadAfter')}>
              {(p.workload_fragmentation_after ?? 0).toFixed(1)}%
            </Descriptions.Item>
            <Descriptions.Item label={t('sched.defrag.policy')}>
              <span data-testid="defrag-policy">{policyText()}</span>
            </Descriptions.Item>
          </Descriptions>
          {moves.length ? (
            <Table<DefragMove & { freed: string }>
              size="small"
              pagination={false}
              rowKey={(m) => `${m.task_id}-${m.freed}`}
              dataSource={moves}
              data-testid="defrag-moves"
              columns={[
                { title: t('sched.defrag.frees'), dataIndex: 'freed' },
                { title: t('sched.slices.task'), dataIndex: 'task_id', render: (id: number) => `#${id}` },
                { title: t('sched.defrag.from'), render: (_, m) => `${m.from_node} #${m.from_device_index}` },
                { title: t('sched.defrag.to'), render: (_, m) => `${m.to_node} #${m.to_device_index}` },
              ]}
            />
          ) : (
            <Empty description={t('sched.defrag.nothing')} />
          )}
        </>
      )}
    </Card>
  );
}
