// Node monitoring: CPU, memory, per-device GPU utilisation and memory, disk
// and network I/O of one node as line charts from PromQL range queries over
// 1 h … 7 d. The node is chosen in a picker and kept in ?node= so the Nodes
// page can link here. A series without samples shows an empty state.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Col, Empty, Row, Segmented, Select, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router-dom';
import { nodesApi } from '../../api/nodes';
import { prom, RANGES, stepFor, type Labels, type RangeKey } from '../../api/prometheus';
import { errorText } from '../../components/notify';
import NodeStatusTag from './NodeStatusTag';
import SeriesChart from './SeriesChart';
import { formatBytes, formatPercent, nodeQueries, useRange } from './promql';

const REFRESH_MS = 30_000;

export default function MonitoringPage() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [params, setParams] = useSearchParams();
  const [range, setRange] = useState<RangeKey>('1h');
  const nodeId = params.get('node');

  const nodes = useQuery({ queryKey: ['nodes'], queryFn: nodesApi.list, refetchInterval: 30_000, meta: { inlineErrors: true } });
  const probe = useQuery({ queryKey: ['capability', 'prometheus'], queryFn: prom.buildinfo, staleTime: Infinity, meta: { inlineErrors: true } });
  const items = useMemo(() => nodes.data?.items ?? [], [nodes.data]);
  const node = items.find((n) => n.id === nodeId);

  // Without ?node= the first node is shown, so the page is never blank when nodes exist.
  useEffect(() => {
    if (!nodeId && items.length > 0) setParams({ node: items[0].id }, { replace: true });
  }, [nodeId, items, setParams]);

  const seconds = RANGES.find((r) => r.key === range)!.seconds;
  const q = nodeId && probe.isSuccess ? nodeQueries(nodeId, stepFor(seconds)) : null;
  const cpu = useRange(q?.cpu ?? null, seconds, REFRESH_MS);
  const mem = useRange(q?.memory ?? null, seconds, REFRESH_MS);
  const gpuUtil = useRange(q?.gpuUtil ?? null, seconds, REFRESH_MS);
  const gpuMem = useRange(q?.gpuMem ?? null, seconds, REFRESH_MS);
  const gpuTemp = useRange(q?.gpuTemp ?? null, seconds, REFRESH_MS);
  const gpuPower = useRange(q?.gpuPower ?? null, seconds, REFRESH_MS);
  const disk = useRange(q?.disk ?? null, seconds, REFRESH_MS);
  const net = useRange(q?.net ?? null, seconds, REFRESH_MS);

  const cpuName = useCallback(() => 'CPU', []);
  const byState = useCallback((m: Labels) => m.state ?? '—', []);
  const byDevice = useCallback((m: Labels) => `${m.hw_vendor ?? '?'} #${m.hw_index ?? '?'}`, []);
  const byDirection = useCallback(
    (m: Labels) => (m.direction ? t(`mon.direction.${m.direction}`, { defaultValue: m.direction }) : '—'),
    [t],
  );
  const formatCelsius = useCallback((v: number) => `${Math.round(v * 10) / 10} °C`, []);
  const formatWatts = useCallback((v: number) => `${Math.round(v * 10) / 10} W`, []);
  const bytesPerSec = useCallback((v: number) => `${formatBytes(v)}/s`, []);
  const empty = t('mon.empty');

  return (
    <Space direction="vertical" size="middle" style={{ width: '100%' }}>
      <Card title={t('mon.title')}>
        <Space wrap size="middle">
          <Select
            showSearch
            data-testid="mon-node"
            style={{ minWidth: 280 }}
            placeholder={t('mon.pickNode')}
            value={nodeId ?? undefined}
            onChange={(id: string) => setParams({ node: id })}
            loading={nodes.isPending}
            options={items.map((n) => ({ value: n.id, label: `${n.id} (${n.hostname})` }))}
            notFoundContent={t('mon.noNodes')}
          />
          {node && <NodeStatusTag node={node} />}
          {node && node.vendors.length > 0 && <Typography.Text type="secondary">{node.vendors.join(', ')}</Typography.Text>}
          <Segmented<RangeKey>
            value={range}
            data-testid="mon-range"
            options={RANGES.map((r) => ({ value: r.key, label: t(`metrics.range.${r.key}`) }))}
            onChange={setRange}
          />
          <Button onClick={() => void qc.invalidateQueries({ queryKey: ['promql', 'range-now'] })} data-testid="mon-refresh">
            {t('mon.refresh')}
          </Button>
        </Space>
        {nodes.error && <Alert type="error" showIcon message={errorText(nodes.error)} style={{ marginTop: 16 }} />}
        {probe.isError && <Alert type="warning" showIcon message={t('mon.promUnavailable')} style={{ marginTop: 16 }} />}
      </Card>
      {nodes.isSuccess && items.length === 0 && <Empty description={t('mon.noNodes')} />}
      {q && (
        <Row gutter={[16, 16]}>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.cpu')} query={cpu} legend={cpuName} format={formatPercent} yMax={100} emptyText={empty} testId="mon-cpu" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.memory')} query={mem} legend={byState} format={formatBytes} integer emptyText={empty} testId="mon-memory" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.gpuUtil')} query={gpuUtil} legend={byDevice} format={formatPercent} yMax={100} emptyText={empty} testId="mon-gpu-util" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.gpuMem')} query={gpuMem} legend={byDevice} format={formatBytes} integer emptyText={empty} testId="mon-gpu-mem" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.gpuTemp')} query={gpuTemp} legend={byDevice} format={formatCelsius} emptyText={empty} testId="mon-gpu-temp" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.gpuPower')} query={gpuPower} legend={byDevice} format={formatWatts} emptyText={empty} testId="mon-gpu-power" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.diskIO')} query={disk} legend={byDirection} format={bytesPerSec} emptyText={empty} testId="mon-disk" />
          </Col>
          <Col xs={24} xl={12}>
            <SeriesChart title={t('mon.netIO')} query={net} legend={byDirection} format={bytesPerSec} emptyText={empty} testId="mon-net" />
          </Col>
        </Row>
      )}
    </Space>
  );
}
