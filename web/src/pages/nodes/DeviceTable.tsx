// One node's accelerators: the inventory the agent reported (model, UUID,
// memory, live utilisation) joined with the scheduler's ledger view
// (GET /api/v1/slices: allocated/free memory and compute, slices).
import { useMemo, type HTMLAttributes } from 'react';
import { Progress, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import type { HFNode, SliceDevice } from '../../api/nodes';
import { formatMiB } from './promql';

export interface DeviceRow {
  key: string;
  vendor: string;
  index: number;
  model: string;
  uuid?: string | null;
  memoryMiB: number;
  /** null or absent: unknown (N/A from the CLI, e.g. a GPU in MIG mode), shown as "—", never 0 %. */
  utilization?: number | null;
  slice?: SliceDevice;
}

/** joinDevices merges inventory and ledger rows by (vendor, index). */
export function joinDevices(node: HFNode, slices: SliceDevice[]): DeviceRow[] {
  const rows = new Map<string, DeviceRow>();
  for (const snap of node.inventory) {
    for (const d of snap.devices ?? []) {
      const key = `${snap.vendor}/${d.index}`;
      rows.set(key, {
        key,
        vendor: snap.vendor,
        index: d.index,
        model: d.model,
        uuid: d.uuid,
        memoryMiB: d.memory_total_mib,
        utilization: d.utilization_percent,
      });
    }
  }
  for (const s of slices) {
    if (s.node !== node.id) continue;
    const key = `${s.vendor}/${s.index}`;
    const row = rows.get(key) ?? { key, vendor: s.vendor, index: s.index, model: s.model, uuid: s.uuid, memoryMiB: s.memory_mib };
    row.slice = s;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.vendor.localeCompare(b.vendor) || a.index - b.index);
}

const STATE_COLORS = { free: 'green', fragmented: 'gold', allocated: 'blue' } as const;

export default function DeviceTable({ node, slices }: { node: HFNode; slices: SliceDevice[] }) {
  const { t } = useTranslation();
  const rows = useMemo(() => joinDevices(node, slices), [node, slices]);

  const columns: ColumnsType<DeviceRow> = [
    { title: t('nodes.dev.vendor'), dataIndex: 'vendor', width: 80 },
    { title: t('nodes.dev.index'), dataIndex: 'index', width: 56 },
    { title: t('nodes.dev.model'), dataIndex: 'model', ellipsis: true },
    {
      title: t('nodes.dev.uuid'),
      dataIndex: 'uuid',
      width: 130,
      ellipsis: true,
      render: (u?: string | null) => (u ? <Typography.Text copyable={{ text: u }}>{u}</Typography.Text> : '—'),
    },
    { title: t('nodes.dev.memory'), dataIndex: 'memoryMiB', width: 90, render: (m: number) => formatMiB(m) },
    {
      title: t('nodes.dev.allocMem'),
      key: 'allocMem',
      width: 100,
      render: (_, r) => (r.slice ? formatMiB(r.slice.allocated_memory_mib) : '—'),
    },
    {
      title: t('nodes.dev.freeMem'),
      key: 'freeMem',
      width: 90,
      render: (_, r) => (r.slice ? formatMiB(Math.max(0, r.slice.memory_mib - r.slice.allocated_memory_mib)) : '—'),
    },
    {
      title: t('nodes.dev.allocCompute'),
      key: 'allocCompute',
      width: 110,
      render: (_, r) => (r.slice ? <Progress percent={r.slice.allocated_compute_percent} size="small" /> : '—'),
    },
    {
      title: t('nodes.dev.freeCompute'),
      key: 'freeCompute',
      width: 90,
      render: (_, r) => (r.slice ? `${r.slice.free_compute_percent}%` : '—'),
    },
    {
      title: t('nodes.dev.state'),
      key: 'state',
      width: 90,
      render: (_, r) =>
        r.slice ? (
          <Tag color={STATE_COLORS[r.slice.state]}>{t(`nodes.dev.stateName.${r.slice.state}`)}</Tag>
        ) : (
          <Tag>{t('nodes.dev.stateName.unknown')}</Tag>
        ),
    },
    { title: t('nodes.dev.slices'), key: 'slices', width: 60, render: (_, r) => r.slice?.slices.length ?? 0 },
    {
      title: t('nodes.dev.util'),
      dataIndex: 'utilization',
      width: 70,
      render: (u?: number | null) => (u == null ? '—' : `${Math.round(u)}%`),
    },
  ];

  if (rows.length === 0) return <Typography.Text type="secondary">{t('nodes.noDevices')}</Typography.Text>;
  return (
    <Table<DeviceRow>
      rowKey="key"
      size="small"
      columns={columns}
      dataSource={rows}
      pagination={false}
      data-testid={`devices-${node.id}`}
      onRow={(r) =>
        ({ 'data-testid': 'device-row', 'data-device': r.key, 'data-util': r.utilization == null ? 'unknown' : String(Math.round(r.utilization)) }) as HTMLAttributes<HTMLElement>
      }
    />
  );
}
