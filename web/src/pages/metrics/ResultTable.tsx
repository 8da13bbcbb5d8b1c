// Table of an instant query: one row per series (vector), or the single
// scalar/string value. A range-vector selector (matrix) shows its last sample.
import { Table, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { formatTime } from '../../components/format';
import { seriesName, type QueryData, type Sample } from '../../api/prometheus';

interface Row {
  key: number;
  series: string;
  value: string;
  at: number;
  samples?: number;
}

function rows(data: QueryData): Row[] {
  const at = (s: Sample) => ({ value: s[1], at: s[0] });
  switch (data.resultType) {
    case 'vector':
      return data.result.map((r, i) => ({ key: i, series: seriesName(r.metric), ...at(r.value) }));
    case 'matrix':
      return data.result.map((r, i) => ({
        key: i,
        series: seriesName(r.metric),
        samples: r.values.length,
        ...(r.values.length ? at(r.values[r.values.length - 1]) : { value: '—', at: 0 }),
      }));
    case 'scalar':
    case 'string':
      return [{ key: 0, series: data.resultType, ...at(data.result) }];
  }
}

export default function ResultTable({ data }: { data: QueryData }) {
  const { t } = useTranslation();
  return (
    <Table<Row>
      size="small"
      data-testid="promql-table"
      dataSource={rows(data)}
      pagination={{ pageSize: 50, hideOnSinglePage: true }}
      columns={[
        {
          title: t('metrics.series'),
          dataIndex: 'series',
          render: (s: string) => <Typography.Text code>{s}</Typography.Text>,
        },
        {
          title: t('metrics.value'),
          dataIndex: 'value',
          width: 200,
          render: (v: string) => <span data-testid="promql-value">{v}</span>,
        },
        {
          title: t('metrics.time'),
          dataIndex: 'at',
          width: 200,
          render: (ts: number) => (ts ? formatTime(new Date(ts * 1000).toISOString()) : '—'),
        },
        ...(data.resultType === 'matrix'
          ? [{ title: t('metrics.samples'), dataIndex: 'samples', width: 100 }]
          : []),
      ]}
    />
  );
}
