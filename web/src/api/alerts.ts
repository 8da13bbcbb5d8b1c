// Alert endpoints (/api/v1/alerts, alert-rules, alert-params, alert-silences,
// alert-channels, alert-notifications) with their wire types.
import { api } from './client';
import type { List } from './types';

export type AlertLevel = 'INFO' | 'WARN' | 'ERROR';
export type AlertState = 'ACTIVE' | 'ACKNOWLEDGED' | 'RESOLVED';
export const ALERT_LEVELS: AlertLevel[] = ['INFO', 'WARN', 'ERROR'];
export const ALERT_STATES: AlertState[] = ['ACTIVE', 'ACKNOWLEDGED', 'RESOLVED'];
export const CHANNEL_TYPES = ['alertmanager', 'webhook', 'dingtalk', 'wecom', 'feishu', 'email'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export interface AlertItem {
  id: number;
  rule: string;
  rule_id?: number;
  level: AlertLevel;
  state: AlertState;
  tenant: string;
  node: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  value: number;
  silenced: boolean;
  active_at: string;
  fired_at: string;
  acked_at?: string;
  acked_by?: string;
  ack_comment?: string;
  resolved_at?: string;
  resolved_by?: string;
  resolution?: string;
}

export interface AlertEvent {
  state: AlertState;
  actor: string;
  comment?: string;
  at: string;
}

export interface Delivery {
  id: number;
  channel_id: number;
  alert_id: number;
  kind: 'firing' | 'resolved';
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt: string;
  last_error?: string;
  created_at: string;
  delivered_at?: string;
}

export interface AlertDetail extends AlertItem {
  events: AlertEvent[];
  notifications: Delivery[];
}

export interface AlertFilter {
  state?: string;
  level?: string;
  rule?: string;
  node?: string;
  tenant?: string;
  since?: string;
  until?: string;
}

export interface AlertStats {
  total: number;
  open: number;
  by_level: Record<string, number>;
  by_state: Record<string, number>;
  by_rule: Record<string, number>;
  by_node: Record<string, number>;
  by_day: { day: string; count: number }[];
  acked: number;
  resolved: number;
  mean_ack_seconds: number;
  mean_resolve_seconds: number;
}

export interface Rule {
  id?: number;
  origin: 'shipped' | 'file' | 'custom';
  group: string;
  name: string;
  type: 'alerting' | 'recording';
  expr: string;
  for: string;
  keep_firing_for: string;
  level?: AlertLevel;
  tenant?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  enabled: boolean;
  state: string;
  health: string;
  last_error?: string;
  active: number;
}

export interface RuleSpec {
  name: string;
  expr: string;
  for?: string;
  keep_firing_for?: string;
  level: AlertLevel;
  tenant?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  enabled?: boolean;
}

export interface TestResult {
  evaluated_at: string;
  alerts: { labels: Record<string, string>; annotations: Record<string, string>; value: number; state: string; active_at: string }[];
}

export interface Param {
  key: string;
  alert: string;
  severity: AlertLevel;
  kind: 'threshold' | 'for';
  unit: string;
  min: number;
  max: number;
  title_en: string;
  title_zh: string;
  default: string;
  value: string;
}

export interface Matcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export interface Silence {
  id: number;
  tenant: string;
  matchers: Matcher[];
  starts_at: string;
  ends_at: string;
  comment: string;
  created_by: string;
  created_at: string;
  active: boolean;
}

export interface Channel {
  id: number;
  name: string;
  type: ChannelType;
  config: Record<string, string>;
  levels: AlertLevel[];
  tenant: string;
  enabled: boolean;
  send_resolved: boolean;
}

export type ChannelSpec = Omit<Channel, 'id'>;

const P = '/api/v1';

export const alertsApi = {
  list: (q: AlertFilter & { limit?: number; offset?: number }) => api.get<List<AlertItem>>(`${P}/alerts`, { ...q }),
  get: (id: number) => api.get<AlertDetail>(`${P}/alerts/${id}`),
  ack: (id: number, comment: string) => api.post<AlertItem>(`${P}/alerts/${id}/ack`, { comment }),
  resolve: (id: number, reason: string) => api.post<AlertItem>(`${P}/alerts/${id}/resolve`, { reason }),
  stats: (q: { since?: string; until?: string; tenant?: string }) => api.get<AlertStats>(`${P}/alerts/stats`, q),
  rules: () => api.get<{ items: Rule[] }>(`${P}/alert-rules`),
  createRule: (r: RuleSpec) => api.post<Rule>(`${P}/alert-rules`, r),
  updateRule: (id: number, r: RuleSpec) => api.put<Rule>(`${P}/alert-rules/${id}`, r),
  deleteRule: (id: number) => api.del(`${P}/alert-rules/${id}`),
  testRule: (r: RuleSpec) => api.post<TestResult>(`${P}/alert-rules/test`, r),
  params: () => api.get<{ items: Param[] }>(`${P}/alert-params`),
  putParams: (values: Record<string, string>) => api.put<{ items: Param[] }>(`${P}/alert-params`, { values }),
  silences: () => api.get<{ items: Silence[] }>(`${P}/alert-silences`),
  createSilence: (s: { matchers: Matcher[]; ends_at: string; starts_at?: string; comment?: string }) =>
    api.post<Silence>(`${P}/alert-silences`, s),
  expireSilence: (id: number) => api.del(`${P}/alert-silences/${id}`),
  channels: () => api.get<{ items: Channel[] }>(`${P}/alert-channels`),
  createChannel: (c: ChannelSpec) => api.post<Channel>(`${P}/alert-channels`, c),
  updateChannel: (id: number, c: ChannelSpec) => api.put<Channel>(`${P}/alert-channels/${id}`, c),
  deleteChannel: (id: number) => api.del(`${P}/alert-channels/${id}`),
  testChannel: (id: number) => api.post<{ delivered: boolean }>(`${P}/alert-channels/${id}/test`),
  deliveries: (q: { alert_id?: number; channel_id?: number; status?: string; limit?: number; offset?: number }) =>
    api.get<List<Delivery>>(`${P}/alert-notifications`, q),
};
