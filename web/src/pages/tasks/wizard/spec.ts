// The wizard's form values, their conversion to the API's task spec, and the
// client-side checks. The checks mirror controlplane.TaskSpec.Validate so a
// user sees the server's rule before submitting; the server stays the judge
// and its error is shown as well.
import type { NewTask, QoS } from '../../../api/scheduling';

export interface WizardValues {
  name: string;
  vendor?: string;
  models?: string[];
  device_count: number;
  /** memory_mib is the amount in memory_unit (the field keeps its API name). */
  memory_mib: number;
  memory_unit?: 'MiB' | 'GiB';
  /** wait_for_nodes queues a task no node of the cluster can hold today. */
  wait_for_nodes?: boolean;
  compute_percent: number;
  qos: QoS;
  /** allow_best_effort (Silver): run unenforced where nothing enforces Silver, if no enforcing device has room. */
  allow_best_effort?: boolean;
  mode: 'command' | 'image';
  command?: string;
  image?: string;
  args?: string;
  env?: string;
  labels?: string;
  priority: number;
  timeout_seconds: number;
  max_retries: number;
  tenant?: string;
  project?: string;
  gang?: string;
  gang_size?: number;
}

// Limits of controlplane/task.go (MaxTaskNameLen … MaxTimeoutSecond).
export const LIMITS = {
  nameLen: 253,
  devices: 64,
  priority: 1000,
  retries: 100,
  labels: 64,
  labelKeyLen: 63,
  timeout: 30 * 24 * 3600,
};

export const DEFAULTS: WizardValues = {
  name: '',
  device_count: 1,
  memory_mib: 1024,
  memory_unit: 'MiB',
  compute_percent: 100,
  qos: 'bronze',
  mode: 'command',
  priority: 0,
  timeout_seconds: 0,
  max_retries: 0,
};

/**
 * splitArgs turns a shell-like line into argv: whitespace separates words,
 * '…' keeps everything literally, "…" and \ escape as in sh. No expansion.
 * It throws on an unterminated quote.
 */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '' | "'" | '"' = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = '';
      else cur += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = '';
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new Error('unterminated quote');
  if (inWord) out.push(cur);
  return out;
}

/** parsePairs reads KEY=VALUE lines (blank lines ignored); it throws naming the bad line. */
export function parsePairs(text?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of (text ?? '').split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(line);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** memoryMiB is the per-device memory in MiB, whichever unit was typed. */
export function memoryMiB(v: Pick<WizardValues, 'memory_mib' | 'memory_unit'>): number {
  const n = v.memory_mib ?? 0;
  return v.memory_unit === 'GiB' ? Math.round(n * 1024) : Math.round(n);
}

export interface DeviceShape {
  node: string;
  vendor: string;
  model: string;
  memory_mib: number;
}

/**
 * neverFits mirrors the server's submit check: the request asks for more
 * devices on one node, or more memory per device, than any node of the
 * cluster has (current use does not matter). null when it can fit.
 */
export function neverFits(
  v: Pick<WizardValues, 'device_count' | 'memory_mib' | 'memory_unit' | 'vendor' | 'models'>,
  devices: DeviceShape[],
): { key: 'devices' | 'memory'; n: number; max: number } | null {
  const dc = v.device_count ?? 0;
  if (dc <= 0 || devices.length === 0) return null;
  const vendor = v.vendor?.trim().toLowerCase();
  const models = (v.models ?? []).map((m) => m.toLowerCase());
  const ok = devices.filter((d) => (!vendor || d.vendor.toLowerCase() === vendor) && (!models.length || models.includes(d.model.toLowerCase())));
  if (!ok.length) return null; // the scheduler's type filter explains absent models
  const perNode = new Map<string, number>();
  for (const d of ok) perNode.set(d.node, (perNode.get(d.node) ?? 0) + 1);
  const maxDevices = Math.max(...perNode.values());
  if (dc > maxDevices) return { key: 'devices', n: dc, max: maxDevices };
  const mem = memoryMiB(v);
  const maxMem = Math.max(...ok.map((d) => d.memory_mib));
  if (mem > 0 && maxMem > 0 && mem > maxMem) return { key: 'memory', n: mem, max: maxMem };
  return null;
}

/** toSpec builds the POST /api/v1/tasks body; zero values are left out as the server does. */
export function toSpec(v: WizardValues): NewTask {
  const spec: NewTask = { name: v.name.trim(), qos: v.qos };
  if (v.mode === 'command') spec.command = splitArgs(v.command ?? '');
  else spec.image = v.image?.trim();
  const args = v.args?.trim() ? splitArgs(v.args) : [];
  if (args.length) spec.args = args;
  const env = parsePairs(v.env);
  if (Object.keys(env).length) spec.env = env;
  const labels = parsePairs(v.labels);
  if (Object.keys(labels).length) spec.labels = labels;
  if (v.device_count > 0) {
    spec.device_count = v.device_count;
    spec.memory_mib = memoryMiB(v) || undefined;
    spec.compute_percent = v.compute_percent;
  }
  if (v.wait_for_nodes) spec.wait_for_nodes = true;
  if (v.allow_best_effort && v.qos === 'silver' && v.device_count > 0) spec.allow_best_effort = true;
  if (v.vendor?.trim()) spec.vendor = v.vendor.trim();
  if (v.models?.length) spec.models = v.models;
  if (v.priority) spec.priority = v.priority;
  if (v.timeout_seconds) spec.timeout_seconds = v.timeout_seconds;
  if (v.max_retries) spec.max_retries = v.max_retries;
  if (v.tenant?.trim()) spec.tenant = v.tenant.trim();
  if (v.project?.trim()) spec.project = v.project.trim();
  if (v.gang?.trim()) {
    spec.gang = v.gang.trim();
    spec.gang_size = v.gang_size;
  }
  return spec;
}

/** Problem is one failed check: the form field and an i18n key (with values) under sched.wizard.err. */
export interface Problem {
  field: keyof WizardValues;
  key: string;
  values?: Record<string, unknown>;
}

/** check mirrors TaskSpec.Validate and returns every problem, not only the first. */
export function check(v: WizardValues): Problem[] {
  const p: Problem[] = [];
  const name = v.name?.trim() ?? '';
  if (!name) p.push({ field: 'name', key: 'nameRequired' });
  else if (name.length > LIMITS.nameLen) p.push({ field: 'name', key: 'nameLong', values: { n: LIMITS.nameLen } });
  if (v.mode === 'command') {
    try {
      if (!splitArgs(v.command ?? '').length) p.push({ field: 'command', key: 'commandRequired' });
    } catch {
      p.push({ field: 'command', key: 'quote' });
    }
  } else if (!v.image?.trim()) p.push({ field: 'image', key: 'imageRequired' });
  try {
    if (v.args) splitArgs(v.args);
  } catch {
    p.push({ field: 'args', key: 'quote' });
  }
  const dc = v.device_count ?? 0;
  if (dc < 0 || dc > LIMITS.devices) p.push({ field: 'device_count', key: 'devices', values: { n: LIMITS.devices } });
  if ((v.memory_mib ?? 0) < 0) p.push({ field: 'memory_mib', key: 'memory' });
  if (dc > 0 && (v.compute_percent < 10 || v.compute_percent > 100)) p.push({ field: 'compute_percent', key: 'compute' });
  if ((v.priority ?? 0) < 0 || v.priority > LIMITS.priority) p.push({ field: 'priority', key: 'priority', values: { n: LIMITS.priority } });
  if ((v.timeout_seconds ?? 0) < 0 || v.timeout_seconds > LIMITS.timeout)
    p.push({ field: 'timeout_seconds', key: 'timeout', values: { n: LIMITS.timeout } });
  if ((v.max_retries ?? 0) < 0 || v.max_retries > LIMITS.retries) p.push({ field: 'max_retries', key: 'retries', values: { n: LIMITS.retries } });
  for (const field of ['env', 'labels'] as const) {
    try {
      const m = parsePairs(v[field]);
      if (field === 'labels') {
        if (Object.keys(m).length > LIMITS.labels) p.push({ field, key: 'labelCount', values: { n: LIMITS.labels } });
        if (Object.keys(m).some((k) => k.length > LIMITS.labelKeyLen)) p.push({ field, key: 'labelKey', values: { n: LIMITS.labelKeyLen } });
      }
    } catch (err) {
      p.push({ field, key: 'pair', values: { line: (err as Error).message } });
    }
  }
  if (v.gang?.trim() && !(v.gang_size && v.gang_size >= 1)) p.push({ field: 'gang_size', key: 'gangSize' });
  return p;
}

/** fieldOfMessage finds which form field a server validation message is about. */
export function fieldOfMessage(msg: string): keyof WizardValues | undefined {
  const fields: (keyof WizardValues)[] = [
    'device_count',
    'memory_mib',
    'compute_percent',
    'priority',
    'timeout_seconds',
    'max_retries',
    'gang_size',
    'labels',
    'name',
    'command',
    'image',
    'qos',
    'vendor',
    'models',
    'tenant',
    'project',
    'env',
    'args',
  ];
  const m = msg.toLowerCase();
  return fields.find((f) => m.includes(f) || (f === 'labels' && m.includes('label')));
}
