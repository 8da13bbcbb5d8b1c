// Clusters (hub): the member clusters side by side as the hub's leader last
// polled them — status, health, nodes, devices by vendor and model, free
// capacity, queue, firing alerts and usage —, charts of devices and tasks
// per cluster, the tasks the hub placed on members, and registration (the
// hub checks the member at once; its refusal is shown with the reason in
// the console's language), and the task wizard placing a task on the best
// member (or a chosen one). The header's cluster switch focuses one member.
import { useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Col, Descriptions, Empty, Form, Input, Modal, Popconfirm, Row, Space, Table, Tag, Typography } from 'antd';
import { PlusOutlined, ReloadOutlined, SendOutlined } from '@ant-design/icons';
import type { EChartsCoreOption } from 'echarts/core';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../api/http';
import { clusters, type Cluster, type ClusterRegistration, type HubTask } from '../../api/clusters';
import { useAuth } from '../../auth/AuthContext';
import EChart from '../../components/EChart';
import { formatTime } from '../../components/format';
import { errorText, showError, showSuccess } from '../../components/notify';
import { setCurrentCluster, useCurrentCluster } from '../../layout/currentCluster';
import TaskWizard from '../tasks/wizard/TaskWizard';

const STATUS_COLOR: Record<Cluster['status'], string> = { unknown: 'default', reachable: 'success', unreachable: 'error' };
const gib = (mib: number) => `${(mib / 1024).toLocaleString(undefined, { maximumFractionDigits: 1 })} GiB`;
const pct = (v: number | null | undefined) => (v == null ? null : `${(v * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`);

function RegisterDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [form] = Form.useForm<ClusterRegistration>();
  const reg = useMutation({
    mutationFn: (v: ClusterRegistration) =>
      clusters.register({
        name: v.name.trim(),
        url: v.url.trim(),
        api_key: v.api_key.trim(),
        ca_pem: v.ca_pem?.trim() || undefined,
        fingerprint: v.fingerprint?.trim() || undefined,
      }),
    onSuccess: (c) => {
      showSuccess(t('clu.registered', { name: c.name }));
      form.resetFields();
      reg.reset();
      void qc.invalidateQueries({ queryKey: ['clusters'] });
      onClose();
    },
  });
  const req = [{ required: true, message: t('clu.required') }];
  return (
    <Modal
      open={open}
      title={t('clu.registerTitle')}
      onCancel={() => {
        reg.reset();
        onClose();
      }}
      okText={t('clu.submit')}
      cancelText={t('clu.cancel')}
      confirmLoading={reg.isPending}
      okButtonProps={{ 'data-testid': 'cluster-register-submit' } as Record<string, string>}
      onOk={() => form.submit()}
      destroyOnHidden
    >
      {reg.error && (
        <Alert
          type="error"
          showIcon
          style={{ marginBottom: 12 }}
          data-testid="cluster-register-error"
          data-code={reg.error instanceof ApiError ? reg.error.code : ''}
          message={errorText(reg.error)}
        />
      )}
      <Form form={form} layout="vertical" onFinish={(v) => reg.mutate(v)}>
        <Form.Item name="name" label={t('clu.name')} extra={t('clu.nameHelp')} rules={req}>
          <Input data-testid="cluster-name" autoComplete="off" />
        </Form.Item>
        <Form.Item name="url" label={t('clu.url')} extra={t('clu.urlHelp')} rules={req}>
          <Input data-testid="cluster-url" autoComplete="off" />
        </Form.Item>
        <Form.Item name="api_key" label={t('clu.apiKey')} extra={t('clu.apiKeyHelp')} rules={req}>
          <Input.Password data-testid="cluster-key" autoComplete="new-password" />
        </Form.Item>
        <Form.Item name="ca_pem" label={t('clu.caPem')} extra={t('clu.caPemHelp')}>
          <Input.TextArea data-testid="cluster-ca" rows={3} />
        </Form.Item>
        <Form.Item name="fingerprint" label={t('clu.fingerprint')} extra={t('clu.fingerprintHelp')}>
          <Input data-testid="cluster-fingerprint" autoComplete="off" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

function ClusterCard({ c, admin }: { c: Cluster; admin: boolean }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: () => clusters.remove(c.id),
    onSuccess: () => {
      showSuccess(t('clu.removed', { name: c.name }));
      if (c.name) setCurrentCluster('');
      void qc.invalidateQueries({ queryKey: ['clusters'] });
    },
    onError: showError,
  });
  const s = c.summary;
  const unknown = t('clu.unknownValue');
  return (
    <Card
      size="small"
      data-testid={`cluster-card-${c.name}`}
      title={
        <Space>
          <Typography.Text strong>{c.name}</Typography.Text>
          <Tag color={STATUS_COLOR[c.status]} data-testid="cluster-status">
            {t(`clu.statuses.${c.status}`)}
          </Tag>
        </Space>
      }
      extra={
        admin && (
          <Popconfirm title={t('clu.removeConfirm', { name: c.name })} onConfirm={() => remove.mutate()}>
            <Button size="small" danger data-testid="cluster-remove">
              {t('clu.remove')}
            </Button>
          </Popconfirm>
        )
      }
    >
      <Descriptions size="small" column={1} bordered>
        <Descriptions.Item label={t('clu.url')}>{c.url}</Descriptions.Item>
        <Descriptions.Item label={t('clu.health')}>
          {s ? <Tag color={s.health === 'ok' ? 'success' : 'warning'}>{t(`clu.healths.${s.health}`)}</Tag> : unknown}
        </Descriptions.Item>
        <Descriptions.Item label={t('clu.version')}>{c.version || unknown}</Descriptions.Item>
        <Descriptions.Item label={t('clu.tls')}>{t(`clu.tlsPins.${c.tls_pinned}`)}</Descriptions.Item>
        <Descriptions.Item label={t('clu.nodes')}>{s ? `${s.nodes_online} / ${s.nodes_total}` : unknown}</Descriptions.Item>
        <Descriptions.Item label={t('clu.devices')}>
          <span data-testid="cluster-devices">{s ? `${s.devices_free} / ${s.devices_online} / ${s.devices_total}` : unknown}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('clu.freeMemory')}>{s ? `${gib(s.free_memory_mib)} / ${gib(s.memory_mib)}` : unknown}</Descriptions.Item>
        <Descriptions.Item label={t('clu.utilization')}>{pct(s?.utilization) ?? unknown}</Descriptions.Item>
        <Descriptions.Item label={t('clu.fragmentation')}>{s ? pct(s.fragmentation) : unknown}</Descriptions.Item>
        <Descriptions.Item label={t('clu.queue')}>
          <span data-testid="cluster-queue">{s ? s.queue_depth : unknown}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('clu.running')}>{s ? s.running : unknown}</Descriptions.Item>
        <Descriptions.Item label={t('clu.alerts')}>
          {s ? <Tag color={s.alerts_firing > 0 ? 'error' : 'default'}>{s.alerts_firing}</Tag> : unknown}
        </Descriptions.Item>
        <Descriptions.Item label={t('clu.usage')}>
          {s
            ? t('clu.usageValue', {
                hours: s.usage_device_hours.toLocaleString(undefined, { maximumFractionDigits: 2 }),
                cost: s.usage_cost.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
                currency: s.currency ?? '',
              })
            : unknown}
        </Descriptions.Item>
        <Descriptions.Item label={t('clu.polledAt')}>{formatTime(c.polled_at)}</Descriptions.Item>
        {c.last_error && (
          <Descriptions.Item label={t('clu.lastError')}>
            <Typography.Text type="danger" data-testid="cluster-last-error">
              {c.last_error}
            </Typography.Text>
          </Descriptions.Item>
        )}
      </Descriptions>
      <Typography.Text strong style={{ display: 'block', margin: '12px 0 4px' }}>
        {t('clu.byModel')}
      </Typography.Text>
      <Table
        size="small"
        pagination={false}
        data-testid="cluster-models"
        rowKey={(g) => `${g.vendor}/${g.model}`}
        dataSource={s?.devices ?? []}
        columns={[
          { title: t('clu.vendor'), dataIndex: 'vendor' },
          { title: t('clu.model'), dataIndex: 'model' },
          { title: t('clu.free'), dataIndex: 'free', align: 'right' },
          { title: t('clu.online'), dataIndex: 'online', align: 'right' },
          { title: t('clu.total'), dataIndex: 'total', align: 'right' },
          { title: t('clu.freeMemory'), dataIndex: 'free_memory_mib', align: 'right', render: (v: number) => gib(v) },
        ]}
      />
    </Card>
  );
}

export default function ClustersPage() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const qc = useQueryClient();
  const admin = user?.role === 'admin';
  const focus = useCurrentCluster();
  const [registering, setRegistering] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const canSubmit = user?.role !== 'viewer';
  const list = useQuery({ queryKey: ['clusters'], queryFn: clusters.list, refetchInterval: 10_000, retry: false, meta: { inlineErrors: true } });
  const tasks = useQuery({
    queryKey: ['clusters', 'tasks', focus],
    queryFn: () => clusters.tasks(focus || undefined),
    enabled: list.isSuccess,
    refetchInterval: 10_000,
    meta: { inlineErrors: true },
  });
  const refresh = useMutation({
    mutationFn: clusters.refresh,
    onSuccess: (items) => qc.setQueryData(['clusters'], items),
    onError: showError,
  });
  const all = list.data ?? [];
  const shown = focus && all.some((c) => c.name === focus) ? all.filter((c) => c.name === focus) : all;

  const devicesChart = useMemo<EChartsCoreOption>(() => {
    const names = shown.map((c) => c.name);
    const v = (f: (c: Cluster) => number) => shown.map((c) => (c.summary ? f(c) : null));
    return {
      tooltip: { trigger: 'axis' },
      legend: { top: 0 },
      grid: { left: 50, right: 20, top: 36, bottom: 30 },
      xAxis: { type: 'category', data: names },
      yAxis: { type: 'value', minInterval: 1 },
      series: [
        { type: 'bar', stack: 'dev', name: t('clu.seriesFree'), data: v((c) => c.summary!.devices_free) },
        { type: 'bar', stack: 'dev', name: t('clu.seriesBusy'), data: v((c) => c.summary!.devices_online - c.summary!.devices_free) },
        { type: 'bar', stack: 'dev', name: t('clu.seriesOffline'), data: v((c) => c.summary!.devices_total - c.summary!.devices_online) },
      ],
    };
  }, [shown, t]);
  const tasksChart = useMemo<EChartsCoreOption>(
    () => ({
      tooltip: { trigger: 'axis' },
      legend: { top: 0 },
      grid: { left: 50, right: 20, top: 36, bottom: 30 },
      xAxis: { type: 'category', data: shown.map((c) => c.name) },
      yAxis: { type: 'value', minInterval: 1 },
      series: [
        { type: 'bar', name: t('clu.seriesQueue'), data: shown.map((c) => c.summary?.queue_depth ?? null) },
        { type: 'bar', name: t('clu.seriesRunning'), data: shown.map((c) => c.summary?.running ?? null) },
      ],
    }),
    [shown, t],
  );

  if (list.error instanceof ApiError && list.error.status === 404) {
    return <Alert type="info" showIcon message={t('clu.notHub')} data-testid="clusters-not-hub" />;
  }
  if (list.error) return <Alert type="error" showIcon message={errorText(list.error)} />;

  return (
    <Space direction="vertical" style={{ width: '100%' }} size="middle">
      <Card
        size="small"
        title={t('clu.title')}
        extra={
          <Space>
            {canSubmit && all.length > 0 && (
              <Button icon={<SendOutlined />} data-testid="hub-submit" onClick={() => setSubmitting(true)}>
                {t('clu.submitTask')}
              </Button>
            )}
            <Button icon={<ReloadOutlined />} data-testid="clusters-refresh" loading={refresh.isPending} onClick={() => refresh.mutate()} disabled={!admin}>
              {t('clu.refresh')}
            </Button>
            {admin && (
              <Button type="primary" icon={<PlusOutlined />} data-testid="cluster-register" onClick={() => setRegistering(true)}>
                {t('clu.register')}
              </Button>
            )}
          </Space>
        }
      >
        {focus && shown.length === 1 && (
          <Space style={{ marginBottom: 12 }}>
            <Tag color="blue" data-testid="cluster-focus">
              {t('clu.focused', { name: focus })}
            </Tag>
            <Button size="small" onClick={() => setCurrentCluster('')}>
              {t('clu.showAll')}
            </Button>
          </Space>
        )}
        {list.isLoading ? (
          <Card loading bordered={false} />
        ) : all.length === 0 ? (
          <Empty description={t('clu.empty')} data-testid="clusters-empty" />
        ) : (
          <Row gutter={[16, 16]}>
            <Col xs={24} lg={12}>
              <Card size="small" title={t('clu.chartDevices')} data-testid="clusters-chart-devices">
                <EChart option={devicesChart} height={240} />
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card size="small" title={t('clu.chartQueue')} data-testid="clusters-chart-tasks">
                <EChart option={tasksChart} height={240} />
              </Card>
            </Col>
          </Row>
        )}
      </Card>
      <Row gutter={[16, 16]} data-testid="clusters-side-by-side">
        {shown.map((c) => (
          <Col key={c.id} xs={24} md={12} xl={Math.max(8, Math.floor(24 / Math.max(shown.length, 1)))}>
            <ClusterCard c={c} admin={admin} />
          </Col>
        ))}
      </Row>
      {all.length > 0 && (
        <Card size="small" title={t('clu.tasks')}>
          <Table<HubTask>
            size="small"
            rowKey="id"
            data-testid="hub-tasks"
            loading={tasks.isLoading}
            dataSource={tasks.data?.items ?? []}
            locale={{ emptyText: t('clu.noTasks') }}
            pagination={false}
            columns={[
              { title: 'ID', dataIndex: 'id' },
              { title: t('clu.taskName'), dataIndex: 'name' },
              { title: t('clu.cluster'), dataIndex: 'cluster' },
              { title: t('clu.memberTask'), dataIndex: 'member_task_id' },
              { title: t('clu.owner'), dataIndex: 'owner' },
              { title: t('clu.state'), dataIndex: 'state', render: (v: string) => <Tag>{v}</Tag> },
              { title: t('clu.reason'), dataIndex: 'reason', ellipsis: true },
              { title: t('clu.forwardedAt'), dataIndex: 'created_at', render: (v: string) => formatTime(v) },
            ]}
          />
        </Card>
      )}
      <RegisterDialog open={registering} onClose={() => setRegistering(false)} />
      <TaskWizard
        open={submitting}
        onClose={() => setSubmitting(false)}
        hub={{
          members: all,
          onPlaced: (h) => {
            setSubmitting(false);
            showSuccess(t('clu.placed', { name: h.name, cluster: h.cluster, id: h.member_task_id }));
          },
        }}
      />
    </Space>
  );
}
