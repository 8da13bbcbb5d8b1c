// Task detail: the submitted spec, runtime fields, placement (slices),
// the state-transition timeline from GET /tasks/{id}/events, logs and "why
// pending". Every value is rendered as text. While the task is not finished
// (and shortly after, while its last output is shipped) it refreshes itself.
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Alert, Button, Descriptions, Drawer, Empty, Popconfirm, Space, Spin, Tabs, Tag, Timeline, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { shellQuote } from '../nodes/deployCommand';
import QosTag from '../slices/QosTag';
import { serverText } from '../../i18n/server';
import { tasks } from '../../api/endpoints';
import { errorText } from '../../components/notify';
import { TERMINAL_STATES, type Task } from '../../api/types';
import { formatMap, formatTime } from '../../components/format';
import TaskStateTag from './TaskStateTag';
import { useCancelTask, useCanCancel } from './useCancelTask';
import Placement from './detail/Placement';
import TaskLogs from './detail/TaskLogs';
import WhyPending from './detail/WhyPending';
import PendingBanner from './detail/PendingBanner';

const FOLLOW_AFTER_END_MS = 30_000;

/** following: the task may still change (or ship output) — poll it. */
function following(task: Task): boolean {
  if (!TERMINAL_STATES.includes(task.state)) return true;
  const end = task.finished_at ? Date.parse(task.finished_at) : NaN;
  return Number.isFinite(end) && Date.now() - end < FOLLOW_AFTER_END_MS;
}

/** isPreemption tells a requeue by preemption or defragmentation from other transitions. */
function isPreemption(reason?: string): boolean {
  return !!reason && /preempted|defragmentation/i.test(reason);
}

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
  const argv = (xs?: string[] | null) =>
    xs?.length ? (
      <Typography.Text code copyable data-testid="drawer-argv">
        {xs.map(shellQuote).join(' ')}
      </Typography.Text>
    ) : (
      '—'
    );
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
      <Descriptions.Item label={t('tasks.qos')}>
        <QosTag qos={task.qos} />
        {task.allow_best_effort && (
          <Tag data-testid="drawer-best-effort" style={{ marginLeft: 8 }}>
            {t('tasks.bestEffortAllowed')}
          </Tag>
        )}
      </Descriptions.Item>
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
      <Descriptions.Item label={t('tasks.reason')}>
        <span data-testid="drawer-reason">{serverText(task.reason) || '—'}</span>
      </Descriptions.Item>
      <Descriptions.Item label={t('tasks.createdAt')}>{formatTime(task.created_at)}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.startedAt')}>{formatTime(task.started_at)}</Descriptions.Item>
      <Descriptions.Item label={t('tasks.finishedAt')}>{formatTime(task.finished_at)}</Descriptions.Item>
    </Descriptions>
  );
}

function Events({ taskId, live }: { taskId: number; live: boolean }) {
  const { t } = useTranslation();
  const { data, isLoading } = useQuery({
    queryKey: ['task', taskId, 'events'],
    queryFn: () => tasks.events(taskId),
    refetchInterval: live ? 2_000 : false,
  });
  if (isLoading) return <Spin />;
  const items = data?.items ?? [];
  if (!items.length) return <Empty description={t('tasks.noEvents')} />;
  return (
    <Timeline
      data-testid="task-events"
      items={items.map((e) => ({
        key: e.id,
        color: isPreemption(e.reason) ? 'red' : e.to === 'failed' ? 'red' : undefined,
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
            {e.reason && (
              <div data-testid="task-event-reason">
                {isPreemption(e.reason) && <Tag color="red">{t('sched.detail.preempted')}</Tag>}
                {serverText(e.reason)}
              </div>
            )}
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
  const { data: task, isLoading, error } = useQuery({
    queryKey: ['task', taskId],
    queryFn: () => tasks.get(taskId as number),
    enabled: taskId !== null,
    refetchInterval: (q) => (q.state.data && following(q.state.data) ? 2_000 : false),
  });
  const live = !!task && following(task);
  const [tab, setTab] = useState('spec');
  useEffect(() => setTab('spec'), [taskId]);
  const pending = task?.state === 'submitted' || task?.state === 'queued';

  return (
    <Drawer
      open={taskId !== null}
      onClose={onClose}
      width={760}
      title={
        task ? (
          <Space>
            <span>{`#${task.id} ${task.name}`}</span>
            <TaskStateTag state={task.state} />
          </Space>
        ) : (
          t('tasks.detail')
        )
      }
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
      {error && !task ? (
        // A task that does not exist (a stale link, a typo in /tasks/:id)
        // or cannot be read: say why instead of spinning forever.
        <Alert type="error" showIcon data-testid="task-load-error" message={errorText(error)} />
      ) : isLoading || !task ? (
        <Spin />
      ) : (
        <Space direction="vertical" size="middle" style={{ width: '100%' }}>
          {task.state === 'failed' && task.reason && (
            <Alert type="error" showIcon data-testid="task-failure-reason" message={t('sched.detail.failedBecause')} description={serverText(task.reason)} />
          )}
          {pending && <PendingBanner taskId={task.id} reason={task.reason} onDetails={() => setTab('why')} />}
          <Tabs
            activeKey={tab}
            onChange={setTab}
            items={[
              {
                key: 'spec',
                label: <span data-testid="task-tab-spec">{t('sched.detail.overview')}</span>,
                children: (
                  <Space direction="vertical" size="large" style={{ width: '100%' }}>
                    <Spec task={task} />
                    <div>
                      <Typography.Title level={5}>{t('tasks.events')}</Typography.Title>
                      <Events taskId={task.id} live={live} />
                    </div>
                  </Space>
                ),
              },
              {
                key: 'placement',
                label: <span data-testid="task-tab-placement">{t('sched.detail.placement')}</span>,
                children: <Placement task={task} live={live} />,
              },
              {
                key: 'logs',
                label: <span data-testid="task-tab-logs">{t('sched.detail.logs')}</span>,
                children: <TaskLogs taskId={task.id} currentAttempt={task.attempt ?? 0} live={live} />,
              },
              {
                key: 'why',
                label: <span data-testid="task-tab-why">{t('sched.detail.why')}</span>,
                children: <WhyPending taskId={task.id} live={pending} />,
              },
            ]}
          />
        </Space>
      )}
    </Drawer>
  );
}
