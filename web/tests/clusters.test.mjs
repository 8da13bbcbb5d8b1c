// Multi-cluster end to end: two real member servers, each with a simulated
// node (real agents over fakesmi CLIs), and a hub (`heteroflow server
// --hub`), all on loopback. An admin of the hub opens Clusters (zh): an
// unreachable address is refused with the reason in Chinese, a wrong key
// in English after switching the language, and nothing is stored; both
// members are registered through the dialog and shown side by side
// (status, devices by vendor and model, charts); the header's cluster
// switch appears, focuses one member and narrows PromQL to it; the task
// wizard on the hub refuses a request no member can hold and places an
// Ascend task on the member that has Ascend cards, which is listed; a member stopped shows
// unreachable while the other is still served. Any JavaScript dialog or
// uncaught page error fails it.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';
import { startSimulatedNode } from './nodes.mjs';

let east;
let west;
let hub;
let nodes = [];
let browser;
let page;
let hubToken;
const keys = {};
const pageErrors = [];
const dialogs = [];
const step = stepper({ prefix: 'clusters-', timeout: 90_000, page: () => page });

async function adminToken(server) {
  const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  assert.equal(res.status, 200, res.text);
  return res.body.access_token;
}

async function memberKey(server) {
  const token = await adminToken(server);
  const res = await api(server, 'POST', '/api/v1/apikeys', { token, body: { name: 'hub', role: 'admin' } });
  assert.equal(res.status, 201, res.text);
  return res.body.key;
}

const card = (name) => page.getByTestId(`cluster-card-${name}`);
const modal = () => page.locator('.ant-modal').filter({ visible: true });

/**
 * hubWizard submits a one-device task through the Clusters page's task
 * wizard (placement: auto). typed: the vendor is typed, not chosen from the
 * members' devices.
 */
async function hubWizard({ name, vendor, typed = false }) {
  await page.getByTestId('hub-submit').click();
  const m = modal();
  await m.getByTestId('wizard-name').waitFor();
  await m.locator('#name').fill(name);
  await m.locator('#vendor').fill(vendor);
  if (!typed) {
    await page.locator('.ant-select-dropdown .ant-select-item-option', { hasText: vendor }).filter({ visible: true }).first().waitFor();
  }
  await page.keyboard.press('Escape');
  await m.locator('#device_count').fill('1');
  await m.locator('#compute_percent').fill('100');
  await m.getByTestId('wizard-next').click();
  await m.locator('#command').fill('sleep 30');
  await m.getByTestId('wizard-next').click();
  await m.getByTestId('wizard-next').click();
  await m.getByTestId('wizard-review').waitFor();
  assert.equal(await m.getByTestId('hub-placement').innerText(), 'Best member (auto)');
  await m.getByTestId('wizard-submit').click();
}

async function fillRegister(name, url, key) {
  await page.getByTestId('cluster-register').click();
  await page.getByTestId('cluster-name').fill(name);
  await page.getByTestId('cluster-url').fill(url);
  await page.getByTestId('cluster-key').fill(key);
  await page.getByTestId('cluster-register-submit').click();
}

describe('clusters console (hub)', () => {
  before(async () => {
    [east, west, hub] = await Promise.all([startServer(), startServer(), startServer({ args: ['--hub'] })]);
    nodes = await Promise.all([
      startSimulatedNode(east, { vendor: 'nvidia', model: 'NVIDIA H100 80GB HBM3', count: 2, memoryMiB: 81559, name: 'east-h100' }),
      startSimulatedNode(west, { vendor: 'ascend', model: '910B3', count: 1, memoryMiB: 65536, name: 'west-910b' }),
    ]);
    [keys.east, keys.west] = await Promise.all([memberKey(east), memberKey(west)]);
    hubToken = await adminToken(hub);
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });
  after(async () => {
    await browser?.close();
    await Promise.all(nodes.map((n) => n.stop()));
    await Promise.all([east, west, hub].map((s) => s?.stop()));
    assert.deepEqual(pageErrors, [], 'no uncaught page errors');
    assert.deepEqual(dialogs, [], 'no JavaScript dialogs');
  });

  step('admin opens Clusters (zh): no members yet, no cluster switch', async () => {
    await page.goto(`${hub.consoleURL}/login`);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL((u) => !u.pathname.startsWith('/login'));
    await page.getByRole('menuitem', { name: '集群管理' }).click();
    await page.waitForURL(/\/clusters$/);
    await page.getByTestId('clusters-empty').waitFor();
    assert.equal(await page.getByTestId('cluster-switch').count(), 0);
  });

  step('an unreachable address is refused in Chinese, a wrong key in English; nothing is stored', async () => {
    await fillRegister('east', 'http://127.0.0.1:1', keys.east);
    const err = page.getByTestId('cluster-register-error');
    await err.waitFor();
    assert.equal(await err.getAttribute('data-code'), 'cluster_unreachable');
    assert.match(await err.innerText(), /无法连接集群 east（http:\/\/127\.0\.0\.1:1）/);
    // English now: a wrong key.
    await page.getByRole('button', { name: /取\s*消/ }).click();
    await page.getByTestId('lang-switch').click();
    await page.getByTitle('English').click();
    await fillRegister('east', east.apiURL, 'hf_wrong_key');
    await err.waitFor();
    assert.equal(await err.getAttribute('data-code'), 'cluster_key_rejected');
    assert.match(await err.innerText(), /Cluster east refused the API key/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    const list = await api(hub, 'GET', '/api/v1/clusters', { token: hubToken });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.items.length, 0, 'refused registrations store nothing');
  });

  step('both members are registered and shown side by side with their devices and charts', async () => {
    await fillRegister('east', east.apiURL, keys.east);
    await card('east').waitFor();
    await fillRegister('west', west.apiURL, keys.west);
    await card('west').waitFor();
    for (const [name, model, devices] of [['east', 'NVIDIA H100 80GB HBM3', '2 / 2 / 2'], ['west', '910B3', '1 / 1 / 1']]) {
      await until(async () => (await card(name).getByTestId('cluster-status').innerText()) === 'Reachable', `${name} reachable`);
      assert.equal(await card(name).getByTestId('cluster-devices').innerText(), devices);
      await card(name).getByTestId('cluster-models').getByText(model).waitFor();
    }
    const charts = page.getByTestId('clusters-chart-devices').getByTestId('echart');
    assert.deepEqual(JSON.parse(await charts.getAttribute('data-series')), ['Free devices', 'Busy devices', 'Offline devices']);
    // The API never returns the keys.
    const list = await api(hub, 'GET', '/api/v1/clusters', { token: hubToken });
    assert.ok(!list.text.includes(keys.east) && !list.text.includes(keys.west), 'keys are not returned');
  });

  step('the task wizard on the hub: a request no member can hold is refused with the reason; one for Ascend goes to west and is listed', async () => {
    // No member has Cambricon cards: the hub refuses, nothing is forwarded.
    await hubWizard({ name: 'hub-nowhere', vendor: 'cambricon', typed: true });
    const err = modal().getByTestId('wizard-error');
    await err.waitFor();
    assert.match(await err.innerText(), /No member cluster can take the task/);
    await modal().locator('.ant-modal-close').click();
    let forwarded = await api(hub, 'GET', '/api/v1/hub/tasks', { token: hubToken });
    assert.equal(forwarded.body.total, 0, 'a refused placement forwards nothing');
    // Vendor choices come from the members' devices; auto placement picks
    // the member that has them.
    await hubWizard({ name: 'hub-train', vendor: 'ascend' });
    await page.locator('.ant-message').getByText(/Task hub-train placed on west as task \d+/).waitFor();
    await page.getByTestId('hub-tasks').getByText('hub-train').waitFor({ timeout: 20_000 });
    forwarded = await api(hub, 'GET', '/api/v1/hub/tasks', { token: hubToken });
    assert.equal(forwarded.body.items[0].cluster, 'west');
    assert.ok(forwarded.body.items[0].scores.length >= 2, 'every member was scored');
  });

  step('the cluster switch appears, focuses one member and narrows PromQL to it (Chinese again)', async () => {
    await page.getByTestId('lang-switch').click();
    await page.getByTitle('简体中文').click();
    const sw = page.getByTestId('cluster-switch');
    await sw.waitFor();
    await sw.click();
    await page.getByTitle('west', { exact: true }).click();
    await page.getByTestId('cluster-focus').getByText('仅显示 west').waitFor();
    await until(async () => (await page.getByTestId('cluster-card-east').count()) === 0, 'east hidden');
    await card('west').waitFor();
    // PromQL follows the switch: one series, labelled west.
    await page.getByTestId('nav-metrics').click();
    await page.waitForURL(/\/metrics$/);
    await page.getByTestId('promql-input').fill('vector(1)');
    await page.getByTestId('promql-run').click();
    const chart = page.getByTestId('echart');
    const series = async () => JSON.parse((await chart.getAttribute('data-series')) ?? '[]').sort();
    await until(async () => (await series()).length > 0, 'the PromQL chart');
    assert.deepEqual(await series(), ['{cluster="west"}']);
    // All clusters: one series per member.
    await page.getByTestId('cluster-switch').click();
    await page.getByTitle('全部集群').click();
    await page.waitForURL(/\/clusters$/);
    await card('east').waitFor();
    await page.getByTestId('nav-metrics').click();
    await page.getByTestId('promql-input').fill('vector(1)');
    await page.getByTestId('promql-run').click();
    await until(async () => JSON.stringify(await series()) === JSON.stringify(['{cluster="east"}', '{cluster="west"}']), 'a series per member');
  });

  step('a stopped member shows unreachable; the other is still served', async () => {
    await east.stop();
    await page.getByTestId('nav-clusters').click();
    await page.waitForURL(/\/clusters$/);
    await page.getByTestId('clusters-refresh').click();
    await until(async () => (await card('east').getByTestId('cluster-status').innerText()) === '不可达', 'east unreachable');
    await card('east').getByTestId('cluster-last-error').waitFor();
    assert.equal(await card('west').getByTestId('cluster-status').innerText(), '可达');
  });
});
