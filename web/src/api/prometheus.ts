// Client for the Prometheus-compatible query API the server mounts under
// /prometheus (Prometheus HTTP API envelope: {status, data, warnings}).
import { api } from './client';
import { currentCluster } from '../layout/currentCluster';

// On a hub the header's cluster switch narrows PromQL to one member
// (cluster=<name>; servers that are not hubs ignore the parameter).
const scope = () => ({ cluster: currentCluster() || undefined });

export type Labels = Record<string, string>;
export type Sample = [number, string]; // [unix seconds, value as string]

export type QueryData =
  | { resultType: 'vector'; result: { metric: Labels; value: Sample }[] }
  | { resultType: 'matrix'; result: { metric: Labels; values: Sample[] }[] }
  | { resultType: 'scalar'; result: Sample }
  | { resultType: 'string'; result: Sample };

export interface PromResponse<T> {
  status: 'success';
  data: T;
  warnings?: string[];
}

const base = '/prometheus/api/v1';

export const prom = {
  query: (query: string, time: number) => api.get<PromResponse<QueryData>>(`${base}/query`, { query, time, ...scope() }),
  queryRange: (query: string, start: number, end: number, step: number) =>
    api.get<PromResponse<QueryData>>(`${base}/query_range`, { query, start, end, step, ...scope() }),
  /** metricNames lists every metric name (label __name__). */
  metricNames: () => api.get<PromResponse<string[]>>(`${base}/label/__name__/values`),
  /** labelNames lists the label names of one metric's series. */
  labelNames: (metric: string) => api.get<PromResponse<string[]>>(`${base}/labels`, { 'match[]': metric }),
  /** labelValues lists one label's values among one metric's series. */
  labelValues: (label: string, metric: string) =>
    api.get<PromResponse<string[]>>(`${base}/label/${encodeURIComponent(label)}/values`, { 'match[]': metric }),
  buildinfo: () => api.get<PromResponse<{ version: string }>>(`${base}/status/buildinfo`),
};

/** RANGES are the brief's time windows (1 h … 7 d), in seconds. */
export const RANGES = [
  { key: '1h', seconds: 3600 },
  { key: '6h', seconds: 6 * 3600 },
  { key: '24h', seconds: 24 * 3600 },
  { key: '3d', seconds: 3 * 24 * 3600 },
  { key: '7d', seconds: 7 * 24 * 3600 },
] as const;
export type RangeKey = (typeof RANGES)[number]['key'];

/**
 * stepFor picks a resolution of about 300 points per series (enough for a
 * chart a few hundred pixels wide, far under Prometheus' 11,000-point limit),
 * never finer than 15 s, the default scrape interval.
 */
export function stepFor(rangeSeconds: number): number {
  return Math.max(15, Math.ceil(rangeSeconds / 300));
}

/** seriesName renders labels the way PromQL prints them: name{k="v", …}. */
export function seriesName(metric: Labels): string {
  const { __name__: name = '', ...rest } = metric;
  const pairs = Object.keys(rest)
    .sort()
    .map((k) => `${k}=${JSON.stringify(rest[k])}`);
  return pairs.length ? `${name}{${pairs.join(', ')}}` : name || '{}';
}

/**
 * compactNames names each series by the labels that differ between the
 * series of one answer (the metric name and labels all share are left
 * out), so legends stay short: {hw_index="3"} rather than every label.
 */
export function compactNames(metrics: Labels[]): string[] {
  if (metrics.length < 2) return metrics.map(seriesName);
  const keys = [...new Set(metrics.flatMap((m) => Object.keys(m)))].sort();
  const varying = keys.filter((k) => new Set(metrics.map((m) => m[k] ?? '')).size > 1);
  return metrics.map((m) => {
    const pairs = varying.map((k) => `${k}=${JSON.stringify(m[k] ?? '')}`);
    return pairs.length ? `{${pairs.join(', ')}}` : seriesName(m);
  });
}

/** sampleValue parses Prometheus' string values; NaN and ±Inf become null (a gap). */
export function sampleValue(v: string): number | null {
  const n = Number.parseFloat(v);
  return Number.isFinite(n) ? n : null;
}
