// Over HTTPS with a self-signed certificate made here: the bootstrap-token
// dialog's enrolment command carries https, the address the browser reached,
// the certificate's SHA-256 and its key pin; the command's curl fetches the
// deploy script with that pin (and a wrong pin is refused), and an agent
// enrols with exactly the command's server, fingerprint and token. Then, with that node's metrics:
// type-ahead in the Metrics explorer (metric, function, label and value
// suggestions), compact legends, and node monitoring that shows every
// device in the utilisation chart (two series of one GPU index, as a GPU
// and its MIG instance report, kept apart) beside temperature and power.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';
import { startSimulatedNode } from './nodes.mjs';

const run = promisify(execFile);
const STEP_TIMEOUT = 150_000;
const H100 = 'NVIDIA H100 80GB HBM3';
let certDir;
let fingerprint;
let pubkeyPin;
let server;
let browser;
let page;
let token;
let node;
let command = '';
const pageErrors = [];
const step = stepper({ prefix: 'tls-explorer-', timeout: STEP_TIMEOUT, page: () => page });
const call = (method, path, body) => api(server, method, path, { token, body });

/** words splits a shell command line as sh would for plain and single-quoted words. */
function words(cmd) {
  const out = [];
  for (const m of cmd.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]);
  return out;
}

function flag(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

describe('HTTPS enrolment and the metrics explorer', () => {
  before(async () => {
    certDir = await mkdtemp(join(tmpdir(), 'hf-web-tls-'));
    const cert = join(certDir, 'server.crt');
    const key = join(certDir, 'server.key');
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=heteroflow-web-test', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert]);
    const { stdout } = await run('openssl', ['x509', '-noout', '-fingerprint', '-sha256', '-in', cert]);
    fingerprint = stdout.trim().split('=')[1];
    assert.match(fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/i);
    const pin = await run('sh', ['-c', 'openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64', 'sh', cert]);
    pubkeyPin = `sha256//${pin.stdout.trim()}`;
    assert.match(pubkeyPin, /^sha256\/\/[A-Za-z0-9+/]{43}=$/);
    server = await startServer({ args: ['--tls-cert', cert, '--tls-key', key], ca: await readFile(cert, 'utf8') });
    const login = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    token = login.body.access_token;
    browser = await launchBrowser({ ignoreHTTPSErrors: true });
    page = await watchPage(browser, { pageErrors, timeout: 30_000 });
  });

  after(async () => {
    await browser?.close();
    await node?.stop();
    await server?.stop();
    if (certDir) await rm(certDir, { recursive: true, force: true });
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });

  step('the enrolment command carries https, the address the browser reached and the certificate fingerprint', async () => {
    const apiPort = new URL(server.apiURL).port;
    const consolePort = new URL(server.consoleURL).port;
    // The browser reaches the console as localhost, not 127.0.0.1.
    const origin = `https://localhost:${consolePort}`;
    await page.goto(`${origin}/login`);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/dashboard$/);
    await page.getByTestId('nav-nodes').click();
    await page.getByTestId('token-new').click();
    await page.locator('.ant-modal').filter({ visible: true }).locator('.ant-btn-primary').click();
    const url = page.getByTestId('token-server-url');
    await until(async () => (await url.inputValue()) === `https://localhost:${apiPort}`, `server URL https://localhost:${apiPort}`);
    const shown = await page.getByTestId('token-fingerprint').textContent();
    assert.ok(shown.toUpperCase().includes(fingerprint.toUpperCase()), `fingerprint ${fingerprint} shown: ${shown}`);
    const secret = (await page.getByTestId('token-secret').textContent()).trim();
    command = (await page.getByTestId('token-command').textContent()).trim();
    const argv = words(command);
    assert.equal(argv[0], 'curl', command);
    assert.ok(argv.includes(`${origin}/deploy-agent-all-in-one.sh`), command);
    assert.equal(flag(argv, '--server'), `https://localhost:${apiPort}`, command);
    assert.equal(flag(argv, '--console'), origin, command);
    assert.equal(flag(argv, '--server-fingerprint')?.toUpperCase(), fingerprint.toUpperCase(), command);
    assert.equal(flag(argv, '--token'), secret, command);
    // -k (CA chain off) only together with the key pin, which is then the verification.
    assert.ok(!argv.includes('--insecure'), command);
    const bar = argv.indexOf('|');
    const curlArgs = argv.slice(0, bar);
    assert.ok(curlArgs.includes('-k'), command);
    assert.equal(flag(curlArgs, '--pinnedpubkey'), pubkeyPin, `the pin is openssl's SPKI SHA-256: ${command}`);
    assert.equal(flag(argv, '--server-pubkey-pin'), pubkeyPin, command);
    await page.getByTestId('token-done').click();
  });

  step('the command\'s curl downloads the deploy script with the pin, and refuses another key', async () => {
    const argv = words(command);
    const curlArgs = argv.slice(1, argv.indexOf('|'));
    const { stdout } = await run('curl', curlArgs, { env: { PATH: process.env.PATH, HOME: certDir } });
    assert.ok(stdout.startsWith('#!/usr/bin/env bash'), 'the deploy script came back');
    assert.ok(stdout.includes('--server-pubkey-pin'), 'and it takes the pin');
    const wrong = curlArgs.map((a) => (a === pubkeyPin ? 'sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' : a));
    await assert.rejects(run('curl', wrong, { env: { PATH: process.env.PATH, HOME: certDir } }), (err) => err.code === 90,
      'curl exits 90 (SSL public key does not match pinned public key)');
  });

  step('an agent enrols with the command\'s server, fingerprint and token', async () => {
    const argv = words(command);
    node = await startSimulatedNode(server, {
      vendor: 'nvidia', model: H100, count: 2, memoryMiB: 81559, name: 'tls-gpu',
      token: flag(argv, '--token'),
      serverURL: flag(argv, '--server'),
      agentArgs: ['--server-fingerprint', flag(argv, '--server-fingerprint')],
      timeoutMs: 90_000,
    });
    assert.match(node.nodeId, /^tls-gpu-/);
    const tokens = await call('GET', '/api/v1/bootstrap-tokens');
    const used = tokens.body.items.find((t) => t.node_id === node.nodeId);
    assert.ok(used?.used_at, 'the dialog\'s token is the one used');
  });

  step('the query box suggests metric names, functions, label names and values as one types', async () => {
    await until(async () => {
      const r = await call('GET', '/prometheus/api/v1/label/__name__/values');
      return r.body?.data?.includes('hw_gpu_utilization_ratio');
    }, 'hw_gpu_utilization_ratio ingested', 120_000);
    await page.goto(`${server.consoleURL.replace('127.0.0.1', 'localhost')}/metrics`);
    const input = page.getByTestId('promql-input');
    const suggestion = (name, kind) =>
      page.locator(`.ant-select-dropdown [data-testid="promql-suggestion"][data-name="${name}"][data-kind="${kind}"]`).filter({ visible: true });
    await input.click();
    await page.keyboard.type('ra');
    await suggestion('rate', 'function').waitFor();
    await input.fill('');
    await page.keyboard.type('hw_gpu_ut');
    await suggestion('hw_gpu_utilization_ratio', 'metric').click();
    assert.equal(await input.inputValue(), 'hw_gpu_utilization_ratio');
    await input.click();
    await page.keyboard.press('End');
    await page.keyboard.type('{hw_in');
    await suggestion('hw_index', 'label').click();
    assert.equal(await input.inputValue(), 'hw_gpu_utilization_ratio{hw_index="');
    await input.click();
    await page.keyboard.press('End');
    await suggestion('1', 'value').click();
    assert.equal(await input.inputValue(), 'hw_gpu_utilization_ratio{hw_index="1"');
  });

  step('legends name series by what differs between them', async () => {
    const expr = 'hw_gpu_memory_usage_bytes';
    const want = await until(async () => {
      const r = await call('GET', `/prometheus/api/v1/query?query=${encodeURIComponent(expr)}`);
      return r.body?.data?.result?.length >= 2 && r.body.data.result.length;
    }, `${expr} from every device`, 90_000);
    const input = page.getByTestId('promql-input');
    await input.fill(expr);
    await page.keyboard.press('Escape');
    await page.getByTestId('promql-run').click();
    const chart = page.getByTestId('echart');
    const names = await until(async () => {
      const s = JSON.parse((await chart.getAttribute('data-series')) ?? '[]');
      return s.length >= want && s;
    }, 'a chart with the devices\' series', 60_000);
    assert.equal(new Set(names).size, names.length, `names are distinct: ${names}`);
    for (const n of names) {
      assert.ok(!/host_name|__name__|hw_vendor|hw_model|hw_gpu_memory_usage_bytes/.test(n), `labels all series share are left out: ${n}`);
      assert.match(n, /hw_/, n);
    }
    assert.equal(await chart.getAttribute('data-legend'), 'plain', 'the legend wraps instead of paging one series at a time');
  });

  step('node monitoring shows every device in its charts, and temperature and power charts', async () => {
    // A second series of GPU index 0 on this node (as a MIG instance of
    // that GPU reports): its legend name collides with the GPU's.
    const now = Date.now() * 1e6;
    const attr = (key, v) => ({ key, value: { stringValue: v } });
    const push = await call('POST', '/api/v1/otlp/v1/metrics', { resourceMetrics: [{ scopeMetrics: [{ metrics: [{
      name: 'hw.gpu.utilization', unit: '1', gauge: { dataPoints: [{ asDouble: 0.5, timeUnixNano: String(now),
        attributes: [attr('host.name', node.nodeId), attr('hw.vendor', 'nvidia'), attr('hw.index', '0'), attr('hw.id', 'MIG-web-test-0-1')] }] } }] }] }] });
    assert.equal(push.status, 200, push.text);
    await page.goto(`${server.consoleURL.replace('127.0.0.1', 'localhost')}/monitoring?node=${encodeURIComponent(node.nodeId)}`);
    const h = `host_name=${JSON.stringify(node.nodeId)}`;
    const charts = [
      ['mon-gpu-util', 'hw_gpu_utilization_ratio'],
      ['mon-gpu-mem', 'hw_gpu_memory_usage_bytes'],
      ['mon-gpu-temp', 'hw_gpu_temperature_celsius'],
      ['mon-gpu-power', 'hw_gpu_power_draw_watts'],
    ];
    const drawn = {};
    for (const [id, metric] of charts) {
      const card = page.getByTestId(id);
      await until(async () => (await card.getAttribute('data-state')) === 'data', `${id} has data`, 120_000);
      const q = `max by (hw_vendor, hw_index, hw_id) (${metric}{${h}})`;
      const r = await call('GET', `/prometheus/api/v1/query?query=${encodeURIComponent(q)}`);
      const want = r.body.data.result.length;
      assert.ok(want >= 1, `${metric} reported`);
      const names = await until(async () => {
        const s = JSON.parse((await card.getByTestId('echart').getAttribute('data-series')) ?? '[]');
        return s.length === want && s;
      }, `${id} draws all ${want} series`, 60_000);
      assert.equal(new Set(names).size, want, `${id}: every device its own line: ${names}`);
      drawn[id] = names;
    }
    // Both GPUs and the second series of index 0: all drawn, told apart.
    const util = drawn['mon-gpu-util'];
    assert.equal(util.length, 3, `two GPUs and the instance of GPU 0: ${util}`);
    assert.equal(util.filter((n) => n.startsWith('nvidia #0')).length, 2, `index 0 twice, told apart: ${util}`);
    for (const id of ['mon-gpu-temp', 'mon-gpu-power']) assert.equal(drawn[id].length, 2, `${id}: both GPUs: ${drawn[id]}`);
  });
});
