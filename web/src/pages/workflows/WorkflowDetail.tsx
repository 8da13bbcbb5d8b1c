// One workflow: state and actions (cancel, retry — optionally from a step —,
// resubmit), the DAG with nodes coloured by state (click: the step's task
// detail and logs in the task drawer), the steps with exit codes, outputs
// and artifacts, the history of workflow and step changes, and the spec.
// It refreshes itself while the workflow has not ended.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Descriptions, Empty, Popconfirm, Select, Space, Spin, Table, Tabs, Tag, Timeline, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { TERMINAL_WORKFLOW, workflows, type WorkflowDetail as Detail, type WorkflowStep } from '../../api/workflows';
import { formatMap, formatTime } from '../../components/format';
import { errorText, showError, showSuccess } from '../../components/notify';
import TaskDrawer from '../tasks/TaskDrawer';
import TaskStateTag from '../tasks/TaskStateTag';
import DagGraph from './DagGraph';
import WorkflowStateTag from './WorkflowStateTag';

function KV({ m }: { m?: Record<string, string> | null }) {
  const xs = formatMap(m ?? undefined);
  if (!xs.length) return <>—</>;
  return (
    <Space size={[4, 4]} wrap>
      {xs.map((x) => (
        <Tag key={x}>{x}</Tag>
      ))}
    </Space>
  );
}

function History({ id, live }: { id: number; live: boolean }) {
  const { t } = useTranslation();
  const { data, isLoading } = useQuery({
    queryKey: ['workflow', id, 'events'],
    queryFn: () => workflows.events(id),
    refetchInterval: live ? 2_000 : false,
  });
  if (isLoading) return <Spin />;
  const items = data?.items ?? [];
  if (!items.length) return <Empty />;
  return (
    <Timeline
      data-testid="wf-events"
      items={items.map((e) => ({
        key: e.id,
        color: e.to === 'failed' ? 'red' : e.to === 'succeeded' ? 'green' : undefined,
        children: (
          <div>
            <Typography.Text strong>
              {e.step || t('wf.workflowEvent')}:{' '}
              {t('wf.transition', {
                from: e.from ? t(`wfState.${e.from}`, { defaultValue: e.from }) : '∅',
                to: t(`wfState.${e.to}`, { defaultValue: e.to }),
              })}
            </Typography.Text>
            <div>
              <Typography.Text type="secondary">
                {formatTime(e.at)}
                {e.actor ? ` · ${t('wf.by', { actor: e.actor })}` : ''}
              </Typography.Text>
            </div>
            {e.reason && <Typography.Text>{e.reason}</Typography.Text>}
          </div>
        ),
      }))}
    />
  );
}

export default function WorkflowDetail({ id, onOpen }: { id: number; onOpen: (id: number) => void }) {
  const { t } = useTranslation();
  const { user } = useAuth();
  const qc = useQueryClient();
  const [taskId, setTaskId] = useState<number | null>(null);
  const [from, setFrom] = useState<string | undefined>();
  const { data: w, isLoading, error } = useQuery({
    queryKey: ['workflow', id],
    queryFn: () => workflows.get(id),
    refetchInterval: (q) => (q.state.data && TERMINAL_WORKFLOW.includes(q.state.data.state) ? 10_000 : 2_000),
  });
  const refresh = (next: Detail) => {
    qc.setQueryData(['workflow', id], next);
    void qc.invalidateQueries({ queryKey: ['workflow', id, 'events'] });
    void qc.invalidateQueries({ queryKey: ['workflows'] });
  };
  const cancel = useMutation({
    mutationFn: () => workflows.cancel(id),
    onSuccess: (d) => {
      showSuccess(t('wf.cancelled', { id }));
      refresh(d);
    },
    onError: showError,
  });
  const retry = useMutation({
    mutationFn: () => workflows.retry(id, from),
    onSuccess: (d) => {
      showSuccess(t('wf.retried', { id }));
      setFrom(undefined);
      refresh(d);
    },
    onError: showError,
  });
  const resubmit = useMutation({
    mutationFn: () => workflows.resubmit(id),
    onSuccess: (d) => {
      showSuccess(t('wf.resubmitted', { id: d.id }));
      void qc.invalidateQueries({ queryKey: ['workflows'] });
      onOpen(d.id);
    },
    onError: showError,
  });

  if (isLoading) return <Spin />;
  if (error || !w) return <Alert type="error" showIcon data-testid="wf-load-error" message={errorText(error)} />;
  const live = !TERMINAL_WORKFLOW.includes(w.state);
  const canAct = atLeast(user?.role, 'user');
  const stepNames = [...new Set(w.steps.map((s) => s.step))];

  const columns: ColumnsType<WorkflowStep> = [
    {
      title: t('wf.step'),
      dataIndex: 'name',
      render: (name: string, s) =>
        s.task_id ? (
          <Typography.Link data-testid="wf-step-link" onClick={() => setTaskId(s.task_id!)}>
            {name}
          </Typography.Link>
        ) : (
          name
        ),
    },
    { title: t('wf.state'), dataIndex: 'state', width: 110, render: (s) => <WorkflowStateTag state={s} /> },
    { title: t('wf.task'), dataIndex: 'task_id', width: 80, render: (v?: number) => (v ? `#${v}` : '—') },
    { title: t('wf.taskState'), dataIndex: 'task_state', width: 110, render: (s) => (s ? <TaskStateTag state={s} /> : '—') },
    { title: t('wf.exitCode'), dataIndex: 'exit_code', width: 90, render: (v?: number | null) => v ?? '—' },
    { title: t('wf.outputs'), dataIndex: 'outputs', render: (m) => <KV m={m} /> },
    { title: t('wf.artifacts'), dataIndex: 'artifacts', render: (m) => <KV m={m} /> },
    { title: t('wf.reason'), dataIndex: 'reason', ellipsis: true },
  ];

  return (
    <Card
      title={
        <Space>
          <span data-testid="wf-name">{w.name}</span>
          <WorkflowStateTag state={w.state} />
        </Space>
      }
      extra={
        canAct && (
          <Space wrap>
            {live && (
              <Popconfirm title={t('wf.confirmCancel', { name: w.name })} okText={t('common.yes')} cancelText={t('common.no')} onConfirm={() => cancel.mutateAsync()}>
                <Button danger data-testid="wf-cancel" loading={cancel.isPending}>
                  {t('wf.cancel')}
                </Button>
              </Popconfirm>
            )}
            {(w.state === 'failed' || w.state === 'cancelled') && (
              <Space.Compact>
                <Select
                  allowClear
                  style={{ width: 200 }}
                  placeholder={t('wf.retryFromHint')}
                  value={from}
                  onChange={setFrom}
                  options={stepNames.map((s) => ({ value: s, label: s }))}
                  data-testid="wf-retry-from"
                />
                <Button data-testid="wf-retry" loading={retry.isPending} onClick={() => retry.mutate()}>
                  {from ? t('wf.retryFrom') : t('wf.retry')}
                </Button>
              </Space.Compact>
            )}
            <Button data-testid="wf-resubmit" loading={resubmit.isPending} onClick={() => resubmit.mutate()}>
              {t('wf.resubmit')}
            </Button>
          </Space>
        )
      }
    >
      <Descriptions size="small" column={3} style={{ marginBottom: 16 }}>
        <Descriptions.Item label={t('wf.id')}>{w.id}</Descriptions.Item>
        <Descriptions.Item label={t('wf.owner')}>{w.owner || w.owner_id}</Descriptions.Item>
        <Descriptions.Item label={t('wf.tenant')}>{[w.tenant, w.project].filter(Boolean).join(' / ') || '—'}</Descriptions.Item>
        <Descriptions.Item label={t('wf.priority')}>{w.priority}</Descriptions.Item>
        <Descriptions.Item label={t('wf.retries')}>{w.generation}</Descriptions.Item>
        <Descriptions.Item label={t('wf.resubmittedFrom')}>
          {w.resubmitted_from ? <Typography.Link onClick={() => onOpen(w.resubmitted_from!)}>#{w.resubmitted_from}</Typography.Link> : '—'}
        </Descriptions.Item>
        <Descriptions.Item label={t('wf.createdAt')}>{formatTime(w.created_at)}</Descriptions.Item>
        <Descriptions.Item label={t('wf.startedAt')}>{formatTime(w.started_at ?? undefined)}</Descriptions.Item>
        <Descriptions.Item label={t('wf.finishedAt')}>{formatTime(w.finished_at ?? undefined)}</Descriptions.Item>
        <Descriptions.Item label={t('wf.reason')} span={3}>
          <span data-testid="wf-reason">{w.reason || '—'}</span>
        </Descriptions.Item>
      </Descriptions>
      <Tabs
        items={[
          {
            key: 'graph',
            label: t('wf.graph'),
            children: (
              <Space direction="vertical" style={{ width: '100%' }}>
                <Typography.Text type="secondary">
                  {t('wf.clickHint')} {t('wf.legend')}
                </Typography.Text>
                <DagGraph steps={w.steps} edges={w.edges} onSelect={(s) => s.task_id && setTaskId(s.task_id)} />
              </Space>
            ),
          },
          {
            key: 'steps',
            label: t('wf.steps'),
            children: <Table<WorkflowStep> rowKey="name" size="small" columns={columns} dataSource={w.steps} pagination={{ pageSize: 50 }} />,
          },
          { key: 'history', label: t('wf.history'), children: <History id={id} live={live} /> },
          {
            key: 'spec',
            label: t('wf.spec'),
            children: w.spec ? (
              <Typography.Paragraph>
                <pre data-testid="wf-spec" style={{ maxHeight: 480, overflow: 'auto' }}>
                  {JSON.stringify(w.spec, null, 2)}
                </pre>
              </Typography.Paragraph>
            ) : (
              <Alert type="info" showIcon message={t('wf.specHidden')} />
            ),
          },
        ]}
      />
      <TaskDrawer taskId={taskId} onClose={() => setTaskId(null)} />
    </Card>
  );
}
