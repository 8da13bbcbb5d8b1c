// The multi-cluster hub: member clusters with the view the hub last polled,
// registration (checked by the hub at once) and tasks it placed on members.
import { api } from './client';
import type { NewTask } from './scheduling';

export interface DeviceGroup {
  vendor: string;
  model: string;
  total: number;
  online: number;
  free: number;
  free_memory_mib: number;
  free_compute_percent: number;
}

export interface ClusterSummary {
  health: 'ok' | 'degraded';
  nodes_total: number;
  nodes_online: number;
  devices_total: number;
  devices_online: number;
  devices_free: number;
  memory_mib: number;
  free_memory_mib: number;
  utilization: number | null;
  fragmentation: number;
  queue_depth: number;
  running: number;
  alerts_firing: number;
  usage_device_hours: number;
  usage_cost: number;
  currency?: string;
  devices: DeviceGroup[];
}

export interface Cluster {
  id: number;
  name: string;
  url: string;
  tls_pinned: 'none' | 'ca' | 'fingerprint';
  fingerprint?: string;
  version: string;
  status: 'unknown' | 'reachable' | 'unreachable';
  last_error?: string;
  polled_at: string | null;
  summary: ClusterSummary | null;
  created_by: string;
  created_at: string;
}

export interface ClusterRegistration {
  name: string;
  url: string;
  api_key: string;
  ca_pem?: string;
  fingerprint?: string;
}

/** HubTaskSubmit is POST /api/v1/hub/tasks: a task for the hub to place on a member. */
export interface HubTaskSubmit {
  /** auto (the best member) or a member's name. */
  cluster: string;
  task: NewTask;
}

/** ClusterScore is one member's score of a placement (the highest wins). */
export interface ClusterScore {
  cluster: string;
  score: number;
  fits: number;
  matching: number;
  queue_depth: number;
  reason?: string;
}

export interface HubTask {
  id: number;
  cluster: string;
  member_task_id: number;
  name: string;
  owner: string;
  state: string;
  reason: string;
  /** The placement's scores per member. */
  scores?: ClusterScore[];
  created_at: string;
  finished_at: string | null;
}

interface List<T> {
  items: T[];
  total: number;
}

export const clusters = {
  list: () => api.get<List<Cluster>>('/api/v1/clusters').then((l) => l.items),
  register: (r: ClusterRegistration) => api.post<Cluster>('/api/v1/clusters', r),
  refresh: () => api.post<List<Cluster>>('/api/v1/clusters/refresh').then((l) => l.items),
  remove: (id: number) => api.del(`/api/v1/clusters/${id}`),
  submit: (s: HubTaskSubmit) => api.post<HubTask>('/api/v1/hub/tasks', s),
  tasks: (cluster?: string) => api.get<List<HubTask>>('/api/v1/hub/tasks', cluster ? { cluster, limit: 100 } : { limit: 100 }),
};
