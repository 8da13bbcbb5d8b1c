// Alert instances: filters (level, state, rule, node, tenant, time), the
// list (refreshed every 10 s) and a drawer with history, deliveries and the
// acknowledge / resolve actions (comment; a reason is required to resolve).
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, DatePicker, Descriptions, Drawer, Form, Input, Modal, Select, Space, Table, Tag, Timeline, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { Dayjs } from 'dayjs';
import { useTranslation } from 'react-i18next';
import { ALERT_LEVELS, ALERT_STATES, alertsApi, type AlertFilter, type AlertItem } from '../../api/alerts';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { formatMap, formatTime, rangeQuery } from '../../components/format';
import { showError, showSuccess } from '../../components/notify';
import { usePagedList } from '../../components/usePagedList';
import { LevelTag, StateTag, summaryOf } from './LevelTag';

interface FilterValues {
  level?: string[];
  state?: string[];
  rule?: string;
  node?: string;
  tenant?: string;
  range?: [Dayjs | null, Dayjs | null] | null;
}

type Action = { kind: 'ack' | 'resolve'; alert: AlertItem };

function ActionModal({ action, onClose }: { action: Action | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [form] = Form.useForm<{ text: string }>();
  const run = useMutation({
    mutationFn: (text: string) => (action!.kind === 'ack' ? alertsApi.ack(action!.alert.id, text) : alertsApi.resolve(action!.alert.id, text)),
    onSuccess: () => {
      showSuccess(t(action!.kind === 'ack' ? 'alerts.acked' : 'alerts.resolved'));
      void qc.invalidateQueries({ queryKey: ['alerts'] });
      void qc.invalidateQueries({ queryKey: ['alert'] });
      form.resetFields();
      onClose();
    },
    onError: showError,
  });
  const resolve = action?.kind === 'resolve';
  return (
    <Modal
      open={!!action}
      title={action ? `${t(resolve ? 'alerts.resolve' : 'alerts.ack')} · ${action.alert.rule} #${action.alert.id}` : ''}
      onCancel={onClose}
      onOk={() => form.submit()}
      confirmLoading={run.isPending}
      okButtonProps={{ 'data-testid': 'alert-action-ok' } as Record<string, string>}
    >
      <Form form={form} layout="vertical" onFinish={(v) => run.mutate(v.text ?? '')}>
        <Form.Item
          name="text"
          label={t(resolve ? 'alerts.reason' : 'alerts.comment')}
          rules={resolve ? [{ required: true, whitespace: true, message: t('alerts.reasonRequired') }] : []}
        >
          <Input.TextArea rows={3} maxLength={1024} data-testid="alert-action-text" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

function AlertDrawer({ id, onClose, onAction, canAct }: { id: number | null; onClose: () => void; onAction: (a: Action) => void; canAct: boolean }) {
  const { t, i18n } = useTranslation();
  const detail = useQuery({ queryKey: ['alert', id], queryFn: () => alertsApi.get(id!), enabled: id !== null });
  const a = detail.data;
  return (
    <Drawer open={id !== null} onClose={onClose} width={640} title={t('alerts.detail', { id })}>
      {a && (
        <Space direction="vertical" style={{ width: '100%' }} data-testid="alert-drawer">
          <Space>
            <LevelTag level={a.level} />
            <StateTag state={a.state} />
            {a.silenced && <Tag>{t('alerts.silenced')}</Tag>}
            {canAct && a.state === 'ACTIVE' && <Button onClick={() => onAction({ kind: 'ack', alert: a })}>{t('alerts.ack')}</Button>}
            {canAct && a.state !== 'RESOLVED' && (
              <Button danger onClick={() => onAction({ kind: 'resolve', alert: a })}>
                {t('alerts.resolve')}
              </Button>
            )}
          </Space>
          <Descriptions column={1} size="small" bordered>
            <Descriptions.Item label={t('alerts.rule')}>{a.rule}</Descriptions.Item>
            <Descriptions.Item label={t('alerts.summary')}>{summaryOf(a.annotations, i18n.language)}</Descriptions.Item>
            <Descriptions.Item label={t('alerts.node')}>{a.node || '—'}</Descriptions.Item>
            <Descriptions.Item label={t('alerts.tenant')}>{a.tenant || '—'}</Descriptions.Item>
            <Descriptions.Item label={t('alerts.value')}>{a.value}</Descriptions.Item>
            <Descriptions.Item label={t('alerts.firedAt')}>{formatTime(a.fired_at)}</Descriptions.Item>
            <Descriptions.Item label={t('alerts.labels')}>
              {formatMap(a.labels).map((l) => (
                <Tag key={l}>{l}</Tag>
              ))}
            </Descriptions.Item>
          </Descriptions>
          <Typography.Title level={5}>{t('alerts.history')}</Typography.Title>
          <Timeline
            data-testid="alert-history"
            items={a.events.map((e) => ({
              color: e.state === 'RESOLVED' ? 'green' : e.state === 'ACKNOWLEDGED' ? 'gold' : 'red',
              children: (
                <span>
                  {formatTime(e.at)} · <StateTag state={e.state} /> {e.actor === 'system' ? t('alerts.system') : e.actor}
                  {e.comment ? ` — ${e.comment}` : ''}
                </span>
              ),
            }))}
          />
          <Typography.Title level={5}>{t('alerts.deliveries')}</Typography.Title>
          <Table
            size="small"
            rowKey="id"
            pagination={false}
            dataSource={a.notifications}
            columns={[
              { title: t('alerts.channels.channel'), dataIndex: 'channel_id', width: 70 },
              { title: t('alerts.state'), dataIndex: 'kind', render: (k: 'firing' | 'resolved') => t(`alerts.channels.kind.${k}`) },
              { title: t('alerts.channels.delivery'), dataIndex: 'status', render: (s: 'pending' | 'delivered' | 'failed') => t(`alerts.channels.status.${s}`) },
              { title: t('alerts.channels.attempts'), dataIndex: 'attempts', width: 80 },
              { title: t('alerts.channels.lastError'), dataIndex: 'last_error', ellipsis: true },
            ]}
          />
        </Space>
      )}
    </Drawer>
  );
}

export default function AlertsTab() {
  const { t, i18n } = useTranslation();
  const { user } = useAuth();
  const canAct = atLeast(user?.role, 'operator');
  const [form] = Form.useForm<FilterValues>();
  const [openId, setOpenId] = useState<number | null>(null);
  const [action, setAction] = useState<Action | null>(null);
  const { data, isFetching, refetch, apply: applyFilter, pagination } = usePagedList<AlertFilter, AlertItem>('alerts', alertsApi.list, {
    refetchInterval: 10_000,
  });

  const apply = (v: FilterValues) =>
    applyFilter({
      level: v.level?.join(',') || undefined,
      state: v.state?.join(',') || undefined,
      rule: v.rule?.trim() || undefined,
      node: v.node?.trim() || undefined,
      tenant: v.tenant?.trim() || undefined,
      ...rangeQuery(v.range),
    });

  const columns: ColumnsType<AlertItem> = [
    { title: t('alerts.level'), dataIndex: 'level', width: 90, render: (l) => <LevelTag level={l} /> },
    { title: t('alerts.state'), dataIndex: 'state', width: 110, render: (s) => <StateTag state={s} /> },
    {
      title: t('alerts.rule'),
      dataIndex: 'rule',
      width: 180,
      render: (r: string, a) => (
        <Typography.Link onClick={() => setOpenId(a.id)} data-testid="alert-rule-link">
          {r}
        </Typography.Link>
      ),
    },
    { title: t('alerts.summary'), key: 'summary', ellipsis: true, render: (_, a) => summaryOf(a.annotations, i18n.language) },
    { title: t('alerts.node'), dataIndex: 'node', width: 130, render: (n: string) => n || '—' },
    { title: t('alerts.tenant'), dataIndex: 'tenant', width: 100, render: (n: string) => n || '—' },
    { title: t('alerts.firedAt'), dataIndex: 'fired_at', width: 170, render: formatTime },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 170,
      render: (_, a) =>
        canAct && (
          <Space>
            {a.state === 'ACTIVE' && (
              <Button size="small" onClick={() => setAction({ kind: 'ack', alert: a })} data-testid={`alert-ack-${a.id}`}>
                {t('alerts.ack')}
              </Button>
            )}
            {a.state !== 'RESOLVED' && (
              <Button size="small" danger onClick={() => setAction({ kind: 'resolve', alert: a })} data-testid={`alert-resolve-${a.id}`}>
                {t('alerts.resolve')}
              </Button>
            )}
          </Space>
        ),
    },
  ];

  return (
    <>
      <Form<FilterValues> form={form} layout="inline" onFinish={apply} style={{ marginBottom: 16, rowGap: 8 }}>
        <Form.Item name="level" label={t('alerts.level')}>
          <Select mode="multiple" allowClear style={{ minWidth: 140 }} options={ALERT_LEVELS.map((l) => ({ value: l, label: t(`alerts.levels.${l}`) }))} />
        </Form.Item>
        <Form.Item name="state" label={t('alerts.state')}>
          <Select
            mode="multiple"
            allowClear
            style={{ minWidth: 160 }}
            data-testid="alerts-filter-state"
            options={ALERT_STATES.map((s) => ({ value: s, label: t(`alerts.states.${s}`) }))}
          />
        </Form.Item>
        <Form.Item name="rule" label={t('alerts.rule')}>
          <Input allowClear style={{ width: 150 }} data-testid="alerts-filter-rule" />
        </Form.Item>
        <Form.Item name="node" label={t('alerts.node')}>
          <Input allowClear style={{ width: 130 }} />
        </Form.Item>
        <Form.Item name="tenant" label={t('alerts.tenant')}>
          <Input allowClear style={{ width: 110 }} />
        </Form.Item>
        <Form.Item name="range" label={t('alerts.time')}>
          <DatePicker.RangePicker showTime />
        </Form.Item>
        <Space>
          <Button type="primary" htmlType="submit" data-testid="alerts-search">
            {t('common.search')}
          </Button>
          <Button onClick={() => refetch()}>{t('common.refresh')}</Button>
        </Space>
      </Form>
      <Table<AlertItem> rowKey="id" size="small" loading={isFetching} columns={columns} dataSource={data?.items} pagination={pagination} data-testid="alerts-table" />
      <AlertDrawer id={openId} onClose={() => setOpenId(null)} onAction={setAction} canAct={canAct} />
      <ActionModal action={action} onClose={() => setAction(null)} />
    </>
  );
}
