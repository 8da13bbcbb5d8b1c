// The one-line deploy command shown with a new bootstrap token. The deploy
// script (deploy/deploy-agent-all-in-one.sh) takes --server (the API URL the
// agent talks to), --token, and --console (where it downloads the agent
// from; default: the server's host on port 5173).

/** shellQuote leaves plain words alone and single-quotes anything else. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * defaultServerURL is the API as agents reach it: the server's configured
 * external URL, else the host name the browser used with the API
 * listener's port and the scheme the server serves (https with TLS).
 */
export function defaultServerURL(
  loc: { protocol: string; hostname: string },
  e?: { external_url?: string; api_port?: number; tls?: boolean },
): string {
  if (e?.external_url) return e.external_url;
  const host = loc.hostname.includes(':') ? `[${loc.hostname}]` : loc.hostname;
  const scheme = e ? (e.tls ? 'https:' : 'http:') : loc.protocol;
  return `${scheme}//${host}:${e?.api_port || 3333}`;
}

/** scriptDefaultConsole is what the script assumes when --console is absent. */
function scriptDefaultConsole(server: string): string | null {
  try {
    const u = new URL(server);
    return `${u.protocol}//${u.hostname}:5173`;
  } catch {
    return null;
  }
}

/**
 * deployCommand is the one-line install. With a self-signed https server
 * the agent pins the certificate by its SHA-256 (--server-fingerprint), and
 * every curl (this one and the script's) pins the server's public key with
 * --pinnedpubkey. Its -k only drops the CA-chain check, which a self-signed
 * certificate cannot pass; curl still refuses any key but the pinned one.
 * The pin travels with the command from the console the admin logged into,
 * so this is strictly stronger than trust-on-first-use: not even the first
 * connection accepts an unknown key. Without a pin nothing is relaxed.
 */
export function deployCommand(consoleOrigin: string, server: string, token: string, fingerprint?: string, pubkeyPin?: string): string {
  const pinned = !!pubkeyPin && consoleOrigin.startsWith('https:') && server.startsWith('https:');
  const curl = pinned ? ['curl -fsSL --pinnedpubkey', shellQuote(pubkeyPin!), '-k'] : ['curl -fsSL'];
  const parts = [...curl, shellQuote(`${consoleOrigin}/deploy-agent-all-in-one.sh`), '| bash -s --', '--server', shellQuote(server)];
  if (scriptDefaultConsole(server) !== consoleOrigin) parts.push('--console', shellQuote(consoleOrigin));
  if (fingerprint && server.startsWith('https:')) parts.push('--server-fingerprint', shellQuote(fingerprint));
  if (pinned) parts.push('--server-pubkey-pin', shellQuote(pubkeyPin!));
  parts.push('--token', shellQuote(token));
  return parts.join(' ');
}
