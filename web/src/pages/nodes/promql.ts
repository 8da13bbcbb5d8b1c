// PromQL for the node charts. The agent's collector labels every series it
// pushes with host_name = the node id, so one label selects a node. Host
// metrics are the contrib hostmetrics receiver's names after the OTLP →
// Prometheus translation; GPU metrics are the receivers' hw_gpu_* names.
import { useQuery } from '@tanstack/react-query';
import { prom, stepFor, type PromResponse, type QueryData } from '../../api/prometheus';

/** RangeAnswer is a range query's answer with the window it covered (unix seconds). */
export type RangeAnswer = PromResponse<QueryData> & { window: [number, number] };

/** quote makes a PromQL string literal (JSON string escapes are valid PromQL). */
export function quote(v: string): string {
  return JSON.stringify(v);
}

/**
 * rateWindow is the rate() window for a step: at least 60 s (six samples at
 * the collector's 10 s interval, so a missed push leaves no gap) and at
 * least two steps, so wide ranges still average over every sample.
 */
export function rateWindow(step: number): string {
  return `${Math.max(60, 2 * step)}s`;
}

export interface NodeQueries {
  cpu: string;
  memory: string;
  gpuUtil: string;
  gpuMem: string;
  gpuTemp: string;
  gpuPower: string;
  disk: string;
  net: string;
}

export function nodeQueries(nodeId: string, step: number): NodeQueries {
  const h = `host_name=${quote(nodeId)}`;
  const w = rateWindow(step);
  return {
    cpu:
      `100 * (1 - sum(rate(system_cpu_time_seconds_total{${h},state="idle"}[${w}]))` +
      ` / sum(rate(system_cpu_time_seconds_total{${h}}[${w}])))`,
    memory: `sum by (state) (system_memory_usage_bytes{${h}})`,
    gpuUtil: `100 * max by (hw_vendor, hw_index, hw_id) (hw_gpu_utilization_ratio{${h}})`,
    gpuMem: `max by (hw_vendor, hw_index, hw_id) (hw_gpu_memory_usage_bytes{${h}})`,
    gpuTemp: `max by (hw_vendor, hw_index, hw_id) (hw_gpu_temperature_celsius{${h}})`,
    gpuPower: `max by (hw_vendor, hw_index, hw_id) (hw_gpu_power_draw_watts{${h}})`,
    disk: `sum by (direction) (rate(system_disk_io_bytes_total{${h}}[${w}]))`,
    net: `sum by (direction) (rate(system_network_io_bytes_total{${h},device!="lo"}[${w}]))`,
  };
}

export const CLUSTER_QUERIES = {
  gpuUtil: '100 * avg by (hw_vendor) (hw_gpu_utilization_ratio)',
  nodesUp: 'sum(heteroflow_node_up)',
  frag: 'max(heteroflow_fragmentation_score)',
};

/**
 * useRange runs one range query ending now over `seconds`; the query key
 * holds the expression and window, so each chart refreshes on its own.
 */
export function useRange(expr: string | null, seconds: number, refetchInterval: number | false = false) {
  const step = stepFor(seconds);
  return useQuery({
    queryKey: ['promql', 'range-now', expr, seconds],
    queryFn: async (): Promise<RangeAnswer> => {
      const end = Math.floor(Date.now() / 1000);
      const res = await prom.queryRange(expr!, end - seconds, end, step);
      return { ...res, window: [end - seconds, end] };
    },
    enabled: expr !== null,
    refetchInterval,
    meta: { inlineErrors: true },
  });
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** formatBytes renders a byte count with binary units (1536 → "1.5 KiB"). */
export function formatBytes(v: number): string {
  let n = Math.abs(v);
  let i = 0;
  while (n >= 1024 && i < BYTE_UNITS.length - 1) {
    n /= 1024;
    i++;
  }
  const s = n >= 100 || i === 0 ? n.toFixed(0) : n.toFixed(1);
  return `${v < 0 ? '-' : ''}${s} ${BYTE_UNITS[i]}`;
}

export function formatMiB(mib: number): string {
  return formatBytes(mib * 1024 * 1024);
}

export function formatPercent(v: number): string {
  return `${v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1)}%`;
}
