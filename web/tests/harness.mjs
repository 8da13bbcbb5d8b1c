// Test harness for the console's browser tests: starts a real
// `heteroflow server` on free loopback ports with a fresh data dir and a
// known admin password, launches Debian's Chromium through playwright-core
// (never a downloaded browser), and cleans both up.
import { spawn } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { chromium } from 'playwright-core';

export const RESULTS = resolve(import.meta.dirname, '..', 'test-results');
export const ADMIN_PASSWORD = 'E2e-Root-Passw0rd!7';
const CHROMIUM = process.env.HETEROFLOW_CHROMIUM ?? '/usr/bin/chromium';

async function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/**
 * watchPage opens the browser's page with a default timeout and records
 * what must never happen in a console test: uncaught page errors into
 * pageErrors and, when dialogs is given, JavaScript dialogs (dismissed).
 */
export async function watchPage(browser, { pageErrors, dialogs, timeout = 20_000 }) {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  page.setDefaultTimeout(timeout);
  if (dialogs) {
    page.on('dialog', async (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      await d.dismiss().catch(() => {});
    });
  }
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  return page;
}

/**
 * fetchAs is fetch for the harness: over https with opts.ca (PEM) trusted
 * when given, since Node's fetch takes no CA of its own. It answers
 * {status, text()}.
 */
async function fetchAs(url, { method = 'GET', headers = {}, body, ca } = {}) {
  if (!ca || !url.startsWith('https:')) return fetch(url, { method, headers, body });
  return new Promise((ok, fail) => {
    const req = httpsRequest(url, { method, headers, ca }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode, text: async () => Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * startServer runs $HETEROFLOW_BIN server and waits until /health answers
 * 200. opts.args are extra server flags; opts.ca (PEM) marks a server that
 * serves https (--tls-cert/--tls-key in args) with a certificate that CA
 * signed, for the harness's own requests.
 */
export async function startServer(opts = {}) {
  const bin = process.env.HETEROFLOW_BIN;
  if (!bin) {
    throw new Error('HETEROFLOW_BIN is not set: build the binary (make build) and run `make test-web`, or HETEROFLOW_BIN=/abs/path/heteroflow npm test');
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'hf-web-e2e-'));
  const apiPort = await freePort();
  const consolePort = await freePort();
  const args = ['server', '--data-dir', dataDir, '--api-addr', `127.0.0.1:${apiPort}`, '--console-addr', `127.0.0.1:${consolePort}`, ...(opts.args ?? [])];
  const scheme = opts.ca ? 'https' : 'http';
  const log = [];
  const proc = spawn(bin, args, {
    // Run inside the temp dir so that any relative path the server resolves stays in it.
    cwd: dataDir,
    env: { ...process.env, HETEROFLOW_ADMIN_PASSWORD: ADMIN_PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout.on('data', (b) => log.push(b.toString()));
  proc.stderr.on('data', (b) => log.push(b.toString()));
  let exited = null;
  proc.on('exit', (code, signal) => {
    exited = { code, signal };
  });

  const server = {
    apiURL: `${scheme}://127.0.0.1:${apiPort}`,
    consoleURL: `${scheme}://127.0.0.1:${consolePort}`,
    ca: opts.ca,
    log: () => log.join(''),
    async stop() {
      if (exited === null) {
        proc.kill('SIGTERM');
        for (let i = 0; i < 100 && exited === null; i++) await sleep(100);
        if (exited === null) proc.kill('SIGKILL');
      }
      await mkdir(RESULTS, { recursive: true });
      await writeFile(join(RESULTS, 'server.log'), log.join(''));
      await rm(dataDir, { recursive: true, force: true });
    },
  };

  const deadline = Date.now() + 90_000; // first start runs migrations; this VM has 2 cores
  for (;;) {
    if (exited !== null) {
      await server.stop();
      throw new Error(`heteroflow server exited early (${JSON.stringify(exited)}):\n${server.log()}`);
    }
    try {
      const [api, ui] = await Promise.all([fetchAs(`${server.apiURL}/health`, { ca: opts.ca }), fetchAs(`${server.consoleURL}/health`, { ca: opts.ca })]);
      if (api.status === 200 && ui.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`heteroflow server did not report healthy within 90s:\n${server.log()}`);
    }
    await sleep(250);
  }
}

/**
 * launchBrowser starts headless Chromium with a fresh profile; close()
 * removes it. opts.ignoreHTTPSErrors accepts a test server's self-signed
 * certificate, as a user who checked its fingerprint would.
 */
export async function launchBrowser(opts = {}) {
  const profile = await mkdtemp(join(tmpdir(), 'hf-web-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1440, height: 900 },
    locale: 'zh-CN',
    ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** api calls the REST API directly (used to set up data the scenario then uses in the UI). */
export async function api(server, method, path, { token, body } = {}) {
  const res = await fetchAs(`${server.apiURL}${path}`, {
    ca: server.ca,
    method,
    headers: {
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}

/** screenshot saves the page into web/test-results (gitignored) for a failed step. */
export async function screenshot(page, name) {
  await mkdir(RESULTS, { recursive: true });
  const file = join(RESULTS, `${name.replace(/[^a-z0-9-]+/gi, '_')}.png`);
  await page.screenshot({ path: file, fullPage: true }).catch(() => {});
  return file;
}

/** until polls fn until it returns a truthy value, or fails with what it last saw. */
export async function until(fn, what, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${last}`);
    await sleep(200);
  }
}

/**
 * consoleSuite registers, inside a describe, the before and after of a
 * spec that drives one server through one browser page: ready gets
 * { server, page } once both run; after the suite both stop, and any
 * JavaScript dialog or uncaught page error (collected in dialogs and
 * pageErrors, which the spec may also read) fails it.
 */
export function consoleSuite({ ready, dialogs = [], pageErrors = [], timeout = 30_000 }) {
  let server;
  let browser;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    ready({ server, page: await watchPage(browser, { pageErrors, dialogs, timeout }) });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(dialogs, [], 'no JavaScript dialog may open');
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });
}

/**
 * closeOverlay clicks an overlay's close control (a modal's button, a
 * drawer's ×) and waits until closed() holds. On the loaded 2-core CI
 * machine such a click has twice not taken effect (the overlay stayed
 * open with nothing else on the page; once right after the modal opened,
 * once after the drawer re-rendered), so a click that changed nothing in
 * 5 s is given once more while the control is still there; a close that
 * never happens still fails.
 */
export async function closeOverlay(control, closed, what) {
  for (let attempt = 1; ; attempt++) {
    await control.click();
    try {
      await until(closed, what, attempt === 1 ? 5_000 : 20_000);
      return;
    } catch (err) {
      if (attempt > 1 || (await control.count()) === 0) throw err;
    }
  }
}

/**
 * stepper returns step(name, fn): one part of a scenario, run as a test with
 * the given timeout, that keeps a screenshot of page() (named prefix + name)
 * when it fails. page is a getter: the page is opened in before().
 */
export function stepper({ prefix = '', timeout, page }) {
  return (name, fn) =>
    it(name, { timeout }, async () => {
      try {
        await fn();
      } catch (err) {
        const file = await screenshot(page(), `${prefix}${name}`);
        err.message += `\n  screenshot: ${file}`;
        throw err;
      }
    });
}
