// A tenant's quotas (its own and its projects') with their live use, and
// the writes the server allows: cluster admins any, tenant admins their
// projects' within the tenant's quota.
import { api } from './client';
import type { Quota } from './scheduling';

export type QuotaPolicy = 'queue' | 'refuse';

export interface QuotaInput {
  project?: string;
  vendor?: string;
  devices?: number;
  memory_mib?: number;
  compute_percent?: number;
  policy?: QuotaPolicy;
}

const base = (tenant: string) => `/api/v1/tenants/${encodeURIComponent(tenant)}/quotas`;

export const quotasApi = {
  list: (tenant: string) => api.get<{ items: Quota[]; total: number }>(base(tenant)),
  create: (tenant: string, q: QuotaInput) => api.post<Quota>(base(tenant), q),
  update: (tenant: string, id: number, q: QuotaInput) => api.put<Quota>(`${base(tenant)}/${id}`, q),
  remove: (tenant: string, id: number) => api.del(`${base(tenant)}/${id}`),
};
