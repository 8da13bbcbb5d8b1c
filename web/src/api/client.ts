// Authenticated API calls: attach the access token; on a 401 refresh once and
// retry once; when the refresh fails the session ends (the app then shows the
// login page).
import { ApiError, send, type Query } from './http';
import { getAccessToken, hasRefreshToken, refresh } from './session';

async function call<T>(method: string, path: string, query?: Query, body?: unknown): Promise<T> {
  try {
    return await send<T>(method, path, { query, body, token: getAccessToken() });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401 || !hasRefreshToken()) throw err;
  }
  await refresh(); // throws (and ends the session) when the refresh token is dead
  return send<T>(method, path, { query, body, token: getAccessToken() });
}

export const api = {
  get: <T>(path: string, query?: Query) => call<T>('GET', path, query),
  post: <T>(path: string, body?: unknown) => call<T>('POST', path, undefined, body ?? {}),
  put: <T>(path: string, body?: unknown) => call<T>('PUT', path, undefined, body),
  patch: <T>(path: string, body?: unknown) => call<T>('PATCH', path, undefined, body),
  del: <T = void>(path: string) => call<T>('DELETE', path),
};
