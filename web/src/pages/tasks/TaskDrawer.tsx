// Task detail: the submitted spec, runtime fields and the state-transition
// timeline from GET /tasks/{id}/events. Every value is rendered as text.
import { useQuery } from '@tanstack/react-query';
import { Button, Descriptions, Drawer, Empty, Popconfirm, Space, Spin, Tag, Timeline, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { tasks } from '../../api/endpoints';
import type { Task } from '../../api/types';
import { formatMap, formatTime } from '../../components/format';
import TaskStateTag from './TaskStateTag';
import { useCancelTask, useCanCancel } from './useCancelTask';

function Tags({ values }: { values: string[] }) {
  if (!values.length) return <>—</>;
  return (
    <Space size={[4, 4]} wrap>
      {values.map((v) => (
        <Tag key={v}>{v}</Tag>
      ))}
    </Space>
  );
}

function Spec({ task }: { task: Task }) {
  const { t } = useTranslation();
  const argv = (xs?: string[] | null) => (xs?.length ? <Typography.Text code>{xs.join(' ')}</Typography.Text> : '—');
  return (
    <Descriptions column={1} size="small" bordered title={t('tasks.spec')}>
      <Descriptions.Item label={t('tasks.name')}>
        <span data-testid="drawer-task-name">{task.name}</span>
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.state')}>
        <TaskStateTag state={task.state} />
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.owner')}>{task.owner || task.owner_id}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.command')}>{argv(task.command)}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.image')}>{task.image || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.args')}>{argv(task.args)}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.env')}>
        <Tags values={formatMap(task.env)} />
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.deviceCount')}>{task.device_count ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.memory')}>{task.memory_mib ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.compute')}>{task.compute_percent ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.vendor')}>{task.vendor || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.models')}>
        <Tags values={task.models ?? []} />
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.qos')}>{task.qos || 'bronze'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.priority')}>{task.priority ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.timeout')}>{task.timeout_seconds || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.retries')}>{task.max_retries ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.attempt')}>{task.attempt ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.labels')}>
        <Tags values={formatMap(task.labels)} />
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.tenant')}>
        {[task.tenant, task.project].filter(Boolean).join(' / ') || '—'}
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.node')}>{task.node_id || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.exitCode')}>{task.exit_code ?? '—'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.reason')}>{task.reason || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.createdAt')}>{formatTime(task.created_at)}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.startedAt')}>{formatTime(task.started_at)}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.finishedAt')}>{formatTime(task.finished_at)}</Descriptions.Item>
    </Descriptions>
  );
}

function Events({ taskId }: { taskId: number }) {
  const { t } = useTranslation();
  const { data, isLoading } = useQuery({
    queryKey: ['task', taskId, 'events'],
    queryFn: () => tasks.events(taskId),
  });
  if (isLoading) return <Spin />;
  const items = data?.items ?? [];
  if (!items.length) return <Empty description={t('tasks.noEvents')} />;
  return (
    <Timeline
      data-testid="task-events"
      items={items.map((e) => ({
        key: e.id,
        children: (
          <div>
            <Typography.Text strong>
              {t('tasks.transition', {
                from: e.from ? t(`taskState.${e.from}`, { defaultValue: e.from }) : '∅',
                to: t(`taskState.${e.to}`, { defaultValue: e.to }),
              })}
            </Typography.Text>
            <div>
              <Typography.Text type="secondary">
                {formatTime(e.at)}
                {e.actor ? ` · ${t('tasks.by', { actor: e.actor })}` : ''}
              </Typography.Text>
            </div>
            {e.reason && <div>{e.reason}</div>}
          </div>
        ),
      }))}
    />
  );
}

export default function TaskDrawer({ taskId, onClose }: { taskId: number | null; onClose: () => void }) {
  const { t } = useTranslation();
  const cancel = useCancelTask();
  const canCancel = useCanCancel();
  const { data: task, isLoading } = useQuery({
    queryKey: ['task', taskId],
    queryFn: () => tasks.get(taskId as number),
    enabled: taskId !== null,
  });

  return (
    <Drawer
      open={taskId !== null}
      onClose={onClose}
      width={640}
      title={task ? `#${task.id} ${task.name}` : t('tasks.detail')}
      destroyOnHidden
      extra={
        task &&
        canCancel(task) && (
          <Popconfirm
            title={t('tasks.confirmCancel', { name: task.name })}
            okText={t('common.yes')}
            cancelText={t('common.no')}
            onConfirm={() => cancel.mutateAsync(task)}
          >
            <Button danger data-testid="drawer-cancel">
              {t('tasks.cancelTask')}
            </Button>
          </Popconfirm>
        )
      }
    >
      {isLoading || !task ? (
        <Spin />
      ) : (
        <Space direction="vertical" size="large" style={{ width: '100%' }}>
          <Spec task={task} />
          <div>
            <Typography.Title level={5}>{t('tasks.events')}</Typography.Title>
            <Events taskId={task.id} />
          </div>
        </Space>
      )}
    </Drawer>
  );
}
