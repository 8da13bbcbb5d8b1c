// Rules: the thresholds of the built-in rules (no PromQL needed), every rule
// with its live state, and the custom rule editor with "test now" (the
// server validates the PromQL and evaluates it against live data).
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Form, Input, InputNumber, Modal, Popconfirm, Select, Space, Switch, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { ALERT_LEVELS, alertsApi, type Param, type Rule, type RuleSpec, type TestResult } from '../../api/alerts';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { errorText, showError, showSuccess } from '../../components/notify';
import { LevelTag } from './LevelTag';

function ParamsCard({ canEdit }: { canEdit: boolean }) {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['alert-params'], queryFn: alertsApi.params });
  const [values, setValues] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: () => alertsApi.putParams(values),
    onSuccess: (d) => {
      qc.setQueryData(['alert-params'], d);
      void qc.invalidateQueries({ queryKey: ['alert-rules'] });
      setValues({});
      showSuccess(t('alerts.rules.paramsSaved'));
    },
    onError: showError,
  });
  const columns: ColumnsType<Param> = [
    { title: t('alerts.rule'), dataIndex: 'alert', width: 180 },
    { title: t('alerts.level'), dataIndex: 'severity', width: 90, render: (l) => <LevelTag level={l} /> },
    { title: t('alerts.summary'), key: 'title', render: (_, p) => (i18n.language.startsWith('zh') ? p.title_zh : p.title_en) },
    {
      title: t('alerts.value'),
      key: 'value',
      width: 260,
      render: (_, p) => (
        <Space>
          {p.kind === 'threshold' ? (
            <InputNumber
              size="small"
              min={p.min}
              max={p.max}
              step={p.unit === 'ratio' ? 0.01 : 1}
              disabled={!canEdit}
              value={Number(values[p.key] ?? p.value)}
              onChange={(v) => setValues((cur) => ({ ...cur, [p.key]: v === null ? '' : String(v) }))}
              data-testid={`param-${p.key}`}
            />
          ) : (
            <Input
              size="small"
              style={{ width: 90 }}
              disabled={!canEdit}
              value={values[p.key] ?? p.value}
              onChange={(e) => setValues((cur) => ({ ...cur, [p.key]: e.target.value }))}
              data-testid={`param-${p.key}`}
            />
          )}
          <Typography.Text type="secondary">{t('alerts.rules.default', { value: p.default })}</Typography.Text>
        </Space>
      ),
    },
  ];
  return (
    <Card
      size="small"
      title={t('alerts.rules.params')}
      extra={
        canEdit && (
          <Button type="primary" size="small" disabled={!Object.keys(values).length} loading={save.isPending} onClick={() => save.mutate()} data-testid="params-save">
            {t('alerts.rules.save')}
          </Button>
        )
      }
    >
      <Typography.Paragraph type="secondary">{t('alerts.rules.paramsHelp')}</Typography.Paragraph>
      <Table<Param> rowKey="key" size="small" pagination={false} columns={columns} dataSource={q.data?.items} loading={q.isFetching} />
    </Card>
  );
}

interface RuleForm {
  name: string;
  expr: string;
  for?: string;
  keep_firing_for?: string;
  level: RuleSpec['level'];
  tenant?: string;
  summary?: string;
  summary_zh?: string;
  enabled: boolean;
}

function toSpec(v: RuleForm): RuleSpec {
  const annotations: Record<string, string> = {};
  if (v.summary) annotations.summary = v.summary;
  if (v.summary_zh) annotations.summary_zh = v.summary_zh;
  return { name: v.name, expr: v.expr, for: v.for || undefined, keep_firing_for: v.keep_firing_for || undefined, level: v.level, tenant: v.tenant || undefined, annotations, enabled: v.enabled };
}

function RuleEditor({ rule, open, onClose }: { rule: Rule | null; open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [form] = Form.useForm<RuleForm>();
  const [tested, setTested] = useState<TestResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const save = useMutation({
    mutationFn: (spec: RuleSpec) => (rule?.id ? alertsApi.updateRule(rule.id, spec) : alertsApi.createRule(spec)),
    onSuccess: () => {
      showSuccess(t('alerts.rules.saved'));
      void qc.invalidateQueries({ queryKey: ['alert-rules'] });
      onClose();
    },
    onError: setError,
  });
  const test = useMutation({
    mutationFn: alertsApi.testRule,
    onSuccess: (r) => {
      setError(null);
      setTested(r);
    },
    onError: (e) => {
      setTested(null);
      setError(e);
    },
  });
  const initial: RuleForm = rule
    ? { name: rule.name, expr: rule.expr, for: rule.for === '0s' ? '' : rule.for, keep_firing_for: rule.keep_firing_for === '0s' ? '' : rule.keep_firing_for, level: rule.level ?? 'WARN', tenant: rule.tenant, summary: rule.annotations.summary, summary_zh: rule.annotations.summary_zh, enabled: rule.enabled }
    : { name: '', expr: '', level: 'WARN', enabled: true };
  return (
    <Modal
      open={open}
      width={720}
      destroyOnHidden
      title={t(rule ? 'alerts.rules.edit' : 'alerts.rules.new')}
      onCancel={onClose}
      footer={
        <Space>
          <Button onClick={() => form.validateFields().then((v) => test.mutate(toSpec(v)))} loading={test.isPending} data-testid="rule-test">
            {t('alerts.rules.testNow')}
          </Button>
          <Button type="primary" onClick={() => form.submit()} loading={save.isPending} data-testid="rule-save">
            {t('alerts.rules.save')}
          </Button>
        </Space>
      }
    >
      <Form<RuleForm> form={form} layout="vertical" initialValues={initial} onFinish={(v) => save.mutate(toSpec(v))}>
        <Space style={{ width: '100%' }} align="start">
          <Form.Item name="name" label={t('alerts.rules.name')} rules={[{ required: true, pattern: /^[a-zA-Z_][a-zA-Z0-9_]*$/ }]}>
            <Input style={{ width: 220 }} data-testid="rule-name" />
          </Form.Item>
          <Form.Item name="level" label={t('alerts.level')}>
            <Select style={{ width: 110 }} options={ALERT_LEVELS.map((l) => ({ value: l, label: t(`alerts.levels.${l}`) }))} />
          </Form.Item>
          <Form.Item name="for" label={t('alerts.rules.for')} tooltip={t('alerts.rules.forHelp')}>
            <Input style={{ width: 90 }} placeholder="5m" data-testid="rule-for" />
          </Form.Item>
          <Form.Item name="keep_firing_for" label={t('alerts.rules.keepFiringFor')}>
            <Input style={{ width: 90 }} placeholder="0s" />
          </Form.Item>
          <Form.Item name="enabled" label={t('alerts.rules.enabled')} valuePropName="checked">
            <Switch />
          </Form.Item>
        </Space>
        <Form.Item name="expr" label={t('alerts.rules.expr')} tooltip={t('alerts.rules.exprHelp')} rules={[{ required: true }]}>
          <Input.TextArea rows={3} style={{ fontFamily: 'monospace' }} placeholder="avg_over_time(hw_gpu_utilization_ratio[5m]) > 0.9" data-testid="rule-expr" />
        </Form.Item>
        <Form.Item name="tenant" label={t('alerts.tenant')}>
          <Input style={{ width: 200 }} />
        </Form.Item>
        <Form.Item name="summary" label={t('alerts.rules.summaryAnn')}>
          <Input placeholder="GPU {{ $labels.hw_index }} on {{ $labels.host_name }} at {{ $value }}" />
        </Form.Item>
        <Form.Item name="summary_zh" label={t('alerts.rules.summaryZhAnn')}>
          <Input />
        </Form.Item>
      </Form>
      {error !== null && <Alert type="error" showIcon message={errorText(error)} data-testid="rule-error" />}
      {tested && (
        <Alert
          type={tested.alerts.length ? 'warning' : 'success'}
          data-testid="rule-test-result"
          message={tested.alerts.length ? t('alerts.rules.testResult', { count: tested.alerts.length }) : t('alerts.rules.testNone')}
          description={tested.alerts.slice(0, 20).map((a, i) => (
            <div key={i}>
              <Tag>{a.state}</Tag>
              {Object.entries(a.labels)
                .filter(([k]) => k !== 'alertname' && k !== 'severity')
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}{' '}
              → {a.value}
            </div>
          ))}
        />
      )}
    </Modal>
  );
}

export default function RulesTab() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const canEdit = atLeast(user?.role, 'operator');
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['alert-rules'], queryFn: alertsApi.rules, refetchInterval: 15_000 });
  const [editing, setEditing] = useState<{ rule: Rule | null } | null>(null);
  const del = useMutation({
    mutationFn: (id: number) => alertsApi.deleteRule(id),
    onSuccess: () => {
      showSuccess(t('alerts.rules.deleted'));
      void qc.invalidateQueries({ queryKey: ['alert-rules'] });
    },
    onError: showError,
  });
  const toggle = useMutation({
    mutationFn: (r: Rule) =>
      alertsApi.updateRule(r.id!, { name: r.name, expr: r.expr, for: r.for, keep_firing_for: r.keep_firing_for, level: r.level ?? 'WARN', tenant: r.tenant, labels: r.labels, annotations: r.annotations, enabled: !r.enabled }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['alert-rules'] }),
    onError: showError,
  });
  const columns: ColumnsType<Rule> = [
    { title: t('alerts.rules.origin'), dataIndex: 'origin', width: 100, render: (o: Rule['origin']) => <Tag>{t(`alerts.rules.origins.${o}`)}</Tag> },
    { title: t('alerts.rules.name'), dataIndex: 'name', width: 190, render: (n: string) => <span data-testid="rule-row-name">{n}</span> },
    { title: t('alerts.level'), dataIndex: 'level', width: 90, render: (l?: Rule['level']) => (l ? <LevelTag level={l} /> : '—') },
    { title: t('alerts.rules.expr'), dataIndex: 'expr', ellipsis: true, render: (e: string) => <Typography.Text code>{e}</Typography.Text> },
    { title: t('alerts.rules.for'), dataIndex: 'for', width: 70 },
    { title: t('alerts.state'), dataIndex: 'state', width: 90, render: (s: string) => <Tag color={s === 'firing' ? 'red' : s === 'pending' ? 'gold' : 'default'}>{s}</Tag> },
    { title: t('alerts.rules.health'), dataIndex: 'health', width: 80, render: (h: string, r) => <Tag color={h === 'ok' ? 'green' : h === 'err' ? 'red' : 'default'} title={r.last_error}>{h}</Tag> },
    {
      title: t('common.actions'),
      key: 'a',
      width: 190,
      render: (_, r) =>
        r.origin === 'custom' &&
        canEdit && (
          <Space>
            <Switch size="small" checked={r.enabled} onChange={() => toggle.mutate(r)} />
            <Button size="small" onClick={() => setEditing({ rule: r })}>
              {t('alerts.rules.edit')}
            </Button>
            <Popconfirm title={t('alerts.rules.deleteConfirm', { name: r.name })} onConfirm={() => del.mutate(r.id!)}>
              <Button size="small" danger>
                {t('common.delete')}
              </Button>
            </Popconfirm>
          </Space>
        ),
    },
  ];
  return (
    <Space direction="vertical" style={{ width: '100%' }} size="large">
      <ParamsCard canEdit={canEdit} />
      <Card
        size="small"
        title={t('alerts.tabs.rules')}
        extra={
          canEdit && (
            <Button type="primary" size="small" onClick={() => setEditing({ rule: null })} data-testid="rule-new">
              {t('alerts.rules.new')}
            </Button>
          )
        }
      >
        <Table<Rule> rowKey={(r) => `${r.origin}/${r.group}/${r.name}/${r.level}/${r.id ?? ''}`} size="small" columns={columns} dataSource={q.data?.items} loading={q.isFetching} pagination={{ pageSize: 50 }} />
      </Card>
      {editing && <RuleEditor open rule={editing.rule} onClose={() => setEditing(null)} />}
    </Space>
  );
}
