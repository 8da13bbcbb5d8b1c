// Task list: filters (state, label, keyword, time range), server-side
// pagination, a detail drawer (also reachable as /tasks/:id), cancel with
// confirmation, and the task creation wizard (role user and above).
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { Button, Card, DatePicker, Form, Input, Popconfirm, Select, Space, Table, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { Dayjs } from 'dayjs';
import { useTranslation } from 'react-i18next';
import type { QoS } from '../../api/scheduling';
import QosTag from '../slices/QosTag';
import { tasks, type TaskFilter } from '../../api/endpoints';
import { TASK_STATES, type Task } from '../../api/types';
import { formatTime, rangeQuery } from '../../components/format';
import { usePagedList } from '../../components/usePagedList';
import TaskDrawer from './TaskDrawer';
import TaskStateTag from './TaskStateTag';
import { useCancelTask, useCanCancel } from './useCancelTask';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import TaskWizard from './wizard/TaskWizard';

interface FilterValues {
  state?: string[];
  label?: string;
  q?: string;
  range?: [Dayjs | null, Dayjs | null] | null;
}

type Filter = Omit<TaskFilter, 'limit' | 'offset'>;

function toFilter(v: FilterValues): Filter {
  return {
    state: v.state?.length ? v.state.join(',') : undefined,
    label: v.label?.trim() || undefined,
    q: v.q?.trim() || undefined,
    ...rangeQuery(v.range),
  };
}

export default function TasksPage() {
  const { t } = useTranslation();
  const [form] = Form.useForm<FilterValues>();
  const { id: routeId } = useParams();
  const navigate = useNavigate();
  const { user } = useAuth();
  const [wizardOpen, setWizardOpen] = useState(false);
  // The open task lives in the URL so a detail can be linked and reloaded.
  const openId = routeId && /^\d+$/.test(routeId) ? Number(routeId) : null;
  const setOpenId = (id: number | null) => navigate(id === null ? '/tasks' : `/tasks/${id}`);
  const cancel = useCancelTask();
  const canCancel = useCanCancel();

  const { data, isFetching, refetch, apply, pagination } = usePagedList<Filter, Task>('tasks', tasks.list, {
    refetchInterval: 5_000, // follow tasks the scheduler is placing and running
  });

  const columns: ColumnsType<Task> = [
    { title: t('tasks.id'), dataIndex: 'id', width: 80 },
    {
      title: t('tasks.name'),
      dataIndex: 'name',
      ellipsis: true,
      render: (name: string, task) => (
        <Typography.Link data-testid="task-name" onClick={() => setOpenId(task.id)}>
          {name}
        </Typography.Link>
      ),
    },
    { title: t('tasks.state'), dataIndex: 'state', width: 110, render: (s) => <TaskStateTag state={s} /> },
    { title: t('tasks.owner'), dataIndex: 'owner', width: 120 },
    {
      title: t('tasks.devices'),
      key: 'devices',
      width: 170,
      render: (_, task) =>
        task.device_count ? `${task.device_count} × ${task.memory_mib ?? 0} MiB · ${task.compute_percent ?? 0}%` : '—',
    },
    { title: t('tasks.qos'), dataIndex: 'qos', width: 90, render: (q?: QoS) => <QosTag qos={q} /> },
    { title: t('tasks.priority'), dataIndex: 'priority', width: 90, render: (p?: number) => p ?? 0 },
    { title: t('tasks.createdAt'), dataIndex: 'created_at', width: 180, render: formatTime },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 170,
      render: (_, task) => (
        <Space>
          <Button size="small" type="link" onClick={() => setOpenId(task.id)}>
            {t('tasks.detail')}
          </Button>
          {canCancel(task) && (
            <Popconfirm
              title={t('tasks.confirmCancel', { name: task.name })}
              okText={t('common.yes')}
              cancelText={t('common.no')}
              onConfirm={() => cancel.mutateAsync(task)}
            >
              <Button size="small" type="link" danger data-testid="task-cancel">
                {t('tasks.cancelTask')}
              </Button>
            </Popconfirm>
          )}
        </Space>
      ),
    },
  ];

  return (
    <Card title={t('tasks.title')} extra={
        <Space>
          {atLeast(user?.role, 'user') && (
            <Button type="primary" onClick={() => setWizardOpen(true)} data-testid="task-new">
              {t('sched.wizard.open')}
            </Button>
          )}
          <Button onClick={() => refetch()} data-testid="task-refresh">
            {t('common.refresh')}
          </Button>
        </Space>
      }>
      <Form<FilterValues> form={form} layout="inline" onFinish={(v) => apply(toFilter(v))} style={{ marginBottom: 16, rowGap: 8 }}>
        <Form.Item name="state" label={t('tasks.state')}>
          <Select
            data-testid="task-state-filter"
            mode="multiple"
            allowClear
            style={{ minWidth: 200 }}
            placeholder={t('common.all')}
            options={TASK_STATES.map((s) => ({ value: s, label: t(`taskState.${s}`) }))}
          />
        </Form.Item>
        <Form.Item name="label" label={t('tasks.label')}>
          <Input allowClear placeholder={t('tasks.labelPlaceholder')} style={{ width: 160 }} />
        </Form.Item>
        <Form.Item name="q" label={t('common.keyword')}>
          <Input allowClear placeholder={t('tasks.searchPlaceholder')} style={{ width: 180 }} data-testid="task-q" />
        </Form.Item>
        <Form.Item name="range" label={t('common.timeRange')}>
          <DatePicker.RangePicker showTime allowEmpty={[true, true]} />
        </Form.Item>
        <Form.Item>
          <Space>
            <Button type="primary" htmlType="submit" data-testid="task-search">
              {t('common.search')}
            </Button>
            <Button
              onClick={() => {
                form.resetFields();
                apply({});
              }}
            >
              {t('common.reset')}
            </Button>
          </Space>
        </Form.Item>
      </Form>
      <Table<Task>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={data?.items ?? []}
        loading={isFetching && !data}
        pagination={pagination}
      />
      <TaskDrawer taskId={openId} onClose={() => setOpenId(null)} />
      <TaskWizard
        open={wizardOpen}
        onClose={() => setWizardOpen(false)}
        onCreated={(id) => {
          setWizardOpen(false);
          void refetch();
          setOpenId(id);
        }}
      />
    </Card>
  );
}
