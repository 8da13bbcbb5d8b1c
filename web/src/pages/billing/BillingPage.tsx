// Billing: usage and cost per tenant / project / user for a day, week or
// month (GET /billing/report), charts (cost per day, by tenant, by vendor
// and QoS), tables, CSV / XLSX / JSON exports, the price book and monthly
// budgets. What a caller sees is decided by the server: administrators
// everything, a tenant's operator that tenant, users their own usage.
import { useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Col, DatePicker, Empty, Form, Input, InputNumber, Popconfirm, Row, Select, Space, Statistic, Table, Tag, Tooltip, Typography } from 'antd';
import { DownloadOutlined } from '@ant-design/icons';
import dayjs, { type Dayjs } from 'dayjs';
import { useTranslation } from 'react-i18next';
import type { EChartsCoreOption } from 'echarts/core';
import EChart from '../../components/EChart';
import { errorText, showError, showSuccess } from '../../components/notify';
import { useAuth } from '../../auth/AuthContext';
import { billing, downloadReport, type Budget, type Period, type PriceEntry, type ReportLine, type ReportQuery } from '../../api/billing';

const fmt2 = (v: number) => v.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const fmtH = (v: number) => v.toLocaleString(undefined, { maximumFractionDigits: 3 });
const pct = (v: number) => `${(v * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`;
// Efficiency: measured / allocated compute and memory; "not measured" when
// no device metrics covered the usage.
const fmtEff = (l: ReportLine, t: (k: string, o?: Record<string, string>) => string) =>
  l.efficiency ? t('bill.efficiencyValue', { compute: pct(l.efficiency.compute), memory: pct(l.efficiency.memory) }) : t('bill.notMeasured');

function barOption(lines: ReportLine[], label: (l: ReportLine) => string, name: string): EChartsCoreOption {
  return {
    tooltip: { trigger: 'axis' },
    grid: { left: 60, right: 20, top: 20, bottom: 60 },
    xAxis: { type: 'category', data: lines.map(label), axisLabel: { rotate: lines.length > 4 ? 30 : 0 } },
    yAxis: { type: 'value' },
    series: [{ type: 'bar', name, data: lines.map((l) => l.cost) }],
  };
}

function ReportView({ q }: { q: ReportQuery }) {
  const { t } = useTranslation();
  const rep = useQuery({ queryKey: ['billing', 'report', q], queryFn: () => billing.report(q), meta: { inlineErrors: true } });
  const r = rep.data;
  const daily = useMemo<EChartsCoreOption>(
    () => ({
      tooltip: { trigger: 'axis' },
      grid: { left: 60, right: 20, top: 20, bottom: 30 },
      xAxis: { type: 'category', data: (r?.daily ?? []).map((d) => d.day) },
      yAxis: { type: 'value' },
      series: [{ type: 'line', name: t('bill.cost'), areaStyle: {}, data: (r?.daily ?? []).map((d) => d.cost) }],
    }),
    [r, t],
  );
  if (rep.error) return <Alert type="error" showIcon message={errorText(rep.error)} data-testid="billing-error" />;
  if (!r) return <Card loading />;
  const cur = r.currency;
  const num = (key: keyof ReportLine['hours'], title: string) => ({
    title,
    key,
    align: 'right' as const,
    render: (_: unknown, l: ReportLine) => fmtH(l.hours[key] ?? 0),
  });
  const costCol = { title: `${t('bill.cost')} (${cur})`, dataIndex: 'cost', align: 'right' as const, render: (v: number) => fmt2(v) };
  const effCol = {
    title: t('bill.efficiency'),
    key: 'efficiency',
    align: 'right' as const,
    render: (_: unknown, l: ReportLine) => <span data-testid="billing-efficiency">{fmtEff(l, t)}</span>,
  };
  const usageCols = [num('device_hours', t('bill.deviceHours')), num('memory_gib_hours', t('bill.memoryHours')), num('compute_percent_hours', t('bill.computeHours')), effCol, costCol];
  const table = (title: string, testid: string, rows: ReportLine[], keyCols: object[], rowKey: (l: ReportLine) => string) => (
    <Card size="small" title={title} data-testid={testid}>
      <Table size="small" pagination={false} rowKey={rowKey} dataSource={rows} columns={[...keyCols, ...usageCols]} locale={{ emptyText: t('bill.empty') }} />
    </Card>
  );
  return (
    <Space direction="vertical" style={{ width: '100%' }} size="middle">
      <Card size="small">
        <Space wrap>
          <Typography.Text data-testid="billing-range">{t('bill.range', { from: r.from, to: r.to })}</Typography.Text>
          <Tag color={r.provisional ? 'processing' : 'success'}>{r.provisional ? t('bill.provisional') : t('bill.closedPeriod')}</Tag>
          {r.unpriced_device_hours > 0 && <Tag color="warning">{t('bill.unpriced', { hours: fmtH(r.unpriced_device_hours) })}</Tag>}
          <Typography.Text type="secondary">{t('bill.export')}:</Typography.Text>
          {(['csv', 'xlsx', 'json'] as const).map((f) => (
            <Button
              key={f}
              size="small"
              icon={<DownloadOutlined />}
              data-testid={`billing-export-${f}`}
              onClick={() =>
                downloadReport(q, f).then(
                  (name) => showSuccess(t('bill.exported', { name })),
                  (err) => showError(err),
                )
              }
            >
              {f.toUpperCase()}
            </Button>
          ))}
        </Space>
        <Row gutter={16} style={{ marginTop: 12 }}>
          <Col span={5}><Statistic title={`${t('bill.cost')} (${cur})`} value={fmt2(r.total.cost)} data-testid="billing-total-cost" /></Col>
          <Col span={5}><Statistic title={t('bill.deviceHours')} value={fmtH(r.total.hours.device_hours)} data-testid="billing-total-device-hours" /></Col>
          <Col span={5}><Statistic title={t('bill.memoryHours')} value={fmtH(r.total.hours.memory_gib_hours)} /></Col>
          <Col span={5}><Statistic title={t('bill.computeHours')} value={fmtH(r.total.hours.compute_percent_hours)} /></Col>
          <Col span={4}>
            <Tooltip title={t('bill.efficiencyHelp')}>
              <Statistic title={t('bill.efficiency')} value={fmtEff(r.total, t)} data-testid="billing-total-efficiency" />
            </Tooltip>
          </Col>
        </Row>
      </Card>
      {r.daily.length === 0 ? (
        <Card><Empty description={t('bill.empty')} /></Card>
      ) : (
        <Row gutter={16}>
          <Col span={8}><Card size="small" title={t('bill.costOverTime')}><EChart option={daily} height={260} /></Card></Col>
          <Col span={8}><Card size="small" title={t('bill.byTenant')}><EChart option={barOption(r.by_tenant, (l) => l.tenant || '—', t('bill.cost'))} height={260} /></Card></Col>
          <Col span={8}><Card size="small" title={t('bill.byVendor')}><EChart option={barOption(r.by_vendor, (l) => `${l.vendor} ${l.model} ${l.qos}`, t('bill.cost'))} height={260} /></Card></Col>
        </Row>
      )}
      {table(t('bill.byVendor'), 'billing-by-vendor', r.by_vendor, [
        { title: t('bill.vendor'), dataIndex: 'vendor' },
        { title: t('bill.model'), dataIndex: 'model' },
        { title: t('bill.qos'), dataIndex: 'qos' },
      ], (l) => `${l.vendor}/${l.model}/${l.qos}`)}
      <Row gutter={16}>
        <Col span={12}>{table(t('bill.byTenant'), 'billing-by-tenant', r.by_tenant, [{ title: t('bill.tenant'), dataIndex: 'tenant' }], (l) => l.tenant ?? '')}</Col>
        <Col span={12}>{table(t('bill.byProject'), 'billing-by-project', r.by_project, [{ title: t('bill.tenant'), dataIndex: 'tenant' }, { title: t('bill.project'), dataIndex: 'project' }], (l) => `${l.tenant}/${l.project}`)}</Col>
      </Row>
      {table(t('bill.byUser'), 'billing-by-user', r.by_user, [{ title: t('bill.user'), dataIndex: 'user' }, { title: t('bill.tenant'), dataIndex: 'tenant' }], (l) => l.user ?? '')}
      {table(t('bill.topTasks'), 'billing-top-tasks', r.top_tasks, [
        { title: t('bill.task'), dataIndex: 'task_id', render: (id: number) => <a href={`/tasks/${id}`}>#{id}</a> },
        { title: t('bill.user'), dataIndex: 'user' },
        { title: t('bill.tenant'), dataIndex: 'tenant' },
        { title: t('bill.project'), dataIndex: 'project' },
      ], (l) => String(l.task_id))}
    </Space>
  );
}

function PriceBook({ admin }: { admin: boolean }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [form] = Form.useForm();
  const prices = useQuery({ queryKey: ['billing', 'prices'], queryFn: billing.prices });
  const done = (msg: string) => {
    setError(null);
    void qc.invalidateQueries({ queryKey: ['billing'] });
    showSuccess(msg);
  };
  const create = useMutation({ mutationFn: billing.createPrice, onSuccess: () => { form.resetFields(); done(t('bill.priceSaved')); }, onError: setError });
  const update = useMutation({ mutationFn: (p: PriceEntry) => billing.updatePrice(p.id!, p), onSuccess: () => done(t('bill.priceSaved')), onError: setError });
  const remove = useMutation({ mutationFn: billing.deletePrice, onSuccess: () => done(t('bill.priceDeleted')), onError: setError });
  const submit = (v: Record<string, unknown>) => {
    const d = v.from as Dayjs;
    const to = v.to as Dayjs | undefined;
    create.mutate({
      vendor: (v.vendor as string) || undefined,
      model: (v.model as string) || undefined,
      qos: (v.qos as string) || undefined,
      effective_from: d.format('YYYY-MM-DD'),
      effective_to: to ? to.format('YYYY-MM-DD') : undefined,
      device_hour: Number(v.device_hour ?? 0),
      memory_gib_hour: Number(v.memory_gib_hour ?? 0),
      compute_percent_hour: Number(v.compute_percent_hour ?? 0),
      bronze_discount_percent: Number(v.discount ?? 0),
    });
  };
  const any = (v?: string) => v || <Typography.Text type="secondary">{t('bill.any')}</Typography.Text>;
  return (
    <Card size="small" title={t('bill.prices')} data-testid="billing-prices">
      <Typography.Paragraph type="secondary">{t('bill.priceHelp')}</Typography.Paragraph>
      {!admin && <Alert type="info" showIcon message={t('bill.readOnly')} style={{ marginBottom: 12 }} />}
      {error != null && <Alert type="error" showIcon closable onClose={() => setError(null)} message={errorText(error)} style={{ marginBottom: 12 }} data-testid="billing-price-error" />}
      <Table
        size="small"
        rowKey="id"
        pagination={false}
        dataSource={prices.data?.items ?? []}
        columns={[
          { title: t('bill.vendor'), dataIndex: 'vendor', render: any },
          { title: t('bill.model'), dataIndex: 'model', render: any },
          { title: t('bill.qos'), dataIndex: 'qos', render: any },
          { title: t('bill.from'), dataIndex: 'effective_from' },
          { title: t('bill.to'), dataIndex: 'effective_to', render: (v?: string) => v || t('bill.open') },
          { title: t('bill.deviceHour'), dataIndex: 'device_hour', align: 'right' },
          { title: t('bill.memoryHour'), dataIndex: 'memory_gib_hour', align: 'right', render: (v?: number) => v ?? 0 },
          { title: t('bill.computeHour'), dataIndex: 'compute_percent_hour', align: 'right', render: (v?: number) => v ?? 0 },
          { title: t('bill.discount'), dataIndex: 'bronze_discount_percent', align: 'right', render: (v?: number) => v ?? 0 },
          { title: t('bill.currency'), dataIndex: 'currency' },
          ...(admin
            ? [{
                title: t('common.actions'),
                key: 'actions',
                render: (_: unknown, p: PriceEntry) => (
                  <Space>
                    <DatePicker
                      size="small"
                      placeholder={t('bill.endPrice')}
                      onChange={(d) => d && update.mutate({ ...p, effective_to: d.format('YYYY-MM-DD') })}
                      data-testid={`price-end-${p.id}`}
                    />
                    <Popconfirm title={t('bill.confirmDelete')} onConfirm={() => remove.mutate(p.id!)}>
                      <Button size="small" danger data-testid={`price-delete-${p.id}`}>{t('common.delete')}</Button>
                    </Popconfirm>
                  </Space>
                ),
              }]
            : []),
        ]}
      />
      {admin && (
        <Form form={form} name="price" layout="inline" onFinish={submit} style={{ marginTop: 12, rowGap: 8 }} data-testid="price-form" initialValues={{ from: dayjs() }}>
          <Form.Item name="vendor" label={t('bill.vendor')}><Input style={{ width: 110 }} placeholder={t('bill.any')} data-testid="price-vendor" /></Form.Item>
          <Form.Item name="model" label={t('bill.model')}><Input style={{ width: 110 }} placeholder={t('bill.any')} /></Form.Item>
          <Form.Item name="qos" label={t('bill.qos')}>
            <Select allowClear style={{ width: 100 }} placeholder={t('bill.any')} options={['gold', 'silver', 'bronze'].map((q) => ({ value: q, label: q }))} />
          </Form.Item>
          <Form.Item name="from" label={t('bill.from')} rules={[{ required: true }]}><DatePicker data-testid="price-from" /></Form.Item>
          <Form.Item name="to" label={t('bill.to')}><DatePicker /></Form.Item>
          <Form.Item name="device_hour" label={t('bill.deviceHour')} rules={[{ required: true }]}><InputNumber data-testid="price-device-hour" /></Form.Item>
          <Form.Item name="memory_gib_hour" label={t('bill.memoryHour')}><InputNumber /></Form.Item>
          <Form.Item name="compute_percent_hour" label={t('bill.computeHour')}><InputNumber /></Form.Item>
          <Form.Item name="discount" label={t('bill.discount')}><InputNumber /></Form.Item>
          <Button type="primary" htmlType="submit" loading={create.isPending} data-testid="price-add">{t('bill.addPrice')}</Button>
        </Form>
      )}
    </Card>
  );
}

function Budgets({ admin }: { admin: boolean }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [form] = Form.useForm();
  const budgets = useQuery({ queryKey: ['billing', 'budgets'], queryFn: billing.budgets });
  const put = useMutation({
    mutationFn: billing.putBudget,
    onSuccess: () => { setError(null); form.resetFields(); void qc.invalidateQueries({ queryKey: ['billing'] }); showSuccess(t('bill.budgetSaved')); },
    onError: setError,
  });
  const remove = useMutation({ mutationFn: billing.deleteBudget, onSuccess: () => void qc.invalidateQueries({ queryKey: ['billing'] }), onError: setError });
  return (
    <Card size="small" title={t('bill.budgets')} data-testid="billing-budgets">
      <Typography.Paragraph type="secondary">{t('bill.budgetHelp')}</Typography.Paragraph>
      {error != null && <Alert type="error" showIcon closable onClose={() => setError(null)} message={errorText(error)} style={{ marginBottom: 12 }} data-testid="billing-budget-error" />}
      <Table
        size="small"
        rowKey="id"
        pagination={false}
        dataSource={budgets.data?.items ?? []}
        columns={[
          { title: t('bill.tenant'), dataIndex: 'tenant' },
          { title: t('bill.project'), dataIndex: 'project', render: (v?: string) => v || '—' },
          { title: t('bill.amount'), dataIndex: 'amount', align: 'right', render: (v: number, b: Budget) => `${fmt2(v)} ${b.currency ?? ''}` },
          {
            title: t('bill.spent'),
            key: 'spent',
            render: (_: unknown, b: Budget) => {
              const pct = Math.round((b.used_ratio ?? 0) * 100);
              return <Tag color={pct >= 100 ? 'error' : pct >= 80 ? 'warning' : 'default'}>{`${fmt2(b.spent ?? 0)} (${pct}%)`}</Tag>;
            },
          },
          { title: t('bill.hardStop'), dataIndex: 'hard_stop', render: (v?: string) => t(`bill.hardStops.${v || 'none'}`) },
          ...(admin
            ? [{ title: t('common.actions'), key: 'a', render: (_: unknown, b: Budget) => <Button size="small" danger onClick={() => remove.mutate(b.id!)}>{t('common.delete')}</Button> }]
            : []),
        ]}
      />
      {admin && (
        <Form form={form} name="budget" layout="inline" style={{ marginTop: 12 }} onFinish={(v) => put.mutate({ tenant: v.tenant, project: v.project || undefined, amount: Number(v.amount), hard_stop: v.hard_stop || undefined })}>
          <Form.Item name="tenant" label={t('bill.tenant')} rules={[{ required: true }]}><Input style={{ width: 120 }} data-testid="budget-tenant" /></Form.Item>
          <Form.Item name="project" label={t('bill.project')}><Input style={{ width: 120 }} /></Form.Item>
          <Form.Item name="amount" label={t('bill.amount')} rules={[{ required: true }]}><InputNumber data-testid="budget-amount" /></Form.Item>
          <Form.Item name="hard_stop" label={t('bill.hardStop')}>
            <Select style={{ width: 150 }} allowClear options={(['queue', 'refuse'] as const).map((h) => ({ value: h, label: t(`bill.hardStops.${h}`) }))} />
          </Form.Item>
          <Button htmlType="submit" loading={put.isPending} data-testid="budget-add">{t('bill.addBudget')}</Button>
        </Form>
      )}
    </Card>
  );
}

export default function BillingPage() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const admin = user?.role === 'admin';
  const manager = admin || user?.role === 'operator';
  const [period, setPeriod] = useState<Period>('month');
  const [start, setStart] = useState<Dayjs>(dayjs());
  const [form] = Form.useForm();
  const [scope, setScope] = useState<{ tenant?: string; project?: string; user?: string }>({});
  const q: ReportQuery = { period, start: start.format('YYYY-MM-DD'), ...scope };
  const who = !manager
    ? t('bill.scopeUser', { user: user?.username })
    : user?.tenant && !admin
      ? t('bill.scopeTenant', { tenant: user.tenant })
      : scope.tenant
        ? t('bill.scopeTenant', { tenant: scope.tenant })
        : t('bill.scopeAll');
  return (
    <Space direction="vertical" style={{ width: '100%' }} size="middle">
      <Card
        title={
          <Space>
            {t('bill.title')}
            <Tag data-testid="billing-scope">{who}</Tag>
          </Space>
        }
      >
        <Form form={form} name="filter" layout="inline" onFinish={(v) => setScope({ tenant: v.tenant || undefined, project: v.project || undefined, user: v.user || undefined })}>
          <Form.Item label={t('bill.period')}>
            <Select
              value={period}
              onChange={setPeriod}
              style={{ width: 100 }}
              data-testid="billing-period"
              options={(['day', 'week', 'month'] as const).map((p) => ({ value: p, label: t(`bill.periods.${p}`) }))}
            />
          </Form.Item>
          <Form.Item label={t('bill.start')}>
            <DatePicker value={start} onChange={(d) => d && setStart(d)} allowClear={false} picker={period === 'month' ? 'month' : period === 'week' ? 'week' : 'date'} data-testid="billing-start" />
          </Form.Item>
          {manager && (
            <>
              {admin && (
                <Form.Item name="tenant" label={t('bill.tenant')}><Input style={{ width: 120 }} data-testid="billing-tenant" /></Form.Item>
              )}
              <Form.Item name="project" label={t('bill.project')}><Input style={{ width: 120 }} /></Form.Item>
              <Form.Item name="user" label={t('bill.user')}><Input style={{ width: 120 }} /></Form.Item>
              <Button type="primary" htmlType="submit" data-testid="billing-apply">{t('bill.apply')}</Button>
            </>
          )}
        </Form>
      </Card>
      <ReportView q={q} />
      <PriceBook admin={admin} />
      {manager && <Budgets admin={admin} />}
    </Space>
  );
}
