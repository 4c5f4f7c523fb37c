// Words a newcomer may not know are explained where they appear: logit, log-softmax, nats, float32, wasm/WebAssembly,
// Web Worker, layer-normed, LayerNorm, RMSNorm, <unk>, held-out, d_model, KiB, optimizer state. Each use in the page's prose
// is a term that is a tab stop, whose description (aria-describedby) explains it, and whose tooltip shows on hover,
// keyboard focus and touch. axe on the sections that carry them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setup, openPage, settle } from './helpers.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TERMS = ['logit', 'log-softmax', 'nats', 'float32', 'wasm', 'WebAssembly', 'Web Worker', 'layer-normed', '<unk>', 'held-out', 'd_model', 'KiB', 'optimizer state'];
// The same words as they occur in text ("Web Workers" too; "wasm" not as part of the backend name "wasm-simd").
const IN_TEXT = /\blog-softmax\b|\blogits?\b|<unk>|\bWeb Workers?\b|\blayer-normed\b|\bLayerNorm\b|\bRMSNorm\b|\boptimizer state\b|\bheld-out\b|\bd_model\b|\bWebAssembly\b|\bfloat32\b|\bwasm\b(?!-)|\bnats\b|\bKiB\b/;

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/** Opens the page with the trained preset (its help says layer-normed and <unk>) and the learn lab's model built. */
async function open(opts) {
  const r = await openPage(env, '?wp=trained&c=1#learn', opts);
  await r.page.waitForFunction(() => /KiB/.test(document.querySelector('#learn .learn-status')?.textContent ?? ''), null, { timeout: 120000, polling: 100 });
  await r.page.waitForFunction(() => /held-out/.test(document.querySelector('[data-figure="learn-findings"]')?.textContent ?? ''), null, { timeout: 120000, polling: 100 });
  await settle(r.page);
  return r;
}

/** Paragraphs and list items of the page's prose (not tables, charts, formulas, code or controls) with a term unexplained. */
function bareTerms(page) {
  return page.evaluate((src) => {
    const re = new RegExp(src);
    const out = [];
    for (const p of document.querySelectorAll('header p, main p, main li, main dd')) {
      if (p.closest('table, svg, button, label, a, summary, code, pre, .katex, [hidden]')) continue;
      for (const n of p.childNodes) if (n.nodeType === 3 && re.test(n.data)) out.push(`${p.closest('section')?.id ?? 'header'}: “${n.data.slice(0, 90)}”`);
    }
    return out;
  }, IN_TEXT.source);
}

/** Checks that each of `terms` is used and explained on the page: a tab stop with a description that names it. */
async function checkExplained(page, terms) {
  const found = await page.$$eval('dfn.term', (ds) => ds.map((d) => ({ term: d.dataset.term, tab: d.tabIndex, desc: document.getElementById(d.getAttribute('aria-describedby') ?? '')?.textContent ?? '' })));
  console.log(`${found.length} explained uses: ${terms.map((t) => `${t} ×${found.filter((f) => f.term === t).length}`).join(', ')}`);
  for (const t of terms) {
    const uses = found.filter((f) => f.term === t);
    if (t === 'wasm' && !uses.length) continue; // the page may say WebAssembly instead
    assert.ok(uses.length > 0, `“${t}” appears and is explained`);
    for (const u of uses) {
      assert.equal(u.tab, 0, `“${t}” is a tab stop`);
      assert.ok(u.desc.startsWith(`${t}`) && u.desc.length > t.length + 20, `“${t}” has a description: ${u.desc}`);
    }
  }
}

test('every term is explained in the prose where it appears, with a description and a tooltip by keyboard', async () => {
  const { page, context, log } = await open({ width: 1280, height: 900 });
  assert.deepEqual(await bareTerms(page), [], 'terms left unexplained in the prose');
  await checkExplained(page, TERMS);
  // Keyboard: focus shows the tooltip with the description's text, Escape hides it.
  const first = await page.$('dfn.term[data-term="KiB"]');
  await first.focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const tip = await page.$eval('.term-tip', (t) => ({ shown: !t.hidden && t.getBoundingClientRect().height > 0, text: t.textContent }));
  assert.ok(tip.shown && tip.text.startsWith('KiB'), `focus shows the tooltip (${JSON.stringify(tip)})`);
  await page.keyboard.press('Escape');
  assert.equal(await page.$eval('.term-tip', (t) => t.hidden), true, 'Escape hides it');
  // axe on the sections with terms, each met as a reader meets it: scrolled into view (a section's wide tables
  // become focusable regions when seen; they stay so). Then one run over them all: axe's fixed cost (the whole
  // document's tree) once, not once per section; every violation is named by its section.
  const SECTIONS = ['header', '#softmax', '#attention', '#position', '#learn', '#cost'];
  await page.evaluate(async (sels) => {
    for (const s of sels) {
      for (const box of document.querySelectorAll(`${s} .table-scroll, ${s} .katex-display`)) {
        box.scrollIntoView({ block: 'center' });
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      }
    }
  }, SECTIONS);
  await page.evaluate(AXE);
  const v = await page.evaluate(async (sels) => (await window.axe.run({ include: sels.map((s) => [s]) }, { resultTypes: ['violations'] })).violations
    .map((x) => ({ id: x.id, impact: x.impact, nodes: x.nodes.map((n) => `${sels.find((s) => document.querySelector(n.target[0])?.closest(s)) ?? '?'} ${n.target.join(' ')}`) })), SECTIONS);
  for (const x of v) console.log(`axe: ${x.impact} ${x.id} ${x.nodes.slice(0, 3).join('; ')}`);
  assert.deepEqual(v.filter((x) => x.impact === 'serious' || x.impact === 'critical'), [], SECTIONS.join(', '));
  assert.deepEqual(log.errors, []);
  await context.close();
});

test('a real model’s X is its LayerNorm’s output: the word is explained there too', async () => {
  // The attention lab with the page's GPT-2 says what X is for the chosen layer: the LayerNorm of the residual stream.
  const { page, log, done } = await openPage(env, '?wp=real&c=1#attention');
  await page.waitForFunction(() => /LayerNorm/.test(document.querySelector('#attention')?.textContent ?? ''), null, { timeout: 120000, polling: 100 });
  await settle(page);
  assert.deepEqual(await bareTerms(page), [], 'terms left unexplained in the prose');
  await checkExplained(page, ['LayerNorm']);
  assert.ok(await page.$('#attention dfn.term[data-term="LayerNorm"]'), 'in the attention lab');
  assert.deepEqual(log.errors, []);
  await done();
});

test('390 px, touch: tapping a term shows its explanation on screen; tapping elsewhere hides it', async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 1, reducedMotion: 'reduce' });
  const page = await context.newPage();
  await page.goto(`${env.url}?wp=trained&c=1#attention`);
  await page.waitForSelector('body[data-ready="true"]');
  await settle(page);
  const term = await page.$('#attention dfn.term[data-term="layer-normed"]');
  await term.scrollIntoViewIfNeeded();
  await term.tap();
  const tip = await page.$eval('.term-tip', (t) => { const r = t.getBoundingClientRect(); return { shown: !t.hidden, text: t.textContent, left: r.left, right: r.right }; });
  assert.ok(tip.shown && tip.text.startsWith('layer-normed'), JSON.stringify(tip));
  assert.ok(tip.left >= 0 && tip.right <= 390, `the tooltip fits the screen (${tip.left}–${tip.right})`);
  await page.tap('#attention h2');
  assert.equal(await page.$eval('.term-tip', (t) => t.hidden), true);
  await context.close();
});
