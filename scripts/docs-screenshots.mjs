// Writes docs/explorer.md's pictures of the cost and speed labs (docs/explorer-cost.png, docs/explorer-speed.png)
// from the built page, after a measured run of each: `npm run build && npm run build:web && node scripts/docs-screenshots.mjs`.
// The numbers in them are this machine's, measured while the screenshot is taken.
import { setup, openPage } from '../tests/e2e/helpers.mjs';

const env = await setup();
try {
  const { page, context } = await openPage(env, '#cost', { width: 1100, height: 900 });
  // Unstick the nav so it does not cover the top of a capture (through the CSSOM: the CSP forbids <style>).
  await page.evaluate(() => { document.querySelector('.section-nav').style.position = 'static'; });

  await page.selectOption('select[data-control="cost-max-n"]', '4096');
  await page.click('button[data-control="cost-measure"]');
  await page.waitForFunction(() => document.getElementById('cost').dataset.curveState !== 'running', null, { timeout: 300000 });
  // The charts with their legend above them.
  const clip = await page.evaluate(() => {
    const legend = document.querySelector('#cost ul[aria-label="Legend of the measured charts"]').getBoundingClientRect();
    const charts = document.querySelector('#cost .cost-charts').getBoundingClientRect();
    const top = Math.min(legend.top, charts.top) - 8;
    return { x: charts.left - 8, y: top + window.scrollY, width: charts.width + 16, height: charts.bottom - top + 8 };
  });
  await page.screenshot({ path: 'docs/explorer-cost.png', clip, fullPage: true });

  await page.click('button[data-control="speed-run"]');
  await page.waitForFunction(() => document.querySelector('section#speed')?.dataset.state !== 'running', null, { timeout: 300000 });
  const table = await page.$('section#speed .table-scroll');
  await table.screenshot({ path: 'docs/explorer-speed.png' });
  await context.close();
  console.log('wrote docs/explorer-cost.png, docs/explorer-speed.png');
} finally {
  await env.close();
}
