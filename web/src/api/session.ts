// Session state: the access token lives only in memory; the refresh token is
// kept in localStorage so a reload (or a new tab) can resume the session.
// Refresh tokens rotate on every use and the server revokes the whole family
// when an old one is presented again, so every refresh goes through one
// in-flight promise: two concurrent 401s must never both spend the token.
import { send } from './http';
import type { TokenResponse, User } from './types';

const REFRESH_KEY = 'heteroflow.refresh_token';

let accessToken: string | null = null;
let currentUser: User | null = null;
let inflight: Promise<void> | null = null;
const listeners = new Set<(u: User | null) => void>();

function storedRefresh(): string | null {
  try {
    return localStorage.getItem(REFRESH_KEY);
  } catch {
    return null;
  }
}

function setSession(t: TokenResponse | null): void {
  accessToken = t?.access_token ?? null;
  currentUser = t?.user ?? null;
  try {
    if (t) localStorage.setItem(REFRESH_KEY, t.refresh_token);
    else localStorage.removeItem(REFRESH_KEY);
  } catch {
    // Storage disabled: the session lasts as long as the page.
  }
  listeners.forEach((l) => l(currentUser));
}

export function getAccessToken(): string | null {
  return accessToken;
}

export function getUser(): User | null {
  return currentUser;
}

export function hasRefreshToken(): boolean {
  return storedRefresh() !== null;
}

/** subscribe calls fn whenever the signed-in user changes (null = signed out). */
export function subscribe(fn: (u: User | null) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export async function login(username: string, password: string): Promise<User> {
  const t = await send<TokenResponse>('POST', '/api/v1/auth/login', { body: { username, password } });
  setSession(t);
  return t.user;
}

/**
 * refresh exchanges the stored refresh token for a new pair. Concurrent
 * callers share one request. On failure the session ends and the error is
 * rethrown.
 */
export function refresh(): Promise<void> {
  if (inflight) return inflight;
  const token = storedRefresh();
  if (!token) return Promise.reject(new Error('no refresh token'));
  inflight = send<TokenResponse>('POST', '/api/v1/auth/refresh', { body: { refresh_token: token } })
    .then((t) => setSession(t))
    .catch((err) => {
      setSession(null);
      throw err;
    })
    .finally(() => {
      inflight = null;
    });
  return inflight;
}

let restoring: Promise<User | null> | null = null;

/** restore resumes a stored session once per page load (idempotent). */
export function restore(): Promise<User | null> {
  if (!restoring) {
    restoring = hasRefreshToken()
      ? refresh().then(
          () => currentUser,
          () => null,
        )
      : Promise.resolve(null);
  }
  return restoring;
}

/**
 * logout revokes the refresh token on the server, then forgets the session
 * locally either way. For an account of an OpenID provider that offers
 * RP-initiated logout it answers the provider's logout page, where the
 * caller sends the browser (null otherwise).
 */
export async function logout(): Promise<string | null> {
  const token = storedRefresh();
  const bearer = accessToken;
  const sso = currentUser?.auth_source?.startsWith('oidc:') ?? false;
  setSession(null);
  if (token) {
    try {
      if (sso) {
        const r = await send<{ end_session_url?: string }>('POST', '/api/v1/auth/oidc/logout', { body: { refresh_token: token }, token: bearer });
        return r?.end_session_url || null;
      } else {
        await send('POST', '/api/v1/auth/logout', { body: { refresh_token: token }, token: bearer });
      }
    } catch {
      // The local session is gone already; an expired token on the server side is harmless.
    }
  }
  return null;
}

export interface SSOProvider {
  name: string;
  display_name: string;
  start_url: string;
}

/** ssoProviders lists the OpenID providers of the login page's buttons. */
export async function ssoProviders(): Promise<SSOProvider[]> {
  const r = await send<{ providers: SSOProvider[] }>('GET', '/api/v1/auth/oidc/providers');
  return r.providers ?? [];
}

let redeeming: Promise<User> | null = null;

/**
 * redeemSSO turns the finished single sign-on of this browser (a one-use
 * cookie the server set) into the session. Concurrent callers share one
 * request: the cookie works once.
 */
export function redeemSSO(): Promise<User> {
  if (!redeeming) {
    redeeming = send<TokenResponse>('POST', '/api/v1/auth/oidc/session').then((t) => {
      setSession(t);
      return t.user;
    });
    redeeming.catch(() => {}).finally(() => {
      redeeming = null;
    });
  }
  return redeeming;
}

/** expire ends the session after a failed refresh (no server call). */
export function expire(): void {
  setSession(null);
}
