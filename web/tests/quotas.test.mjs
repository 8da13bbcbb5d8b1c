// Quotas end to end against a real server: an admin opens Quotas from the
// menu, sees the tenant's quota with its live use, and adds a project
// quota with the refuse policy; a task placed in that project moves the
// usage bars within one refresh; the tenant's admin sets a project quota
// over the tenant's and is refused with the server's reason in Chinese
// (nothing stored), then within it succeeds, and cannot touch the tenant's
// own quota; in English the refusal reads in English; a plain member reads
// the quotas without edit buttons. Any JavaScript dialog or uncaught page
// error fails it.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, screenshot, startServer, stepper, until, watchPage } from './harness.mjs';

let server;
let browser;
let page;
let token;
const pageErrors = [];
const dialogs = [];
const step = stepper({ prefix: 'quotas-', timeout: 60_000, page: () => page });
const PW = 'Quota-Tenant-Passw0rd!';

async function login(username, password) {
  await page.goto(`${server.consoleURL}/login`);
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

async function logout() {
  await page.getByTestId('logout').click();
  await page.waitForURL(/\/login/);
}

const rows = () => page.getByTestId('quota-table').locator('tbody tr.ant-table-row');
const row = (text) => rows().filter({ hasText: text });
const input = (id) => page.locator(`[data-testid="${id}"]`).locator('xpath=descendant-or-self::input').first();
const quotas = async () => (await api(server, 'GET', '/api/v1/tenants/acme/quotas', { token })).body.items;

async function chooseTenant(name) {
  await page.getByTestId('quota-tenant').click();
  await page.locator('.ant-select-item-option').filter({ hasText: `(${name})` }).click();
}

async function fillQuota({ project, vendor, devices, compute, refuse }) {
  if (project) {
    await page.getByTestId('quota-project').click();
    await page.locator('.ant-select-item-option').filter({ hasText: project }).click();
  }
  if (vendor) await input('quota-vendor').fill(vendor);
  await input('quota-devices').fill(String(devices));
  await input('quota-compute').fill(String(compute));
  if (refuse) await page.getByTestId('quota-policy-refuse').click();
  await page.getByTestId('quota-save').click();
}

describe('quotas console', () => {
  before(async () => {
    server = await startServer();
    const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(res.status, 200, res.text);
    token = res.body.access_token;
    const must = async (method, path, body, status) => {
      const r = await api(server, method, path, { token, body });
      assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
      return r.body;
    };
    await must('POST', '/api/v1/tenants', { name: 'acme', display_name: 'Acme' }, 201);
    for (const p of ['vision', 'nlp']) await must('POST', '/api/v1/tenants/acme/projects', { name: p }, 201);
    for (const [name, role] of [['tina', 'tenant-admin'], ['mo', 'member']]) {
      await must('POST', '/api/v1/users', { username: name, password: PW, role: 'user' }, 201);
      await must('PUT', `/api/v1/tenants/acme/members/${name}`, { role }, 200);
    }
    await must('POST', '/api/v1/tenants/acme/quotas', { devices: 2, compute_percent: 200 }, 201);
    // A node with two NVIDIA devices, enrolled and brought online through the API.
    const tok = await must('POST', '/api/v1/bootstrap-tokens', { description: 'quotas' }, 201);
    const enrolled = await must('POST', '/api/v1/agents/enroll', {
      token: tok.token, hostname: 'quota-node', os: 'linux', arch: 'amd64', version: 'test',
      inventory: [{ vendor: 'nvidia', devices: [0, 1].map((i) => ({ index: i, model: 'H100', memory_total_mib: 81920 })) }],
    }, 201);
    const hb = await api(server, 'POST', '/api/v1/agents/heartbeat', {
      token: enrolled.api_key, body: { health: 'ok', cpu_count: 32, memory_total_mib: 256000, memory_free_mib: 200000, running: [] },
    });
    assert.equal(hb.status, 200, hb.text);
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'no uncaught page errors');
    assert.deepEqual(dialogs, [], 'no JavaScript dialogs');
  });

  step('admin opens 配额管理, sees the tenant quota with its use and adds a project quota that refuses', async () => {
    await login('admin', ADMIN_PASSWORD);
    await page.getByRole('menuitem', { name: '配额管理' }).click();
    await page.waitForURL(/\/quotas$/);
    await chooseTenant('acme');
    const tenantRow = row('租户 acme');
    await tenantRow.waitFor();
    assert.equal(await tenantRow.getByTestId('quota-usage-devices').getAttribute('data-limit'), '2');
    assert.match(await tenantRow.getByTestId('quota-usage-devices').textContent(), /0 \/ 2/);
    await page.getByTestId('quota-add').click();
    await fillQuota({ project: 'vision', vendor: 'nvidia', devices: 2, compute: 200, refuse: true });
    await row('项目 vision').waitFor();
    assert.match(await row('项目 vision').getByTestId('quota-policy').textContent(), /拒绝/);
    const stored = (await quotas()).find((q) => q.project === 'vision');
    assert.equal(stored.vendor, 'nvidia');
    assert.equal(stored.policy, 'refuse');
    assert.equal(stored.devices, 2);
  });

  step('a task placed in vision moves the usage bars live', async () => {
    const tina = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'tina', password: PW } });
    const t = await api(server, 'POST', '/api/v1/tasks', {
      token: tina.body.access_token,
      body: { name: 'train', command: ['sleep', '600'], tenant: 'acme', project: 'vision', vendor: 'nvidia', device_count: 1, compute_percent: 100 },
    });
    assert.equal(t.status, 201, t.text);
    // No reload: the page refreshes the use every 5 s.
    await until(async () => /1 \/ 2/.test(await row('项目 vision').getByTestId('quota-usage-devices').textContent()), 'vision bar', 20_000);
    await until(async () => /1 \/ 2/.test(await row('租户 acme').getByTestId('quota-usage-devices').textContent()), 'tenant bar', 20_000);
    assert.match(await row('租户 acme').getByTestId('quota-usage-compute_percent').textContent(), /100 \/ 200/);
    await screenshot(page, 'quotas-live-usage');
  });

  step('the tenant admin is refused a project quota over the tenant’s (reason in Chinese), then sets one within it', async () => {
    await logout();
    await login('tina', PW);
    await page.getByRole('menuitem', { name: '配额管理' }).click();
    await row('租户 acme').waitFor();
    assert.equal(await row('租户 acme').getByTestId('quota-edit').count(), 0, 'the tenant’s own quota is not hers to change');
    const before = (await quotas()).length;
    await page.getByTestId('quota-add').click();
    await fillQuota({ project: 'nlp', devices: 3, compute: 100 });
    await page.getByText('项目的设备数上限 3 超出租户 acme（全部厂商）的配额 2').waitFor();
    assert.equal((await quotas()).length, before, 'the refused quota was not stored');
    await input('quota-devices').fill('1');
    await page.getByTestId('quota-save').click();
    await row('项目 nlp').waitFor();
    assert.equal((await quotas()).find((q) => q.project === 'nlp').devices, 1);
  });

  step('English: the page and the refusal follow the language', async () => {
    await page.getByTestId('lang-switch').click();
    await page.locator('.ant-select-item-option').filter({ hasText: 'English' }).click();
    await page.getByRole('menuitem', { name: 'Quotas' }).waitFor();
    await row('Project nlp').getByTestId('quota-edit').click();
    await input('quota-devices').fill('5');
    await page.getByTestId('quota-save').click();
    await page.getByText('The project’s devices limit 5 is over tenant acme’s quota of 2 for all vendors').waitFor();
    await page.locator('.ant-modal-footer').getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await quotas()).find((q) => q.project === 'nlp').devices, 1, 'unchanged');
  });

  step('a member reads the quotas, without edit buttons', async () => {
    await logout();
    await login('mo', PW);
    await page.getByRole('menuitem', { name: 'Quotas' }).click();
    await row('Project vision').waitFor();
    assert.equal(await rows().count(), 3);
    assert.equal(await page.getByTestId('quota-add').count(), 0);
    assert.equal(await page.getByTestId('quota-edit').count(), 0);
    await page.getByText(/You can read these quotas/).waitFor();
  });
});
