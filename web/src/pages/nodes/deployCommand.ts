// The one-line deploy command shown with a new bootstrap token. The deploy
// script (deploy/deploy-agent-all-in-one.sh) takes --server (the API URL the
// agent talks to), --token, and --console (where it downloads the agent
// from; default: the server's host on port 5173).

/** shellQuote leaves plain words alone and single-quotes anything else. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** defaultServerURL guesses the API on the console's host at the default port 3333. */
export function defaultServerURL(loc: { protocol: string; hostname: string }): string {
  const host = loc.hostname.includes(':') ? `[${loc.hostname}]` : loc.hostname;
  return `${loc.protocol}//${host}:3333`;
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

export function deployCommand(consoleOrigin: string, server: string, token: string): string {
  const parts = ['curl -fsSL', shellQuote(`${consoleOrigin}/deploy-agent-all-in-one.sh`), '| bash -s --', '--server', shellQuote(server)];
  if (scriptDefaultConsole(server) !== consoleOrigin) parts.push('--console', shellQuote(consoleOrigin));
  parts.push('--token', shellQuote(token));
  return parts.join(' ');
}
