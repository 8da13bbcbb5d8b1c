// Typed endpoint functions, one per row of docs/api-contract.md that the console uses.
import { api } from './client';
import type { Query } from './http';
import type { AuditEntry, List, Role, Task, TaskEvent, User, UserStatus } from './types';

export interface PageQuery {
  limit: number;
  offset: number;
}

export interface UserFilter extends PageQuery {
  role?: Role;
  status?: UserStatus;
  q?: string;
}

export interface NewUser {
  username: string;
  password: string;
  role: Role;
  display_name?: string;
  email?: string;
  tenant?: string;
}

export type UserPatch = Partial<Pick<User, 'role' | 'status' | 'display_name' | 'email' | 'tenant'>> & {
  password?: string;
};

export const users = {
  list: (f: UserFilter) => api.get<List<User>>('/api/v1/users', f as unknown as Query),
  create: (u: NewUser) => api.post<User>('/api/v1/users', u),
  update: (id: number, p: UserPatch) => api.patch<User>(`/api/v1/users/${id}`, p),
  remove: (id: number) => api.del(`/api/v1/users/${id}`),
  approve: (id: number) => api.post<User>(`/api/v1/users/${id}/approve`),
  getRegistration: () => api.get<{ enabled: boolean }>('/api/v1/settings/registration'),
  setRegistration: (enabled: boolean) => api.put<{ enabled: boolean }>('/api/v1/settings/registration', { enabled }),
};

// External tools the server is configured to link to (grafana_url: "" = none).
export const links = {
  get: () => api.get<{ grafana_url: string }>('/api/v1/settings/links'),
};

export interface TaskFilter extends PageQuery {
  state?: string; // comma-separated states
  label?: string; // k=v
  q?: string;
  owner?: string;
  since?: string;
  until?: string;
}

export const tasks = {
  list: (f: TaskFilter) => api.get<List<Task>>('/api/v1/tasks', f as unknown as Query),
  get: (id: number) => api.get<Task>(`/api/v1/tasks/${id}`),
  events: (id: number) => api.get<{ items: TaskEvent[] }>(`/api/v1/tasks/${id}/events`),
  cancel: (id: number) => api.post<Task>(`/api/v1/tasks/${id}/cancel`),
};

export interface AuditFilter extends PageQuery {
  module?: string;
  level?: string;
  actor?: string;
  since?: string;
  until?: string;
  q?: string;
}

export const audit = {
  list: (f: AuditFilter) => api.get<List<AuditEntry>>('/api/v1/audit', f as unknown as Query),
};
