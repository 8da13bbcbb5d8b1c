// Nodes, bootstrap tokens and the scheduler's cluster views
// (docs/api-contract.md: agents/nodes and "Scheduling").
import { api } from './client';
import type { List } from './types';

export interface InventoryDevice {
  index: number;
  uuid?: string | null;
  model: string;
  memory_total_mib: number;
  // Figures the CLI did not give are null (a GPU in MIG mode reports its
  // utilisation as N/A): unknown, never 0.
  memory_used_mib?: number | null;
  utilization_percent?: number | null;
  temperature_celsius?: number | null;
  power_watts?: number | null;
  bus_id?: string;
  health?: string | null;
  partitions?: unknown[];
}

export interface InventorySnapshot {
  vendor: string;
  driver_version?: string;
  runtime_version?: string;
  devices: InventoryDevice[] | null;
}

export type NodeState = 'online' | 'offline';

export interface HFNode {
  id: string;
  hostname: string;
  os: string;
  arch: string;
  version: string;
  labels: Record<string, string>;
  state: NodeState;
  cordoned: boolean;
  draining: boolean;
  health: string;
  cpu_count: number;
  memory_total_mib: number;
  memory_free_mib: number;
  vendors: string[];
  device_count: number;
  inventory: InventorySnapshot[];
  last_heartbeat: string | null;
  created_at: string;
  updated_at: string;
}

/** NodeStatus is what the console shows: draining beats cordoned beats online/offline. */
export type NodeStatus = 'online' | 'offline' | 'cordoned' | 'draining';

export function nodeStatus(n: Pick<HFNode, 'state' | 'cordoned' | 'draining'>): NodeStatus {
  if (n.state !== 'online') return 'offline';
  if (n.draining) return 'draining';
  if (n.cordoned) return 'cordoned';
  return 'online';
}

export interface BootstrapToken {
  id: number;
  prefix: string;
  description: string;
  created_by: number;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  node_id: string;
  token?: string; // only in the create answer
}

export interface SliceDevice {
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
  state: 'free' | 'fragmented' | 'allocated';
  slices: { task_id: number; qos: string; memory_mib: number; compute_percent: number }[];
}

export interface SliceList {
  items: SliceDevice[];
  total: number;
  fragmentation_score: number;
  devices: { free: number; fragmented: number; allocated: number };
}

export interface SchedulerSummary {
  gpus: { total: number; online: number; busy: number };
  memory_mib: { total: number; free: number };
  slice_utilization: number | null;
  nodes: { total: number; online: number; online_rate: number | null; health: Record<string, number> };
  tasks: Record<string, number>;
  task_completion_rate: number | null;
  fragmentation: { score: number; free: number; fragmented: number; allocated: number };
  scheduler: { leader: boolean; holder: string; last_tick: string | null };
}

export type SchedulingOp = 'cordon' | 'uncordon' | 'drain' | 'revoke';

export const nodesApi = {
  /** list asks for up to 500 nodes: the console shows the fleet on one page. */
  list: () => api.get<List<HFNode>>('/api/v1/nodes', { limit: 500 }),
  get: (id: string) => api.get<HFNode>(`/api/v1/nodes/${encodeURIComponent(id)}`),
  op: (id: string, op: SchedulingOp) => api.post<HFNode>(`/api/v1/nodes/${encodeURIComponent(id)}/${op}`),
  slices: () => api.get<SliceList>('/api/v1/slices'),
  summary: () => api.get<SchedulerSummary>('/api/v1/scheduler/summary'),
};

/** Enrollment is GET /api/v1/server/enrollment: how agents reach the server. */
export interface Enrollment {
  external_url: string;
  api_port: number;
  tls: boolean;
  server_fingerprint?: string;
  /** curl --pinnedpubkey form: sha256// + base64 SHA-256 of the key (SPKI). */
  server_pubkey_pin?: string;
  self_signed: boolean;
}

export const tokensApi = {
  enrollment: () => api.get<Enrollment>('/api/v1/server/enrollment'),
  list: () => api.get<List<BootstrapToken>>('/api/v1/bootstrap-tokens', { limit: 200 }),
  create: (description: string, ttlSeconds?: number) =>
    api.post<BootstrapToken>('/api/v1/bootstrap-tokens', { description, ...(ttlSeconds ? { ttl_seconds: ttlSeconds } : {}) }),
  revoke: (id: number) => api.del(`/api/v1/bootstrap-tokens/${id}`),
};
