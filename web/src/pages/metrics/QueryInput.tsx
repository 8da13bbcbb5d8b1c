// The PromQL box with type-ahead: metric and function names as a word is
// typed, a metric's label names inside {…}, a label's values inside quotes,
// fed by the Prometheus label APIs (/label/__name__/values, /labels,
// /label/<name>/values). Choosing a suggestion rewrites the word at the
// cursor (suggest.ts); Ctrl+Enter still runs the query.
import { useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { AutoComplete, Input, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { prom } from '../../api/prometheus';
import { apply, candidates, contextAt, FUNCTIONS } from './suggest';

interface Props {
  value: string;
  onChange: (expr: string) => void;
  onRun: () => void;
}

const KIND_COLOR = { metric: 'blue', function: 'purple', label: 'green', value: 'gold' } as const;

export default function QueryInput({ value, onChange, onRun }: Props) {
  const { t } = useTranslation();
  const [cursor, setCursor] = useState<number | null>(null);
  const box = useRef<HTMLTextAreaElement | null>(null);
  const ctx = contextAt(value, Math.min(cursor ?? value.length, value.length));

  const names = useQuery({ queryKey: ['promql', 'names'], queryFn: prom.metricNames, staleTime: 60_000, meta: { inlineErrors: true } });
  const metric = ctx && ctx.kind !== 'metric' ? ctx.metric : '';
  const labels = useQuery({
    queryKey: ['promql', 'labels', metric],
    queryFn: () => prom.labelNames(metric),
    enabled: ctx?.kind === 'label' && !!metric,
    staleTime: 60_000,
    meta: { inlineErrors: true },
  });
  const label = ctx?.kind === 'value' ? ctx.label : '';
  const values = useQuery({
    queryKey: ['promql', 'values', metric, label],
    queryFn: () => prom.labelValues(label, metric),
    enabled: ctx?.kind === 'value' && !!metric,
    staleTime: 60_000,
    meta: { inlineErrors: true },
  });

  let offered: { name: string; kind: keyof typeof KIND_COLOR }[] = [];
  if (ctx?.kind === 'metric') {
    const metrics = candidates(ctx, names.data?.data ?? [], 40).map((name) => ({ name, kind: 'metric' as const }));
    const fns = candidates(ctx, FUNCTIONS, 10).map((name) => ({ name, kind: 'function' as const }));
    offered = [...metrics, ...fns];
  } else if (ctx?.kind === 'label') {
    offered = candidates(ctx, (labels.data?.data ?? []).filter((n) => n !== '__name__')).map((name) => ({ name, kind: 'label' as const }));
  } else if (ctx?.kind === 'value') {
    offered = candidates(ctx, values.data?.data ?? []).map((name) => ({ name, kind: 'value' as const }));
  }
  // An option's value is the whole expression it leads to, so choosing it
  // is an ordinary change of the box's value.
  const options = ctx
    ? offered.map((o) => ({
        value: apply(value, ctx, o.name),
        label: (
          <span data-testid="promql-suggestion" data-name={o.name} data-kind={o.kind}>
            <Tag color={KIND_COLOR[o.kind]} style={{ marginRight: 8 }}>
              {t(`metrics.kind.${o.kind}`)}
            </Tag>
            <span style={{ fontFamily: 'monospace' }}>{o.name}</span>
          </span>
        ),
      }))
    : [];
  const track = () => setCursor(box.current?.selectionStart ?? null);

  return (
    <AutoComplete
      value={value}
      options={options}
      onChange={(v: string) => {
        onChange(v);
        // After a choice the cursor goes to the end of what was inserted.
        requestAnimationFrame(track);
      }}
      style={{ width: '100%' }}
      popupMatchSelectWidth={false}
    >
      <Input.TextArea
        ref={(r) => {
          box.current = r?.resizableTextArea?.textArea ?? null;
        }}
        data-testid="promql-input"
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            onRun();
          }
        }}
        onKeyUp={track}
        onClick={track}
        autoSize={{ minRows: 2, maxRows: 8 }}
        placeholder={t('metrics.placeholder')}
        style={{ fontFamily: 'monospace' }}
        spellCheck={false}
      />
    </AutoComplete>
  );
}
