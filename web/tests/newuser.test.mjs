// The console as a new user meets it, against a real server (no nodes):
// the explorer's /metrics route, menu entries that all work, compressed and
// cached assets split by route, Chinese text rendered with a real CJK font,
// the header at 800 px, bilingual server errors and the enrolment command.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, api, launchBrowser, startServer, stepper, until, watchPage } from './harness.mjs';

const STEP_TIMEOUT = 90_000;
let server;
let browser;
let page;
const pageErrors = [];
const step = stepper({ prefix: 'newuser-', timeout: STEP_TIMEOUT, page: () => page });

async function login(username = 'admin', password = ADMIN_PASSWORD) {
  await page.goto(`${server.consoleURL}/login`);
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.getByTestId('login-submit').click();
}

async function adminToken() {
  const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  assert.equal(res.status, 200, res.text);
  return res.body.access_token;
}

describe('console for a new user', () => {
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    page = await watchPage(browser, { pageErrors, timeout: 30_000 });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  });

  step('Chinese heading renders with a CJK font (non-zero glyphs, not .notdef boxes)', async () => {
    await page.goto(`${server.consoleURL}/login`);
    const heading = page.locator('h3').first();
    await heading.waitFor();
    const text = (await heading.textContent()) ?? '';
    assert.match(text, /[\u4e00-\u9fff]/, `a Chinese login heading: ${text}`);
    const glyphs = await heading.evaluate((h) => {
      const font = getComputedStyle(h).font;
      const canvas = document.createElement('canvas');
      canvas.width = 64;
      canvas.height = 64;
      const ctx = canvas.getContext('2d');
      ctx.font = font;
      ctx.textBaseline = 'top';
      const raster = (ch) => {
        ctx.clearRect(0, 0, 64, 64);
        ctx.fillText(ch, 4, 4);
        return Array.from(ctx.getImageData(0, 0, 64, 64).data).join(',');
      };
      const notdef = raster('\u{10FFFD}'); // a private-use code point: drawn as the missing-glyph box
      return [...h.textContent]
        .filter((ch) => /[\u4e00-\u9fff]/.test(ch))
        .map((ch) => ({ ch, width: ctx.measureText(ch).width, box: raster(ch) === notdef }));
    });
    assert.ok(glyphs.length > 0);
    for (const g of glyphs) {
      assert.ok(g.width > 0, `glyph ${g.ch} has zero width`);
      assert.equal(g.box, false, `glyph ${g.ch} renders as the missing-glyph box: install a CJK font (make deps: fonts-wqy-zenhei)`);
    }
  });

  step('assets are served pre-compressed with cache headers, and the login page loads no chart code', async () => {
    const responses = [];
    const onResponse = async (r) => {
      if (!r.url().startsWith(server.consoleURL)) return;
      const h = await r.allHeaders();
      responses.push({ url: r.url(), encoding: h['content-encoding'] ?? '', cache: h['cache-control'] ?? '', type: h['content-type'] ?? '' });
    };
    page.on('response', onResponse);
    await page.goto(`${server.consoleURL}/login`, { waitUntil: 'networkidle' });
    page.off('response', onResponse);
    const scripts = responses.filter((r) => /\/assets\/.*\.js$/.test(new URL(r.url).pathname));
    assert.ok(scripts.length > 0, JSON.stringify(responses));
    const rawSize = Object.fromEntries(
      await page.evaluate(() => performance.getEntriesByType('resource').map((e) => [e.name, e.decodedBodySize])),
    );
    for (const s of scripts) {
      // The build leaves files under 1 KiB uncompressed (nothing to gain).
      if (rawSize[s.url] >= 1024) assert.equal(s.encoding, 'br', `${s.url} sent ${s.encoding || 'uncompressed'}`);
      assert.match(s.cache, /immutable/, s.url);
    }
    assert.ok(scripts.filter((s) => s.encoding === 'br').length >= 3, JSON.stringify(scripts));
    const index = responses.find((r) => new URL(r.url).pathname === '/login');
    assert.equal(index?.cache, 'no-cache');
    assert.ok(!scripts.some((s) => /echarts|MetricsPage|DashboardPage|TasksPage/.test(s.url)), `route code loaded on /login: ${scripts.map((s) => s.url)}`);
    // Measured sizes: what the browser downloads compressed vs the raw bytes.
    const sizes = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes('/assets/'))
        .reduce((a, e) => ({ transfer: a.transfer + e.encodedBodySize, raw: a.raw + e.decodedBodySize }), { transfer: 0, raw: 0 }),
    );
    console.log(`# login page assets: ${sizes.transfer} bytes transferred, ${sizes.raw} bytes uncompressed`);
    assert.ok(sizes.transfer * 3 < sizes.raw, JSON.stringify(sizes));
  });

  step('admin logs in; every menu entry opens a working page, unbuilt ones are absent', async () => {
    await login();
    await page.waitForURL(/\/dashboard$/);
    for (const absent of ['alerts', 'clusters']) {
      assert.equal(await page.getByTestId(`nav-${absent}`).count(), 0, `${absent} has no page yet: no entry`);
    }
    const navIds = () => page.locator('[data-testid^="nav-"]').evaluateAll((els) => els.map((e) => e.dataset.testid));
    // The explorer's entry appears once the capability probe answers.
    const entries = await until(async () => {
      const ids = await navIds();
      return ids.includes('nav-metrics') ? ids : null;
    }, 'the menu with the metrics explorer');
    assert.ok(entries.length >= 8, entries.join());
    for (const id of entries) {
      await page.getByTestId(id).click();
      await page.locator('.ant-spin-spinning').first().waitFor({ state: 'detached', timeout: 15_000 }).catch(() => {});
      assert.equal(await page.locator('.ant-result-404').count(), 0, `${id} opens a 404`);
      assert.equal(await page.getByTestId(id).getAttribute('aria-disabled'), null);
    }
  });

  step('the explorer at /metrics survives a reload and a shared link; no server metrics leak', async () => {
    await page.getByTestId('nav-metrics').click();
    await page.waitForURL(/\/metrics$/);
    await page.getByTestId('promql-input').waitFor();
    await page.reload();
    await page.getByTestId('promql-input').waitFor();
    assert.doesNotMatch(await page.content(), /go_goroutines/);
    const anon = await fetch(`${server.consoleURL}/metrics`);
    assert.match(anon.headers.get('content-type') ?? '', /text\/html/);
    assert.doesNotMatch(await anon.text(), /go_goroutines|process_cpu_seconds_total/);
    const apiAnon = await fetch(`${server.apiURL}/metrics`);
    assert.equal(apiAnon.status, 401, 'the server metrics need authentication');
    const withToken = await fetch(`${server.apiURL}/metrics`, { headers: { Authorization: `Bearer ${await adminToken()}` } });
    assert.equal(withToken.status, 200);
    assert.match(await withToken.text(), /go_goroutines/);
  });

  step('at 800 px the header keeps the user name on one line', async () => {
    await page.setViewportSize({ width: 800, height: 700 });
    await page.goto(`${server.consoleURL}/tasks`);
    const user = page.getByTestId('current-user');
    await until(async () => (await user.getAttribute('title')) === 'admin', 'current user');
    const box = await user.boundingBox();
    const nameBox = await user.locator('strong').boundingBox();
    assert.ok(nameBox && nameBox.width > 20, `user name visible: ${JSON.stringify(nameBox)}`);
    const lineHeight = await user.evaluate((e) => parseFloat(getComputedStyle(e).lineHeight) || 22);
    assert.ok(box.height <= lineHeight * 1.5 + 8, `user name on one line: ${JSON.stringify(box)}`);
    const header = await page.locator('.ant-layout-header').boundingBox();
    assert.ok(box.x + box.width <= header.x + header.width + 1, 'inside the header');
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
