// Line chart of a range query (matrix result). Series names come from metric
// labels, i.e. from data any exporter can set, so the tooltip is built from
// DOM nodes with textContent rather than from an HTML string.
import { useMemo } from 'react';
import { Empty } from 'antd';
import { useTranslation } from 'react-i18next';
import type { EChartsCoreOption } from 'echarts/core';
import dayjs from 'dayjs';
import EChart from '../../components/EChart';
import { compactNames, sampleValue, type QueryData } from '../../api/prometheus';

/** MAX_SERIES keeps the chart readable and the page responsive. */
export const MAX_SERIES = 100;

interface TooltipParam {
  seriesName: string;
  value: [number, number | null];
  color: string;
}

function tooltip(params: TooltipParam | TooltipParam[]): HTMLElement {
  const list = Array.isArray(params) ? params : [params];
  const root = document.createElement('div');
  const head = document.createElement('div');
  head.style.fontWeight = '600';
  head.textContent = list.length ? dayjs(list[0].value[0]).format('YYYY-MM-DD HH:mm:ss') : '';
  root.appendChild(head);
  for (const p of list.slice(0, 20)) {
    const line = document.createElement('div');
    const dot = document.createElement('span');
    dot.style.cssText = `display:inline-block;width:8px;height:8px;border-radius:4px;margin-right:6px;background:${p.color}`;
    line.appendChild(dot);
    line.appendChild(document.createTextNode(`${p.seriesName}: ${p.value[1] ?? '—'}`));
    root.appendChild(line);
  }
  return root;
}

export default function RangeChart({ data }: { data: QueryData }) {
  const { t } = useTranslation();
  const option = useMemo<EChartsCoreOption | null>(() => {
    if (data.resultType !== 'matrix' || data.result.length === 0) return null;
    const shown = data.result.slice(0, MAX_SERIES);
    const names = compactNames(shown.map((s) => s.metric));
    const series = shown.map((s, i) => ({
      name: names[i],
      type: 'line',
      showSymbol: false,
      connectNulls: false,
      data: s.values.map(([ts, v]) => [ts * 1000, sampleValue(v)]),
    }));
    return {
      animation: false,
      tooltip: { trigger: 'axis', confine: true, formatter: tooltip },
      // Compact names fit many to a line; the legend wraps over a few lines.
      legend: { type: 'plain', bottom: 0, height: 72, textStyle: { fontSize: 11 }, itemGap: 8 },
      grid: { left: 60, right: 24, top: 16, bottom: 96 },
      xAxis: { type: 'time' },
      yAxis: { type: 'value', scale: true },
      dataZoom: [{ type: 'inside' }],
      series,
    };
  }, [data]);

  if (!option) return <Empty description={t('metrics.noData')} />;
  return <EChart option={option} height={400} />;
}
