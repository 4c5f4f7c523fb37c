// On a 390 px phone screen: a formula or table wider than the screen shows that it scrolls (the side with more
// past it fades out) and is a focusable, labelled region; "Copy link" is there; every slider is a target at least
// 24 px tall (WCAG 2.2, 2.5.8 target size minimum). Sizes are read from Chromium's layout, not from the CSS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle, openDisclosures, layOutWhole } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const W = 390;
// The sections where a learner found formulas and tables cut at the right edge with no sign that they scroll.
const NAMED = ['kv-lookup', 'spaces', 'asym', 'attention', 'causal'];

/**
 * A layout viewport as tall as the page, so that every section is laid out (content-visibility skips the rest):
 * helpers.layOutWhole, kept until done(). The checks here read layout alone, so nothing off screen is painted.
 */
const layOutAll = (page) => layOutWhole(page, W, { keep: true });

/** Every element in main that is shown, scrolls sideways and has more content than it shows. */
function wideBoxes(page) {
  return page.evaluate(() => {
    const out = [];
    document.querySelectorAll('main *').forEach((e, k) => {
      const o = getComputedStyle(e).overflowX;
      // checkVisibility: not inside a closed <details> (its content is laid out only on demand).
      if ((o !== 'auto' && o !== 'scroll') || !e.checkVisibility() || e.clientWidth === 0 || e.scrollWidth <= e.clientWidth + 1) return;
      e.setAttribute('data-test-box', String(k));
      out.push({ k, section: e.closest('section.lab')?.id ?? '?', cls: e.getAttribute('class') ?? '' });
    });
    return out;
  });
}

test('390 px: every box that scrolls sideways fades on the side with more, and is a labelled, focusable region', async () => {
  const { page, log, done } = await openPage(env, '', { width: W, height: 844 });
  await settle(page);
  await layOutAll(page);
  const closed = await wideBoxes(page);
  // The tables folded into <details> too, once opened.
  await openDisclosures(page);
  await layOutAll(page);
  const boxes = await wideBoxes(page);
  const sections = new Set(boxes.map((b) => b.section));
  console.log(`${closed.length} boxes scroll sideways at ${W} px, ${boxes.length} with every <details> open, in ${[...sections].join(', ')}`);
  for (const id of NAMED) assert.ok(sections.has(id), `${id} has a box wider than the screen (so this test checks it)`);
  // Each box in turn, in the page (one round trip for all of them, not a handful per box).
  const bad = await page.evaluate(async (list) => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const out = [];
    for (const b of list) {
      const e = document.querySelector(`[data-test-box="${b.k}"]`);
      const mask = () => { const s = getComputedStyle(e); return `${s.maskImage} ${s.webkitMaskImage}`; };
      const a11y = { tab: e.tabIndex, role: e.getAttribute('role'), label: e.getAttribute('aria-label') ?? '' };
      const where = `${b.section}: <${b.cls}>`;
      if (a11y.tab !== 0 || a11y.role !== 'region' || a11y.label.length < 10) out.push(`${where} is not a focusable, labelled region (${JSON.stringify(a11y)})`);
      // At the start: more to the right, and the right edge fades.
      if (!/gradient/.test(mask())) out.push(`${where}: no sign that it scrolls (no fade at the right edge)`);
      // Scrolled to the end: the left fades, the right edge is whole.
      e.scrollLeft = e.scrollWidth;
      await frames();
      const end = { left: e.hasAttribute('data-more-left'), right: e.hasAttribute('data-more-right') };
      if (!end.left || end.right) out.push(`${where}: scrolled to the end, the fade does not move to the left (${JSON.stringify(end)})`);
      // Focused from the keyboard, the fade steps aside so the focus ring shows whole.
      e.scrollLeft = 0;
    }
    return out;
  }, boxes);
  assert.deepEqual(bad, []);
  // A box whose overflow a style made visible scrolls nothing: a tab stop there would be a dead second stop around the
  // same picture (the model view's large head sits in a box of its own that scrolls). That box is named by its picture.
  await page.waitForSelector('#model[data-model-state="ready"]', { timeout: 60000 });
  await layOutAll(page);
  const dead = await page.$$eval('[data-scrolls]', (bs) => bs.filter((b) => !/auto|scroll/.test(getComputedStyle(b).overflowX))
    .map((b) => `${b.closest('section.lab')?.id}: <${b.className}> ${b.getAttribute('aria-label')}`));
  assert.deepEqual(dead, [], 'no region on a box that does not scroll itself');
  assert.match(await page.$eval('#model .model-head-map', (b) => b.getAttribute('aria-label') ?? ''), /^Heatmap, scrolls sideways: Layer \d head \d attention weights/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('390 px: "Copy link" is shown, every slider is at least 24 px tall and wide, histograms and the pull plane keep their text, apart', async () => {
  const { page, log, done } = await openPage(env, '', { width: W, height: 844 });
  await settle(page);
  const share = await page.$eval('[data-control="share"]', (b) => { const r = b.getBoundingClientRect(); return { w: r.width, h: r.height, right: r.right }; });
  console.log(`Copy link at ${W} px: ${share.w.toFixed(0)} × ${share.h.toFixed(0)} px`);
  assert.ok(share.w >= 24 && share.h >= 24, `Copy link is ${share.w} × ${share.h} px`);
  assert.ok(share.right <= W, `Copy link fits on the screen (right edge ${share.right})`);
  await layOutAll(page);
  const sliders = await page.$$eval('input[type="range"]', (els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { name: e.dataset.control ?? e.id, w: r.width, h: r.height, shown: e.checkVisibility() };
  }));
  const shown = sliders.filter((s) => s.shown);
  assert.ok(shown.length >= 4, `sliders on the page: ${shown.map((s) => s.name).join(', ')}`);
  const small = shown.filter((s) => s.h < 24 || s.w < 24).map((s) => `${s.name} ${s.w.toFixed(0)} × ${s.h.toFixed(0)}`);
  assert.deepEqual(small, [], 'sliders at least 24 × 24 px');
  // The histograms' text keeps its size as the picture narrows (it was drawn at 6.5–7.2 px at 390 px).
  const hist = await page.$$eval('svg[data-histogram] text', (ts) => ts.filter((t) => t.textContent && t.checkVisibility())
    .map((t) => { const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); }));
  assert.ok(hist.length > 0 && hist.every((px) => px >= 10 - 1e-6), `histogram text at ${Math.min(...hist).toFixed(1)} px`);
  // Grown text must not collide: each histogram's guide labels (−1 and +1 around 0 on a ±30 axis) stay apart.
  const guides = await page.$$eval('svg[data-histogram]', (svgs) => svgs.map((svg) => [...svg.querySelectorAll('.hist-guide-label')]
    .map((t) => { const r = t.getBoundingClientRect(); return { text: t.textContent, left: r.left, right: r.right }; })
    .sort((a, b) => a.left - b.left)));
  assert.ok(guides.some((g) => g.length === 2), 'histograms with two guides');
  for (const g of guides) for (let i = 1; i < g.length; i++) assert.ok(g[i - 1].right <= g[i].left, `guide labels overlap: ${JSON.stringify(g)}`);
  // So does the pull plane's axis text (ticks and titles were drawn at 8.1 and 8.9 px at 390 px).
  const axes = await page.$$eval('svg[data-plane="pull"] .plane-grid text', (ts) => ts.filter((t) => t.checkVisibility())
    .map((t) => { const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); }));
  assert.ok(axes.length >= 10 && axes.every((px) => px >= 10.5), `pull plane axis text at ${Math.min(...axes).toFixed(1)} px`);
  assert.deepEqual(log.errors, []);
  await done();
});
