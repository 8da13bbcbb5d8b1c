// Scheduler plugins (GET /plugins): in profile order, with extension points,
// an enabled switch, a weight and move up/down. Every change is sent at once
// (PATCH /plugins/{name}, PUT /plugins/order); the server applies it live on
// the leader and persists it, and its answer replaces the table. Refusals
// (e.g. the Assign plugin cannot be disabled, or the caller's role may not
// write) are shown inline above the table.
import { useState, type HTMLAttributes } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, InputNumber, Popconfirm, Space, Switch, Table, Tag, Tooltip, Typography } from 'antd';
import { ArrowDownOutlined, ArrowUpOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { sched, type PluginList, type PluginState } from '../../api/scheduling';
import { errorText, showSuccess } from '../../components/notify';

function WeightInput({ plugin, onSave, disabled }: { plugin: PluginState; onSave: (w: number) => void; disabled: boolean }) {
  const [value, setValue] = useState<number | null>(plugin.weight);
  const dirty = value !== null && value !== plugin.weight;
  return (
    <Space.Compact>
      <InputNumber
        size="small"
        min={0}
        max={1e6}
        value={value}
        onChange={setValue}
        onPressEnter={() => dirty && onSave(value)}
        style={{ width: 100 }}
        data-testid={`plugin-weight-${plugin.name}`}
      />
      <Button size="small" disabled={!dirty || disabled} onClick={() => value !== null && onSave(value)} data-testid={`plugin-weight-save-${plugin.name}`}>
        OK
      </Button>
    </Space.Compact>
  );
}

/** CRITICAL filters protect running work; switching one off asks first. */
const CRITICAL = new Set(['ResourceFit', 'GPUType', 'Quota', 'Gang']);

export default function PluginsPage() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const list = useQuery({ queryKey: ['plugins'], queryFn: sched.plugins, meta: { inlineErrors: true } });
  const onDone = (next: PluginList) => {
    setError(null);
    qc.setQueryData(['plugins'], next);
    showSuccess(t('sched.plugins.applied'));
  };
  const patch = useMutation({
    mutationFn: (v: { name: string; enabled?: boolean; weight?: number }) => sched.patchPlugin(v.name, { enabled: v.enabled, weight: v.weight }),
    onSuccess: onDone,
    onError: setError,
  });
  const order = useMutation({ mutationFn: sched.orderPlugins, onSuccess: onDone, onError: setError });
  const items = [...(list.data?.items ?? [])].sort((a, b) => a.position - b.position);
  const busy = patch.isPending || order.isPending;

  const move = (i: number, by: -1 | 1) => {
    const names = items.map((p) => p.name);
    [names[i], names[i + by]] = [names[i + by], names[i]];
    order.mutate(names);
  };

  return (
    <Card
      title={
        <Space>
          {t('sched.plugins.title')}
          {list.data && <Tag>{t('sched.plugins.profile', { name: list.data.profile })}</Tag>}
        </Space>
      }
      extra={<Button onClick={() => list.refetch()}>{t('common.refresh')}</Button>}
    >
      <Typography.Paragraph type="secondary">{t('sched.plugins.hint')}</Typography.Paragraph>
      {(error || list.error) && (
        <Alert type="error" showIcon data-testid="plugins-error" message={errorText(error ?? list.error)} style={{ marginBottom: 12 }} closable onClose={() => setError(null)} />
      )}
      <Table<PluginState>
        rowKey="name"
        size="middle"
        pagination={false}
        loading={list.isLoading}
        dataSource={items}
        onRow={(p) => ({ 'data-testid': `plugin-row-${p.name}` }) as HTMLAttributes<HTMLElement>}
        columns={[
          { title: t('sched.plugins.position'), dataIndex: 'position', width: 70, render: (p: number) => p + 1 },
          {
            title: t('sched.plugins.name'),
            dataIndex: 'name',
            render: (n: string, p) => (
              <Space>
                <Typography.Text strong>{n}</Typography.Text>
                {CRITICAL.has(n) && <Tag color="red">{t('sched.plugins.critical')}</Tag>}
                {p.assign && (
                  <Tooltip title={t('sched.plugins.assignHint')}>
                    <Tag color="purple">{t('sched.plugins.assign')}</Tag>
                  </Tooltip>
                )}
              </Space>
            ),
          },
          {
            title: t('sched.plugins.description'),
            key: 'description',
            render: (_, p) => (
              <Typography.Text type="secondary" data-testid={`plugin-desc-${p.name}`}>
                {t(`sched.plugins.desc.${p.name}`, { defaultValue: '—' })}
              </Typography.Text>
            ),
          },
          {
            title: t('sched.plugins.points'),
            dataIndex: 'extension_points',
            render: (pts: string[]) => (
              <Space size={[4, 4]} wrap>
                {(pts ?? []).map((x) => (
                  <Tag key={x} color="geekblue">
                    {x}
                  </Tag>
                ))}
              </Space>
            ),
          },
          {
            title: t('sched.plugins.enabled'),
            dataIndex: 'enabled',
            width: 90,
            render: (on: boolean, p) =>
              on && CRITICAL.has(p.name) ? (
                // Switching a critical filter off asks first, saying what it protects.
                <Popconfirm
                  title={t('sched.plugins.confirmDisable', { name: p.name })}
                  description={<div style={{ maxWidth: 360 }}>{t('sched.plugins.criticalWarning', { why: t(`sched.plugins.criticalWhy.${p.name}`) })}</div>}
                  okText={t('common.yes')}
                  cancelText={t('common.no')}
                  okButtonProps={{ danger: true, ...({ 'data-testid': `plugin-disable-confirm-${p.name}` } as Record<string, string>) }}
                  onConfirm={() => patch.mutate({ name: p.name, enabled: false })}
                >
                  <Switch checked={on} disabled={busy} data-testid={`plugin-enabled-${p.name}`} />
                </Popconfirm>
              ) : (
                <Switch
                  checked={on}
                  disabled={busy}
                  data-testid={`plugin-enabled-${p.name}`}
                  onChange={(enabled) => patch.mutate({ name: p.name, enabled })}
                />
              ),
          },
          {
            title: t('sched.plugins.weight'),
            key: 'weight',
            width: 170,
            render: (_, p) =>
              (p.extension_points ?? []).includes('Score') ? (
                <WeightInput key={`${p.name}-${p.weight}`} plugin={p} disabled={busy} onSave={(weight) => patch.mutate({ name: p.name, weight })} />
              ) : (
                <Typography.Text type="secondary">{t('sched.plugins.noScore')}</Typography.Text>
              ),
          },
          {
            title: t('sched.plugins.order'),
            key: 'order',
            width: 110,
            render: (_, p, i) => (
              <Space>
                <Button size="small" icon={<ArrowUpOutlined />} disabled={i === 0 || busy} onClick={() => move(i, -1)} aria-label={t('sched.plugins.up')} data-testid={`plugin-up-${p.name}`} />
                <Button
                  size="small"
                  icon={<ArrowDownOutlined />}
                  disabled={i === items.length - 1 || busy}
                  onClick={() => move(i, 1)}
                  aria-label={t('sched.plugins.down')}
                  data-testid={`plugin-down-${p.name}`}
                />
              </Space>
            ),
          },
        ]}
      />
    </Card>
  );
}
