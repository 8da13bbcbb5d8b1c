// Browser scenario of the Dashboard, Nodes and Node monitoring pages against
// a real server with two simulated nodes of different vendors (2× NVIDIA
// H100, 2× Huawei Ascend 910B): cluster counts on the dashboard, both nodes
// with their devices, cordon and uncordon through the UI (checked through the
// API), a bootstrap token created in the UI, and a GPU utilisation chart fed
// by the agents' own collectors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_PASSWORD, api, closeOverlay, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';
import { startSimulatedNode } from './nodes.mjs';

const STEP_TIMEOUT = 60_000;

let server;
let browser;
let page;
let token;
const nodes = {};
const dialogs = [];
const pageErrors = [];

const step = stepper({ prefix: 'nodes-', timeout: STEP_TIMEOUT, page: () => page });

const nodeRow = (id) => page.locator(`tr[data-testid="node-row"][data-node="${id}"]`);
const status = (id) => nodeRow(id).getByTestId('node-status').getAttribute('data-status');

/** confirmPopover clicks OK in the open Popconfirm. */
async function confirmPopover() {
  await page.locator('.ant-popover .ant-btn-primary').filter({ visible: true }).click();
}

async function apiNode(id) {
  const res = await api(server, 'GET', `/api/v1/nodes/${id}`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('dashboard, nodes and node monitoring', () => {
  before(async () => {
    server = await startServer();
    const login = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    token = login.body.access_token;
    const [h100, ascend, b] = await Promise.all([
      startSimulatedNode(server, { vendor: 'nvidia', model: 'NVIDIA H100 80GB HBM3', count: 2, memoryMiB: 81559, name: 'h100' }),
      startSimulatedNode(server, { vendor: 'ascend', model: '910B3', count: 2, memoryMiB: 65536, name: 'ascend910b' }),
      launchBrowser(),
    ]);
    Object.assign(nodes, { h100, ascend });
    browser = b;
    page = await watchPage(browser, { pageErrors, dialogs });
  });

  after(async () => {
    await browser?.close();
    await Promise.all(Object.values(nodes).map((n) => n.stop()));
    await server?.stop();
    assert.deepEqual(dialogs, [], 'no JavaScript dialog may open');
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });

  step('login lands on the dashboard with the cluster GPU counts', async () => {
    await page.goto(`${server.consoleURL}/`);
    await page.waitForURL(/\/login$/);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/dashboard$/);
    await until(async () => (await page.getByTestId('dash-gpu-total').textContent()) === '4', 'GPU total 4');
    assert.equal(await page.getByTestId('dash-gpu-online').textContent(), '4');
    assert.equal(await page.getByTestId('dash-gpu-busy').textContent(), '0');
    assert.equal(await page.getByTestId('dash-node-online-value').textContent(), '100%');
    // No task has finished: the completion rate is "not applicable", not 0 %.
    assert.equal(await page.getByTestId('dash-completion-value').textContent(), '暂无');
    assert.equal(await page.getByTestId('dash-frag-value').textContent(), '0.00');
    // The agents' health word in the console's language, not the raw "ok".
    await until(async () => (await page.getByTestId('dash-health-word').first().textContent()) === '正常: 2', 'node health 正常: 2');
  });

  step('the nodes page lists both nodes with their devices', async () => {
    await page.getByTestId('nav-nodes').click();
    await page.waitForURL(/\/nodes$/);
    for (const [n, model, vendor] of [
      [nodes.h100, 'NVIDIA H100 80GB HBM3', 'nvidia'],
      [nodes.ascend, '910B3', 'ascend'],
    ]) {
      await nodeRow(n.nodeId).waitFor();
      assert.equal(await status(n.nodeId), 'online');
      assert.match(await nodeRow(n.nodeId).textContent(), new RegExp(vendor));
      const devices = page.getByTestId(`devices-${n.nodeId}`).locator('tr[data-testid="device-row"]');
      await until(async () => (await devices.count()) === 2, `2 devices of ${n.name}`);
      for (let i = 0; i < 2; i++) {
        const text = await devices.nth(i).textContent();
        assert.ok(text.includes(model), `device ${i} of ${n.name} shows its model: ${text}`);
        assert.ok(text.includes('空闲'), `device ${i} of ${n.name} is free in the ledger: ${text}`);
      }
    }
    // NVIDIA devices carry UUIDs from nvidia-smi.
    assert.match(await page.getByTestId(`devices-${nodes.h100.nodeId}`).textContent(), /GPU-[0-9a-f-]+/);
  });

  step('cordon then uncordon a node through the UI', async () => {
    const id = nodes.ascend.nodeId;
    await nodeRow(id).getByTestId('node-cordon').click();
    await confirmPopover();
    await until(async () => (await status(id)) === 'cordoned', 'cordoned status in the table');
    assert.equal((await apiNode(id)).cordoned, true, 'the API reports the node cordoned');

    await nodeRow(id).getByTestId('node-uncordon').click();
    await confirmPopover();
    await until(async () => (await status(id)) === 'online', 'online status after uncordon');
    const n = await apiNode(id);
    assert.equal(n.cordoned, false);
    assert.equal(n.draining, false);
  });

  step('an admin creates a bootstrap token and sees the deploy command', async () => {
    const description = `web-e2e-${Date.now().toString(36)}`;
    await page.getByTestId('token-new').click();
    const modal = page.locator('.ant-modal').filter({ visible: true });
    await modal.getByTestId('token-description').fill(description);
    await modal.locator('.ant-btn-primary').click();
    const secret = (await page.getByTestId('token-secret').textContent()).trim();
    assert.match(secret, /^hfb_[A-Za-z0-9_-]+$/);
    const cmd = await page.getByTestId('token-command').textContent();
    assert.ok(cmd.startsWith(`curl -fsSL ${server.consoleURL}/deploy-agent-all-in-one.sh | bash -s -- --server `), cmd);
    assert.ok(cmd.endsWith(`--token ${secret}`), cmd);
    await closeOverlay(page.getByTestId('token-done'), async () => (await page.locator('.ant-modal').filter({ visible: true }).count()) === 0,
      'the token dialog closed');

    const list = await api(server, 'GET', '/api/v1/bootstrap-tokens', { token });
    assert.equal(list.status, 200, list.text);
    const created = list.body.items.find((t) => t.description === description);
    assert.ok(created, 'the token is listed by the API');
    assert.ok(secret.startsWith(created.prefix));
    await page.locator(`tr[data-testid="token-row"][data-prefix="${created.prefix}"]`).waitFor();
  });

  step('node monitoring shows GPU utilisation data for a node', async () => {
    const id = nodes.h100.nodeId;
    const gpuUtilAnswers = [];
    page.on('response', async (res) => {
      const url = decodeURIComponent(res.url());
      if (url.includes('/query_range') && url.includes('hw_gpu_utilization_ratio') && url.includes(id) && res.ok()) {
        gpuUtilAnswers.push(await res.json().catch(() => null));
      }
    });
    await nodeRow(id).getByTestId('node-monitor').click();
    await page.waitForURL(new RegExp(`/monitoring\\?node=${id}$`));
    const chart = page.getByTestId('mon-gpu-util');
    // The agent's collector pushes every 10 s; refresh until the samples are there.
    await until(
      async () => {
        if ((await chart.getAttribute('data-state')) === 'data') return true;
        await page.getByTestId('mon-refresh').click();
        await sleep(1500);
        return false;
      },
      'GPU utilisation samples',
      45_000,
    );
    assert.equal(await chart.getByTestId('echart').count(), 1);
    // The chart is a canvas: check what it was drawn from, one series per H100.
    const data = await until(() => gpuUtilAnswers.at(-1), 'a GPU utilisation answer');
    const series = data.data.result;
    assert.deepEqual(series.map((s) => `${s.metric.hw_vendor}#${s.metric.hw_index}`).sort(), ['nvidia#0', 'nvidia#1']);
    assert.ok(series.every((s) => s.values.length > 0));
    // Every chart of the page answered (data or an explicit empty state, never an error).
    for (const tid of ['mon-cpu', 'mon-memory', 'mon-gpu-mem', 'mon-disk', 'mon-net']) {
      await until(async () => ['data', 'empty'].includes(await page.getByTestId(tid).getAttribute('data-state')), `${tid} settled`);
    }
    assert.equal(await page.getByTestId('mon-gpu-mem').getAttribute('data-state'), 'data');
  });

  step('a GPU in MIG mode shows its utilisation as unknown, never 0 %', async () => {
    // nvidia-smi reports a MIG-mode GPU's utilisation as N/A; the inventory
    // keeps it null and the device table must not turn it into 0 %.
    nodes.mig = await startSimulatedNode(server, {
      vendor: 'nvidia', model: 'NVIDIA A100-SXM4-80GB', count: 2, memoryMiB: 81920, name: 'a100mig',
      partitions: [{ device: 1, profile: '3g.40gb', id: 1 }],
    });
    const inv = (await apiNode(nodes.mig.nodeId)).inventory[0].devices;
    assert.equal(inv[1].utilization_percent, null, 'the API keeps N/A as null');
    assert.equal(typeof inv[0].utilization_percent, 'number');
    await page.getByTestId('nav-nodes').click();
    await page.waitForURL(/\/nodes$/);
    // A node that joined after the page first loaded starts collapsed.
    await nodeRow(nodes.mig.nodeId).locator('.ant-table-row-expand-icon').click();
    const rows = page.getByTestId(`devices-${nodes.mig.nodeId}`).locator('tr[data-testid="device-row"]');
    await until(async () => (await rows.count()) === 2, '2 devices of the MIG node');
    assert.equal(await rows.nth(1).getAttribute('data-util'), 'unknown');
    assert.equal((await rows.nth(1).locator('td').last().textContent()).trim(), '—');
    assert.match((await rows.nth(0).locator('td').last().textContent()).trim(), /^\d+%$/);
  });
  step('an operator revokes a node: its agent is refused from then on and the node takes no new tasks', async () => {
    const id = nodes.mig.nodeId;
    await nodeRow(id).getByTestId('node-revoke').click();
    await confirmPopover();
    await until(async () => (await status(id)) === 'cordoned', 'the revoked node shows cordoned');
    // Its heartbeats (every 2 s) stop counting at once: the agent's next
    // request is refused, whatever credential it carries.
    const at = (await apiNode(id)).last_heartbeat;
    await sleep(5_000);
    assert.equal((await apiNode(id)).last_heartbeat, at, 'no heartbeat is accepted after revocation');
    assert.match(nodes.mig.log(), /revoked/, 'the agent was told why');
    // The other nodes keep heartbeating.
    const other = nodes.h100.nodeId;
    const before = (await apiNode(other)).last_heartbeat;
    await until(async () => (await apiNode(other)).last_heartbeat !== before, 'the other node still heartbeats', 10_000);
  });
});
