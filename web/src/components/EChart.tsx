// Minimal ECharts wrapper: one chart instance per element, options replaced
// on change, resized with its container, disposed on unmount. Only the line
// and bar charts and the components the console uses are bundled.
import { useEffect, useRef } from 'react';
import * as echarts from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import type { EChartsCoreOption } from 'echarts/core';

echarts.use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, CanvasRenderer]);

export default function EChart({ option, height = 360 }: { option: EChartsCoreOption; height?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    if (!ref.current) return;
    const c = echarts.init(ref.current);
    chart.current = c;
    const observer = new ResizeObserver(() => c.resize());
    observer.observe(ref.current);
    return () => {
      observer.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  // What the chart draws, for tests and accessibility tools: the series'
  // names (legend entries) and the legend's layout.
  const series = Array.isArray(option.series) ? (option.series as { name?: string }[]) : [];
  const legend = (option.legend as { type?: string } | undefined)?.type ?? 'plain';
  return (
    <div
      ref={ref}
      style={{ width: '100%', height }}
      data-testid="echart"
      data-series={JSON.stringify(series.map((s) => s.name ?? ''))}
      data-legend={legend}
    />
  );
}
