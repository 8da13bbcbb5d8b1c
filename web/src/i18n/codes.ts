// Server errors with a stable code (and the values the message names in
// params) shown in the console's language. Each namespace below holds the
// translations of one API's codes; a code without one falls back to the
// server's English message (translated by serverText where known).
import i18n from './index';

const NAMESPACES = ['alerts.errors', 'sso.errors', 'clu.errors', 'quo.errors'];

/** codedText is the translation of a server error code, or null. */
export function codedText(code: string, params?: Record<string, string>): string | null {
  for (const ns of NAMESPACES) {
    const key = `${ns}.${code}`;
    if (i18n.exists(key)) return i18n.t(key, params ?? {});
  }
  return null;
}
