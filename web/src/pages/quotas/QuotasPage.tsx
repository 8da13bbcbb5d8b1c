// Quotas: for one tenant (admins pick any, others one of theirs) its own
// quota and its projects', per vendor, each limit beside its live use
// (from the allocation ledger, refreshed every 5 s) and the policy for a
// task over quota (queue or refuse). Cluster admins change any quota;
// tenant admins their projects' quotas within the tenant's, which the
// server enforces: its refusals are shown with their reason.
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, AutoComplete, Button, Card, Empty, Form, InputNumber, Modal, Popconfirm, Progress, Radio, Select, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { quotasApi, type QuotaInput, type QuotaPolicy } from '../../api/quotas';
import type { Quota } from '../../api/scheduling';
import { nodesApi } from '../../api/nodes';
import { tenants } from '../../api/tenants';
import { useAuth } from '../../auth/AuthContext';
import { showError, showSuccess } from '../../components/notify';

type Limit = 'devices' | 'memory_mib' | 'compute_percent';

function UsageBar({ used, limit, testid }: { used: number; limit: number; testid: string }) {
  const { t } = useTranslation();
  if (!limit) {
    return (
      <Typography.Text type="secondary" data-testid={testid}>
        {t('quo.usageUnlimited', { used })}
      </Typography.Text>
    );
  }
  const pct = Math.min(100, Math.round((used / limit) * 100));
  return (
    <div data-testid={testid} data-used={used} data-limit={limit}>
      <Progress percent={pct} size="small" status={used >= limit ? 'exception' : 'normal'} format={() => t('quo.usage', { used, limit })} />
    </div>
  );
}

export default function QuotasPage() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const qc = useQueryClient();
  const admin = user?.role === 'admin';
  const tenantList = useQuery({ queryKey: ['tenants'], queryFn: tenants.list });
  const mine = useQuery({ queryKey: ['my-tenants'], queryFn: tenants.mine });
  const [tenant, setTenant] = useState<string>('');
  useEffect(() => {
    if (tenant || !tenantList.data?.length) return;
    const current = mine.data?.current;
    setTenant(tenantList.data.some((x) => x.name === current) ? current! : tenantList.data[0].name);
  }, [tenant, tenantList.data, mine.data]);
  const selected = tenantList.data?.find((x) => x.name === tenant);
  const tenantAdmin = selected?.my_role === 'tenant-admin';
  const quotas = useQuery({ queryKey: ['tenant-quotas', tenant], queryFn: () => quotasApi.list(tenant), enabled: !!tenant, refetchInterval: 5000 });
  const projects = useQuery({ queryKey: ['tenants', tenant, 'projects'], queryFn: () => tenants.projects(tenant), enabled: !!tenant && (admin || tenantAdmin) });
  const nodes = useQuery({ queryKey: ['nodes'], queryFn: nodesApi.list, enabled: admin || tenantAdmin });
  const vendors = [...new Set((nodes.data?.items ?? []).flatMap((n) => n.vendors))].sort();

  const [editing, setEditing] = useState<Quota | 'new' | null>(null);
  const [form] = Form.useForm<QuotaInput>();
  const refresh = () => void qc.invalidateQueries({ queryKey: ['tenant-quotas', tenant] });
  const save = useMutation({
    mutationFn: (v: QuotaInput) => {
      const body: QuotaInput = { ...v, project: v.project || undefined, vendor: v.vendor?.trim() || undefined };
      return editing === 'new' || !editing ? quotasApi.create(tenant, body) : quotasApi.update(tenant, editing.id, body);
    },
    onSuccess: () => {
      showSuccess(t(editing === 'new' ? 'quo.created' : 'quo.updated'));
      setEditing(null);
      refresh();
    },
    onError: showError,
  });
  const remove = useMutation({
    mutationFn: (id: number) => quotasApi.remove(tenant, id),
    onSuccess: () => {
      showSuccess(t('quo.removed'));
      refresh();
    },
    onError: showError,
  });
  const canEdit = (q: Quota) => admin || (tenantAdmin && q.project !== '');
  const open = (q: Quota | 'new') => {
    setEditing(q);
    form.setFieldsValue(
      q === 'new'
        ? { project: undefined, vendor: '', devices: 0, memory_mib: 0, compute_percent: 0, policy: 'queue' }
        : { project: q.project || undefined, vendor: q.vendor, devices: q.devices, memory_mib: q.memory_mib, compute_percent: q.compute_percent, policy: q.policy },
    );
  };

  const bar = (k: Limit) => (_: unknown, q: Quota) => <UsageBar used={q.used?.[k] ?? 0} limit={q[k]} testid={`quota-usage-${k}`} />;
  const columns: ColumnsType<Quota> = [
    {
      title: t('quo.scope'),
      key: 'scope',
      render: (_, q) =>
        q.project ? <Tag color="blue" data-testid="quota-scope">{t('quo.projectScope', { name: q.project })}</Tag> : <Tag color="purple" data-testid="quota-scope">{t('quo.tenantScope', { name: q.tenant })}</Tag>,
    },
    { title: t('quo.vendor'), dataIndex: 'vendor', width: 110, render: (v: string) => v || t('quo.allVendors') },
    { title: t('quo.devices'), key: 'devices', width: 190, render: bar('devices') },
    { title: t('quo.memory'), key: 'memory', width: 210, render: bar('memory_mib') },
    { title: t('quo.compute'), key: 'compute', width: 190, render: bar('compute_percent') },
    {
      title: t('quo.policy'),
      dataIndex: 'policy',
      width: 90,
      render: (p: QuotaPolicy) => <Tag color={p === 'refuse' ? 'red' : 'gold'} data-testid="quota-policy">{t(`quo.policyShort.${p}`)}</Tag>,
    },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 150,
      render: (_, q) =>
        canEdit(q) ? (
          <Space size={0}>
            <Button size="small" type="link" data-testid="quota-edit" onClick={() => open(q)}>
              {t('quo.edit')}
            </Button>
            <Popconfirm title={t('quo.confirmRemove')} okText={t('common.yes')} cancelText={t('common.no')} onConfirm={() => remove.mutateAsync(q.id)}>
              <Button size="small" type="link" danger data-testid="quota-remove">
                {t('quo.remove')}
              </Button>
            </Popconfirm>
          </Space>
        ) : null,
    },
  ];

  if (tenantList.data && tenantList.data.length === 0) {
    return (
      <Card title={t('quo.title')}>
        <Empty description={t('quo.noTenant')} />
      </Card>
    );
  }
  const limitItem = (name: Limit, label: string, testid: string) => (
    <Form.Item name={name} label={label} extra={t('quo.limitHint')} rules={[{ type: 'number', min: 0 }]}>
      <InputNumber min={0} precision={0} style={{ width: 180 }} data-testid={testid} />
    </Form.Item>
  );
  return (
    <Space direction="vertical" size="large" style={{ width: '100%' }}>
      <Card
        title={t('quo.title')}
        extra={
          <Space>
            <span>{t('quo.tenant')}</span>
            <Select
              data-testid="quota-tenant"
              style={{ width: 220 }}
              placeholder={t('quo.pickTenant')}
              value={tenant || undefined}
              onChange={setTenant}
              options={(tenantList.data ?? []).map((x) => ({ value: x.name, label: `${x.display_name || x.name} (${x.name})` }))}
            />
            {(admin || tenantAdmin) && (
              <Button type="primary" data-testid="quota-add" disabled={!tenant} onClick={() => open('new')}>
                {t('quo.add')}
              </Button>
            )}
          </Space>
        }
      >
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 16 }}
          message={admin ? t('quo.live') : tenantAdmin ? t('quo.tenantAdminHint') : t('quo.readOnly')}
          description={admin ? undefined : t('quo.live')}
        />
        <Table<Quota> rowKey="id" size="small" data-testid="quota-table" columns={columns} dataSource={quotas.data?.items ?? []} loading={quotas.isLoading} pagination={false} />
      </Card>
      <Modal
        open={editing !== null}
        title={editing === 'new' ? t('quo.add') : t('quo.edit')}
        okText={t('quo.save')}
        cancelText={t('common.cancel')}
        confirmLoading={save.isPending}
        okButtonProps={{ 'data-testid': 'quota-save' } as Record<string, string>}
        onOk={() => form.submit()}
        onCancel={() => setEditing(null)}
        forceRender
      >
        <Form form={form} layout="vertical" onFinish={(v) => save.mutate(v)}>
          <Form.Item name="project" label={t('quo.project')} extra={t('quo.projectHint')} rules={[{ required: !admin }]}>
            <Select
              allowClear
              data-testid="quota-project"
              options={(projects.data ?? []).map((p) => ({ value: p.name, label: p.display_name ? `${p.display_name} (${p.name})` : p.name }))}
            />
          </Form.Item>
          <Form.Item name="vendor" label={t('quo.vendor')}>
            <AutoComplete data-testid="quota-vendor" placeholder={t('quo.allVendors')} options={vendors.map((v) => ({ value: v }))} />
          </Form.Item>
          {limitItem('devices', t('quo.devices'), 'quota-devices')}
          {limitItem('memory_mib', t('quo.memory'), 'quota-memory')}
          {limitItem('compute_percent', t('quo.compute'), 'quota-compute')}
          <Form.Item name="policy" label={t('quo.policy')}>
            <Radio.Group data-testid="quota-policy-choice">
              <Radio value="queue" data-testid="quota-policy-queue">
                {t('quo.policies.queue')}
              </Radio>
              <Radio value="refuse" data-testid="quota-policy-refuse">
                {t('quo.policies.refuse')}
              </Radio>
            </Radio.Group>
          </Form.Item>
        </Form>
      </Modal>
    </Space>
  );
}
