// Workflows: the list (state and name filters, server-side pagination),
// the editor for a new workflow (role user and above), and one workflow's
// detail at /workflows/:id.
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { Button, Card, Form, Input, Select, Space, Table, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { WORKFLOW_STATES, workflows, type Workflow, type WorkflowFilter } from '../../api/workflows';
import { formatTime } from '../../components/format';
import { usePagedList } from '../../components/usePagedList';
import WorkflowDetail from './WorkflowDetail';
import WorkflowEditor from './WorkflowEditor';
import WorkflowStateTag from './WorkflowStateTag';

type Filter = Omit<WorkflowFilter, 'limit' | 'offset'>;

interface FilterValues {
  state?: string[];
  q?: string;
}

function List({ open }: { open: (id: number) => void }) {
  const { t } = useTranslation();
  const { user } = useAuth();
  const [form] = Form.useForm<FilterValues>();
  const [editorOpen, setEditorOpen] = useState(false);
  const { data, isFetching, refetch, apply, pagination } = usePagedList<Filter, Workflow>('workflows', workflows.list, {
    refetchInterval: 5_000,
  });
  const columns: ColumnsType<Workflow> = [
    { title: t('wf.id'), dataIndex: 'id', width: 80 },
    {
      title: t('wf.name'),
      dataIndex: 'name',
      ellipsis: true,
      render: (name: string, w) => (
        <Typography.Link data-testid="wf-link" onClick={() => open(w.id)}>
          {name}
        </Typography.Link>
      ),
    },
    { title: t('wf.state'), dataIndex: 'state', width: 110, render: (s) => <WorkflowStateTag state={s} /> },
    { title: t('wf.owner'), dataIndex: 'owner', width: 120 },
    { title: t('wf.retries'), dataIndex: 'generation', width: 90 },
    { title: t('wf.createdAt'), dataIndex: 'created_at', width: 180, render: formatTime },
    { title: t('wf.reason'), dataIndex: 'reason', ellipsis: true },
  ];
  return (
    <Card
      title={t('wf.title')}
      extra={
        <Space>
          {atLeast(user?.role, 'user') && (
            <Button type="primary" onClick={() => setEditorOpen(true)} data-testid="wf-new">
              {t('wf.new')}
            </Button>
          )}
          <Button onClick={() => refetch()}>{t('common.refresh')}</Button>
        </Space>
      }
    >
      <Form<FilterValues>
        form={form}
        layout="inline"
        style={{ marginBottom: 16, rowGap: 8 }}
        onFinish={(v) => apply({ state: v.state?.length ? v.state.join(',') : undefined, q: v.q?.trim() || undefined })}
      >
        <Form.Item name="state" label={t('wf.state')}>
          <Select
            mode="multiple"
            allowClear
            style={{ minWidth: 200 }}
            placeholder={t('common.all')}
            options={WORKFLOW_STATES.map((s) => ({ value: s, label: t(`wfState.${s}`) }))}
          />
        </Form.Item>
        <Form.Item name="q" label={t('common.keyword')}>
          <Input allowClear placeholder={t('wf.searchPlaceholder')} style={{ width: 200 }} />
        </Form.Item>
        <Form.Item>
          <Space>
            <Button type="primary" htmlType="submit">
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
      <Table<Workflow> rowKey="id" size="middle" columns={columns} dataSource={data?.items ?? []} loading={isFetching && !data} pagination={pagination} />
      <WorkflowEditor
        open={editorOpen}
        onClose={() => setEditorOpen(false)}
        onCreated={(id) => {
          setEditorOpen(false);
          open(id);
        }}
      />
    </Card>
  );
}

export default function WorkflowsPage() {
  const { t } = useTranslation();
  const { id } = useParams();
  const navigate = useNavigate();
  const open = (wid: number) => navigate(`/workflows/${wid}`);
  if (id && /^\d+$/.test(id)) {
    return (
      <Space direction="vertical" style={{ width: '100%' }}>
        <Button type="link" onClick={() => navigate('/workflows')} data-testid="wf-back">
          ← {t('wf.back')}
        </Button>
        <WorkflowDetail id={Number(id)} onOpen={open} />
      </Space>
    );
  }
  return <List open={open} />;
}
