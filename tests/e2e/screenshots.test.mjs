// Screenshots of each lab at desktop (1280 px) and phone (390 px) widths, into artifacts/screenshots/
// (git-ignored; taken with ATTNLAB_SCREENSHOTS=1: helpers.mjs, shot), plus the layout check that matters at 390 px:
// nothing makes the page scroll sideways.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle, ensureShotsDir, shotsDir, shot, layOutWhole } from './helpers.mjs';

let env;
before(async () => { env = await setup(); ensureShotsDir(); });
after(async () => { await env?.close(); });

const LABS = ['softmax', 'attention', 'multihead'];
// A view that shows the interesting parts: causal mask on, the apple/banana sentence, two heads.
const QUERY = '?c=1';

for (const [label, width] of [['desktop', 1280], ['mobile', 390]]) {
  test(`screenshots at ${width} px`, async () => {
    const { page, context, log } = await openPage(env, QUERY, { width, height: 900 });
    await settle(page);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= width, `page is ${scrollWidth} px wide at a ${width} px viewport`);
    await shot(page, `${shotsDir}/top-${label}.png`);
    // A viewport as tall as the page: every step is on screen, so the off-screen-skipped ones
    // (content-visibility: auto) are rendered, and the sticky nav stays at the top of the capture.
    // Rendering the skipped steps changes their height, so grow the viewport until the page stops growing.
    await layOutWhole(page, width);
    for (let i = 0, last = 0; i < 6; i++) {
      const h = await page.evaluate(() => document.documentElement.scrollHeight);
      if (h === last) break;
      last = h;
      await page.setViewportSize({ width, height: h });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }
    for (const id of LABS) {
      const box = await page.$eval(`section#${id}`, (s) => {
        const r = s.getBoundingClientRect();
        return { x: 0, y: r.top + window.scrollY, width: document.documentElement.clientWidth, height: r.height };
      });
      await shot(page, `${shotsDir}/${id}-${label}.png`, { clip: box });
    }
    await shot(page, `${shotsDir}/page-${label}.png`, { fullPage: true });
    assert.deepEqual(log.errors, []);
    await context.close();
  });
}
