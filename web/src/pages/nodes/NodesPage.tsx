// Nodes: every enrolled node with its status, vendors and accelerators
// (inventory joined with the ledger's allocations), cordon / uncordon /
// drain / revoke for operators, a link to its monitoring charts, and bootstrap
// token management for admins.
import { useEffect, useMemo, useState, type HTMLAttributes, type Key } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Input, Popconfirm, Select, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';
import { nodesApi, type HFNode, type SchedulingOp } from '../../api/nodes';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { formatMap, formatTime } from '../../components/format';
import { errorText, showSuccess } from '../../components/notify';
import BootstrapTokens from './BootstrapTokens';
import DeviceTable from './DeviceTable';
import NodeStatusTag from './NodeStatusTag';
import { formatMiB } from './promql';

/** EXPAND_ALL_UP_TO: small fleets open every node's device table at once. */
const EXPAND_ALL_UP_TO = 10;

function matches(n: HFNode, q: string, vendor?: string): boolean {
  if (vendor && !n.vendors.includes(vendor)) return false;
  if (!q) return true;
  const hay = [n.id, n.hostname, ...formatMap(n.labels)].join(' ').toLowerCase();
  return hay.includes(q.toLowerCase());
}

function OpButtons({ node }: { node: HFNode }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const op = useMutation({
    mutationFn: (o: SchedulingOp) => nodesApi.op(node.id, o),
    onSuccess: (n, o) => {
      showSuccess(t('nodes.opDone', { id: n.id, op: t(`nodes.${o}`) }));
      void qc.invalidateQueries({ queryKey: ['nodes'] });
      void qc.invalidateQueries({ queryKey: ['slices'] });
    },
  });
  const confirm = (o: SchedulingOp, title: string, danger = false) => (
    <Popconfirm title={title} okText={t('common.yes')} cancelText={t('common.no')} onConfirm={() => op.mutateAsync(o)}>
      <Button size="small" type="link" danger={danger} loading={op.isPending && op.variables === o} data-testid={`node-${o}`}>
        {t(`nodes.${o}`)}
      </Button>
    </Popconfirm>
  );
  return (
    <>
      {!node.cordoned && !node.draining && confirm('cordon', t('nodes.confirmCordon', { id: node.id }))}
      {!node.draining && confirm('drain', t('nodes.confirmDrain', { id: node.id }), true)}
      {(node.cordoned || node.draining) && confirm('uncordon', t('nodes.confirmUncordon', { id: node.id }))}
      {confirm('revoke', t('nodes.confirmRevoke', { id: node.id }), true)}
    </>
  );
}

export default function NodesPage() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const canOperate = atLeast(user?.role, 'operator');
  const isAdmin = atLeast(user?.role, 'admin');
  const [q, setQ] = useState('');
  const [vendor, setVendor] = useState<string | undefined>();
  const [expanded, setExpanded] = useState<readonly Key[] | null>(null);

  const nodes = useQuery({ queryKey: ['nodes'], queryFn: nodesApi.list, refetchInterval: 10_000, meta: { inlineErrors: true } });
  const slices = useQuery({ queryKey: ['slices'], queryFn: nodesApi.slices, refetchInterval: 10_000, meta: { inlineErrors: true } });

  const all = useMemo(() => nodes.data?.items ?? [], [nodes.data]);
  const vendors = useMemo(() => [...new Set(all.flatMap((n) => n.vendors))].sort(), [all]);
  const shown = useMemo(() => all.filter((n) => matches(n, q.trim(), vendor)), [all, q, vendor]);

  useEffect(() => {
    if (expanded === null && nodes.data) setExpanded(all.length <= EXPAND_ALL_UP_TO ? all.map((n) => n.id) : []);
  }, [expanded, nodes.data, all]);

  // Sized to fit 1440 px with the side menu, without a horizontal scroll:
  // the name column shows the node's name (--name or host) above its id and
  // version, labels wrap instead of being cut.
  const columns: ColumnsType<HFNode> = [
    {
      title: t('nodes.id'),
      dataIndex: 'id',
      width: 200,
      render: (id: string, n) => (
        <Space direction="vertical" size={0}>
          <Typography.Text strong data-testid="node-name">
            {n.hostname || id}
          </Typography.Text>
          <Typography.Text type="secondary" data-testid="node-id" style={{ fontSize: 12 }}>
            {id}
          </Typography.Text>
          {n.version && (
            <Typography.Text type="secondary" style={{ fontSize: 12 }}>
              {n.version}
            </Typography.Text>
          )}
        </Space>
      ),
    },
    { title: t('nodes.status'), key: 'status', width: 96, render: (_, n) => <NodeStatusTag node={n} /> },
    {
      title: t('nodes.vendors'),
      dataIndex: 'vendors',
      width: 110,
      render: (vs: string[]) => (vs.length ? <Space size={[0, 4]} wrap>{vs.map((v) => <Tag key={v}>{v}</Tag>)}</Space> : '—'),
    },
    { title: t('nodes.devices'), dataIndex: 'device_count', width: 64 },
    {
      title: t('nodes.cpuMem'),
      key: 'cpumem',
      width: 150,
      render: (_, n) => (
        <Space direction="vertical" size={0}>
          <span>{t('nodes.cores', { count: n.cpu_count })}</span>
          <Typography.Text type="secondary">
            {formatMiB(n.memory_free_mib)} / {formatMiB(n.memory_total_mib)}
          </Typography.Text>
        </Space>
      ),
    },
    { title: t('nodes.health'), dataIndex: 'health', width: 80, render: (h: string) => <Tag color={h === 'ok' ? 'green' : 'orange'}>{h ? t(`nodes.healthWord.${h}`, { defaultValue: h }) : '—'}</Tag> },
    {
      title: t('nodes.labels'),
      dataIndex: 'labels',
      render: (l: Record<string, string>) =>
        formatMap(l).length ? (
          <Space size={[0, 4]} wrap data-testid="node-labels">
            {formatMap(l).map((kv) => (
              <Tag key={kv} style={{ marginInlineEnd: 4 }}>
                {kv}
              </Tag>
            ))}
          </Space>
        ) : (
          '—'
        ),
    },
    { title: t('nodes.heartbeat'), dataIndex: 'last_heartbeat', width: 150, render: formatTime },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 150,
      render: (_, n) => (
        <Space size={0} wrap>
          <Link to={`/monitoring?node=${encodeURIComponent(n.id)}`} data-testid="node-monitor">
            <Button size="small" type="link">
              {t('nodes.monitor')}
            </Button>
          </Link>
          {canOperate && <OpButtons node={n} />}
        </Space>
      ),
    },
  ];

  return (
    <Space direction="vertical" size="middle" style={{ width: '100%' }}>
      <Card
        title={t('nodes.title')}
        extra={
          <Button onClick={() => void Promise.all([nodes.refetch(), slices.refetch()])} data-testid="nodes-refresh">
            {t('common.refresh')}
          </Button>
        }
      >
        <Space wrap style={{ marginBottom: 16 }}>
          <Input.Search allowClear placeholder={t('nodes.search')} onSearch={setQ} onChange={(e) => setQ(e.target.value)} style={{ width: 260 }} />
          <Select
            allowClear
            placeholder={t('nodes.vendorFilter')}
            value={vendor}
            onChange={setVendor}
            options={vendors.map((v) => ({ value: v, label: v }))}
            style={{ width: 160 }}
          />
        </Space>
        {nodes.error && <Alert type="error" showIcon message={errorText(nodes.error)} style={{ marginBottom: 16 }} />}
        {slices.error && <Alert type="warning" showIcon message={errorText(slices.error)} style={{ marginBottom: 16 }} />}
        <Table<HFNode>
          rowKey="id"
          size="middle"
          columns={columns}
          dataSource={shown}
          loading={nodes.isPending}
          pagination={{ pageSize: 50, hideOnSinglePage: true }}
          onRow={(n) => ({ 'data-testid': 'node-row', 'data-node': n.id }) as HTMLAttributes<HTMLElement>}
          expandable={{
            expandedRowKeys: expanded ?? [],
            onExpandedRowsChange: (keys) => setExpanded(keys),
            expandedRowRender: (n) => <DeviceTable node={n} slices={slices.data?.items ?? []} />,
            rowExpandable: () => true,
          }}
        />
      </Card>
      {isAdmin && <BootstrapTokens />}
    </Space>
  );
}
