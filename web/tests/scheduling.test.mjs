// Scheduling in the console, end to end against a real server and two
// simulated nodes (8× NVIDIA H100 with a MIG partition, 8× Ascend 910B):
// the task wizard's checks, a 2-device Gold task and four Bronze 25% tasks
// submitted through the wizard, placed (slices page) and finished (list,
// logs), the fragmentation score while they run, "why pending" for a task
// that cannot fit, a quota refusal with its reason, a preemption with its
// reason, the defrag planner's refusal, and plugin changes applied through
// the Plugins page. Any JavaScript dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_PASSWORD, api, closeOverlay, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';
import { startSimulatedNode } from './nodes.mjs';

const STEP_TIMEOUT = 90_000;
const suffix = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
const H100 = 'NVIDIA H100 80GB HBM3';

let server;
let browser;
let page;
let token;
const nodes = [];
const dialogs = [];
const pageErrors = [];
const ids = { gold: 0, bronze: [], pending: 0, quota: 0, vip: 0 };

const step = stepper({ prefix: 'sched-', timeout: STEP_TIMEOUT, page: () => page });

const call = (method, path, body) => api(server, method, path, { token, body });
const getTask = async (id) => (await call('GET', `/api/v1/tasks/${id}`)).body;
const modal = () => page.locator('.ant-modal').filter({ visible: true });
const drawer = () => page.locator('.ant-drawer').filter({ visible: true });

/** openWizard opens the task wizard from the Tasks page. */
async function openWizard() {
  // A step that failed may have left the wizard or a detail open.
  if ((await modal().count()) > 0) await modal().locator('.ant-modal-close').click();
  if (/\/tasks\/\d+$/.test(page.url())) await closeDrawer();
  await page.getByTestId('nav-tasks').click();
  await page.waitForURL(/\/tasks$/);
  await page.getByTestId('task-new').click();
  await modal().getByTestId('wizard-name').waitFor();
}

/**
 * submitWizard fills every step of the open wizard, checks the review, submits,
 * and returns the new task's id from the detail it opens.
 */
async function submitWizard(o) {
  const m = modal();
  await m.locator('#name').fill(o.name);
  if (o.vendor) {
    await m.locator('#vendor').fill(o.vendor);
    // Vendor choices come from the devices in the cluster.
    await page.locator('.ant-select-dropdown .ant-select-item-option', { hasText: o.vendor }).filter({ visible: true }).first().waitFor();
    await page.keyboard.press('Escape');
  }
  if (o.model) {
    await m.locator('#models').fill(o.model);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
  }
  await m.locator('#device_count').fill(String(o.devices));
  await m.locator('#memory_mib').fill(String(o.memory ?? 1024));
  await m.locator('#compute_percent').fill(String(o.compute));
  await m.locator(`.ant-radio-wrapper:has(input[value="${o.qos}"])`).click();
  if (o.bestEffort) await m.getByTestId('wizard-best-effort').check();
  await m.getByTestId('wizard-next').click();
  await m.locator('#command').fill(o.command);
  await m.locator('#labels').fill(`suite=web-sched\nrun=${suffix}`);
  await m.getByTestId('wizard-next').click();
  await m.locator('#priority').fill(String(o.priority ?? 0));
  if (o.tenant) await m.locator('#tenant').fill(o.tenant);
  await m.getByTestId('wizard-next').click();
  const review = m.getByTestId('wizard-review');
  await review.waitFor();
  assert.match(await review.getByTestId('wizard-review-resources').textContent(), new RegExp(`^${o.devices} `));
  await m.getByTestId('wizard-submit').click();
  await page.waitForURL(/\/tasks\/\d+$/);
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  await until(async () => (await drawer().getByTestId('drawer-task-name').textContent()) === o.name, `detail of ${o.name}`);
  return id;
}

async function closeDrawer() {
  await closeOverlay(drawer().locator('.ant-drawer-close'), async () => /\/tasks$/.test(page.url()) && (await drawer().count()) === 0,
    'detail closed');
}

describe('scheduling console', () => {
  before(async () => {
    server = await startServer();
    const [nv, asc] = await Promise.all([
      startSimulatedNode(server, { vendor: 'nvidia', model: H100, count: 8, memoryMiB: 81559, name: 'h100',
        partitions: [{ device: 0, profile: '3g.40gb', id: 1 }] }),
      startSimulatedNode(server, { vendor: 'ascend', model: '910B3', count: 8, name: 'ascend910b' }),
    ]);
    nodes.push(nv, asc);
    const login = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    token = login.body.access_token;
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });

  after(async () => {
    await browser?.close();
    for (const n of nodes) await n.stop();
    await server?.stop();
    assert.deepEqual(dialogs, [], 'no JavaScript dialog may open');
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });

  step('admin logs in and the wizard checks its fields', async () => {
    await page.goto(`${server.consoleURL}/tasks`);
    await page.waitForURL(/\/login$/);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/tasks$/);
    await openWizard();
    const m = modal();
    const errors = m.locator('.ant-form-item-explain-error').filter({ visible: true });
    // Step 1: an empty name is refused before anything is sent.
    await m.getByTestId('wizard-next').click();
    await until(async () => (await errors.allTextContents()).some((x) => /名称必填/.test(x)), 'name required');
    assert.ok(await m.locator('#name').isVisible(), 'still on the first step');
    // Step 2: no command, and a label line that is not KEY=VALUE.
    await m.locator('#name').fill(`checks-${suffix}`);
    await m.getByTestId('wizard-next').click();
    await m.locator('#labels').fill('novalue');
    await m.getByTestId('wizard-next').click();
    await until(async () => {
      const text = (await errors.allTextContents()).join(' | ');
      return /必须填写命令或镜像/.test(text) && /KEY=VALUE.*novalue/.test(text);
    }, 'command and label errors');
    await m.locator('.ant-modal-close').click();
    await modal().waitFor({ state: 'detached' }).catch(() => {});
  });

  step('a 2-device Gold task runs through the wizard, placed on H100s, and logs "done"', async () => {
    await openWizard();
    ids.gold = await submitWizard({
      name: `gold-${suffix}`, vendor: 'nvidia', devices: 2, compute: 100, qos: 'gold', command: `sh -c 'sleep 2; echo done'`,
    });
    const t = await getTask(ids.gold);
    assert.deepEqual(t.command, ['sh', '-c', 'sleep 2; echo done'], 'the command line is split like a shell');
    assert.equal(t.qos, 'gold');
    assert.equal(t.device_count, 2);
    const d = drawer();
    await until(async () => (await d.getByTestId('task-state').first().getAttribute('data-state')) === 'succeeded', 'gold succeeded in the detail', 40_000);
    await d.getByTestId('task-tab-placement').click();
    await until(async () => /H100.*#\d.*whole.*#\d/.test(await d.getByTestId('task-placement').textContent()), 'placement on two H100s');
    await d.getByTestId('task-tab-logs').click();
    await until(async () => (await d.getByTestId('task-log-stdout').textContent()).includes('done'), 'stdout shows done');
    await closeDrawer();
  });

  step('a Silver task that allows best effort says so in the API and in its detail, and runs', async () => {
    await openWizard();
    const id = await submitWizard({
      name: `silver-be-${suffix}`, vendor: 'nvidia', devices: 1, compute: 10, qos: 'silver', bestEffort: true, command: `sh -c 'echo done'`,
    });
    const t = await getTask(id);
    assert.equal(t.qos, 'silver');
    assert.equal(t.allow_best_effort, true);
    const d = drawer();
    assert.equal(await d.getByTestId('drawer-best-effort').textContent(), '允许尽力而为');
    await until(async () => (await d.getByTestId('task-state').first().getAttribute('data-state')) === 'succeeded', 'silver succeeded', 40_000);
    await closeDrawer();
  });

  step('four Bronze 25% tasks are placed on the slices page, change the fragmentation score and finish', async () => {
    // Scores seen by the console while the Bronze tasks live (sampled from the page below).
    for (let i = 0; i < 4; i++) {
      await openWizard();
      ids.bronze.push(await submitWizard({
        name: `bronze-${i}-${suffix}`, devices: 1, compute: 25, qos: 'bronze', command: `sh -c 'sleep ${4 + 2 * i}; echo done'`,
      }));
      await closeDrawer();
    }
    await page.getByTestId('nav-slices').click();
    await page.waitForURL(/\/slices$/);
    const scores = new Set();
    const sample = async () => {
      const v = await page.getByTestId('frag-score').getAttribute('data-score');
      if (v !== null && v !== '') scores.add(Number(v));
    };
    // Placed: every Bronze task shows as a slice (unless it already finished).
    await until(async () => {
      await sample();
      const shown = await page.getByTestId('slice-task').allTextContents();
      const states = await Promise.all(ids.bronze.map(getTask));
      return ids.bronze.every((id, i) => shown.includes(`#${id}`) || states[i].state === 'succeeded');
    }, 'bronze slices on the slices page');
    const slice = page.getByTestId('device').filter({ has: page.getByTestId('slice-task').getByText(`#${ids.bronze.at(-1)}`, { exact: true }) });
    if (await slice.count()) assert.match(await slice.first().textContent(), /25%/);
    // Finished: keep sampling the score the page shows until all four succeeded.
    await until(async () => {
      await sample();
      const states = await Promise.all(ids.bronze.map(getTask));
      return states.every((s) => s.state === 'succeeded');
    }, 'bronze tasks succeeded', 60_000);
    await until(async () => {
      await sample();
      return (await page.getByTestId('frag-score').getAttribute('data-score')) === '0';
    }, 'score back to 0 after the tasks ended', 10_000);
    const seen = [...scores];
    console.log(`fragmentation scores shown on /slices: ${seen.join(', ')}`);
    assert.ok(seen.every((x) => Number.isFinite(x) && x >= 0 && x <= 1), `scores are numbers in [0,1]: ${seen}`);
    assert.ok(seen.some((x) => x > 0), `the score rose above 0 while the Bronze tasks ran: ${seen}`);
    // The list shows them succeeded; a detail shows the output.
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-q').fill(`bronze-`);
    await page.getByTestId('task-search').click();
    for (const i of [0, 1, 2, 3]) {
      const row = page.locator('tr.ant-table-row', { hasText: `bronze-${i}-${suffix}` });
      await until(async () => (await row.getByTestId('task-state').getAttribute('data-state')) === 'succeeded', `bronze ${i} succeeded in the list`);
    }
    await page.goto(`${server.consoleURL}/tasks/${ids.bronze[0]}`);
    await drawer().getByTestId('task-tab-logs').click();
    await until(async () => (await drawer().getByTestId('task-log-stdout').textContent()).includes('done'), 'bronze stdout shows done');
    await closeDrawer();
  });

  step('a task no node can take says why it is pending', async () => {
    await openWizard();
    // A free-text model nobody has: admitted, then waiting with reasons.
    ids.pending = await submitWizard({
      name: `pending-${suffix}`, model: 'Imaginary-X1', devices: 1, compute: 50, qos: 'silver', command: 'true',
    });
    const d = drawer();
    await d.getByTestId('task-tab-why').click();
    // Server texts are shown in the console's language (简体中文 here).
    await until(async () => /个节点可用/.test(await d.getByTestId('why-summary').textContent()), 'why summary');
    assert.match(await d.getByTestId('why-by-reason').textContent(), /厂商\/型号/);
    assert.notEqual(await d.getByTestId('why-next').textContent(), '—', 'next attempt time shown');
    await d.getByTestId('drawer-cancel').click();
    await page.locator('.ant-popconfirm .ant-btn-primary').filter({ visible: true }).click();
    await until(async () => (await getTask(ids.pending)).state === 'cancelled', 'pending task cancelled');
    await closeDrawer();
  });

  step('a task over its tenant quota is refused with the reason in its detail', async () => {
    const tenant = `quota-${suffix}`;
    const tn = await call('POST', '/api/v1/tenants', { name: tenant });
    assert.equal(tn.status, 201, tn.text);
    const q = await call('POST', '/api/v1/quotas', { tenant, devices: 1, policy: 'refuse' });
    assert.equal(q.status, 201, q.text);
    await sleep(1_500); // the leader re-reads quotas every second (scheduling NodeSync)
    await openWizard();
    ids.quota = await submitWizard({ name: `quota-${suffix}`, tenant, devices: 2, compute: 50, qos: 'bronze', command: 'true' });
    const reason = drawer().getByTestId('task-failure-reason');
    await until(async () => /refused: quota tenant .*devices/.test(await reason.textContent()), 'quota refusal shown');
    assert.equal((await getTask(ids.quota)).state, 'failed');
    await closeDrawer();
  });

  step('a high-priority Gold task preempts a Bronze task and the reason is shown', async () => {
    // Fill all eight Ascend cards with low-priority Bronze work.
    const fill = [];
    for (let i = 0; i < 8; i++) {
      const r = await call('POST', '/api/v1/tasks', { name: `fill-${i}-${suffix}`, command: ['sleep', '300'], device_count: 1,
        memory_mib: 1024, compute_percent: 100, qos: 'bronze', vendor: 'ascend', max_retries: 1 });
      assert.equal(r.status, 201, r.text);
      fill.push(r.body.id);
    }
    await until(async () => {
      const s = (await call('GET', '/api/v1/slices')).body;
      return s.items.filter((d) => d.vendor === 'ascend' && d.free_compute_percent === 0).length === 8;
    }, 'ascend cards full', 30_000);
    await openWizard();
    ids.vip = await submitWizard({
      name: `vip-${suffix}`, vendor: 'ascend', devices: 1, compute: 100, qos: 'gold', priority: 900, command: `sh -c 'echo vip'`,
    });
    await until(async () => (await getTask(ids.vip)).state === 'succeeded', 'vip succeeded', 40_000);
    const victims = [];
    for (const id of fill) {
      const ev = (await call('GET', `/api/v1/tasks/${id}/events`)).body.items;
      if (ev.some((e) => e.reason?.includes(`preempted by task ${ids.vip}`))) victims.push(id);
    }
    // Reported, not asserted: the smallest victim set is one task here.
    console.log(`Bronze tasks preempted for the 1-device vip task: ${victims.length} (${victims.join(', ')})`);
    const victim = victims[0];
    assert.ok(victim, 'some Bronze task was preempted by the vip task');
    await closeDrawer();
    await page.goto(`${server.consoleURL}/tasks/${victim}`);
    await drawer().getByTestId('task-tab-spec').click();
    const reasons = drawer().getByTestId('task-event-reason');
    await until(async () => (await reasons.allTextContents()).some((r) => r.includes(`preempted by task ${ids.vip} (priority 900 > 0, gold)`)),
      'preemption reason in the timeline');
    await closeDrawer();
  });

  step('the defrag planner shows the server refusing execution', async () => {
    await page.getByTestId('nav-slices').click();
    const panel = page.getByTestId('defrag-panel');
    await panel.waitFor();
    // The server runs without allow_defrag: no automatic policy.
    await until(async () => /仅手动/.test(await page.getByTestId('defrag-policy').textContent()), 'policy shown as manual only');
    await page.getByTestId('defrag-execute').click();
    await page.locator('.ant-popconfirm .ant-btn-primary').filter({ visible: true }).click();
    await until(async () => /allow_defrag/.test(await page.getByTestId('defrag-error').textContent()), 'refusal shown');
  });

  step('plugins are disabled, refused and reordered live from the Plugins page', async () => {
    await page.getByTestId('nav-plugins').click();
    await page.waitForURL(/\/plugins$/);
    const plugins = async () => (await call('GET', '/api/v1/plugins')).body.items;
    const sw = page.getByTestId('plugin-enabled-Topology');
    await sw.click();
    await until(async () => (await plugins()).find((p) => p.name === 'Topology')?.enabled === false, 'Topology disabled through the API');
    // The Assign plugin cannot be disabled: the server's message is shown inline.
    await page.getByTestId('plugin-enabled-LoadAware').click();
    await until(async () => /cannot be disabled/.test(await page.getByTestId('plugins-error').textContent()), 'inline refusal');
    assert.equal((await plugins()).find((p) => p.name === 'LoadAware')?.enabled, true);
    // Move BinPack up one place.
    const before = (await plugins()).map((p) => p.name);
    const at = before.indexOf('BinPack');
    await page.getByTestId('plugin-up-BinPack').click();
    await until(async () => (await plugins()).map((p) => p.name).indexOf('BinPack') === at - 1, 'BinPack moved up');
    // Weight: set BinPack's weight to 3.
    const weight = page.getByTestId('plugin-weight-BinPack');
    const input = (await weight.evaluate((e) => e.tagName)) === 'INPUT' ? weight : weight.locator('input');
    await input.fill('3');
    await page.getByTestId('plugin-weight-save-BinPack').click();
    await until(async () => (await plugins()).find((p) => p.name === 'BinPack')?.weight === 3, 'BinPack weight 3');
    // Put Topology back on so the state is as found.
    await page.getByTestId('plugin-enabled-Topology').click();
    await until(async () => (await plugins()).find((p) => p.name === 'Topology')?.enabled === true, 'Topology enabled again');
  });
});
