// Type-ahead for the PromQL box: where the cursor stands decides what to
// offer (a metric or function name, a label name inside {…}, a label value
// inside quotes), and applying a choice rewrites the expression around the
// word being typed. Pure functions: the page feeds them the names and
// values from the Prometheus label APIs.

export type Context =
  | { kind: 'metric'; prefix: string; start: number; end: number }
  | { kind: 'label'; metric: string; prefix: string; start: number; end: number }
  | { kind: 'value'; metric: string; label: string; prefix: string; start: number; end: number };

/** FUNCTIONS are the PromQL functions and aggregations offered beside metric names. */
export const FUNCTIONS = [
  'abs', 'avg', 'avg_over_time', 'bottomk', 'count', 'count_over_time', 'delta', 'deriv', 'histogram_quantile',
  'increase', 'irate', 'label_replace', 'max', 'max_over_time', 'min', 'min_over_time', 'quantile_over_time',
  'rate', 'round', 'sort', 'sort_desc', 'stddev', 'sum', 'sum_over_time', 'topk',
];

const WORD = /[A-Za-z0-9_:]/;

/** contextAt finds what is being typed at cursor in text, or null when nothing fits. */
export function contextAt(text: string, cursor: number): Context | null {
  const before = text.slice(0, cursor);
  let end = cursor;
  while (end < text.length && WORD.test(text[end])) end++;
  const open = before.lastIndexOf('{');
  if (open > before.lastIndexOf('}')) {
    const metric = /([A-Za-z_:][A-Za-z0-9_:]*)\s*$/.exec(before.slice(0, open))?.[1] ?? '';
    const part = before.slice(open + 1).split(',').pop() ?? '';
    const value = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)$/.exec(part);
    if (value) {
      let vend = cursor;
      while (vend < text.length && text[vend] !== '"') vend++;
      return { kind: 'value', metric, label: value[1], prefix: value[2], start: cursor - value[2].length, end: vend };
    }
    const label = /^\s*([A-Za-z_][A-Za-z0-9_]*)?$/.exec(part);
    if (!label) return null;
    const prefix = label[1] ?? '';
    return { kind: 'label', metric, prefix, start: cursor - prefix.length, end };
  }
  if (/"[^"]*$/.test(before.replace(/"(?:[^"\\]|\\.)*"/g, ''))) return null; // inside a string literal
  const word = /[A-Za-z_:][A-Za-z0-9_:]*$/.exec(before)?.[0] ?? '';
  if (!word) return null;
  return { kind: 'metric', prefix: word, start: cursor - word.length, end };
}

/** candidates are the names offered in ctx, those starting with the prefix first, at most limit. */
export function candidates(ctx: Context, names: string[], limit = 50): string[] {
  const p = ctx.prefix.toLowerCase();
  const starts: string[] = [];
  const contains: string[] = [];
  for (const n of names) {
    const l = n.toLowerCase();
    if (l === p && ctx.kind !== 'value') continue; // already typed in full
    if (l.startsWith(p)) starts.push(n);
    else if (p && l.includes(p)) contains.push(n);
  }
  return [...starts, ...contains].slice(0, limit);
}

/** escapeValue writes v for inside a PromQL double-quoted string. */
function escapeValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/**
 * apply puts choice in place of the word being typed and returns the new
 * expression: a label name gets `="` so that its values are offered next,
 * a value gets its closing quote.
 */
export function apply(text: string, ctx: Context, choice: string): string {
  const head = text.slice(0, ctx.start);
  const tail = text.slice(ctx.end);
  switch (ctx.kind) {
    case 'metric':
      return head + choice + tail;
    case 'label':
      return head + choice + (/^\s*(=|!=|=~|!~)/.test(tail) ? '' : '="') + tail;
    case 'value':
      return head + escapeValue(choice) + (tail.startsWith('"') ? '' : '"') + tail;
  }
}
