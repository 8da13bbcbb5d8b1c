// The Alerts page end to end against a real server: a custom rule is
// written in the rule editor (bad PromQL is refused with the parse error,
// in Chinese from the server's error code, and in English after switching;
// "test now" shows what would fire), it fires on the leader, the alert is
// acknowledged and resolved with a comment and a reason, its history shows
// both, statistics count it, the dashboard shows the open count by level,
// a threshold of a built-in rule is changed without PromQL, a silence and a
// webhook channel are created, and the page reads in English too. Any
// JavaScript dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';

const STEP_TIMEOUT = 90_000;
let server;
let browser;
let page;
let token;
const dialogs = [];
const pageErrors = [];
const step = stepper({ prefix: 'alerts-', timeout: STEP_TIMEOUT, page: () => page });
const call = (method, path, body) => api(server, method, path, { token, body });
const modal = () => page.locator('.ant-modal').filter({ visible: true });
const tab = async (name) => {
  await page.getByTestId(`alerts-tab-${name}`).click();
  await page.waitForURL(new RegExp(`tab=${name}`));
};

describe('alerts console', () => {
  before(async () => {
    server = await startServer();
    const login = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    token = login.body.access_token;
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(dialogs, [], 'no JavaScript dialog may open');
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });

  step('the rule editor refuses bad PromQL, tests a rule now and saves it', async () => {
    await page.goto(`${server.consoleURL}/alerts`);
    await page.waitForURL(/\/login$/);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/alerts/);
    await tab('rules');
    await until(async () => (await page.getByTestId('rule-row-name').allTextContents()).includes('GPUHighLoad'), 'built-in rules listed');
    await page.getByTestId('rule-new').click();
    const m = modal();
    await m.getByTestId('rule-name').fill('ConsoleProbe');
    await m.getByTestId('rule-expr').fill('sum(vector(1)');
    await m.getByTestId('rule-test').click();
    // The server's coded error in the console's language, with the parse error.
    const ruleError = async () => m.getByTestId('rule-error').textContent();
    await until(async () => /^PromQL 表达式无法解析：.*unclosed left parenthesis.*\(alert_rule_invalid_promql/.test(await ruleError()), 'parse error shown in Chinese');
    assert.doesNotMatch(await ruleError(), /invalid input/, 'no English server text');
    await m.getByTestId('rule-expr').fill('vector(1) > 0');
    await m.getByTestId('rule-test').click();
    await until(async () => /1/.test(await m.getByTestId('rule-test-result').textContent()), 'test result shown');
    await m.getByTestId('rule-save').click();
    await until(async () => (await page.getByTestId('rule-row-name').allTextContents()).includes('ConsoleProbe'), 'custom rule listed');
  });

  step('a threshold of a built-in rule changes without PromQL', async () => {
    const input = page.getByTestId('param-gpu_load_warn');
    await input.fill('0.8');
    await page.getByTestId('params-save').click();
    await until(async () => {
      const r = await call('GET', '/api/v1/alert-params');
      return r.body.items.find((p) => p.key === 'gpu_load_warn')?.value === '0.8';
    }, 'parameter stored');
    const rules = await call('GET', '/api/v1/alert-rules');
    assert.ok(rules.body.items.some((r) => r.name === 'GPUHighLoad' && r.level === 'WARN' && / > 0\.8$/.test(r.expr)), 'rule rewritten');
  });

  step('the rule fires and is acknowledged and resolved in the console', async () => {
    await tab('alerts');
    // The leader evaluates every 15 s.
    await until(async () => {
      await page.getByTestId('alerts-search').click();
      return (await page.getByTestId('alert-rule-link').allTextContents()).includes('ConsoleProbe');
    }, 'alert listed', 60_000);
    const list = await call('GET', '/api/v1/alerts?rule=ConsoleProbe');
    const id = list.body.items[0].id;
    await page.getByTestId(`alert-ack-${id}`).click();
    await modal().getByTestId('alert-action-text').fill('looking into it');
    await modal().getByTestId('alert-action-ok').click();
    await until(async () => (await call('GET', `/api/v1/alerts/${id}`)).body.state === 'ACKNOWLEDGED', 'acknowledged');
    await page.getByTestId(`alert-resolve-${id}`).click();
    await modal().getByTestId('alert-action-ok').click();
    await until(async () => /请填写解决原因/.test(await modal().textContent()), 'a reason is required');
    await modal().getByTestId('alert-action-text').fill('probe rule, expected');
    await modal().getByTestId('alert-action-ok').click();
    await until(async () => (await call('GET', `/api/v1/alerts/${id}`)).body.state === 'RESOLVED', 'resolved');
    await page.getByTestId('alert-rule-link').first().click();
    const history = page.getByTestId('alert-history');
    await until(async () => /looking into it/.test(await history.textContent()) && /probe rule, expected/.test(await history.textContent()), 'history');
    await page.keyboard.press('Escape');
  });

  step('statistics count the alert and the dashboard shows open alerts by level', async () => {
    await tab('stats');
    await until(async () => Number(await page.getByTestId('stats-total').textContent()) >= 1, 'stats total');
    const probe = await call('POST', '/api/v1/alert-rules', { name: 'ConsoleOpen', expr: 'vector(2) > 0', level: 'ERROR' });
    assert.equal(probe.status, 201, probe.text);
    await page.getByTestId('nav-dashboard').click();
    await until(async () => {
      const r = await call('GET', '/api/v1/alerts?rule=ConsoleOpen&state=ACTIVE');
      return r.body.total === 1;
    }, 'second alert open', 60_000);
    await until(async () => (await page.getByTestId('dash-alerts-ERROR').textContent()) === '1', 'dashboard ERROR count', 30_000);
  });

  step('a silence and a webhook channel are created', async () => {
    await page.goto(`${server.consoleURL}/alerts?tab=silences`);
    await page.getByTestId('silence-new').click();
    await modal().getByTestId('silence-matchers').fill('alertname');
    await modal().locator('.ant-btn-primary').click();
    await until(async () => /第 1 行/.test(await modal().textContent()), 'bad matcher refused');
    await modal().getByTestId('silence-matchers').fill('alertname=ConsoleOpen');
    await modal().locator('.ant-btn-primary').click();
    await until(async () => (await call('GET', '/api/v1/alert-silences')).body.items.length === 1, 'silence stored');

    await tab('channels');
    await page.getByTestId('channel-new').click();
    await modal().getByTestId('channel-name').fill('ops-hook');
    await modal().getByTestId('channel-url').fill('http://127.0.0.1:9/hook');
    await modal().getByTestId('channel-save').click();
    await until(async () => (await page.getByTestId('channel-row-name').allTextContents()).includes('ops-hook'), 'channel listed');
  });

  step('the page reads in English', async () => {
    await page.evaluate(() => localStorage.setItem('heteroflow.lang', 'en'));
    await page.goto(`${server.consoleURL}/alerts`);
    await until(async () => (await page.getByTestId('alerts-tab-rules').textContent()) === 'Rules', 'English tabs');
    await until(async () => (await page.getByTestId('alert-state').allTextContents()).includes('Resolved'), 'English states');
    await tab('rules');
    await page.getByTestId('rule-new').click();
    await modal().getByTestId('rule-name').fill('EnglishProbe');
    await modal().getByTestId('rule-expr').fill('rate(up)');
    await modal().getByTestId('rule-test').click();
    await until(async () => /^The PromQL expression does not parse: .*range vector/.test(await modal().getByTestId('rule-error').textContent()), 'parse error shown in English');
  });
});
