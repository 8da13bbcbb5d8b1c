// Display helpers shared by the pages.
import dayjs, { type Dayjs } from 'dayjs';

export function formatTime(ts?: string | null): string {
  if (!ts) return '—';
  const d = dayjs(ts);
  return d.isValid() ? d.format('YYYY-MM-DD HH:mm:ss') : ts;
}

/** rangeQuery turns a RangePicker value into the API's since/until (RFC 3339). */
export function rangeQuery(range?: [Dayjs | null, Dayjs | null] | null): { since?: string; until?: string } {
  return {
    since: range?.[0] ? range[0].toISOString() : undefined,
    until: range?.[1] ? range[1].toISOString() : undefined,
  };
}

export function formatMap(m?: Record<string, string> | null): string[] {
  return Object.entries(m ?? {}).map(([k, v]) => `${k}=${v}`);
}

export const PAGE_SIZES = [20, 50, 100];
