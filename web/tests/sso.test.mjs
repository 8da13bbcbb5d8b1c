// Single sign-on through the console against a real OpenID provider: the
// test provider (controlplane/auth/oidcauth/oidctest, a Go test program
// this spec starts) and a server configured with it in auth.oidc. A user
// clicks "使用 Corp SSO 登录", signs in at the provider and lands in the
// console as the account the claims mapped (operator, member of team-a);
// logout leaves the provider's session too and comes back to /login; a
// user no group grants a role comes back with the reason in Chinese, as
// does a password sign-in while the LDAP directory is down, and the button
// reads in English after switching. Any JavaScript dialog or
// uncaught page error fails it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';

const REPO = resolve(import.meta.dirname, '..', '..');
const SECRET = 'sso-test-client-secret';

let provider;
let issuer;
let server;
let browser;
let page;
let token;
let cfgDir;
const pageErrors = [];
const dialogs = [];
const step = stepper({ prefix: 'sso-', timeout: 60_000, page: () => page });

/**
 * startProvider runs the test OpenID provider: a prebuilt binary from
 * $HETEROFLOW_OIDC_TEST_PROVIDER, else `go run` of its package. It
 * answers once the provider printed its issuer.
 */
async function startProvider() {
  const args = ['--client-secret', SECRET, '--user', 'lin:Lin-Passw0rd:Lin Wei:hf-operators,team-a', '--user', 'nobody:Nobody-Passw0rd:No Body:'];
  const bin = process.env.HETEROFLOW_OIDC_TEST_PROVIDER;
  const proc = bin
    ? spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : // detached: its own process group, so stopping it also stops the program `go run` started
      spawn('go', ['run', './controlplane/auth/oidcauth/oidctest/cmd/oidc-test-provider', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  proc.stdout.on('data', (b) => (out += b.toString()));
  proc.stderr.on('data', (b) => (out += b.toString()));
  await until(async () => /issuer=(\S+)/.test(out) || proc.exitCode !== null, 'the test OpenID provider to start', 240_000);
  const m = /issuer=(\S+)/.exec(out);
  assert.ok(m, `test OpenID provider did not start: ${out}`);
  return { proc, issuer: m[1] };
}

describe('single sign-on console', () => {
  before(async () => {
    ({ proc: provider, issuer } = await startProvider());
    cfgDir = await mkdtemp(join(tmpdir(), 'hf-web-sso-'));
    const cfg = join(cfgDir, 'server.yaml');
    await writeFile(
      cfg,
      `auth:
  oidc:
    - name: corp
      display_name: Corp SSO
      issuer: ${issuer}
      client_id: heteroflow
      scopes: [openid, profile, email, groups]
      group_roles:
        - {group: hf-operators, role: operator}
      group_tenants:
        - {group: team-a, tenant: team-a, role: member}
  ldap:
    # a directory that is down: sign-in of a user the store does not hold fails closed
    urls: [ldap://127.0.0.1:1]
    bind_dn: cn=heteroflow,dc=example,dc=org
    user_base: ou=people,dc=example,dc=org
`,
    );
    process.env.HETEROFLOW_OIDC_CORP_CLIENT_SECRET = SECRET;
    process.env.HETEROFLOW_LDAP_BIND_PASSWORD = 'ldap-service-secret';
    server = await startServer({ args: ['--config', cfg] });
    const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(res.status, 200, res.text);
    token = res.body.access_token;
    const t = await api(server, 'POST', '/api/v1/tenants', { token, body: { name: 'team-a', display_name: 'Team A' } });
    assert.equal(t.status, 201, t.text);
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, dialogs });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (provider?.pid) {
      try {
        process.kill(-provider.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (cfgDir) await rm(cfgDir, { recursive: true, force: true });
    assert.deepEqual(pageErrors, [], 'no uncaught page errors');
    assert.deepEqual(dialogs, [], 'no JavaScript dialogs');
  });

  step('the login page offers the provider (zh); signing in there lands in the console as the mapped user', async () => {
    await page.goto(`${server.consoleURL}/login`);
    const button = page.getByTestId('sso-corp');
    await button.waitFor();
    assert.equal((await button.innerText()).trim(), '使用 Corp SSO 登录');
    await button.click();
    await page.waitForURL((u) => u.href.startsWith(issuer) && u.pathname === '/login');
    await page.locator('#username').fill('lin');
    await page.locator('#password').fill('Lin-Passw0rd');
    await page.locator('#submit').click();
    await page.waitForURL((u) => u.href.startsWith(server.consoleURL) && !u.pathname.startsWith('/login'));
    await page.getByTestId('current-user').filter({ hasText: /Lin Wei|lin/ }).waitFor();

    const users = await api(server, 'GET', '/api/v1/users?q=lin', { token });
    assert.equal(users.status, 200, users.text);
    const lin = users.body.items.find((u) => u.username === 'lin');
    assert.ok(lin, users.text);
    assert.equal(lin.auth_source, 'oidc:corp');
    assert.equal(lin.role, 'operator');
    const members = await api(server, 'GET', '/api/v1/tenants/team-a/members', { token });
    assert.equal(members.status, 200, members.text);
    assert.ok(
      members.body.some((m) => m.username === 'lin' && m.role === 'member'),
      members.text,
    );
  });

  step('logout ends the session, leaves the provider and comes back to the login page', async () => {
    // The provider's logout page redirects at once, so watch requests, not committed pages.
    const visited = [];
    const onNav = (r) => r.isNavigationRequest() && visited.push(r.url());
    page.on('request', onNav);
    await page.getByTestId('logout').click();
    await until(async () => visited.some((u) => u.startsWith(`${issuer}/end_session`)), "the provider's logout page");
    await page.waitForURL((u) => u.href.startsWith(server.consoleURL) && u.pathname === '/login');
    page.off('request', onNav);
    await page.getByTestId('sso-corp').waitFor();
    await page.goto(`${server.consoleURL}/tasks`);
    await page.waitForURL((u) => u.pathname === '/login');
  });

  step('a user no group grants a role comes back with the reason in Chinese', async () => {
    await page.getByTestId('sso-corp').click();
    await page.waitForURL((u) => u.href.startsWith(issuer));
    await page.locator('#username').fill('nobody');
    await page.locator('#password').fill('Nobody-Passw0rd');
    await page.locator('#submit').click();
    await page.waitForURL((u) => u.href.startsWith(server.consoleURL) && u.pathname === '/login');
    const err = page.getByTestId('login-error');
    await err.waitFor();
    assert.match(await err.innerText(), /您所在的组均未被授予 HeteroFlow 访问权限/);
  });

  step('a directory that does not answer refuses the password sign-in with the reason in Chinese', async () => {
    await page.locator('#username').fill('ghost');
    await page.locator('#password').fill('Ghost-Passw0rd');
    await page.getByTestId('login-submit').click();
    const err = page.getByTestId('login-error');
    await until(async () => /无法连接目录服务器 \(LDAP\)，已拒绝登录/.test(await err.innerText()), 'the LDAP refusal in Chinese');
    assert.equal(page.url().startsWith(`${server.consoleURL}/login`), true);
  });

  step('the Users page marks the account signed in through the provider', async () => {
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL((u) => !u.pathname.startsWith('/login'));
    await page.goto(`${server.consoleURL}/users`);
    const row = page.locator('tr.ant-table-row', { hasText: 'lin' });
    await row.getByTestId('user-source').filter({ hasText: '单点登录 · corp' }).waitFor();
    await page.getByTestId('logout').click();
    await page.waitForURL((u) => u.pathname === '/login');
  });

  step('in English the button reads "Sign in with Corp SSO"', async () => {
    await page.getByTestId('lang-switch').click();
    await page.locator('.ant-select-dropdown .ant-select-item-option[title="English"]').filter({ visible: true }).click();
    await until(async () => (await page.getByTestId('sso-corp').innerText()).trim() === 'Sign in with Corp SSO', 'the English button label');
  });
});
