// Low-level HTTP: one fetch wrapper that turns the API's error shape
// {"error":{"code","message"}} into an ApiError. URLs are relative so the
// console works behind the console listener, which forwards /api to the API.

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId?: string;
  /** retryAfter is the Retry-After header in seconds (429, 503), if any. */
  readonly retryAfter?: number;
  /** params are the values a coded error's message names (for its translation). */
  readonly params?: Record<string, string>;

  constructor(status: number, code: string, message: string, requestId?: string, retryAfter?: number, params?: Record<string, string>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
    this.params = params;
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface SendOptions {
  query?: Query;
  body?: unknown;
  token?: string | null;
  signal?: AbortSignal;
}

/** buildURL keeps only the query parameters that carry a value. */
export function buildURL(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function errorFrom(res: Response): Promise<ApiError> {
  const requestId = res.headers.get('X-Request-Id') ?? undefined;
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  let params: Record<string, string> | undefined;
  try {
    const body = await res.json();
    if (body && typeof body === 'object' && typeof body.error === 'string') {
      // Prometheus HTTP API envelope: {"status":"error","errorType":…,"error":…}
      code = String(body.errorType ?? code);
      message = body.error;
    } else if (body && typeof body === 'object' && body.error) {
      code = String(body.error.code ?? code);
      message = String(body.error.message ?? message);
      if (body.error.params && typeof body.error.params === 'object') params = body.error.params;
    }
  } catch {
    // Not JSON (e.g. a proxy error page): keep the status text.
  }
  const retry = Number(res.headers.get('Retry-After'));
  return new ApiError(res.status, code, message, requestId, Number.isFinite(retry) && retry > 0 ? retry : undefined, params);
}

/** send performs one request; it never retries. */
export async function send<T>(method: string, path: string, opts: SendOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let res: Response;
  try {
    res = await fetch(buildURL(path, opts.query), {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      credentials: 'same-origin',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', (err as Error).message || 'network error');
  }
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
