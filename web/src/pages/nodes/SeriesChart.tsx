// A small line chart of one range query with a card title, inline query
// errors, and an empty state when the query returns no samples: a chart
// never shows invented points. Series names come from metric labels, i.e.
// untrusted data, so the tooltip is built from DOM text nodes.
import { useMemo } from 'react';
import { Alert, Card, Empty, Spin } from 'antd';
import type { UseQueryResult } from '@tanstack/react-query';
import type { EChartsCoreOption } from 'echarts/core';
import dayjs from 'dayjs';
import EChart from '../../components/EChart';
import { errorText } from '../../components/notify';
import { sampleValue, type Labels, type QueryData } from '../../api/prometheus';
import type { RangeAnswer } from './promql';

interface Props {
  title: string;
  query: UseQueryResult<RangeAnswer>;
  /** legend names a series from its labels. */
  legend: (m: Labels) => string;
  format: (v: number) => string;
  emptyText: string;
  testId: string;
  height?: number;
  /** yMax pins the top of the value axis (100 for percentages of a whole). */
  yMax?: number;
  /** integer: the values are counts or bytes, so no fractional ticks. */
  integer?: boolean;
}

interface TooltipParam {
  seriesName: string;
  value: [number, number | null];
  color: string;
}

function tooltipOf(format: (v: number) => string) {
  return (params: TooltipParam | TooltipParam[]): HTMLElement => {
    const list = Array.isArray(params) ? params : [params];
    const root = document.createElement('div');
    const head = document.createElement('div');
    head.style.fontWeight = '600';
    head.textContent = list.length ? dayjs(list[0].value[0]).format('YYYY-MM-DD HH:mm:ss') : '';
    root.appendChild(head);
    for (const p of list.slice(0, 24)) {
      const line = document.createElement('div');
      const dot = document.createElement('span');
      dot.style.cssText = `display:inline-block;width:8px;height:8px;border-radius:4px;margin-right:6px;background:${p.color}`;
      line.appendChild(dot);
      line.appendChild(document.createTextNode(`${p.seriesName}: ${p.value[1] === null ? '—' : format(p.value[1])}`));
      root.appendChild(line);
    }
    return root;
  };
}

/**
 * hasSamples is true when at least one series has one finite value. A null
 * result or a series without float values (a native histogram) counts as
 * empty: the server's JSON encodes empty lists as null in places.
 */
export function hasSamples(data?: QueryData): boolean {
  return data?.resultType === 'matrix' && (data.result ?? []).some((s) => (s.values ?? []).some(([, v]) => sampleValue(v) !== null));
}

/**
 * uniqueNames keeps every series apart: series whose legend names collide
 * (e.g. a GPU and a MIG instance with the same index) get the labels that
 * tell them apart appended, since ECharts merges series of one name.
 */
export function uniqueNames(metrics: Labels[], names: string[]): string[] {
  const groups = new Map<string, number[]>();
  names.forEach((n, i) => groups.set(n, [...(groups.get(n) ?? []), i]));
  const out = [...names];
  for (const [name, idx] of groups) {
    if (idx.length < 2) continue;
    const keys = [...new Set(idx.flatMap((i) => Object.keys(metrics[i])))].filter(
      (k) => new Set(idx.map((i) => metrics[i][k] ?? '')).size > 1,
    );
    for (const i of idx) {
      const extra = keys.map((k) => `${k}=${metrics[i][k] ?? ''}`).join(', ');
      out[i] = extra ? `${name} (${extra})` : `${name} [${i}]`;
    }
  }
  return out;
}

export default function SeriesChart({ title, query, legend, format, emptyText, testId, height = 240, yMax, integer }: Props) {
  const data = query.data?.data;
  const span = query.data?.window;
  const option = useMemo<EChartsCoreOption | null>(() => {
    if (!hasSamples(data) || data?.resultType !== 'matrix') return null;
    const shown = (data.result ?? []).filter((s) => s.values?.length);
    const names = uniqueNames(shown.map((s) => s.metric), shown.map((s) => legend(s.metric)));
    const series = shown
      .map((s, i) => ({
        name: names[i],
        type: 'line',
        showSymbol: false,
        connectNulls: false,
        data: s.values.map(([ts, v]) => [ts * 1000, sampleValue(v)]),
      }))
      .sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
    return {
      animation: false,
      tooltip: { trigger: 'axis', confine: true, formatter: tooltipOf(format) },
      legend: { type: 'scroll', bottom: 0 },
      grid: { left: 72, right: 16, top: 12, bottom: 48 },
      // The axis spans the whole window asked for, so a node that started
      // reporting five minutes ago reads as such on a one-hour chart.
      xAxis: {
        type: 'time',
        min: span ? span[0] * 1000 : undefined,
        max: span ? span[1] * 1000 : undefined,
        axisLabel: { hideOverlap: true },
      },
      yAxis: {
        type: 'value',
        min: 0,
        max: yMax === undefined ? undefined : (extent: { max: number }) => Math.max(yMax, extent.max),
        minInterval: integer ? 1 : undefined,
        axisLabel: { formatter: (v: number) => format(v) },
      },
      series,
    };
  }, [data, span, legend, format, yMax, integer]);

  let body;
  if (query.error) body = <Alert type="error" showIcon message={errorText(query.error)} />;
  else if (query.isPending) body = <Spin />;
  else if (!option) body = <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={emptyText} data-testid={`${testId}-empty`} />;
  else body = <EChart option={option} height={height} />;

  return (
    <Card size="small" title={title} data-testid={testId} data-state={query.error ? 'error' : query.isPending ? 'loading' : option ? 'data' : 'empty'}>
      <div style={{ minHeight: height }}>{body}</div>
    </Card>
  );
}
