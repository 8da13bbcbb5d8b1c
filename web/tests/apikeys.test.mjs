// The API keys page: an admin creates a key (its secret shown once), the
// key works against the API, is listed with its role, and revoking it in the
// page makes the API refuse it; both languages, no raw keys or English in
// Chinese. Any JavaScript dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ADMIN_PASSWORD, api, consoleSuite, stepper, until } from './harness.mjs';

let server;
let page;
let secret;
const dialogs = [];
const pageErrors = [];
const NAME = `grafana-${Date.now().toString(36)}`;

const step = stepper({ prefix: 'apikeys-', timeout: 90_000, page: () => page });
const modal = () => page.locator('.ant-modal').filter({ visible: true });
const row = () => page.locator(`[data-testid="key-row"][data-name="${NAME}"]`);

describe('API keys page', () => {
  consoleSuite({ dialogs, pageErrors, ready: (s) => ({ server, page } = s) });

  step('log in and open the page from the menu (Chinese)', async () => {
    await page.goto(`${server.consoleURL}/login`);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL((u) => !u.pathname.endsWith('/login'));
    await page.getByTestId('nav-apikeys').click();
    await page.waitForURL(/\/apikeys$/);
    await until(async () => (await page.locator('.ant-card-head-title').first().textContent()) === 'API 密钥', 'page title API 密钥');
  });

  step('create a viewer key: the secret is shown once and works', async () => {
    await page.getByTestId('key-new').click();
    await modal().getByTestId('key-name-input').fill(NAME);
    await modal().getByTestId('key-role').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="只读"]').filter({ visible: true }).click();
    await modal().getByTestId('key-create').click();
    const shown = page.getByTestId('key-secret');
    await shown.waitFor();
    secret = (await shown.textContent()).trim();
    assert.match(secret, /^hf_[0-9a-f]+_\S+$/);
    const res = await api(server, 'GET', '/api/v1/tasks', { token: secret });
    assert.equal(res.status, 200, res.text);
    await page.getByTestId('key-done').click();
    await row().waitFor();
    const text = await row().textContent();
    assert.match(text, /只读/, text);
    assert.match(text, /有效/, text);
    assert.match(text, /永不过期/, text);
  });

  step('revoke it in the page: the API refuses it', async () => {
    await row().getByTestId('key-revoke').click();
    await page.locator('.ant-popconfirm .ant-btn-primary').filter({ visible: true }).click();
    await until(async () => /已吊销/.test(await row().textContent()), 'revoked state');
    const res = await api(server, 'GET', '/api/v1/tasks', { token: secret });
    assert.equal(res.status, 401, res.text);
  });

  step('English: the same page in English', async () => {
    await page.evaluate(() => localStorage.setItem('heteroflow.lang', 'en'));
    await page.reload();
    await row().waitFor();
    const text = await page.locator('.ant-card').first().textContent();
    assert.match(text, /API keys/);
    assert.match(await row().textContent(), /Revoked/);
    assert.doesNotMatch(text, /\p{Script=Han}/u, text);
    assert.doesNotMatch(text, /\bkeys\.[a-zA-Z]/, 'no raw i18n keys');
  });
});
