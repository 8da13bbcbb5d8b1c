// The console as a new user meets it, with one simulated node (2× H100):
// the dashboard's leader line, the enrolment command with the API's real
// port, never-fitting requests (wizard warning, 400 at submit, "never
// fits" in why-pending), memory in GiB, the log viewer (follows, search,
// line limit, download), QoS and commands shown translated and quoted,
// plugin descriptions and the warning before disabling a critical filter,
// and every password rule named at once, in Chinese.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';
import { startSimulatedNode } from './nodes.mjs';

const STEP_TIMEOUT = 120_000;
const H100 = 'NVIDIA H100 80GB HBM3';
let server;
let browser;
let page;
let token;
let node;
let logTask = 0;
const pageErrors = [];
const step = stepper({ prefix: 'newuser-node-', timeout: STEP_TIMEOUT, page: () => page });
const call = (method, path, body) => api(server, method, path, { token, body });
const modal = () => page.locator('.ant-modal').filter({ visible: true });
const drawer = () => page.locator('.ant-drawer').filter({ visible: true });

describe('console for a new user, with a node', () => {
  before(async () => {
    server = await startServer();
    node = await startSimulatedNode(server, { vendor: 'nvidia', model: H100, count: 2, memoryMiB: 81559, name: 'gpu-a' });
    const login = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    token = login.body.access_token;
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, timeout: 30_000 });
  });

  after(async () => {
    await browser?.close();
    await node?.stop();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });

  step('the dashboard names the scheduling server by its host, not a lease id', async () => {
    await page.goto(`${server.consoleURL}/login`);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/dashboard$/);
    const leader = page.getByTestId('dash-leader');
    await leader.waitFor();
    const text = await leader.textContent();
    assert.match(text, /^本服务器（[^/]+）负责调度$/, text);
  });

  step('the enrolment command uses the API port this server listens on', async () => {
    const apiPort = new URL(server.apiURL).port;
    await page.getByTestId('nav-nodes').click();
    await page.getByTestId('token-new').click();
    await modal().locator('.ant-btn-primary').click();
    const url = page.getByTestId('token-server-url');
    await until(async () => (await url.inputValue()) === `http://127.0.0.1:${apiPort}`, `server URL with port ${apiPort}`);
    const cmd = await page.getByTestId('token-command').textContent();
    assert.ok(cmd.includes(`--server http://127.0.0.1:${apiPort}`), cmd);
    // the default port must not appear (as a whole port: the random port may start with 3333)
    assert.ok(!/:3333(?!\d)/.test(cmd), cmd);
    await page.getByTestId('token-done').click();
  });

  step('nodes are named by --name', async () => {
    const res = await call('GET', `/api/v1/nodes/${encodeURIComponent(node.nodeId)}`);
    assert.match(node.nodeId, /^gpu-a-/);
    assert.equal(res.body.hostname, 'gpu-a');
  });

  step('a request no node can hold: wizard warning, 400 at submit, "never fits" in why-pending', async () => {
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-new').click();
    const m = modal();
    await m.locator('#name').fill('too-big');
    await m.locator('#device_count').fill('3');
    await m.getByTestId('wizard-never-fits').waitFor();
    assert.match(await m.getByTestId('wizard-never-fits').textContent(), /最大的节点只有 2 个/);
    await m.locator('#device_count').fill('1');
    await m.locator('#memory_mib').fill('100');
    await m.getByTestId('wizard-memory-unit').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="GiB"]').filter({ visible: true }).click();
    await until(async () => /102400 MiB/.test((await m.getByTestId('wizard-never-fits').textContent()) ?? ''), 'memory warning in MiB');
    await m.locator('#memory_mib').fill('2');
    await until(async () => (await m.getByTestId('wizard-never-fits').count()) === 0, 'no warning for 2 GiB');
    await m.locator('.ant-modal-close').click();

    const refused = await call('POST', '/api/v1/tasks', { name: 'nine', command: ['true'], device_count: 3 });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.code, 'never_fits');
    const queued = await call('POST', '/api/v1/tasks', { name: 'waits', command: ['true'], device_count: 3, wait_for_nodes: true });
    assert.equal(queued.status, 201, queued.text);
    await page.goto(`${server.consoleURL}/tasks/${queued.body.id}`);
    await drawer().getByTestId('task-tab-why').click();
    await drawer().getByTestId('why-never-fits').waitFor({ timeout: 60_000 });
    assert.match(await drawer().getByTestId('why-never-fits').textContent(), /永远无法满足.*最大的节点只有 2 个/);
    assert.match(await drawer().getByTestId('why-summary').textContent(), /^0\/1 个节点可用：1 个节点/);
    assert.match(await drawer().getByTestId('why-reason').textContent(), /^已接纳/);
    await call('POST', `/api/v1/tasks/${queued.body.id}/cancel`);
    await drawer().locator('.ant-drawer-close').click();
  });

  step('the wizard takes GiB; the task list shows QoS translated; the command is quoted', async () => {
    await page.getByTestId('task-new').click();
    const m = modal();
    await m.locator('#name').fill('gib-logs');
    await m.locator('#device_count').fill('1');
    await m.getByTestId('wizard-memory-unit').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="GiB"]').filter({ visible: true }).click();
    await m.locator('#memory_mib').fill('1.5');
    await m.locator('#compute_percent').fill('50');
    await m.getByTestId('wizard-next').click();
    await m.locator('#command').fill(`sh -c 'for i in $(seq 1 700); do echo "line $i"; sleep 0.01; done; echo all done'`);
    await m.getByTestId('wizard-next').click();
    await m.getByTestId('wizard-next').click();
    await m.getByTestId('wizard-submit').click();
    await page.waitForURL(/\/tasks\/\d+$/);
    logTask = Number(new URL(page.url()).pathname.split('/').pop());
    const t = (await call('GET', `/api/v1/tasks/${logTask}`)).body;
    assert.equal(t.memory_mib, 1536, '1.5 GiB is 1536 MiB');
    assert.equal(
      await drawer().getByTestId('drawer-argv').first().textContent(),
      `sh -c 'for i in $(seq 1 700); do echo "line $i"; sleep 0.01; done; echo all done'`,
    );
  });

  step('the log viewer follows new lines, searches, limits lines and downloads everything', async () => {
    const d = drawer();
    await d.getByTestId('task-tab-logs').click();
    const pre = d.getByTestId('task-log-stdout');
    // While the task runs, the view stays on the newest line.
    let followed = false;
    await until(async () => {
      const s = await pre.evaluate((el) => ({ top: el.scrollTop, h: el.scrollHeight, c: el.clientHeight, text: el.textContent }));
      if (/line \d+/.test(s.text) && s.h > s.c + 50 && !s.text.includes('all done')) {
        followed = followed || s.top + s.c >= s.h - 30;
      }
      return s.text.includes('all done');
    }, 'the task output to its end', 90_000);
    assert.ok(followed, 'the log view scrolled to the newest line while following');
    await d.getByTestId('task-log-search-stdout').locator('input').fill('line 7');
    // "line 7", "line 70".."line 79", "line 700": 12 lines
    await until(async () => (await d.getByTestId('task-log-matches-stdout').textContent()) === '12 行匹配', 'match count');
    assert.ok((await pre.locator('mark').count()) >= 12);
    await d.getByTestId('task-log-search-stdout').locator('input').fill('');
    await d.getByTestId('task-log-limit-stdout').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="500"]').filter({ visible: true }).click();
    await until(async () => /显示最后 500 行，共 701 行/.test((await d.getByTestId('task-log-truncated-stdout').textContent()) ?? ''), 'line limit note');
    assert.equal((await pre.textContent()).trim().split('\n').length, 500);
    const [download] = await Promise.all([page.waitForEvent('download'), d.getByTestId('task-log-download-stdout').click()]);
    const file = await readFile(await download.path(), 'utf8');
    assert.equal(file.trim().split('\n').length, 701, 'the download holds the whole stream');
    assert.match(download.suggestedFilename(), new RegExp(`^task-${logTask}-attempt-\\d+-stdout\\.log$`));
    await d.locator('.ant-drawer-close').click();
    const row = page.locator('tr.ant-table-row', { hasText: 'gib-logs' });
    await row.waitFor();
    assert.match(await row.textContent(), /铜牌 Bronze/);
    assert.doesNotMatch(await row.textContent(), /\bbronze\b/);
  });

  step('plugins have descriptions; disabling a critical filter asks first', async () => {
    await page.getByTestId('nav-plugins').click();
    const desc = page.getByTestId('plugin-desc-ResourceFit');
    await desc.waitFor();
    assert.match(await desc.textContent(), /显存/);
    await page.getByTestId('plugin-enabled-ResourceFit').click();
    const pop = page.locator('.ant-popover').filter({ visible: true });
    await pop.waitFor();
    assert.match(await pop.textContent(), /确定停用 ResourceFit/);
    await pop.locator('.ant-btn').first().click(); // "no"
    const list = await call('GET', '/api/v1/plugins');
    assert.equal(list.body.items.find((p) => p.name === 'ResourceFit').enabled, true, 'nothing changed without confirmation');
  });

  step('the Nodes page fits 1440 px: no horizontal scroll, labels whole, the node by its name', async () => {
    await page.goto(`${server.consoleURL}/nodes`);
    const row = page.locator(`tr[data-node="${node.nodeId}"]`);
    await row.waitFor();
    assert.equal(await row.getByTestId('node-name').textContent(), 'gpu-a');
    assert.match(await row.getByTestId('node-labels').textContent(), /sim=gpu-a/);
    const overflow = async (loc) => loc.evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok((await overflow(page.locator('.ant-table-content').first())) <= 1, 'nodes table scrolls sideways');
    // A few nodes are shown expanded with their devices.
    if ((await page.getByTestId(`devices-${node.nodeId}`).count()) === 0) await row.locator('.ant-table-row-expand-icon').click();
    const devices = page.getByTestId(`devices-${node.nodeId}`);
    await devices.locator('tr[data-testid="device-row"]').first().waitFor();
    assert.ok((await overflow(devices.locator('.ant-table-content').first())) <= 1, 'device table scrolls sideways');
    assert.ok((await overflow(page.locator('.ant-table-content').first())) <= 1, 'nodes table scrolls sideways when expanded');
  });

  step('the metrics explorer has a real example and a metric/label browser; monitoring shows temperature and power', async () => {
    await page.goto(`${server.consoleURL}/metrics`);
    assert.match(await page.getByTestId('promql-input').getAttribute('placeholder'), /hw_gpu_utilization_ratio/);
    // The collector pushes every 10 s: wait until the metric is known.
    await until(async () => {
      const r = await call('GET', '/prometheus/api/v1/label/__name__/values');
      return r.body?.data?.includes('hw_gpu_utilization_ratio');
    }, 'hw_gpu_utilization_ratio ingested', 90_000);
    await page.reload();
    await page.getByTestId('metric-browser').click();
    await page.keyboard.type('hw_gpu_utilization_ratio');
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="hw_gpu_utilization_ratio"]').filter({ visible: true }).click();
    assert.equal(await page.getByTestId('promql-input').inputValue(), 'hw_gpu_utilization_ratio');
    await page.getByTestId('label-browser').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="hw_index"]').filter({ visible: true }).click();
    await page.getByTestId('value-browser').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="1"]').filter({ visible: true }).click();
    assert.equal(await page.getByTestId('promql-input').inputValue(), 'hw_gpu_utilization_ratio{hw_index="1"}');
    await page.getByTestId('promql-example').click();
    assert.equal(await page.getByTestId('promql-input').inputValue(), 'avg by (hw_vendor) (hw_gpu_utilization_ratio)');
    await page.getByTestId('promql-run').click();
    await page.getByTestId('echart').waitFor();

    await page.goto(`${server.consoleURL}/monitoring?node=${encodeURIComponent(node.nodeId)}`);
    for (const id of ['mon-gpu-temp', 'mon-gpu-power', 'mon-gpu-util']) {
      await until(async () => (await page.getByTestId(id).getAttribute('data-state')) === 'data', `${id} has data`, 90_000);
    }
  });

  step('successful API-key sign-ins are audited once per period; the audit page hides routine entries', async () => {
    const list = await call('GET', '/api/v1/audit?limit=200');
    assert.equal(list.status, 200, list.text);
    const keyOK = list.body.items.filter((e) => e.action === 'auth.apikey' && e.result === 'ok');
    const perKey = {};
    for (const e of keyOK) perKey[e.target] = (perKey[e.target] ?? 0) + 1;
    assert.ok(Object.keys(perKey).length >= 1, 'the agent key was audited once');
    for (const [k, n] of Object.entries(perKey)) assert.equal(n, 1, `${k} audited ${n} times within the hour`);
    await page.goto(`${server.consoleURL}/audit`);
    const hide = page.locator('.ant-checkbox-wrapper', { hasText: '隐藏例行认证' });
    await hide.waitFor();
    assert.match((await hide.getAttribute('class')) ?? '', /ant-checkbox-wrapper-checked/, 'hidden by default');
    await page.locator('tr.ant-table-row').first().waitFor();
    const actions = await page.locator('tr.ant-table-row').allTextContents();
    assert.ok(!actions.some((a) => /auth\.apikey/.test(a) && /\bok\b/.test(a)), 'routine key sign-ins hidden');
  });

  step('a new user form shows every password rule, and the server names every broken one in Chinese', async () => {
    await page.getByTestId('nav-users').click();
    await page.getByTestId('user-new').click();
    const m = modal();
    await m.getByTestId('user-username').fill('weakling');
    await m.getByTestId('user-password').fill('weakling1');
    const rules = m.getByTestId('password-rules');
    assert.equal(await rules.locator('li').count(), 3);
    assert.equal(await rules.locator('li[data-rule="length"]').getAttribute('data-ok'), 'false');
    assert.equal(await rules.locator('li[data-rule="classes"]').getAttribute('data-ok'), 'false');
    assert.equal(await rules.locator('li[data-rule="username"]').getAttribute('data-ok'), 'false');
    await m.locator('.ant-btn-primary').click();
    const toast = page.locator('.ant-message-notice, .ant-alert-error').filter({ hasText: '密码' }).first();
    await toast.waitFor();
    const text = await toast.textContent();
    for (const want of ['密码至少 10 个字符', '密码须至少包含', '密码不能包含用户名']) assert.ok(text.includes(want), text);
  });
});
