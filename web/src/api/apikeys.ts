// API keys (docs/api-contract.md: /api/v1/apikeys): listed (own; admins all),
// created with a role at most the caller's (the key is in the answer once),
// revoked.
import { api } from './client';
import type { Query } from './http';
import type { List, Role } from './types';
import type { PageQuery } from './endpoints';

export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  role: Role | 'agent';
  owner_id: number;
  node_id: string;
  tenant?: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}

export interface NewApiKey {
  name: string;
  role: Role;
  expires_at?: string;
}

export const apiKeys = {
  list: (q: PageQuery) => api.get<List<ApiKey>>('/api/v1/apikeys', q as unknown as Query),
  create: (k: NewApiKey) => api.post<CreatedApiKey>('/api/v1/apikeys', k),
  revoke: (id: number) => api.del(`/api/v1/apikeys/${id}`),
};
