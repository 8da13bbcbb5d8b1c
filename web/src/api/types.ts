// Wire types of the REST API (docs/api-contract.md). Times are RFC 3339 strings.

export type Role = 'admin' | 'operator' | 'user' | 'viewer' | 'agent';
export const ROLES: Role[] = ['admin', 'operator', 'user', 'viewer'];

export type UserStatus = 'active' | 'pending' | 'disabled';
export const USER_STATUSES: UserStatus[] = ['active', 'pending', 'disabled'];

export interface User {
  id: number;
  username: string;
  display_name?: string;
  email?: string;
  role: Role;
  status: UserStatus;
  tenant?: string;
  /** Where the account signs in: absent for a local password, 'ldap' or 'oidc:<provider>'. */
  auth_source?: string;
  created_at: string;
  updated_at: string;
}

export interface List<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  user: User;
}

export type TaskState =
  | 'submitted'
  | 'queued'
  | 'scheduled'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'timed_out';

export const TASK_STATES: TaskState[] = [
  'submitted',
  'queued',
  'scheduled',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
];

/** Terminal states cannot be cancelled (mirrors controlplane.TaskState.Terminal). */
export const TERMINAL_STATES: TaskState[] = ['succeeded', 'failed', 'cancelled', 'timed_out'];

// The server omits zero-valued spec fields (omitempty), so they are optional here.
export interface Task {
  id: number;
  name: string;
  command?: string[] | null;
  image?: string;
  args?: string[] | null;
  env?: Record<string, string> | null;
  device_count?: number;
  memory_mib?: number;
  compute_percent?: number;
  vendor?: string;
  models?: string[] | null;
  qos?: 'gold' | 'silver' | 'bronze';
  priority?: number;
  timeout_seconds?: number;
  max_retries?: number;
  labels?: Record<string, string> | null;
  tenant?: string;
  project?: string;
  cpu_milli?: number;
  host_memory_mib?: number;
  rdma?: boolean;
  gang?: string;
  gang_size?: number;
  allow_best_effort?: boolean;
  state: TaskState;
  owner_id: number;
  owner?: string;
  attempt: number;
  node_id?: string;
  exit_code?: number | null;
  reason?: string;
  created_at: string;
  updated_at: string;
  started_at?: string | null;
  finished_at?: string | null;
}

export interface TaskEvent {
  id: number;
  from: string;
  to: string;
  reason?: string;
  actor?: string;
  at: string;
}

export type AuditLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
export const AUDIT_LEVELS: AuditLevel[] = ['DEBUG', 'INFO', 'WARN', 'ERROR'];
export const AUDIT_MODULES = ['api', 'auth', 'scheduler', 'agent', 'plugin'] as const;

export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  module: string;
  level: AuditLevel;
  action: string;
  target: string;
  source_ip: string;
  result: string;
  detail?: string;
}
