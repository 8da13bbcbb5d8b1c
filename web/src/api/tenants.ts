// Tenants, their projects and members, and the caller's current tenant.
import { api } from './client';

export type TenantRole = 'tenant-admin' | 'member' | 'viewer';
export const TENANT_ROLES: TenantRole[] = ['tenant-admin', 'member', 'viewer'];

export interface Tenant {
  name: string;
  display_name: string;
  disabled: boolean;
  node_selector?: Record<string, string>;
  my_role?: TenantRole;
  created_at: string;
  updated_at: string;
}

export interface Project {
  tenant: string;
  name: string;
  display_name: string;
  disabled: boolean;
  created_at: string;
}

export interface Member {
  tenant: string;
  user_id: number;
  username: string;
  role: TenantRole;
  since: string;
}

export interface MyTenancy {
  current: string;
  cluster_wide: boolean;
  tenants: { name: string; display_name: string; disabled: boolean; role?: TenantRole }[];
}

const base = '/api/v1/tenants';
const seg = encodeURIComponent;

export const tenants = {
  list: () => api.get<Tenant[]>(base),
  create: (t: { name: string; display_name?: string; node_selector?: Record<string, string> }) => api.post<Tenant>(base, t),
  update: (name: string, p: { display_name?: string; disabled?: boolean; node_selector?: Record<string, string> }) =>
    api.patch<Tenant>(`${base}/${seg(name)}`, p),
  members: (name: string) => api.get<Member[]>(`${base}/${seg(name)}/members`),
  putMember: (name: string, user: string, role: TenantRole) => api.put<Member>(`${base}/${seg(name)}/members/${seg(user)}`, { role }),
  removeMember: (name: string, user: string) => api.del(`${base}/${seg(name)}/members/${seg(user)}`),
  projects: (name: string) => api.get<Project[]>(`${base}/${seg(name)}/projects`),
  createProject: (name: string, p: { name: string; display_name?: string }) => api.post<Project>(`${base}/${seg(name)}/projects`, p),
  updateProject: (name: string, project: string, p: { display_name?: string; disabled?: boolean }) =>
    api.patch<Project>(`${base}/${seg(name)}/projects/${seg(project)}`, p),
  mine: () => api.get<MyTenancy>('/api/v1/auth/tenants'),
  switchTo: (tenant: string) => api.put<MyTenancy>('/api/v1/auth/tenant', { tenant }),
};
