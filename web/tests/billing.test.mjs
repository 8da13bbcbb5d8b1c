// The Billing page end to end against a real server: usage written through
// the API's own ledger is not available to a browser test, so the scenario
// drives what a person does on the page — the price book editor (a refused
// overlapping entry shows the server's reason, a valid one is listed), a
// budget, the report for the current month with its charts and tables, the
// CSV export, a user seeing only their own usage, and both languages. Any
// JavaScript dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';

let server;
let browser;
let page;
let token;
const pageErrors = [];
const dialogs = [];
const step = stepper({ prefix: 'billing-', timeout: 60_000, page: () => page });
const today = new Date().toISOString().slice(0, 10);

async function login(username, password) {
  await page.goto(`${server.consoleURL}/login`);
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

describe('billing console', () => {
  before(async () => {
    server = await startServer();
    const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(res.status, 200, res.text);
    token = res.body.access_token;
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'no uncaught page errors');
    assert.deepEqual(dialogs, [], 'no JavaScript dialogs');
  });

  step('admin opens Billing from the menu (zh)', async () => {
    await login('admin', ADMIN_PASSWORD);
    await page.getByRole('menuitem', { name: '计费' }).click();
    await page.waitForURL(/\/billing$/);
    await page.getByText('用量与计费').waitFor();
    assert.equal(await page.getByTestId('billing-scope').textContent(), '全部租户');
    await page.getByText('该周期内没有用量。').first().waitFor();
    // Efficiency (measured / allocated) beside the totals; nothing measured yet.
    await page.getByText('使用效率').first().waitFor();
    assert.match(await page.getByTestId('billing-total-efficiency').textContent(), /未测量/);
  });

  step('price book: an entry is added, a negative price is refused with the reason', async () => {
    const form = page.getByTestId('price-form');
    await form.getByTestId('price-vendor').fill('nvidia');
    await form.getByTestId('price-device-hour').fill('12.5');
    await form.getByTestId('price-add').click();
    await until(async () => (await page.getByTestId('billing-prices').locator('tbody tr').filter({ hasText: 'nvidia' }).count()) === 1, 'price listed');
    await form.getByTestId('price-vendor').fill('nvidia');
    await form.getByTestId('price-device-hour').fill('-1');
    await form.getByTestId('price-add').click();
    const err = page.getByTestId('billing-price-error');
    await err.waitFor();
    assert.match(await err.textContent(), /must not be negative/);
    const list = await api(server, 'GET', '/api/v1/billing/prices', { token });
    assert.equal(list.body.items.length, 1, 'the refused entry changed nothing');
    assert.equal(list.body.items[0].device_hour, 12.5);
    assert.equal(list.body.items[0].effective_from, today);
  });

  step('a budget is set and listed with its spend', async () => {
    const budgets = page.getByTestId('billing-budgets');
    await budgets.getByTestId('budget-tenant').fill('acme');
    await budgets.getByTestId('budget-amount').fill('1000');
    await budgets.getByTestId('budget-add').click();
    await until(async () => (await budgets.locator('tbody tr').filter({ hasText: 'acme' }).count()) === 1, 'budget listed');
    assert.match(await budgets.locator('tbody tr').filter({ hasText: 'acme' }).textContent(), /1,000\.00 CNY/);
  });

  step('CSV export downloads the report', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('billing-export-csv').click()]);
    assert.match(download.suggestedFilename(), /^usage-month-\d{4}-\d{2}-01\.csv$/);
    const path = await download.path();
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(path, 'utf8');
    assert.match(text.split('\n')[0], /^section,period,from,to,currency/);
    assert.match(text.split('\n')[0], /,measured_hours,measured_compute_percent_hours,measured_memory_gib_hours,compute_efficiency,memory_efficiency$/);
  });

  step('English: the page follows the language switch', async () => {
    await page.evaluate(() => localStorage.setItem('heteroflow.lang', 'en'));
    await page.reload();
    await page.getByText('Usage and billing').waitFor();
    await page.getByText('Price book').waitFor();
    assert.equal(await page.getByTestId('billing-scope').textContent(), 'All tenants');
    assert.match(await page.getByTestId('billing-total-efficiency').textContent(), /Efficiency.*not measured/);
  });

  step('a tenant filter for an unknown tenant shows the server error', async () => {
    await page.getByTestId('billing-tenant').fill('nobody');
    await page.getByTestId('billing-apply').click();
    const err = page.getByTestId('billing-error');
    await err.waitFor();
    assert.match(await err.textContent(), /not_found/);
  });

  step('a user sees only their own usage and cannot edit prices', async () => {
    const created = await api(server, 'POST', '/api/v1/users', { token, body: { username: 'bill-user', password: 'Acme-Member-Passw0rd!', role: 'user', tenant: 'acme' } });
    assert.equal(created.status, 201, created.text);
    await page.evaluate(() => localStorage.clear());
    await login('bill-user', 'Acme-Member-Passw0rd!');
    await page.goto(`${server.consoleURL}/billing`);
    await page.getByTestId('billing-scope').waitFor();
    assert.match(await page.getByTestId('billing-scope').textContent(), /bill-user/);
    assert.equal(await page.getByTestId('price-form').count(), 0, 'no price editor for users');
    assert.equal(await page.getByTestId('billing-budgets').count(), 0);
    await page.getByTestId('billing-total-cost').waitFor();
  });
});
