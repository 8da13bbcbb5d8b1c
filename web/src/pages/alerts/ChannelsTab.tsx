// Notification channels (Alertmanager, signed webhook, DingTalk, WeCom,
// Feishu robots, e-mail) with routing by level and tenant, a test send, and
// the recent deliveries with their status and last error.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, Form, Input, Modal, Popconfirm, Select, Space, Switch, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { ALERT_LEVELS, CHANNEL_TYPES, alertsApi, type Channel, type ChannelSpec, type ChannelType, type Delivery } from '../../api/alerts';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { formatTime } from '../../components/format';
import { showError, showSuccess } from '../../components/notify';

/** fields lists each type's configuration keys (secrets are masked on read). */
const FIELDS: Record<ChannelType, { key: string; label: string; secret?: boolean; required?: boolean }[]> = {
  alertmanager: [{ key: 'url', label: 'url', required: true }, { key: 'username', label: 'username' }, { key: 'password', label: 'password', secret: true }],
  webhook: [{ key: 'url', label: 'url', required: true }, { key: 'secret', label: 'secret', secret: true }],
  dingtalk: [{ key: 'url', label: 'url', required: true }, { key: 'secret', label: 'secret', secret: true }],
  wecom: [{ key: 'url', label: 'url', required: true }],
  feishu: [{ key: 'url', label: 'url', required: true }, { key: 'secret', label: 'secret', secret: true }],
  email: [
    { key: 'smtp_host', label: 'smtpHost', required: true },
    { key: 'from', label: 'from', required: true },
    { key: 'to', label: 'to', required: true },
    { key: 'username', label: 'username' },
    { key: 'password', label: 'password', secret: true },
  ],
};

interface ChannelForm {
  name: string;
  type: ChannelType;
  config: Record<string, string>;
  levels: string[];
  tenant?: string;
  enabled: boolean;
  send_resolved: boolean;
}

function ChannelEditor({ channel, onClose }: { channel: Channel | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [form] = Form.useForm<ChannelForm>();
  const type = Form.useWatch('type', form) ?? channel?.type ?? 'webhook';
  const save = useMutation({
    mutationFn: (c: ChannelSpec) => (channel ? alertsApi.updateChannel(channel.id, c) : alertsApi.createChannel(c)),
    onSuccess: () => {
      showSuccess(t('alerts.channels.saved'));
      void qc.invalidateQueries({ queryKey: ['alert-channels'] });
      onClose();
    },
    onError: showError,
  });
  const initial: ChannelForm = channel
    ? { name: channel.name, type: channel.type, config: channel.config, levels: channel.levels, tenant: channel.tenant, enabled: channel.enabled, send_resolved: channel.send_resolved }
    : { name: '', type: 'webhook', config: {}, levels: [], enabled: true, send_resolved: true };
  return (
    <Modal open width={620} title={t(channel ? 'alerts.channels.edit' : 'alerts.channels.new')} onCancel={onClose} onOk={() => form.submit()} confirmLoading={save.isPending} okButtonProps={{ 'data-testid': 'channel-save' } as Record<string, string>}>
      <Form<ChannelForm>
        form={form}
        layout="vertical"
        initialValues={initial}
        onFinish={(v) => {
          const config: Record<string, string> = {};
          for (const f of FIELDS[v.type]) if (v.config?.[f.key]) config[f.key] = v.config[f.key];
          save.mutate({ name: v.name, type: v.type, config, levels: v.levels as Channel['levels'], tenant: v.tenant ?? '', enabled: v.enabled, send_resolved: v.send_resolved });
        }}
      >
        <Space align="start">
          <Form.Item name="name" label={t('alerts.channels.name')} rules={[{ required: true }]}>
            <Input style={{ width: 200 }} data-testid="channel-name" />
          </Form.Item>
          <Form.Item name="type" label={t('alerts.channels.type')}>
            <Select style={{ width: 200 }} options={CHANNEL_TYPES.map((c) => ({ value: c, label: t(`alerts.channels.types.${c}`) }))} data-testid="channel-type" />
          </Form.Item>
        </Space>
        {FIELDS[type as ChannelType].map((f) => (
          <Form.Item key={f.key} name={['config', f.key]} label={t(`alerts.channels.${f.label}`)} rules={f.required ? [{ required: true }] : []}>
            {f.secret ? <Input.Password autoComplete="new-password" /> : <Input data-testid={`channel-${f.key}`} />}
          </Form.Item>
        ))}
        <Space align="start">
          <Form.Item name="levels" label={t('alerts.channels.levels')}>
            <Select mode="multiple" style={{ width: 220 }} options={ALERT_LEVELS.map((l) => ({ value: l, label: t(`alerts.levels.${l}`) }))} />
          </Form.Item>
          <Form.Item name="tenant" label={t('alerts.tenant')} tooltip={t('alerts.channels.tenantHelp')}>
            <Input style={{ width: 140 }} />
          </Form.Item>
          <Form.Item name="enabled" label={t('alerts.rules.enabled')} valuePropName="checked">
            <Switch />
          </Form.Item>
          <Form.Item name="send_resolved" label={t('alerts.channels.sendResolved')} valuePropName="checked">
            <Switch />
          </Form.Item>
        </Space>
      </Form>
    </Modal>
  );
}

export default function ChannelsTab() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const canEdit = atLeast(user?.role, 'operator');
  const canDelete = atLeast(user?.role, 'admin');
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['alert-channels'], queryFn: alertsApi.channels });
  const deliveries = useQuery({ queryKey: ['alert-deliveries'], queryFn: () => alertsApi.deliveries({ limit: 50 }), refetchInterval: 10_000 });
  const [editing, setEditing] = useState<{ channel: Channel | null } | null>(null);
  const test = useMutation({ mutationFn: alertsApi.testChannel, onSuccess: () => showSuccess(t('alerts.channels.testOk')), onError: showError });
  const del = useMutation({
    mutationFn: alertsApi.deleteChannel,
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['alert-channels'] }),
    onError: showError,
  });
  const names = new Map((q.data?.items ?? []).map((c) => [c.id, c.name]));
  const columns: ColumnsType<Channel> = [
    { title: t('alerts.channels.name'), dataIndex: 'name', render: (n: string) => <span data-testid="channel-row-name">{n}</span> },
    { title: t('alerts.channels.type'), dataIndex: 'type', width: 170, render: (c: ChannelType) => t(`alerts.channels.types.${c}`) },
    { title: t('alerts.channels.url'), key: 'url', ellipsis: true, render: (_, c) => c.config.url ?? c.config.smtp_host ?? '' },
    { title: t('alerts.channels.levels'), dataIndex: 'levels', width: 170, render: (ls: string[]) => (ls.length ? ls.map((l) => <Tag key={l}>{l}</Tag>) : '*') },
    { title: t('alerts.tenant'), dataIndex: 'tenant', width: 100, render: (x: string) => x || '*' },
    { title: t('alerts.rules.enabled'), dataIndex: 'enabled', width: 80, render: (e: boolean) => <Tag color={e ? 'green' : 'default'}>{e ? t('common.yes') : t('common.no')}</Tag> },
    {
      title: t('common.actions'),
      key: 'a',
      width: 230,
      render: (_, c) => (
        <Space>
          {canEdit && (
            <Button size="small" loading={test.isPending && test.variables === c.id} onClick={() => test.mutate(c.id)}>
              {t('alerts.channels.test')}
            </Button>
          )}
          {canEdit && (
            <Button size="small" onClick={() => setEditing({ channel: c })}>
              {t('alerts.channels.edit')}
            </Button>
          )}
          {canDelete && (
            <Popconfirm title={t('alerts.channels.deleteConfirm', { name: c.name })} onConfirm={() => del.mutate(c.id)}>
              <Button size="small" danger>
                {t('common.delete')}
              </Button>
            </Popconfirm>
          )}
        </Space>
      ),
    },
  ];
  const dcols: ColumnsType<Delivery> = [
    { title: t('alerts.channels.channel'), dataIndex: 'channel_id', width: 140, render: (id: number) => names.get(id) ?? id },
    { title: '#', dataIndex: 'alert_id', width: 70 },
    { title: t('alerts.state'), dataIndex: 'kind', width: 90, render: (k: Delivery['kind']) => t(`alerts.channels.kind.${k}`) },
    {
      title: t('alerts.channels.delivery'),
      dataIndex: 'status',
      width: 100,
      render: (s: Delivery['status']) => <Tag color={s === 'delivered' ? 'green' : s === 'failed' ? 'red' : 'gold'}>{t(`alerts.channels.status.${s}`)}</Tag>,
    },
    { title: t('alerts.channels.attempts'), dataIndex: 'attempts', width: 80 },
    { title: t('alerts.firedAt'), dataIndex: 'created_at', width: 170, render: formatTime },
    { title: t('alerts.channels.lastError'), dataIndex: 'last_error', ellipsis: true, render: (e?: string) => (e ? <Typography.Text type="danger">{e}</Typography.Text> : '—') },
  ];
  return (
    <Space direction="vertical" style={{ width: '100%' }} size="large">
      <Card
        size="small"
        title={t('alerts.tabs.channels')}
        extra={
          canEdit && (
            <Button type="primary" size="small" onClick={() => setEditing({ channel: null })} data-testid="channel-new">
              {t('alerts.channels.new')}
            </Button>
          )
        }
      >
        <Table<Channel> rowKey="id" size="small" columns={columns} dataSource={q.data?.items} loading={q.isFetching} pagination={false} />
      </Card>
      <Card size="small" title={t('alerts.channels.deliveries')}>
        <Table<Delivery> rowKey="id" size="small" columns={dcols} dataSource={deliveries.data?.items} pagination={false} data-testid="deliveries-table" />
      </Card>
      {editing && <ChannelEditor channel={editing.channel} onClose={() => setEditing(null)} />}
    </Space>
  );
}
