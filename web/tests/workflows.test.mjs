// Workflows in the console, end to end against a real server and two
// simulated nodes (NVIDIA H100, Ascend 910B) with real agents: the editor
// (template, validation naming the step at fault, graph preview), a
// submitted DAG followed to its end in the graph (nodes coloured by state),
// a node's click opening the step's task detail and logs, a failed run
// (evaluation skipped, notification still run) retried from the page, a
// cancel from the page stopping a running step, and both languages. Any
// JavaScript dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';
import { startSimulatedNode } from './nodes.mjs';

const STEP_TIMEOUT = 120_000;

let server;
let browser;
let page;
let token;
const nodes = [];
const dialogs = [];
const pageErrors = [];
let wfId = 0;

const step = stepper({ prefix: 'wf-', timeout: STEP_TIMEOUT, page: () => page });
const call = (method, path, body) => api(server, method, path, { token, body });
const modal = () => page.locator('.ant-modal').filter({ visible: true });
const drawer = () => page.locator('.ant-drawer').filter({ visible: true });
const node = (name) => page.locator(`[data-testid="dag-node"][data-step="${name}"]`);
const nodeStates = async () =>
  Object.fromEntries(
    await page.getByTestId('dag-node').evaluateAll((els) => els.map((e) => [e.getAttribute('data-step'), e.getAttribute('data-state')])),
  );

async function chooseOption(selectLocator, title) {
  await selectLocator.click();
  await page.locator(`.ant-select-dropdown .ant-select-item-option[title="${title}"]`).filter({ visible: true }).click();
}

/** workflowState reads the state tag of the open workflow. */
const workflowState = () => page.locator('.ant-card-head [data-testid="wf-state"]').getAttribute('data-state');

describe('workflows console', () => {
  before(async () => {
    server = await startServer();
    const [nv, asc] = await Promise.all([
      startSimulatedNode(server, { vendor: 'nvidia', model: 'NVIDIA H100 80GB HBM3', count: 2, memoryMiB: 81559, name: 'wf-h100' }),
      startSimulatedNode(server, { vendor: 'ascend', model: '910B3', count: 2, name: 'wf-ascend' }),
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

  step('the editor validates as you type and names the step at fault', async () => {
    await page.goto(`${server.consoleURL}/workflows`);
    await page.waitForURL(/\/login$/);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/workflows$/);
    assert.equal(await page.getByTestId('nav-workflows').textContent(), '工作流');
    await page.getByTestId('wf-new').click();
    await chooseOption(modal().getByTestId('wf-template'), '在 NVIDIA 和昇腾上训练、评估、通知');
    const check = modal().getByTestId('wf-check');
    await until(async () => (await check.getAttribute('data-kind')) === 'ok', 'template valid');
    assert.match(await check.textContent(), /5 个步骤,5 条依赖/);
    assert.equal(await modal().getByTestId('dag-node').count(), 5, 'preview graph');

    const doc = modal().getByTestId('wf-document');
    const good = await doc.inputValue();
    await doc.fill(good.replace('depends: [preprocess]', 'depends: [preprocess, ghost]'));
    await until(async () => (await check.getAttribute('data-kind')) === 'error', 'unknown step refused');
    assert.match(await check.textContent(), /step train: .*"ghost"/);
    await doc.fill(good.replace("      cpu_milli: 500\n", "      cpu_milli: 500\n    depends: [notify]\n"));
    await until(async () => /dependency cycle/.test(await check.textContent()), 'cycle refused');
    await doc.fill(good.replace('{{steps.preprocess.outputs.rows}}', '{{steps.notify.outputs.rows}}'));
    await until(async () => /does not depend on/.test(await check.textContent()), 'bad reference refused');
    await doc.fill(good);
    await until(async () => (await check.getAttribute('data-kind')) === 'ok', 'valid again');
    await modal().getByTestId('wf-submit').click();
    await page.waitForURL(/\/workflows\/\d+$/);
    wfId = Number(new URL(page.url()).pathname.split('/').pop());
    assert.ok(wfId > 0);
  });

  step('the graph follows the run to its end, coloured by state', async () => {
    await until(async () => (await page.getByTestId('dag-node').count()) === 5, 'graph drawn');
    const seen = new Set();
    await until(
      async () => {
        for (const s of Object.values(await nodeStates())) seen.add(s);
        return (await workflowState()) === 'succeeded';
      },
      'workflow succeeded',
      100_000,
    );
    assert.ok(seen.has('running') || seen.has('pending'), `states seen on the way: ${[...seen]}`);
    assert.deepEqual(await nodeStates(), {
      preprocess: 'succeeded',
      'train[0]': 'succeeded',
      'train[1]': 'succeeded',
      evaluate: 'succeeded',
      notify: 'succeeded',
    });
    assert.equal(await node('evaluate').locator('rect').getAttribute('stroke'), '#52c41a', 'green when succeeded');
    assert.equal(await page.getByTestId('dag-edge').count(), 5);
    assert.equal(await page.locator('[data-testid="dag-edge"][data-on="always"]').count(), 1);
  });

  step('clicking a node opens its task with the logs', async () => {
    await node('evaluate').click();
    await until(async () => /evaluate/.test(await drawer().getByTestId('drawer-task-name').textContent()), 'task drawer');
    await drawer().getByTestId('task-tab-logs').click();
    await until(async () => /losses 0\.0,0\.1/.test(await drawer().getByTestId('task-log-stdout').textContent()), 'evaluate log shows both losses');
    await drawer().locator('.ant-drawer-close').click();
    await until(async () => (await drawer().count()) === 0, 'drawer closed');
    await page.locator('.ant-tabs-tab', { hasText: '步骤' }).click();
    const outputs = page.locator('tr.ant-table-row', { hasText: 'train[1]' });
    assert.match(await outputs.textContent(), /loss=0\.1/);
    await page.locator('.ant-tabs-tab', { hasText: '历史' }).click();
    await until(async () => /工作流: 运行中 → 成功/.test(await page.getByTestId('wf-events').textContent()), 'history');
  });

  step('a failed run skips evaluation, still notifies, and retries from the page', async () => {
    const tmpl = (await call('GET', `/api/v1/workflows/${wfId}`)).body.spec;
    tmpl.steps[1].task.command = ['sh', '-c', 'test "{{item.vendor}}" != ascend'];
    const res = await call('POST', '/api/v1/workflows', { document: JSON.stringify(tmpl) });
    assert.equal(res.status, 201, res.text);
    const id = res.body.id;
    await page.goto(`${server.consoleURL}/workflows/${id}`);
    await until(async () => (await workflowState()) === 'failed', 'workflow failed', 100_000);
    const states = await nodeStates();
    assert.equal(states['train[1]'], 'failed');
    assert.equal(states.evaluate, 'skipped');
    assert.equal(states.notify, 'succeeded');
    assert.match(await page.getByTestId('wf-reason').textContent(), /train\[1\]/);
    await page.getByTestId('wf-retry').click();
    await until(async () => (await call('GET', `/api/v1/workflows/${id}`)).body.generation === 1, 'retried');
    await until(async () => (await workflowState()) === 'failed', 'the retry failed the same way', 100_000);
  });

  step('cancel stops a running step', async () => {
    const res = await call('POST', '/api/v1/workflows', {
      document: 'name: long\nsteps:\n  - {name: sleeper, task: {command: [sleep, "600"]}}\n  - {name: after, depends: [sleeper], task: {command: ["true"]}}\n',
    });
    assert.equal(res.status, 201, res.text);
    await page.goto(`${server.consoleURL}/workflows/${res.body.id}`);
    await until(async () => (await call('GET', `/api/v1/workflows/${res.body.id}`)).body.steps[0].task_state === 'running', 'sleeper running', 60_000);
    await page.getByTestId('wf-cancel').click();
    await page.locator('.ant-popconfirm .ant-btn-primary').filter({ visible: true }).click();
    await until(async () => (await workflowState()) === 'cancelled', 'workflow cancelled');
    await until(async () => (await nodeStates()).sleeper === 'cancelled', 'running step stopped', 60_000);
    const w = (await call('GET', `/api/v1/workflows/${res.body.id}`)).body;
    assert.equal(w.steps[0].task_state, 'cancelled');
    assert.equal(w.steps[1].state, 'cancelled');
  });

  step('the page speaks English too', async () => {
    await chooseOption(page.getByTestId('lang-switch'), 'English');
    await until(async () => (await page.getByTestId('nav-workflows').textContent()) === 'Workflows', 'English menu');
    await until(async () => (await page.locator('.ant-card-head [data-testid="wf-state"]').textContent()) === 'Cancelled', 'English state');
    await page.getByTestId('wf-back').click();
    await page.waitForURL(/\/workflows$/);
    await until(async () => (await page.getByTestId('wf-link').count()) === 3, 'three workflows listed');
    await chooseOption(page.getByTestId('lang-switch'), '简体中文');
    await until(async () => (await page.getByTestId('nav-workflows').textContent()) === '工作流', 'Chinese menu');
  });
});
