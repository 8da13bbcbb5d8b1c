// What the console shows when the server answers with an error: a link to
// a task or workflow that does not exist says so (no endless spinner), and
// in Chinese the server's English text is translated, or led by the
// Chinese of its code; in English it is shown as sent. Any JavaScript
// dialog or uncaught page error fails it.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ADMIN_PASSWORD, api, consoleSuite, stepper, until } from './harness.mjs';

const MISSING = 987654;
const HAN = /\p{Script=Han}/u;

let server;
let page;
const dialogs = [];
const pageErrors = [];

const step = stepper({ prefix: 'errors-', timeout: 90_000, page: () => page });

async function useLang(lang) {
  await page.evaluate((l) => localStorage.setItem('heteroflow.lang', l), lang);
}

describe('console error texts', () => {
  consoleSuite({ dialogs, pageErrors, ready: (s) => ({ server, page } = s) });

  step('log in', async () => {
    const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(res.status, 200, res.text);
    await page.goto(`${server.consoleURL}/login`);
    await page.locator('#username').fill('admin');
    await page.locator('#password').fill(ADMIN_PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL((u) => !u.pathname.endsWith('/login'));
  });

  step('a missing task says so in Chinese, not a spinner', async () => {
    await useLang('zh');
    await page.goto(`${server.consoleURL}/tasks/${MISSING}`);
    const err = page.getByTestId('task-load-error');
    await err.waitFor();
    const text = (await err.textContent()).trim();
    assert.match(text, new RegExp(`任务 ${MISSING} 不存在`), text);
    assert.equal(await page.locator('.ant-drawer .ant-spin').count(), 0, 'no spinner once the answer came');
  });

  step('the same in English is the server text', async () => {
    await useLang('en');
    await page.goto(`${server.consoleURL}/tasks/${MISSING}`);
    const err = page.getByTestId('task-load-error');
    await err.waitFor();
    const text = (await err.textContent()).trim();
    assert.match(text, new RegExp(`task ${MISSING}: not found`), text);
    assert.doesNotMatch(text, HAN, text);
  });

  step('a missing workflow is translated, not "Error: …"', async () => {
    await useLang('zh');
    await page.goto(`${server.consoleURL}/workflows/${MISSING}`);
    const err = page.getByTestId('wf-load-error');
    await err.waitFor();
    const text = (await err.textContent()).trim();
    assert.match(text, new RegExp(`工作流 ${MISSING} 不存在`), text);
    assert.doesNotMatch(text, /^Error:/, text);
  });

  step('the audit log shows a refused login in Chinese, not "denied: …"', async () => {
    await useLang('zh');
    const bad = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: 'not-the-password' } });
    assert.equal(bad.status, 401, bad.text);
    await page.goto(`${server.consoleURL}/audit`);
    const denied = page.locator('[data-testid="audit-result"][data-result^="denied: "]').first();
    await until(async () => {
      await page.getByTestId('audit-search').click();
      return (await denied.count()) > 0;
    }, 'a denied login in the audit log');
    const text = (await denied.textContent()).trim();
    assert.match(text, /^拒绝：/, text);
    assert.match(text, /用户名或密码错误/, text);
    assert.doesNotMatch(text, /^denied/, text);
  });

  step('an English text no rule knows is led by its code in Chinese', async () => {
    await useLang('zh');
    // Answer the task with an error the console has no phrase for.
    await page.route(new RegExp(`/api/v1/tasks/${MISSING}$`), (route) =>
      route.fulfill({
        status: 409,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'conflict', message: 'something new went wrong' } }),
      }),
    );
    await page.goto(`${server.consoleURL}/tasks/${MISSING}`);
    const err = page.getByTestId('task-load-error');
    await err.waitFor();
    const text = (await err.textContent()).trim();
    assert.match(text, /^与当前状态冲突：something new went wrong/, text);
    await page.unroute(new RegExp(`/api/v1/tasks/${MISSING}$`));
  });
});
