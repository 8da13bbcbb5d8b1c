// Billing: usage reports and exports, the price book, budgets and closed
// statements (controlplane/httpapi/handlers_billing.go).
import { api } from './client';
import { getAccessToken, hasRefreshToken, refresh } from './session';
import { buildURL, ApiError, type Query } from './http';
import type { List } from './types';

export type Period = 'day' | 'week' | 'month';

export interface UsageHours {
  slice_hours: number;
  device_hours: number;
  memory_gib_hours: number;
  compute_percent_hours: number;
  measured_hours?: number;
  measured_compute_percent_hours?: number;
  measured_memory_gib_hours?: number;
}

/** Measured over allocated usage (0-1), over the time device metrics cover. */
export interface Efficiency {
  compute: number;
  memory: number;
}

export interface ReportLine {
  tenant?: string;
  project?: string;
  user?: string;
  vendor?: string;
  model?: string;
  qos?: string;
  task_id?: number;
  day?: string;
  hours: UsageHours;
  efficiency?: Efficiency;
  cost: number;
}

export interface UsageReport {
  tenant?: string;
  project?: string;
  user?: string;
  period: Period;
  from: string;
  to: string;
  currency: string;
  provisional: boolean;
  generated_at: string;
  total: ReportLine;
  unpriced_device_hours: number;
  daily: ReportLine[];
  by_vendor: ReportLine[];
  by_tenant: ReportLine[];
  by_project: ReportLine[];
  by_user: ReportLine[];
  top_tasks: ReportLine[];
}

export interface ReportQuery extends Query {
  period?: Period;
  start?: string;
  tenant?: string;
  project?: string;
  user?: string;
}

export interface PriceEntry {
  id?: number;
  vendor?: string;
  model?: string;
  qos?: string;
  effective_from: string;
  effective_to?: string;
  currency?: string;
  device_hour: number;
  memory_gib_hour?: number;
  compute_percent_hour?: number;
  bronze_discount_percent?: number;
  created_by?: string;
}

export interface Budget {
  id?: number;
  tenant: string;
  project?: string;
  amount: number;
  currency?: string;
  hard_stop?: '' | 'queue' | 'refuse';
  spent?: number;
  used_ratio?: number;
}

export const billing = {
  report: (q: ReportQuery) => api.get<UsageReport>('/api/v1/billing/report', q),
  prices: () => api.get<List<PriceEntry>>('/api/v1/billing/prices'),
  createPrice: (p: PriceEntry) => api.post<PriceEntry>('/api/v1/billing/prices', p),
  updatePrice: (id: number, p: PriceEntry) => api.put<PriceEntry>(`/api/v1/billing/prices/${id}`, p),
  deletePrice: (id: number) => api.del(`/api/v1/billing/prices/${id}`),
  budgets: () => api.get<List<Budget>>('/api/v1/billing/budgets'),
  putBudget: (b: Budget) => api.put<Budget>('/api/v1/billing/budgets', b),
  deleteBudget: (id: number) => api.del(`/api/v1/billing/budgets/${id}`),
};

/** download fetches an export with the session's token and saves it. */
export async function downloadReport(q: ReportQuery, format: 'csv' | 'xlsx' | 'json'): Promise<string> {
  const url = buildURL('/api/v1/billing/report/export', { ...q, format });
  const get = () => fetch(url, { headers: { Authorization: `Bearer ${getAccessToken() ?? ''}` }, credentials: 'same-origin' });
  let res = await get();
  if (res.status === 401 && hasRefreshToken()) {
    await refresh();
    res = await get();
  }
  if (!res.ok) {
    let code = `http_${res.status}`;
    let message = res.statusText;
    try {
      const body = await res.json();
      code = body?.error?.code ?? code;
      message = body?.error?.message ?? message;
    } catch {
      // not JSON
    }
    throw new ApiError(res.status, code, message, res.headers.get('X-Request-Id') ?? undefined);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? `usage.${format}`;
  const blob = await res.blob();
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.dataset.testid = 'billing-download';
  document.body.appendChild(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
  return name;
}
