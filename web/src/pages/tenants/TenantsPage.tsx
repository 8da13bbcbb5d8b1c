// Tenants: the tenants the caller can see (admins: create, rename, disable,
// dedicated node pool); for the selected tenant its members (tenant admins
// add, re-role and remove them) and projects (tenant admins create,
// rename, disable). What the server refuses is shown with its reason.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, Empty, Form, Input, Space, Switch, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { tenants, type Tenant } from '../../api/tenants';
import { useAuth } from '../../auth/AuthContext';
import { formatTime } from '../../components/format';
import { showError, showSuccess } from '../../components/notify';
import TenantDetail from './TenantDetail';

/** parseSelector reads "k=v, k2=v2" into labels ({} for blank). */
export function parseSelector(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const [k, ...v] = part.split('=');
    if (k.trim()) out[k.trim()] = v.join('=').trim();
  }
  return out;
}

const showSelector = (sel?: Record<string, string>) =>
  sel && Object.keys(sel).length ? Object.entries(sel).map(([k, v]) => <Tag key={k}>{`${k}=${v}`}</Tag>) : '—';

export default function TenantsPage() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const qc = useQueryClient();
  const admin = user?.role === 'admin';
  const [selected, setSelected] = useState<string | null>(null);
  const [form] = Form.useForm<{ name: string; display_name?: string; pool?: string }>();
  const list = useQuery({ queryKey: ['tenants'], queryFn: tenants.list });
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: ['tenants'] });
    void qc.invalidateQueries({ queryKey: ['my-tenants'] });
  };
  const create = useMutation({
    mutationFn: (v: { name: string; display_name?: string; pool?: string }) =>
      tenants.create({ name: v.name.trim(), display_name: v.display_name?.trim() || undefined, node_selector: parseSelector(v.pool ?? '') }),
    onSuccess: (x) => {
      showSuccess(t('ten.created', { name: x.name }));
      form.resetFields();
      refresh();
    },
    onError: showError,
  });
  const update = useMutation({
    mutationFn: ({ name, patch }: { name: string; patch: Parameters<typeof tenants.update>[1] }) => tenants.update(name, patch),
    onSuccess: (x) => {
      showSuccess(t('ten.updated', { name: x.name }));
      refresh();
    },
    onError: showError,
  });

  const columns: ColumnsType<Tenant> = [
    {
      title: t('ten.name'),
      dataIndex: 'name',
      render: (name: string) => (
        <Button type="link" size="small" data-testid="tenant-open" onClick={() => setSelected(name)}>
          {name}
        </Button>
      ),
    },
    {
      title: t('ten.displayName'),
      dataIndex: 'display_name',
      render: (v: string, x) =>
        admin ? (
          <Typography.Text
            data-testid="tenant-display-name"
            editable={{ onChange: (next) => next !== v && update.mutate({ name: x.name, patch: { display_name: next } }), tooltip: t('ten.rename') }}
          >
            {v}
          </Typography.Text>
        ) : (
          v || '—'
        ),
    },
    {
      title: t('ten.status'),
      dataIndex: 'disabled',
      width: 130,
      render: (off: boolean, x) =>
        admin ? (
          <Switch
            data-testid="tenant-enabled"
            checked={!off}
            checkedChildren={t('ten.enabled')}
            unCheckedChildren={t('ten.disabled')}
            onChange={(on) => update.mutate({ name: x.name, patch: { disabled: !on } })}
          />
        ) : off ? (
          <Tag color="red">{t('ten.disabled')}</Tag>
        ) : (
          <Tag color="green">{t('ten.enabled')}</Tag>
        ),
    },
    { title: t('ten.pool'), dataIndex: 'node_selector', render: showSelector },
    { title: t('ten.myRole'), dataIndex: 'my_role', width: 130, render: (r?: string) => (r ? t(`ten.roles.${r}`) : '—') },
    { title: t('users.createdAt'), dataIndex: 'created_at', width: 180, render: formatTime },
  ];

  return (
    <Space direction="vertical" size="large" style={{ width: '100%' }}>
      <Card title={t('ten.title')}>
        {admin && (
          <Form form={form} layout="inline" onFinish={(v) => create.mutate(v)} style={{ marginBottom: 16, rowGap: 8 }} data-testid="tenant-form">
            <Form.Item name="name" label={t('ten.name')} rules={[{ required: true }]}>
              <Input data-testid="tenant-name" style={{ width: 160 }} />
            </Form.Item>
            <Form.Item name="display_name" label={t('ten.displayName')}>
              <Input data-testid="tenant-display" style={{ width: 160 }} />
            </Form.Item>
            <Form.Item name="pool" label={t('ten.pool')}>
              <Input data-testid="tenant-pool" placeholder={t('ten.poolHint')} style={{ width: 180 }} />
            </Form.Item>
            <Form.Item>
              <Button type="primary" htmlType="submit" data-testid="tenant-create" loading={create.isPending}>
                {t('ten.create')}
              </Button>
            </Form.Item>
          </Form>
        )}
        <Table<Tenant>
          rowKey="name"
          size="middle"
          data-testid="tenant-table"
          columns={columns}
          dataSource={list.data ?? []}
          loading={list.isFetching && !list.data}
          pagination={false}
          locale={{ emptyText: <Empty description={t('ten.empty')} /> }}
        />
      </Card>
      {selected ? <TenantDetail tenant={selected} /> : <Typography.Text type="secondary">{t('ten.select')}</Typography.Text>}
    </Space>
  );
}
