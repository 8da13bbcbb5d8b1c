// Scheduling endpoints (docs/api-contract.md, "Scheduling") plus
// task logs and task creation, with their wire types. Kept out of the shared
// endpoints.ts/types.ts so the two console helpers do not edit one file.
import { api } from './client';
import type { Task } from './types';

export type QoS = 'gold' | 'silver' | 'bronze';
export const QOS_LEVELS: QoS[] = ['gold', 'silver', 'bronze'];

/** NewTask is the task spec of POST /api/v1/tasks (zero fields may be omitted). */
export interface NewTask {
  name: string;
  command?: string[];
  image?: string;
  args?: string[];
  env?: Record<string, string>;
  device_count?: number;
  memory_mib?: number;
  compute_percent?: number;
  vendor?: string;
  models?: string[];
  qos?: QoS;
  priority?: number;
  timeout_seconds?: number;
  max_retries?: number;
  labels?: Record<string, string>;
  tenant?: string;
  project?: string;
  gang?: string;
  gang_size?: number;
  wait_for_nodes?: boolean;
  /** Silver only: run unenforced where no device enforcing Silver has room. */
  allow_best_effort?: boolean;
}

export interface PluginState {
  name: string;
  enabled: boolean;
  weight: number;
  position: number;
  extension_points: string[];
  assign: boolean;
}

export interface PluginList {
  profile: string;
  items: PluginState[];
}

export interface QuotaUse {
  devices: number;
  memory_mib: number;
  compute_percent: number;
}

export interface Quota extends QuotaUse {
  id: number;
  tenant: string;
  project: string;
  vendor: string;
  policy: 'refuse' | 'queue';
  used?: QuotaUse;
  created_at?: string;
  updated_at?: string;
}

export interface NodeReason {
  node: string;
  plugin: string;
  reason: string;
}

export interface HeldSlice {
  device: number;
  device_index: number;
  memory_mib: number;
  compute_milli: number;
  qos: QoS;
  isolation: string;
  profile?: string;
}

export interface WhyAttempt {
  task_id: number;
  at: string;
  summary: string;
  /** never_fits says why no node of the cluster could ever hold the task (empty: busy now). */
  never_fits?: string;
  total_nodes: number;
  by_reason?: Record<string, number>;
  nodes?: NodeReason[];
  quota?: string;
  gang?: { name: string; reserved: number; size: number };
  preemption?: { mode: string; node?: string; victims?: number[] };
  held?: { node: string; slices: HeldSlice[] };
  attempts: number;
  next_attempt_at?: string;
}

export interface Why {
  task_id: number;
  state: string;
  reason: string;
  pending: boolean;
  preemptions?: number;
  failed_cycles?: number;
  last_attempt: WhyAttempt | null;
}

export interface Slice {
  task_id: number;
  attempt: number;
  qos: QoS;
  memory_mib: number;
  compute_percent: number;
  isolation: string;
  profile?: string;
  tenant?: string;
  project?: string;
  priority: number;
  draining: boolean;
}

export type DeviceState = 'free' | 'fragmented' | 'allocated';

export interface Device {
  node: string;
  hostname: string;
  online: boolean;
  vendor: string;
  model: string;
  index: number;
  uuid?: string;
  memory_mib: number;
  allocated_memory_mib: number;
  allocated_compute_percent: number;
  free_compute_percent: number;
  state: DeviceState;
  slices: Slice[];
}

export interface SliceList {
  items: Device[];
  total: number;
  fragmentation_score: number;
  devices: Record<DeviceState, number>;
}

export interface DefragMove {
  task_id: number;
  from_node: string;
  from_device_index: number;
  to_node: string;
  to_device_index: number;
}

export interface DefragPlan {
  score_before: number;
  score_after: number;
  /** Fragmentation against the recent workload under slicing rules, % of device capacity. */
  workload_fragmentation_before?: number;
  workload_fragmentation_after?: number;
  freed: { node: string; device_index: number; moves: DefragMove[] }[] | null;
}

export interface DefragPolicy {
  automatic: boolean;
  threshold: number;
  max_moves_per_hour: number;
  quiet_hours: string[];
  time_zone: string;
  quiet_now: boolean;
}

export interface DefragAnswer {
  plan: DefragPlan;
  execute_allowed?: boolean;
  policy?: DefragPolicy;
  requeued?: number[];
}

export interface TaskLog {
  task_id: number;
  attempt: number;
  stream: 'stdout' | 'stderr';
  offset: number;
  next: number;
  data: string;
}

export const sched = {
  createTask: (spec: NewTask) => api.post<Task>('/api/v1/tasks', spec),
  why: (id: number) => api.get<Why>(`/api/v1/tasks/${id}/why`),
  logs: (id: number, stream: 'stdout' | 'stderr', offset: number, attempt?: number) =>
    api.get<TaskLog>(`/api/v1/tasks/${id}/logs`, { stream, offset, attempt }),
  plugins: () => api.get<PluginList>('/api/v1/plugins'),
  patchPlugin: (name: string, p: { enabled?: boolean; weight?: number }) =>
    api.patch<PluginList>(`/api/v1/plugins/${encodeURIComponent(name)}`, p),
  orderPlugins: (order: string[]) => api.put<PluginList>('/api/v1/plugins/order', { order }),
  quotas: () => api.get<{ items: Quota[]; total: number }>('/api/v1/quotas'),
  slices: () => api.get<SliceList>('/api/v1/slices'),
  defragPlan: () => api.get<DefragAnswer>('/api/v1/scheduler/defrag'),
  defragExecute: () => api.post<DefragAnswer>('/api/v1/scheduler/defrag', { execute: true }),
};
