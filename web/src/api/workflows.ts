// Workflows: DAGs of tasks (controlplane/httpapi/handlers_workflows.go).
import { api } from './client';
import type { Query } from './http';
import type { List, TaskState } from './types';
import type { PageQuery } from './endpoints';

export type WorkflowState = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const WORKFLOW_STATES: WorkflowState[] = ['pending', 'running', 'succeeded', 'failed', 'cancelled'];
export type StepState = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'skipped';
export const STEP_STATES: StepState[] = ['pending', 'running', 'succeeded', 'failed', 'cancelled', 'skipped'];
export const TERMINAL_WORKFLOW: WorkflowState[] = ['succeeded', 'failed', 'cancelled'];

export interface Workflow {
  id: number;
  name: string;
  state: WorkflowState;
  owner_id: number;
  owner: string;
  tenant: string;
  project: string;
  priority: number;
  reason: string;
  generation: number;
  resubmitted_from?: number;
  created_at: string;
  updated_at: string;
  started_at?: string | null;
  finished_at?: string | null;
}

export interface WorkflowStep {
  name: string;
  step: string;
  index: number;
  state: StepState;
  task_id?: number;
  task_state?: TaskState;
  generation: number;
  exit_code?: number | null;
  outputs?: Record<string, string> | null;
  artifacts?: Record<string, string> | null;
  reason: string;
  started_at?: string | null;
  finished_at?: string | null;
}

export interface WorkflowEdge {
  from: string;
  to: string;
  on: 'success' | 'failure' | 'always';
}

export interface WorkflowDetail extends Workflow {
  spec: Record<string, unknown> | null;
  steps: WorkflowStep[];
  edges: WorkflowEdge[];
}

export interface WorkflowPlan {
  name: string;
  steps: WorkflowStep[];
  edges: WorkflowEdge[];
}

export interface WorkflowEvent {
  id: number;
  step: string;
  from: string;
  to: string;
  reason: string;
  actor: string;
  at: string;
}

export interface WorkflowFilter extends PageQuery {
  state?: string;
  q?: string;
}

export interface WorkflowSubmit {
  document: string;
  params?: Record<string, string>;
}

export const workflows = {
  list: (f: WorkflowFilter) => api.get<List<Workflow>>('/api/v1/workflows', f as unknown as Query),
  get: (id: number) => api.get<WorkflowDetail>(`/api/v1/workflows/${id}`),
  events: (id: number) => api.get<{ items: WorkflowEvent[] }>(`/api/v1/workflows/${id}/events`),
  validate: (s: WorkflowSubmit) => api.post<WorkflowPlan>('/api/v1/workflows/validate', s),
  submit: (s: WorkflowSubmit) => api.post<WorkflowDetail>('/api/v1/workflows', s),
  cancel: (id: number) => api.post<WorkflowDetail>(`/api/v1/workflows/${id}/cancel`),
  retry: (id: number, from?: string) => api.post<WorkflowDetail>(`/api/v1/workflows/${id}/retry`, from ? { from } : {}),
  resubmit: (id: number) => api.post<WorkflowDetail>(`/api/v1/workflows/${id}/resubmit`),
};
