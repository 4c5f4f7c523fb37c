// axe-core (npm, injected into the page) on every section: at 1280 px in the default view and with every
// disclosure open, and at 390 px with the causal masks on and every disclosure open. No serious or critical
// violation anywhere; lesser findings are printed. The page is rendered whole first (off-screen steps skip
// rendering through content-visibility, and axe must see what a reader scrolling down would see). And at 390 px
// as the page first opens, nothing scrolled: every box that scrolls sideways is a tab stop already, and only those.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setup, openPage, openDisclosures, renderWhole, settle } from './helpers.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/** Runs axe on the whole document; returns its violations, each node tagged with the section it is in. */
async function audit(page) {
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => {
        const el = document.querySelector(n.target[0]);
        return `${el?.closest('section')?.id ?? el?.closest('header, nav, footer')?.tagName.toLowerCase() ?? '?'}: ${n.target.join(' ')}`;
      }),
    }));
  });
}

function check(violations, what) {
  for (const v of violations) console.log(`axe ${what}: ${v.impact} ${v.id} (${v.nodes.length}) ${v.help}: ${v.nodes.slice(0, 3).join('; ')}`);
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.impact} ${v.id}: ${v.nodes.join('; ')}`), [], `${what}: no serious or critical violation`);
}

test('axe at 1280 px: every section, default view and with every disclosure open', async () => {
  const { page, log, done } = await openPage(env, '', { width: 1280, height: 900 });
  await renderWhole(page, 1280);
  const sections = await page.$$eval('section.lab', (s) => s.map((e) => e.id));
  assert.ok(sections.length >= 12, `every section is on the page (${sections.join(', ')})`);
  await page.evaluate(AXE);
  check(await audit(page), '1280 px, default view');
  await openDisclosures(page);
  assert.equal(await page.$$eval('details:not([open])', (d) => d.length), 0);
  await renderWhole(page, 1280);
  check(await audit(page), '1280 px, disclosures open');
  assert.deepEqual(log.errors, []);
  await done();
});

test('axe at 390 px: causal masks on (hatched cells), every disclosure open', async () => {
  const { page, log, done } = await openPage(env, '?c=1&mc=1', { width: 390, height: 800 });
  await openDisclosures(page);
  await renderWhole(page, 390);
  await page.evaluate(AXE);
  check(await audit(page), '390 px, causal, disclosures open');
  assert.deepEqual(log.errors, []);
  await done();
});

/**
 * Every box that can scroll sideways (ui/scroll-focus.ts), each either scrolling and a tab stop or neither. Reading
 * a box's size lays out its step, so this sees boxes below the screen as they are, not as content-visibility left them.
 */
function tabStopsAgainstScrolling(page) {
  return page.evaluate(() => [...document.querySelectorAll('main :is(.table-scroll, .katex-display, .learn-big, .heatmap-scroll)')].flatMap((b) => {
    const scrolls = b.scrollWidth > b.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(b).overflowX);
    const stop = b.getAttribute('tabindex') === '0';
    return scrolls === stop ? [] : [`${b.closest('section')?.id}: <${b.className}> scrolls ${scrolls}, tab stop ${stop}`];
  }));
}

/** Waits until the page has measured every box it was given to measure (main[data-overflow-pending] gone). */
async function measured(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => !document.querySelector('main').hasAttribute('data-overflow-pending'), null, { timeout: 60000, polling: 100 });
}

test('axe at 390 px without scrolling: the boxes that scroll sideways below the screen are tab stops too, and only those', async () => {
  // Below the screen content-visibility leaves the steps unlaid-out; a reader who tabs (or lists regions) before
  // scrolling there must still reach every box that scrolls, and meet no stop on one that does not.
  const { page, log, done } = await openPage(env, '', { width: 390, height: 800 });
  await settle(page);
  await measured(page);
  await page.evaluate(AXE);
  const rule = async (what) => {
    const v = await page.evaluate(async () => (await window.axe.run(document, { runOnly: ['scrollable-region-focusable'], resultTypes: ['violations'] })).violations
      .flatMap((x) => x.nodes.map((n) => `${document.querySelector(n.target[0])?.closest('section')?.id ?? '?'}: ${n.target.join(' ')}`)));
    assert.deepEqual(v, [], `${what}: scrollable-region-focusable`);
  };
  await rule('390 px, default view');
  assert.deepEqual(await tabStopsAgainstScrolling(page), [], '390 px, default view');
  // The tables folded into <details>, opened below the screen.
  await openDisclosures(page);
  await measured(page);
  await rule('390 px, disclosures open');
  assert.deepEqual(await tabStopsAgainstScrolling(page), [], '390 px, disclosures open');
  // A wider window: the boxes below the screen that fit now are plain boxes again, with no tab stop.
  await page.setViewportSize({ width: 1280, height: 900 });
  await measured(page);
  assert.deepEqual(await tabStopsAgainstScrolling(page), [], '1280 px after 390 px');
  assert.deepEqual(log.errors, []);
  await done();
});

test('axe at 390 px after measuring: the cost curve’s and the speed lab’s threaded results, multi-head, learn lab from a link', async () => {
  // The results tables and sentences appear only after a run: a short one of each (n ≤ 256; the quick plan).
  const { page, log, done } = await openPage(env, '?lt=words&ll=3&lh=2#cost', { width: 390, height: 800 });
  await page.selectOption('select[data-control="cost-max-n"]', '256');
  await page.click('button[data-control="cost-measure"]');
  await page.waitForFunction(() => document.getElementById('cost').dataset.curveState !== 'running', null, { timeout: 120000, polling: 100 });
  await page.selectOption('select[data-control="speed-sizes"]', 'quick');
  await page.click('button[data-control="speed-run"]');
  await page.waitForFunction(() => document.querySelector('section#speed')?.dataset.state !== 'running', null, { timeout: 120000, polling: 100 });
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'done');
  assert.equal(await page.getAttribute('section#speed', 'data-state'), 'done');
  await openDisclosures(page);
  await renderWhole(page, 390);
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run({ include: [['#cost'], ['#speed'], ['#multihead'], ['#learn']] }, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  check(violations, '390 px, after measuring');
  assert.equal(violations.length, 0, `no violation at all: ${violations.map((v) => v.id).join(', ')}`);
  assert.deepEqual(log.errors, []);
  await done();
});

test('tabbing through the section list brings each link into view, clear of the arrow buttons', async () => {
  // The list scrolls sideways when it does not fit; a link reached by Tab must be scrolled out from under the
  // arrow button and the fade at either end, not left half hidden (the browser only brings it to the very edge).
  for (const width of [1280, 390]) {
    const { page, log, done } = await openPage(env, '', { width, height: 900 });
    const n = await page.$$eval('#section-nav-list a', (as) => as.length);
    await page.focus('#section-nav-list a');
    for (let i = 0; i < n; i++) {
      if (i) await page.keyboard.press('Tab');
      // Scrolling by script is instant here (reduced motion); a frame lets the list settle.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const seen = await page.evaluate(() => {
        const a = document.activeElement, box = a.getBoundingClientRect();
        const list = document.getElementById('section-nav-list').getBoundingClientRect();
        const arrows = [...document.querySelectorAll('.nav-more')].filter((b) => !b.hidden).map((b) => b.getBoundingClientRect());
        const mid = (box.left + box.right) / 2;
        return {
          text: a.textContent, inList: a.closest('#section-nav-list') !== null, mid, listLeft: list.left, listRight: list.right,
          // Whether the link could lie between two arrows (on a phone some cannot: they are centred instead).
          fits: box.width <= list.width - 2 * 36,
          overlapped: arrows.filter((b) => b.left < box.right && b.right > box.left).length,
          midCovered: arrows.filter((b) => b.left <= mid && b.right >= mid).length,
        };
      });
      assert.ok(seen.inList, `${width} px: Tab ${i} stays in the section list`);
      assert.ok(seen.mid > seen.listLeft && seen.mid < seen.listRight, `${width} px: “${seen.text}” is in view (its middle at ${seen.mid}, the list ${seen.listLeft}–${seen.listRight})`);
      assert.equal(seen.midCovered, 0, `${width} px: the middle of “${seen.text}” is not under an arrow button`);
      // On a phone too the actions leave room for every link whole between the arrows (their short words).
      assert.ok(seen.fits, `${width} px: “${seen.text}” fits between the arrow buttons`);
      assert.equal(seen.overlapped, 0, `${width} px: “${seen.text}” is clear of the arrow buttons`);
    }
    assert.deepEqual(log.errors, []);
    await done();
  }
});

test('the query token’s index number keeps 4.5:1 contrast on its yellow, for the page’s words and a real model’s tokens', async () => {
  // axe passes a one-digit index without judging it (too short to tell text from an icon), so the contrast is
  // computed here: WCAG relative luminance of the text colour against the chip's background.
  const lum = (rgb) => {
    const [r, g, b] = rgb.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((c) => c / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  for (const query of ['', `?wp=real&c=1&qi=10&t=${encodeURIComponent('And God said, Let there be light: and there was light.')}`]) {
    const { page, log, done } = await openPage(env, query);
    if (query) await page.waitForSelector('#attention button.token.real[data-token="10"][aria-pressed="true"]', { timeout: 60000 });
    const { fg, bg } = await page.$eval('#attention button.token[aria-pressed="true"]', (b) => ({
      fg: getComputedStyle(b.querySelector('.token-index')).color, bg: getComputedStyle(b).backgroundColor,
    }));
    const r = ratio(fg, bg);
    assert.ok(r >= 4.5, `${query || 'default view'}: index ${fg} on ${bg} is ${r.toFixed(2)}:1`);
    assert.deepEqual(log.errors, []);
    await done();
  }
});
