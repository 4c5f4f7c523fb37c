// Screenshots of the articles' figures at 1280 and 390 px into artifacts/screenshots/ (look at them; taken with
// ATTNLAB_SCREENSHOTS=1: helpers.mjs, shot), plus the check that no figure makes the phone layout scroll sideways.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle, ensureShotsDir, shotsDir, shot } from './helpers.mjs';

let env;
before(async () => { env = await setup(); ensureShotsDir(); });
after(async () => { await env?.close(); });

const FIGURES = ['kv-lookup', 'pull', 'spaces', 'asym', 'sqrt-dk', 'stability', 'causal'];

for (const [label, width] of [['desktop', 1280], ['mobile', 390]]) {
  test(`figure screenshots at ${width} px`, async () => {
    const { page, log, done } = await openPage(env, '', { width, height: 900 });
    await settle(page);
    // The sticky nav would cover the top of each figure's capture.
    await page.$eval('.section-nav', (nav) => { nav.style.position = 'static'; }); // CSSOM: allowed by the CSP
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= width, `page is ${scrollWidth} px wide at a ${width} px viewport`);
    for (const id of FIGURES) {
      const section = await page.$(`section#${id}`);
      if (!section) continue; // a figure not built yet
      await section.scrollIntoViewIfNeeded();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await shot(section, `${shotsDir}/fig-${id}-${label}.png`);
    }
    assert.deepEqual(log.errors, []);
    await done();
  });
}
