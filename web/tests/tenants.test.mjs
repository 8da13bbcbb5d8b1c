// Tenants end to end against a real server: an admin creates a tenant on
// the Tenants page (a bad name shows the server's reason in Chinese),
// renames it, adds a member and a project; that member, also in a second
// tenant, switches the current tenant in the header and a task submitted
// without a tenant lands in it; a task into a tenant the member is not in
// is refused with the translated reason; both languages. Any JavaScript
// dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';

let server;
let browser;
let page;
let token;
const pageErrors = [];
const dialogs = [];
const step = stepper({ prefix: 'tenants-', timeout: 60_000, page: () => page });
const MEMBER_PW = 'Tenant-Member-Passw0rd!';

async function login(username, password) {
  await page.goto(`${server.consoleURL}/login`);
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

const tenantRow = (name) => page.getByTestId('tenant-table').locator('tbody tr').filter({ hasText: name });

describe('tenants console', () => {
  before(async () => {
    server = await startServer();
    const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(res.status, 200, res.text);
    token = res.body.access_token;
    const u = await api(server, 'POST', '/api/v1/users', { token, body: { username: 'mia', password: MEMBER_PW, role: 'user' } });
    assert.equal(u.status, 201, u.text);
    const other = await api(server, 'POST', '/api/v1/tenants', { token, body: { name: 'globex', display_name: 'Globex' } });
    assert.equal(other.status, 201, other.text);
    const closed = await api(server, 'POST', '/api/v1/tenants', { token, body: { name: 'initech' } });
    assert.equal(closed.status, 201, closed.text);
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'no uncaught page errors');
    assert.deepEqual(dialogs, [], 'no JavaScript dialogs');
  });

  step('admin opens Tenants from the menu (zh); a bad name is refused with the reason in Chinese', async () => {
    await login('admin', ADMIN_PASSWORD);
    await page.getByRole('menuitem', { name: '租户管理' }).click();
    await page.waitForURL(/\/tenants$/);
    await tenantRow('globex').waitFor();
    await page.getByTestId('tenant-name').fill('bad name');
    await page.getByTestId('tenant-create').click();
    await page.getByText(/租户名称须为 1–64 个字母/).waitFor();
    const list = await api(server, 'GET', '/api/v1/tenants', { token });
    assert.equal(list.body.length, 2, 'the refused tenant was not stored');
  });

  step('admin creates acme with a node pool, renames it, adds mia and a project', async () => {
    await page.getByTestId('tenant-name').fill('acme');
    await page.getByTestId('tenant-display').fill('Acme');
    await page.getByTestId('tenant-pool').fill('pool=acme');
    await page.getByTestId('tenant-create').click();
    await tenantRow('acme').waitFor();
    assert.match(await tenantRow('acme').textContent(), /pool=acme/);
    // Rename through the editable display name.
    await tenantRow('acme').getByRole('button', { name: /重命名|Rename|edit/i }).first().click();
    const box = tenantRow('acme').locator('textarea');
    await box.fill('Acme 集团');
    await box.press('Enter');
    await until(async () => (await api(server, 'GET', '/api/v1/tenants/acme', { token })).body.display_name === 'Acme 集团', 'renamed');
    await tenantRow('acme').getByTestId('tenant-open').click();
    await page.getByTestId('tenant-detail').waitFor();
    await page.getByTestId('member-username').fill('mia');
    await page.getByTestId('member-add').click();
    await page.getByTestId('member-table').locator('tbody tr').filter({ hasText: 'mia' }).waitFor();
    await page.getByTestId('member-username').fill('ghost');
    await page.getByTestId('member-add').click();
    await page.getByText(/no user "ghost"/).waitFor();
    await page.getByTestId('project-new-name').fill('vision');
    await page.getByTestId('project-add').click();
    await page.getByTestId('project-table').locator('tbody tr').filter({ hasText: 'vision' }).waitFor();
    const add = await api(server, 'PUT', '/api/v1/tenants/globex/members/mia', { token, body: { role: 'member' } });
    assert.equal(add.status, 200, add.text);
  });

  step('admin disables a tenant from the table', async () => {
    await tenantRow('initech').getByTestId('tenant-enabled').click();
    await until(async () => (await api(server, 'GET', '/api/v1/tenants/initech', { token })).body.disabled === true, 'disabled');
  });

  step('mia switches the current tenant in the header; a task without a tenant goes there', async () => {
    await page.getByTestId('logout').click();
    await page.waitForURL(/\/login/);
    await login('mia', MEMBER_PW);
    const sw = page.getByTestId('tenant-switch');
    await sw.waitFor();
    await sw.click();
    await page.locator('.ant-select-item-option').filter({ hasText: 'Globex (globex)' }).click();
    await page.getByText('当前租户：globex').waitFor();
    const mia = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'mia', password: MEMBER_PW } });
    const mt = mia.body.access_token;
    const created = await api(server, 'POST', '/api/v1/tasks', { token: mt, body: { name: 'default-tenant', command: ['true'] } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.tenant, 'globex');
    // Her Tenants page lists only her tenants, with her role.
    await page.getByRole('menuitem', { name: '租户管理' }).click();
    await tenantRow('acme').waitFor();
    assert.equal(await page.getByTestId('tenant-table').locator('tbody tr').count(), 2);
    assert.match(await tenantRow('acme').textContent(), /成员/);
    // A tenant she is not in is refused with a clear reason.
    const refused = await api(server, 'POST', '/api/v1/tasks', { token: mt, body: { name: 'x', command: ['true'], tenant: 'initech' } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'tenant_forbidden');
  });

  step('English: the switch and the page follow the language', async () => {
    await page.getByTestId('lang-switch').click();
    await page.locator('.ant-select-item-option').filter({ hasText: 'English' }).click();
    await page.getByRole('menuitem', { name: 'Tenants' }).waitFor();
    await page.getByTestId('tenant-switch').click();
    await page.locator('.ant-select-item-option').filter({ hasText: 'Acme 集团 (acme)' }).click();
    await page.getByText('Current tenant: acme').waitFor();
    const me = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'mia', password: MEMBER_PW } });
    const mine = await api(server, 'GET', '/api/v1/auth/tenants', { token: me.body.access_token });
    assert.equal(mine.body.current, 'acme');
  });
});
