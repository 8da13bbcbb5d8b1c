// The console links to Grafana when the server has grafana_url configured
// (HETEROFLOW_GRAFANA_URL here), and shows no link without it; the
// console's own pages stay.
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { ADMIN_PASSWORD, launchBrowser, startServer, stepper } from './harness.mjs';

const GRAFANA = 'http://grafana.example.test:3000/d/heteroflow-overview';
const STEP_TIMEOUT = 90_000;

async function login(page, server) {
  await page.goto(`${server.consoleURL}/tasks`);
  await page.waitForURL(/\/login$/);
  await page.locator('#username').fill('admin');
  await page.locator('#password').fill(ADMIN_PASSWORD);
  await page.getByTestId('login-submit').click();
  await page.waitForURL(/\/tasks$/);
}

for (const configured of [true, false]) {
  describe(`Grafana link (${configured ? 'configured' : 'not configured'})`, () => {
    let server;
    let browser;
    let page;
    const step = stepper({ prefix: configured ? 'grafana-' : 'no-grafana-', timeout: STEP_TIMEOUT, page: () => page });

    before(async () => {
      const saved = process.env.HETEROFLOW_GRAFANA_URL;
      if (configured) process.env.HETEROFLOW_GRAFANA_URL = GRAFANA;
      else delete process.env.HETEROFLOW_GRAFANA_URL;
      try {
        server = await startServer();
      } finally {
        if (saved === undefined) delete process.env.HETEROFLOW_GRAFANA_URL;
        else process.env.HETEROFLOW_GRAFANA_URL = saved;
      }
      browser = await launchBrowser();
      page = await browser.context.newPage();
    });

    after(async () => {
      await browser?.close();
      await server?.stop();
    });

    step('header shows the link only when configured', async () => {
      await login(page, server);
      await page.getByTestId('current-user').waitFor();
      const link = page.getByTestId('grafana-link');
      if (!configured) {
        // The links answer has arrived once the query settles; give it a moment.
        await page.waitForLoadState('networkidle');
        assert.equal(await link.count(), 0);
        return;
      }
      await link.waitFor();
      assert.equal(await link.getAttribute('href'), GRAFANA);
      assert.equal(await link.getAttribute('target'), '_blank');
      assert.match(await link.innerText(), /Grafana 仪表盘/); // zh-CN browser locale
      // The console's own charts stay: the metrics page is still in the menu.
      assert.equal(await page.getByTestId('nav-metrics').count(), 1);
    });
  });
}
