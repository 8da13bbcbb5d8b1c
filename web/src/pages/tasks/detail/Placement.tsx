// Placement of a task: its live slices from the ledger (GET /slices) while
// it holds devices, otherwise the placement recorded in its last
// "scheduled" event (the ledger is released when a task ends).
import { useQuery } from '@tanstack/react-query';
import { Alert, Descriptions, Empty, Table, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { sched, type Device, type Slice } from '../../../api/scheduling';
import { tasks } from '../../../api/endpoints';
import type { Task } from '../../../api/types';
import { errorText } from '../../../components/notify';
import QosTag from '../../slices/QosTag';

interface Row {
  key: string;
  device: Device;
  slice: Slice;
}

export default function Placement({ task, live }: { task: Task; live: boolean }) {
  const { t } = useTranslation();
  const slices = useQuery({
    queryKey: ['slices'],
    queryFn: sched.slices,
    refetchInterval: live ? 3_000 : false,
    meta: { inlineErrors: true },
  });
  const events = useQuery({ queryKey: ['task', task.id, 'events'], queryFn: () => tasks.events(task.id) });
  const rows: Row[] = [];
  for (const d of slices.data?.items ?? []) {
    for (const s of d.slices) {
      if (s.task_id === task.id) rows.push({ key: `${d.node}/${d.index}/${rows.length}`, device: d, slice: s });
    }
  }
  const placed = [...(events.data?.items ?? [])].reverse().find((e) => e.to === 'scheduled');
  return (
    <div data-testid="task-placement">
      {slices.error && <Alert type="error" showIcon message={errorText(slices.error)} style={{ marginBottom: 12 }} />}
      <Descriptions column={1} size="small" bordered style={{ marginBottom: 12 }}>
        <Descriptions.Item label={t('tasks.node')}>
          <span data-testid="placement-node">{task.node_id || '—'}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('sched.detail.placedAs')}>{placed?.reason || '—'}</Descriptions.Item>
      </Descriptions>
      {rows.length ? (
        <Table<Row>
          size="small"
          pagination={false}
          rowKey="key"
          dataSource={rows}
          columns={[
            { title: t('sched.slices.node'), render: (_, r) => r.device.hostname || r.device.node },
            {
              title: t('sched.slices.device'),
              render: (_, r) => `#${r.device.index} ${r.device.vendor} ${r.device.model}`,
            },
            { title: t('sched.slices.memory'), render: (_, r) => `${r.slice.memory_mib} / ${r.device.memory_mib} MiB` },
            { title: t('sched.slices.compute'), render: (_, r) => `${r.slice.compute_percent}%` },
            { title: t('sched.slices.qos'), render: (_, r) => <QosTag qos={r.slice.qos} /> },
            {
              title: t('sched.slices.isolation'),
              render: (_, r) => (
                <>
                  <Typography.Text code>{r.slice.isolation}</Typography.Text>
                  {r.slice.profile && <Tag>{r.slice.profile}</Tag>}
                  {r.slice.draining && <Tag color="orange">{t('sched.slices.draining')}</Tag>}
                </>
              ),
            },
          ]}
        />
      ) : (
        <Empty description={live ? t('sched.detail.noSlicesYet') : t('sched.detail.released')} />
      )}
    </div>
  );
}
