// Metrics explorer: a PromQL expression runs as an instant query (table) and
// as a range query over 1 h … 7 d (line chart) against the server's
// Prometheus-compatible API. Errors from the query engine show inline under
// the input, not as toasts, because fixing the expression is the next step.
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Alert, Button, Card, Segmented, Select, Space, Tabs, Typography } from 'antd';
import { CaretRightOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { prom, RANGES, stepFor, type RangeKey } from '../../api/prometheus';
import { errorText } from '../../components/notify';
import RangeChart, { MAX_SERIES } from './RangeChart';
import ResultTable from './ResultTable';
import QueryInput from './QueryInput';

interface Run {
  expr: string;
  range: RangeKey;
  at: number; // unix seconds the run was issued: pins both queries to one "now"
}

/** EXAMPLE is a query over a metric every node's collector sends. */
const EXAMPLE = 'avg by (hw_vendor) (hw_gpu_utilization_ratio)';

export default function MetricsPage() {
  const { t } = useTranslation();
  const [expr, setExpr] = useState('');
  const [range, setRange] = useState<RangeKey>('1h');
  const [tab, setTab] = useState('graph');
  const [run, setRun] = useState<Run | null>(null);

  const execute = (nextRange: RangeKey = range) => {
    const e = expr.trim();
    if (!e) return;
    setRun({ expr: e, range: nextRange, at: Math.floor(Date.now() / 1000) });
  };

  const seconds = RANGES.find((r) => r.key === run?.range)?.seconds ?? 3600;
  const instant = useQuery({
    queryKey: ['promql', 'instant', run],
    queryFn: () => prom.query(run!.expr, run!.at),
    enabled: run !== null && tab === 'table',
    meta: { inlineErrors: true },
    staleTime: Infinity,
  });
  const ranged = useQuery({
    queryKey: ['promql', 'range', run],
    queryFn: () => prom.queryRange(run!.expr, run!.at - seconds, run!.at, stepFor(seconds)),
    enabled: run !== null && tab === 'graph',
    meta: { inlineErrors: true },
    staleTime: Infinity,
  });
  // Metric/label browser from the Prometheus label APIs.
  const [metric, setMetric] = useState<string | undefined>();
  const [label, setLabel] = useState<string | undefined>();
  const metricNames = useQuery({ queryKey: ['promql', 'names'], queryFn: prom.metricNames, staleTime: 60_000, meta: { inlineErrors: true } });
  const labelNames = useQuery({
    queryKey: ['promql', 'labels', metric],
    queryFn: () => prom.labelNames(metric!),
    enabled: !!metric,
    meta: { inlineErrors: true },
  });
  const labelValues = useQuery({
    queryKey: ['promql', 'values', metric, label],
    queryFn: () => prom.labelValues(label!, metric!),
    enabled: !!metric && !!label,
    meta: { inlineErrors: true },
  });
  const current = tab === 'table' ? instant : ranged;
  const warnings = current.data?.warnings ?? [];
  const seriesCount =
    current.data && (current.data.data.resultType === 'matrix' || current.data.data.resultType === 'vector')
      ? current.data.data.result.length
      : 0;

  return (
    <Card title={t('metrics.title')}>
      <Space direction="vertical" size="middle" style={{ width: '100%' }}>
        <QueryInput value={expr} onChange={setExpr} onRun={() => execute()} />
        <Space wrap>
          <Select
            showSearch
            allowClear
            data-testid="metric-browser"
            style={{ width: 300 }}
            placeholder={t('metrics.browseMetric')}
            value={metric}
            loading={metricNames.isPending}
            options={(metricNames.data?.data ?? []).map((n) => ({ value: n, label: n }))}
            onChange={(m?: string) => {
              setMetric(m);
              setLabel(undefined);
              if (m) setExpr(m);
            }}
          />
          <Select
            showSearch
            allowClear
            data-testid="label-browser"
            style={{ width: 180 }}
            disabled={!metric}
            placeholder={t('metrics.browseLabel')}
            value={label}
            options={(labelNames.data?.data ?? []).filter((n) => n !== '__name__').map((n) => ({ value: n, label: n }))}
            onChange={(l?: string) => setLabel(l)}
          />
          <Select
            showSearch
            allowClear
            data-testid="value-browser"
            style={{ width: 220 }}
            disabled={!label}
            placeholder={t('metrics.browseValue')}
            options={(labelValues.data?.data ?? []).map((v) => ({ value: v, label: v }))}
            onChange={(v?: string) => {
              if (metric && label && v !== undefined) setExpr(`${metric}{${label}=${JSON.stringify(v)}}`);
            }}
          />
          <Button data-testid="promql-example" onClick={() => setExpr(EXAMPLE)}>
            {t('metrics.example')}
          </Button>
        </Space>
        <Space wrap>
          <Button type="primary" icon={<CaretRightOutlined />} onClick={() => execute()} disabled={!expr.trim()} data-testid="promql-run">
            {t('metrics.run')}
          </Button>
          <Segmented<RangeKey>
            value={range}
            options={RANGES.map((r) => ({ value: r.key, label: t(`metrics.range.${r.key}`) }))}
            onChange={(v) => {
              setRange(v);
              if (run) execute(v);
            }}
          />
          <Typography.Text type="secondary">{t('metrics.hint')}</Typography.Text>
        </Space>
        {current.error && (
          <Alert type="error" showIcon message={t('metrics.error')} description={errorText(current.error)} data-testid="promql-error" />
        )}
        {warnings.map((w) => (
          <Alert key={w} type="warning" showIcon message={w} />
        ))}
        {seriesCount > MAX_SERIES && tab === 'graph' && (
          <Alert type="info" showIcon message={t('metrics.truncated', { shown: MAX_SERIES, total: seriesCount })} />
        )}
        <Tabs
          activeKey={tab}
          onChange={setTab}
          items={[
            {
              key: 'graph',
              label: t('metrics.graph'),
              children: ranged.data ? <RangeChart data={ranged.data.data} /> : null,
            },
            {
              key: 'table',
              label: t('metrics.table'),
              children: instant.data ? <ResultTable data={instant.data.data} /> : null,
            },
          ]}
        />
      </Space>
    </Card>
  );
}
