// Every section works on a 390 px phone screen, and the page honours the reader's motion setting:
// with "reduce" nothing moves (CSS transitions and animations off, charts jump to their final state);
// without it, the charts do animate (so the switch is real, not motion that is simply absent).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle, ensureShotsDir, shotsDir, shot, layOutWhole } from './helpers.mjs';

let env;
before(async () => { env = await setup(); ensureShotsDir(); });
after(async () => { await env?.close(); });

/** Elements whose right edge passes the viewport without a horizontally scrollable ancestor to hold them. */
function overflowing(page, width) {
  return page.evaluate((w) => {
    // Held: some ancestor that scrolls or clips fits the screen (an SVG clips its own content, but a picture wider
    // than the screen inside a box that scrolls is held by that box).
    const scrolls = (e) => {
      for (let a = e.parentElement; a; a = a.parentElement) {
        const o = getComputedStyle(a).overflowX;
        if ((o === 'auto' || o === 'scroll' || o === 'hidden') && a.clientWidth <= w && a.getBoundingClientRect().right <= w + 1) return true;
      }
      return false;
    };
    const bad = [];
    for (const e of document.querySelectorAll('main *')) {
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.right <= w + 1 || scrolls(e)) continue;
      const s = e.closest('section')?.id ?? '?';
      bad.push(`${s}: <${e.tagName.toLowerCase()} class="${e.getAttribute('class') ?? ''}"> right edge ${Math.round(r.right)} px`);
    }
    return bad.slice(0, 10);
  }, width);
}

for (const motion of ['reduce', 'no-preference']) {
  test(`390 px wide, motion ${motion}: no section overflows, every section has its heading and controls`, async () => {
    const { page, log, done } = await openPage(env, '', { width: 390, height: 844, reducedMotion: motion });
    await settle(page);
    // Render every section (content-visibility may skip off-screen ones). With motion reduced the sections are
    // photographed, which needs their pixels: the viewport grows to the page. The other pass reads layout alone, so
    // the page is laid out in a tall layout viewport (layOutWhole keep, until done()) and nothing off screen is painted.
    await layOutWhole(page, 390, { keep: motion !== 'reduce' });
    for (let i = 0, last = 0; motion === 'reduce' && i < 6; i++) {
      const h = await page.evaluate(() => document.documentElement.scrollHeight);
      if (h === last) break;
      last = h;
      await page.setViewportSize({ width: 390, height: h });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, 'the page does not scroll sideways');
    assert.deepEqual(await overflowing(page, 390), [], 'nothing sticks out past the right edge');
    const ids = await page.$$eval('section.lab', (s) => s.map((e) => e.id));
    assert.ok(ids.length >= 10, `all sections mounted (${ids.join(', ')})`);
    for (const id of ids) {
      assert.ok(await page.$(`section#${id} h2`), `${id} has a heading`);
      // Buttons, selects and text inputs stay usable: at least 24 px tall (WCAG 2.2 target size minimum;
      // sliders are left out: their thumb is the target and arrow keys move them).
      const small = await page.$$eval(`section#${id} button, section#${id} select, section#${id} input:not([type=checkbox]):not([type=radio]):not([type=range])`, (els) =>
        els.filter((e) => { const r = e.getBoundingClientRect(); return r.height > 0 && (r.height < 24 || r.width < 24); }).map((e) => e.outerHTML.slice(0, 80)));
      assert.deepEqual(small, [], `${id}: controls at least 24 × 24 px`);
      if (motion === 'reduce') {
        const box = await page.$eval(`section#${id}`, (s) => { const r = s.getBoundingClientRect(); return { x: 0, y: r.top + window.scrollY, width: 390, height: Math.min(r.height, 6000) }; });
        await shot(page, `${shotsDir}/${id}-390.png`, { clip: box });
      }
    }
    assert.deepEqual(log.errors, []);
    await done();
  });
}

/** Types a new logit and samples the first probability bar's width over the next 120 ms. */
async function barWidthsAfterEdit(page) {
  return page.evaluate(async () => {
    // The first bar of the probabilities chart (its svg's aria-label starts with the chart's name).
    const bar = () => Number(document.querySelector('#softmax svg.bars-svg[aria-label^="Probabilities"] rect.bar-rect')?.getAttribute('width'));
    const input = document.querySelector('input[data-control="sm-logit-0"]');
    const before = bar();
    input.value = '9';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    const seen = [];
    const t0 = performance.now();
    while (performance.now() - t0 < 400) {
      await new Promise((r) => requestAnimationFrame(r));
      seen.push(bar());
    }
    return { before, seen };
  });
}

test('reduced motion: no CSS transition or animation runs, and charts jump straight to their new values', async () => {
  const { page, done } = await openPage(env, '', { reducedMotion: 'reduce' });
  const moving = await page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => {
    const s = getComputedStyle(e);
    const dur = (v) => v.split(',').some((d) => parseFloat(d) > 0);
    return dur(s.transitionDuration) || (s.animationName !== 'none' && dur(s.animationDuration));
  }).map((e) => e.tagName + '.' + e.className).slice(0, 5));
  assert.deepEqual(moving, [], 'no element has a transition or animation');
  assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).scrollBehavior), 'auto');
  const { before, seen } = await barWidthsAfterEdit(page);
  const final = seen.at(-1);
  assert.notEqual(final, before, 'the edit changed the bar');
  assert.equal(seen[0], final, `the first frame already shows the final width (saw ${seen.slice(0, 4).join(', ')}…)`);
  await done();
});

test('without the preference the same edit animates (so the switch above is what stops it)', async () => {
  const { page, done } = await openPage(env, '', { reducedMotion: 'no-preference' });
  const { before, seen } = await barWidthsAfterEdit(page);
  const final = seen.at(-1);
  const between = seen.filter((w) => w !== final && w !== before);
  assert.ok(between.length > 0, `intermediate widths while animating (saw ${seen.slice(0, 6).join(', ')}…)`);
  await done();
});
