// End-to-end scenario of the web console against a real heteroflow server:
// log in, create a user, find its audit entry, switch language, cancel a
// task, render a hostile task name as text, log out. Any JavaScript dialog
// or uncaught page error fails the run.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_PASSWORD, api, consoleSuite, stepper, until } from './harness.mjs';

const XSS_NAME = '<img src=x onerror=alert(1)>';
const STEP_TIMEOUT = 90_000;
const suffix = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
const newUser = `e2e-user-${suffix}`;

let server;
let page;
const dialogs = [];
const pageErrors = [];

const step = stepper({ prefix: '', timeout: STEP_TIMEOUT, page: () => page });

let cachedToken;

/** adminToken logs in through the API once (access tokens live 15 minutes, longer than this suite). */
async function adminToken() {
  if (cachedToken) return cachedToken;
  const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  assert.equal(res.status, 200, `API login: ${res.text}`);
  cachedToken = res.body.access_token;
  return cachedToken;
}

async function createTask(token, name) {
  const res = await api(server, 'POST', '/api/v1/tasks', {
    token,
    body: { name, command: ['sleep', '3600'], labels: { suite: 'web-e2e' } },
  });
  assert.equal(res.status, 201, `create task: ${res.text}`);
  return res.body;
}

async function chooseOption(selectLocator, title) {
  await selectLocator.click();
  await page.locator(`.ant-select-dropdown .ant-select-item-option[title="${title}"]`).filter({ visible: true }).click();
}

function row(text) {
  return page.locator('tr.ant-table-row', { hasText: text });
}

async function searchTasks(name) {
  await page.getByTestId('nav-tasks').click();
  await page.getByTestId('task-q').fill(name);
  await page.getByTestId('task-search').click();
  await row(name).first().waitFor();
}

/** fakeExpiry answers the next task-list call with 401, as an expired access token would get. */
async function fakeExpiry() {
  const calls = { faked: 0, passed: 0 };
  await page.route(/\/api\/v1\/tasks\?/, async (route) => {
    if (calls.faked === 0) {
      calls.faked++;
      await route.fulfill({
        status: 401,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'unauthenticated', message: 'token expired' } }),
      });
      return;
    }
    calls.passed++;
    await route.continue();
  });
  return calls;
}

const storedRefresh = () => page.evaluate(() => localStorage.getItem('heteroflow.refresh_token'));

describe('web console', () => {
  consoleSuite({ dialogs, pageErrors, ready: (s) => ({ server, page } = s) });

  step('anonymous visitor is sent to the login page', async () => {
    await page.goto(`${server.consoleURL}/tasks`);
    await page.waitForURL(/\/login$/);
  });

  step('wrong password shows the server error', async () => {
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill('not-the-password');
    await page.getByTestId('login-submit').click();
    await page.getByTestId('login-error').waitFor();
    // The server's stable code, in the console's language: nothing raw or English.
    const text = (await page.getByTestId('login-error').textContent()).trim();
    assert.equal(text, '用户名或密码错误，或账户已被临时锁定。', text);
  });

  step('admin logs in', async () => {
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/tasks$/); // back to the page asked for before login
    await until(async () => (await page.getByTestId('current-user').getAttribute('title')) === 'admin', 'current user in header');
    // Pages this server does not serve have no menu entry (never a disabled one or placeholder
    // content): Clusters is a hub's page, and this server is not a hub.
    assert.equal(await page.getByTestId('nav-clusters').count(), 0);
  });

  step('admin creates a user', async () => {
    await page.getByTestId('nav-users').click();
    await page.waitForURL(/\/users$/);
    await page.getByTestId('user-new').click();
    const modal = page.locator('.ant-modal').filter({ visible: true });
    await modal.getByTestId('user-username').fill(newUser);
    await modal.getByTestId('user-password').fill('E2e-User-Passw0rd!');
    await chooseOption(modal.locator('.ant-select'), '运维');
    await modal.locator('.ant-btn-primary').click();
    await row(newUser).waitFor();
    assert.match(await row(newUser).textContent(), /运维/);
  });

  step('the new user appears in the audit log', async () => {
    // The server's audit target names the user by id (user/<id>); look the id up.
    const listed = await api(server, 'GET', `/api/v1/users?q=${encodeURIComponent(newUser)}`, { token: await adminToken() });
    const created = listed.body?.items?.find((u) => u.username === newUser);
    assert.ok(created, `user ${newUser} listed by the API: ${listed.text}`);
    const target = `user/${created.id}`;
    await page.getByTestId('nav-audit').click();
    await page.waitForURL(/\/audit$/);
    await page.getByTestId('audit-q').fill(target);
    // The server writes audit entries off the request path: search until it lands.
    const entry = page
      .locator('tr.ant-table-row', { hasText: 'user.create' })
      .filter({ has: page.getByTestId('audit-target').getByText(target, { exact: true }) });
    await until(async () => {
      await page.getByTestId('audit-search').click();
      await sleep(300);
      return (await entry.count()) > 0;
    }, `a user.create audit row with target ${target}`);
    assert.equal(await entry.first().getByTestId('audit-result').getAttribute('data-result'), 'ok');
    assert.equal(await entry.first().getByTestId('audit-result').textContent(), '成功', 'the result in the console language');
    assert.match(await entry.first().textContent(), /admin/, 'actor is admin');
  });

  step('admin approves a registration, changes a role and deletes a user', async () => {
    const token = await adminToken();
    await page.getByTestId('nav-users').click();
    await page.waitForURL(/\/users$/);
    // Self-registration is off by default; the switch turns it on.
    const before = await api(server, 'GET', '/api/v1/settings/registration', { token });
    assert.equal(before.body?.enabled, false, before.text);
    await page.getByTestId('registration-switch').click();
    await until(async () => (await api(server, 'GET', '/api/v1/settings/registration', { token })).body?.enabled === true, 'registration enabled');
    const pendingName = `e2e-pending-${suffix}`;
    const reg = await api(server, 'POST', '/api/v1/auth/register', { body: { username: pendingName, password: 'E2e-Pending-Passw0rd!' } });
    assert.equal(reg.status, 201, `register: ${reg.text}`);
    assert.equal(reg.body.status, 'pending');
    const byName = async (name) =>
      (await api(server, 'GET', `/api/v1/users?q=${encodeURIComponent(name)}`, { token })).body.items.find((u) => u.username === name);

    await page.getByTestId('user-search').click();
    await row(pendingName).getByTestId('user-approve').click();
    await until(async () => (await byName(pendingName))?.status === 'active', 'the approved user active');

    await chooseOption(row(newUser).getByTestId('user-role'), '只读');
    await until(async () => (await byName(newUser))?.role === 'viewer', 'the role changed to viewer');

    await row(pendingName).getByTestId('user-delete').click();
    await page.locator('.ant-popconfirm .ant-btn-primary').filter({ visible: true }).click();
    await until(async () => (await byName(pendingName)) === undefined, 'the deleted user gone');
    await until(async () => (await row(pendingName).count()) === 0, 'the deleted user gone from the table');
  });

  step('language switches zh ↔ en and persists across reload', async () => {
    const label = page.getByTestId('nav-users');
    assert.equal(await label.textContent(), '用户管理');
    await chooseOption(page.getByTestId('lang-switch'), 'English');
    await until(async () => (await label.textContent()) === 'Users', 'English menu label');
    // A reload resumes the session through the refresh token and keeps English.
    await page.reload();
    await until(async () => (await page.getByTestId('nav-users').textContent()) === 'Users', 'English after reload');
    await chooseOption(page.getByTestId('lang-switch'), '简体中文');
    await until(async () => (await page.getByTestId('nav-users').textContent()) === '用户管理', 'Chinese menu label');
  });

  step('the metrics explorer follows the server capability', async () => {
    const probe = await api(server, 'GET', '/prometheus/api/v1/status/buildinfo', { token: await adminToken() });
    const item = page.locator('li.ant-menu-item', { has: page.getByTestId('nav-metrics') });
    if (probe.status !== 200) {
      // No Prometheus-compatible API on this server: the entry is absent.
      assert.equal(await item.count(), 0);
      return;
    }
    await page.getByTestId('nav-metrics').click();
    await page.waitForURL(/\/metrics$/);
    await page.getByTestId('promql-input').fill('sum(');
    await page.getByTestId('promql-run').click();
    await page.getByTestId('promql-error').waitFor();
    await page.getByTestId('promql-input').fill('vector(1)');
    await page.getByTestId('promql-run').click();
    await page.getByTestId('echart').waitFor();
    assert.equal(await page.getByTestId('promql-error').count(), 0);
    await page.getByRole('tab').nth(1).click();
    await page.getByTestId('promql-table').locator('tr.ant-table-row').first().waitFor();
    assert.equal(await page.getByTestId('promql-value').first().textContent(), '1');
  });

  step('a task created through the API is cancelled in the UI', async () => {
    const token = await adminToken();
    const name = `e2e-cancel-${suffix}`;
    const task = await createTask(token, name);
    await searchTasks(name);
    await row(name).getByTestId('task-cancel').click();
    await page.locator('.ant-popconfirm .ant-btn-primary').filter({ visible: true }).click();
    await until(
      async () => (await row(name).getByTestId('task-state').getAttribute('data-state')) === 'cancelled',
      'state cancelled in the list',
    );
    const got = await api(server, 'GET', `/api/v1/tasks/${task.id}`, { token });
    assert.equal(got.body?.state, 'cancelled');
    // The detail drawer shows the transition in the events timeline.
    await row(name).getByTestId('task-name').click();
    await page.getByTestId('task-events').waitFor();
    assert.match(await page.getByTestId('task-events').textContent(), /已取消/);
    await page.keyboard.press('Escape');
  });

  step('a hostile task name renders as text', async () => {
    const token = await adminToken();
    await createTask(token, XSS_NAME);
    await searchTasks(XSS_NAME);
    const link = row(XSS_NAME).getByTestId('task-name');
    assert.equal(await link.textContent(), XSS_NAME);
    await link.click();
    await page.getByTestId('drawer-task-name').waitFor();
    assert.equal(await page.getByTestId('drawer-task-name').textContent(), XSS_NAME);
    assert.equal(await page.locator('img[src="x"]').count(), 0, 'no <img> element was created');
    await sleep(500); // give a broken image's onerror time to fire, were there one
    assert.deepEqual(dialogs, []);
    await page.keyboard.press('Escape');
  });

  step('the task list filters by state', async () => {
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-q').fill('');
    await chooseOption(page.getByTestId('task-state-filter'), '已取消');
    await page.getByTestId('task-search').click();
    await row(`e2e-cancel-${suffix}`).waitFor();
    await until(async () => (await row(XSS_NAME).count()) === 0, 'the submitted task filtered out');
    for (const tag of await page.getByTestId('task-state').all()) {
      assert.equal(await tag.getAttribute('data-state'), 'cancelled');
    }
    await page.getByRole('button', { name: /重\s*置/ }).click();
    await row(XSS_NAME).first().waitFor();
  });

  step('an expired access token is refreshed once and the call retried', async () => {
    const before = await storedRefresh();
    const calls = await fakeExpiry();
    const refreshed = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh'));
    await page.getByTestId('task-refresh').click();
    assert.equal((await refreshed).status(), 200);
    await until(() => calls.passed === 1, 'the retried task list call');
    await row(XSS_NAME).first().waitFor();
    await page.unrouteAll();
    const after = await storedRefresh();
    assert.ok(after && after !== before, 'the refresh token rotated');
  });

  step('logout ends the session and revokes the refresh token', async () => {
    const refreshToken = await page.evaluate(() => localStorage.getItem('heteroflow.refresh_token'));
    assert.ok(refreshToken, 'a refresh token was stored while signed in');
    await page.getByTestId('logout').click();
    await page.waitForURL(/\/login$/);
    assert.equal(await page.evaluate(() => localStorage.getItem('heteroflow.refresh_token')), null);
    const res = await api(server, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: refreshToken } });
    assert.equal(res.status, 401, `refresh after logout: ${res.text}`);
    await page.goto(`${server.consoleURL}/users`);
    await page.waitForURL(/\/login$/);
  });

  step('a revoked refresh token ends the session on the next 401', async () => {
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.getByTestId('nav-tasks').click(); // the login page returns to /users, where the last step left off
    await page.waitForURL(/\/tasks$/);
    await row(XSS_NAME).first().waitFor(); // the page's own first load is done before the fake 401 is armed
    // Revoke the console's refresh token behind its back, then let its access token "expire".
    const res = await api(server, 'POST', '/api/v1/auth/logout', { token: await adminToken(), body: { refresh_token: await storedRefresh() } });
    assert.equal(res.status, 204, `logout through the API: ${res.text}`);
    await fakeExpiry();
    // The click only triggers a list call; the page's 15 s auto-refresh may beat it to the
    // fake 401 and end the session first, which detaches the button. Either way: login page.
    await page
      .getByTestId('task-refresh')
      .click({ timeout: 5_000 })
      .catch(() => {});
    await page.waitForURL(/\/login$/);
    await page.unrouteAll();
    assert.equal(await storedRefresh(), null);
  });
});
