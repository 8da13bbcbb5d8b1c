// API keys (operator and above): the caller's keys (admins: every key),
// a new key with a role at most the caller's and an optional lifetime —
// its secret shown once, to copy — and revocation.
import { useState, type HTMLAttributes } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Form, Input, InputNumber, Modal, Popconfirm, Select, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { PlusOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { apiKeys, type ApiKey, type CreatedApiKey, type NewApiKey } from '../../api/apikeys';
import { ROLES, type Role } from '../../api/types';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { formatTime } from '../../components/format';
import { showSuccess } from '../../components/notify';
import { usePagedList } from '../../components/usePagedList';

type State = 'active' | 'revoked' | 'expired';

function keyState(k: ApiKey): State {
  if (k.revoked_at) return 'revoked';
  if (k.expires_at && new Date(k.expires_at).getTime() <= Date.now()) return 'expired';
  return 'active';
}

const STATE_COLOR: Record<State, string> = { active: 'green', revoked: 'default', expired: 'orange' };

interface NewKeyForm {
  name: string;
  role: Role;
  days?: number | null;
}

export default function ApiKeysPage() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const qc = useQueryClient();
  const [form] = Form.useForm<NewKeyForm>();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const { data, isFetching, pagination } = usePagedList<object, ApiKey>('apikeys', apiKeys.list);

  // A key's role is at most the creator's: offer only those.
  const roles = ROLES.filter((r) => atLeast(user?.role, r));

  const create = useMutation({
    mutationFn: (k: NewApiKey) => apiKeys.create(k),
    onSuccess: (k) => {
      setCreating(false);
      form.resetFields();
      setCreated(k);
      showSuccess(t('keys.created', { name: k.name }));
      void qc.invalidateQueries({ queryKey: ['apikeys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (k: ApiKey) => apiKeys.revoke(k.id),
    onSuccess: (_, k) => {
      showSuccess(t('keys.revoked', { name: k.name }));
      void qc.invalidateQueries({ queryKey: ['apikeys'] });
    },
  });

  const submit = (v: NewKeyForm) => {
    const k: NewApiKey = { name: v.name.trim(), role: v.role };
    if (v.days) k.expires_at = new Date(Date.now() + v.days * 86_400_000).toISOString();
    create.mutate(k);
  };

  const columns: ColumnsType<ApiKey> = [
    { title: 'ID', dataIndex: 'id', width: 70 },
    { title: t('keys.name'), dataIndex: 'name', render: (v: string) => <span data-testid="key-name">{v}</span> },
    { title: t('keys.prefix'), dataIndex: 'prefix', render: (v: string) => <Typography.Text code>{`hf_${v}_…`}</Typography.Text> },
    { title: t('keys.role'), dataIndex: 'role', width: 110, render: (r: string) => t(`role.${r}`, { defaultValue: r }) },
    {
      title: t('keys.state'),
      key: 'state',
      width: 100,
      render: (_, k) => (
        <Tag color={STATE_COLOR[keyState(k)]} data-testid="key-state">
          {t(`keys.states.${keyState(k)}`)}
        </Tag>
      ),
    },
    { title: t('keys.createdAt'), dataIndex: 'created_at', width: 170, render: formatTime },
    { title: t('keys.lastUsed'), dataIndex: 'last_used_at', width: 170, render: (v: string | null) => (v ? formatTime(v) : '—') },
    { title: t('keys.expiresAt'), dataIndex: 'expires_at', width: 170, render: (v: string | null) => (v ? formatTime(v) : t('keys.never')) },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 100,
      render: (_, k) =>
        keyState(k) === 'active' && (
          <Popconfirm
            title={t('keys.confirmRevoke', { name: k.name })}
            okText={t('common.yes')}
            cancelText={t('common.no')}
            onConfirm={() => revoke.mutateAsync(k)}
          >
            <Button size="small" type="link" danger data-testid="key-revoke">
              {t('keys.revoke')}
            </Button>
          </Popconfirm>
        ),
    },
  ];

  return (
    <Card
      title={t('keys.title')}
      extra={
        <Button type="primary" icon={<PlusOutlined />} onClick={() => setCreating(true)} data-testid="key-new">
          {t('keys.new')}
        </Button>
      }
    >
      <Typography.Paragraph type="secondary">{t('keys.intro')}</Typography.Paragraph>
      <Table<ApiKey>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={data?.items ?? []}
        loading={isFetching && !data}
        pagination={pagination}
        onRow={(k) => ({ 'data-testid': 'key-row', 'data-name': k.name }) as HTMLAttributes<HTMLElement>}
      />
      <Modal
        open={creating}
        title={t('keys.new')}
        okText={t('common.create')}
        cancelText={t('common.cancel')}
        confirmLoading={create.isPending}
        onOk={() => form.submit()}
        onCancel={() => setCreating(false)}
        okButtonProps={{ 'data-testid': 'key-create' } as Record<string, string>}
        destroyOnHidden
      >
        <Form<NewKeyForm> form={form} layout="vertical" onFinish={submit} initialValues={{ role: roles.includes('user') ? 'user' : roles[0] }}>
          <Form.Item name="name" label={t('keys.name')} rules={[{ required: true, whitespace: true, message: t('keys.required') }]}>
            <Input placeholder={t('keys.namePlaceholder')} maxLength={100} data-testid="key-name-input" />
          </Form.Item>
          <Form.Item name="role" label={t('keys.role')} rules={[{ required: true, message: t('keys.required') }]}>
            <Select options={roles.map((r) => ({ value: r, label: t(`role.${r}`) }))} data-testid="key-role" />
          </Form.Item>
          <Form.Item name="days" label={t('keys.expiresIn')} extra={t('keys.expiresHelp')}>
            <InputNumber min={1} max={3650} precision={0} style={{ width: 160 }} data-testid="key-days" />
          </Form.Item>
        </Form>
      </Modal>
      <Modal
        open={created !== null}
        title={created ? t('keys.created', { name: created.name }) : ''}
        onOk={() => setCreated(null)}
        onCancel={() => setCreated(null)}
        okText={t('keys.done')}
        cancelButtonProps={{ style: { display: 'none' } }}
        okButtonProps={{ 'data-testid': 'key-done' } as Record<string, string>}
      >
        <Alert type="warning" showIcon message={t('keys.shownOnce')} style={{ marginBottom: 12 }} />
        <Typography.Paragraph copyable={{ text: created?.key ?? '' }} code data-testid="key-secret">
          {created?.key}
        </Typography.Paragraph>
      </Modal>
    </Card>
  );
}
