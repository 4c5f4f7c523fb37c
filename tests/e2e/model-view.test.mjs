// The model view (#model): every layer × head of the shipped real model on the learner's text. Its numbers are
// checked against the package's own model in Node, loaded from the same folder the page imports
// (web/models/kjv-fortunes-gpt/): the tokens against the tokenizer, every head's weights against Model.forward,
// the next-token table against lab.softmax at the softmax lab's temperature. Both run the same wasm module on one
// thread in the same order of operations, so the numbers must be equal bit for bit (no tolerance is needed: a
// difference means the page computed something else). Then: a thumbnail selects its head (click and keyboard),
// generation appends tokens and stops, axe finds nothing serious, screenshots at 1280 and 390 px, and the offline
// single-file copy loads the model too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setup, openPage, readMatrix, ensureShotsDir, shotsDir, shot, repo, distDir, drainTasks } from './helpers.mjs';
import { init } from '../../dist/index.js';

const FOLDER = `${repo}web/models/kjv-fortunes-gpt`;
const FILES = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let env, lab, model, headScores;
before(async () => {
  env = await setup();
  lab = await init();
  model = await lab.loadModel(Object.fromEntries(FILES.map((f) => [f, readFileSync(`${FOLDER}/${f}`)])));
  headScores = JSON.parse(readFileSync(`${FOLDER}/head-scores.json`, 'utf8'));
});
after(async () => {
  model?.dispose();
  await env?.close();
});

const showTokenName = (t) => t.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';

/** Opens the page at the model view and waits until the model has run on the text. */
async function openModelView(query = '', opts = {}) {
  const o = await openPage(env, `${query}#model`, opts);
  await o.page.waitForSelector('#model[data-tokens]:not([data-tokens="0"])', { timeout: 60000 });
  return o;
}

/** Moves the softmax section's temperature slider (its value is log10 T), as a learner's drag does. */
const setTemperature = (page, log10) => page.evaluate((v) => {
  const s = document.querySelector('[data-control="sm-temp"]');
  s.value = v;
  s.dispatchEvent(new Event('input', { bubbles: true }));
}, log10);

/** Types `text` into the view's field and waits for the tokens of exactly that text. */
async function typeText(page, text) {
  await page.fill('[data-control="model-text"]', text);
  const n = model.tokenizer.encode(text).length;
  await page.waitForFunction((k) => document.querySelectorAll('[data-role="model-tokens"] li').length === k, Math.min(n, 64));
}

test('tokens are the tokenizer’s, spaces shown; every head’s weights are the package’s forward', async () => {
  const { page, log, done } = await openModelView();
  const text = 'Houston we have a problem';
  assert.equal(await page.inputValue('[data-control="model-text"]'), text, 'the default text');
  const ids = model.tokenizer.encode(text);
  const tokens = model.tokenizer.tokens(ids);
  const shown = await page.$$eval('[data-role="model-tokens"] li', (ls) => ls.map((l) => ({ id: Number(l.dataset.id), text: l.dataset.text, shown: l.textContent })));
  assert.deepEqual(shown.map((s) => s.id), Array.from(ids), 'the tokenizer’s ids');
  assert.deepEqual(shown.map((s) => s.text), tokens, 'the tokenizer’s tokens');
  assert.ok(tokens.includes(' we') && tokens.includes(' problem'), 'GPT-2’s Ġ: a word after the first carries its space');
  assert.deepEqual(shown.map((s) => s.shown), tokens.map((t) => t.replace(/ /g, '␣')), 'and the space is visible');

  const { attention } = model.forward(ids, { attention: true });
  const n = ids.length;
  const { layers, heads } = model.config;
  assert.equal(await page.$$eval('#model .learn-head', (bs) => bs.length), layers * heads, 'one thumbnail per layer × head');
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      await page.click(`#model .learn-head[data-layer="${l + 1}"][data-head="${h + 1}"]`);
      await page.waitForFunction((s) => document.getElementById('model').dataset.selected === s, `${l},${h}`);
      const m = await readMatrix(page, 'model-head');
      assert.equal(m.rows, n);
      const want = Array.from({ length: n }, (_, i) => Array.from(attention[l][h].subarray(i * n, (i + 1) * n)));
      assert.deepEqual(m.values, want, `layer ${l + 1} head ${h + 1}: the package’s weights`);
      // The thumbnail names the head only where head-scores.json does, with that pattern's score.
      const tag = await page.textContent(`#model .learn-head[data-layer="${l + 1}"][data-head="${h + 1}"] .learn-head-tag`);
      const named = headScores.names.find((x) => x.layer === l && x.head === h).patterns[0];
      const label = { previousToken: 'previous token', firstToken: 'first token', sameWord: 'same word', duplicateToken: 'duplicate token', induction: 'induction' };
      assert.equal(tag, named ? `${label[named]} ${headScores.patterns[named].scores[l][h].toFixed(2)}` : 'no name');
    }
  }
  // The caption reads its mean off the weights shown: previous-token weights of queries 3 … n.
  const w = attention[3][3];
  let prev = 0;
  for (let i = 2; i < n; i++) prev += w[i * n + i - 1];
  const cap = await page.textContent('[data-role="model-head-caption"]');
  assert.match(cap, /^Layer 4 head 4: /);
  assert.ok(cap.includes((prev / (n - 2)).toFixed(2).replace(/\.?0+$/, '')), `${cap} carries the mean previous-token weight ${prev / (n - 2)}`);
  assert.deepEqual(log.errors, []);
  await done();
});

test('a thumbnail selects its head by click and by keyboard; the selection is the page’s store', async () => {
  const { page, log, done } = await openModelView();
  await page.click('#model .learn-head[data-layer="2"][data-head="3"]');
  await page.waitForFunction(() => document.getElementById('model').dataset.selected === '1,2');
  assert.equal(await page.getAttribute('#model .learn-head[data-layer="2"][data-head="3"]', 'aria-pressed'), 'true');
  assert.equal(await page.textContent('[data-role="model-head-title"]'), 'Layer 2, head 3');
  assert.doesNotMatch(await page.textContent('[data-role="model-head-caption"]'), /Its name/, 'an unnamed head');
  // A named head's caption says where its name comes from (the walk found "same word 0.55" with a caption about positions).
  const named = headScores.names.find((x) => x.patterns.length);
  const [nl, nh] = [named.layer, named.head];
  await page.click(`#model .learn-head[data-layer="${nl + 1}"][data-head="${nh + 1}"]`);
  await page.waitForFunction((k) => document.getElementById('model').dataset.selected === k, `${nl},${nh}`);
  const score = headScores.patterns[named.patterns[0]].scores[nl][nh];
  assert.match(await page.textContent('[data-role="model-head-caption"]'), new RegExp(`Its name, “[a-z ]+”, comes from its score of ${score.toFixed(2).replace(/\.?0+$/, '').replace('.', '\\.')} measured on held-out text`));
  await page.focus('#model .learn-head[data-layer="3"][data-head="1"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('model').dataset.selected === '2,0');
  assert.equal(await page.getAttribute('#model .learn-head[data-layer="3"][data-head="1"]', 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute('#model .learn-head[data-layer="2"][data-head="3"]', 'aria-pressed'), 'false');
  assert.equal(await page.textContent('[data-role="model-head-title"]'), 'Layer 3, head 1');
  // A query row chosen from the list: its caption names its largest weight.
  await page.selectOption('[data-control="model-query"]', '2');
  await page.waitForFunction(() => document.querySelector('[data-role="model-query-caption"]').textContent.includes('(token 3)'));
  // No text: nothing stale stays on screen.
  await page.fill('[data-control="model-text"]', '');
  await page.waitForFunction(() => document.getElementById('model').dataset.tokens === '0');
  assert.equal(await page.isVisible('[data-figure="model-head"]'), false);
  assert.equal(await page.isVisible('[data-figure="model-next"]'), false);
  await typeText(page, 'Houston we have a problem');
  assert.equal(await page.isVisible('[data-figure="model-head"]'), true);
  assert.deepEqual(log.errors, []);
  await done();
});

test('the text is in the URL: a link opens the view on it, its line break kept', async () => {
  const first = await openModelView();
  const text = 'And God said,\nLet there be light';
  await typeText(first.page, text);
  await first.page.waitForFunction((t) => new URL(location.href).searchParams.get('mx') === t, text);
  const search = new URL(first.page.url()).search;
  assert.deepEqual(first.log.errors, []);
  await first.done();
  const { page, log, done } = await openModelView(search);
  assert.equal(await page.inputValue('[data-control="model-text"]'), text);
  const n = model.tokenizer.encode(text).length;
  await page.waitForFunction((k) => document.querySelectorAll('[data-role="model-tokens"] li').length === k, n);
  assert.deepEqual(log.errors, []);
  await done();
});

test('the next-token table is the engine’s softmax of the last logits at the softmax lab’s temperature', async () => {
  const T = 0.5;
  const { page, log, done } = await openModelView(`?st=${T}`);
  const text = 'In the beginning God created the';
  await typeText(page, text);
  const ids = model.tokenizer.encode(text);
  const V = model.config.vocabSize;
  // The page's logits come from its forward with the attention weights (which runs the materialized attention).
  const { logits } = model.forward(ids, { attention: true });
  const p = lab.softmax(logits.slice((ids.length - 1) * V), { cols: V, temperature: T });
  const want = Array.from({ length: V }, (_, i) => i).sort((a, b) => p[b] - p[a] || a - b).slice(0, 10);
  await page.waitForFunction((t) => document.querySelector('[data-table="model-next"]').dataset.temperature === String(t), T);
  const rows = await page.$$eval('[data-table="model-next"] tr[data-id]', (rs) => rs.map((r) => ({ id: Number(r.dataset.id), p: Number(r.dataset.p), token: r.children[1].textContent })));
  assert.deepEqual(rows.map((r) => r.id), want, 'the ten most likely ids');
  assert.deepEqual(rows.map((r) => r.p), want.map((i) => p[i]), 'their probabilities, bit for bit');
  assert.deepEqual(rows.map((r) => r.token), model.tokenizer.tokens(want).map((t) => t.replace(/ /g, '␣').replace(/\n/g, '↵') || '∅'));
  // The caption's share of the probability is the table's: said as what is left once two digits would round it to 1.
  const shareSaid = async (pv) => {
    const caption = await page.textContent('[data-role="model-next-caption"]');
    const order = Array.from(pv.keys()).sort((a, b) => pv[b] - pv[a] || a - b), top = new Set(order.slice(0, 10));
    let rest = 0;
    for (let i = 0; i < pv.length; ++i) if (!top.has(i)) rest += pv[i];
    const held = caption.match(/these 10 tokens hold ([\d.]+) of the probability/), left = caption.match(/hold all but ([\d.e-]+) of the probability/);
    if (rest >= 0.005) assert.ok(held && Math.abs(Number(held[1]) - (1 - rest)) <= 0.005 + 1e-12, caption);
    else assert.ok(left && Math.abs(Number(left[1]) - rest) <= 5e-5 + rest * 5e-3, caption);
  };
  await shareSaid(p);
  // Moving the softmax section's temperature moves this table.
  await setTemperature(page, '0');  // log10(1)
  await page.waitForFunction(() => document.querySelector('[data-table="model-next"]').dataset.temperature === '1');
  const p1 = lab.softmax(logits.slice((ids.length - 1) * V), { cols: V, temperature: 1 });
  const top = Number(await page.getAttribute('[data-table="model-next"] tr[data-id]', 'data-p'));
  assert.equal(top, Math.max(...p1), 'the top probability at T = 1');
  await shareSaid(p1);
  // Cold enough that the ten hold all but a sliver: the caption says the sliver, not "1".
  await setTemperature(page, '-1.5');
  await page.waitForFunction(() => document.querySelector('[data-table="model-next"]').dataset.temperature === '0.0316');
  const pc = lab.softmax(logits.slice((ids.length - 1) * V), { cols: V, temperature: 0.0316 });
  await shareSaid(pc);
  assert.match(await page.textContent('[data-role="model-next-caption"]'), /hold all but/);
  // The coldest temperature: only tokens above probability 0 are listed as likely (ties at 0 were listed before).
  await setTemperature(page, '-2');
  await page.waitForFunction(() => document.querySelector('[data-table="model-next"]').dataset.temperature === '0.01');
  const p0 = lab.softmax(logits.slice((ids.length - 1) * V), { cols: V, temperature: 0.01 });
  const cold = await page.$$eval('[data-table="model-next"] tr[data-id]', (rs) => rs.map((r) => Number(r.dataset.p)));
  assert.equal(cold.length, Math.min(10, p0.filter((x) => x > 0).length));
  assert.ok(cold.every((x) => x > 0), `${cold}`);
  // A text longer than the view reads keeps its end: the tokens shown are the last 64, and what comes next follows
  // the text's last token (a 75-token text was cut to its first 64 and predicted after the middle of a word).
  const long = `${'And God said, Let there be light: and there was light. '.repeat(6)}And the evening and the morning were the first day`;
  const longIds = model.tokenizer.encode(long);
  assert.ok(longIds.length > 64, `${longIds.length} tokens`);
  await page.fill('[data-control="model-text"]', long);
  await page.waitForFunction((n) => new RegExp(`^64 tokens: the last 64 of ${n},`).test(document.querySelector('[data-role="model-token-note"]')?.textContent ?? ''), longIds.length);
  const shown = await page.$$eval('[data-role="model-tokens"] li', (ls) => ls.map((l) => Number(l.dataset.id)));
  assert.deepEqual(shown, Array.from(longIds.slice(-64)), 'the last 64 tokens');
  assert.match(await page.textContent('[data-role="model-next-caption"]'), /^After “␣day”/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('Generate appends tokens one by one, each with its attention row, and Stop ends it', async () => {
  const { page, log, done } = await openModelView();
  await typeText(page, 'And God said');
  const prompt = model.tokenizer.encode('And God said').length;
  await page.click('[data-control="model-generate"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-role="model-gen-text"] .model-gen-new').length >= 2);
  await page.click('[data-control="model-stop"]');
  await page.waitForFunction(() => document.getElementById('model').dataset.generating === 'false');
  assert.equal(await page.getAttribute('#model', 'data-gen-result'), 'stopped');
  const made = await page.$$eval('[data-role="model-gen-text"] .model-gen-new', (s) => s.length);
  assert.match(await page.textContent('[data-role="model-gen-status"]'), new RegExp(`^Stopped after ${made} tokens?\\.$`));
  await drainTasks(page);
  assert.equal(await page.$$eval('[data-role="model-gen-text"] .model-gen-new', (s) => s.length), made, 'nothing arrives after Stop');
  // The heatmap has one row per generated token over every token so far.
  const rows = await page.$$eval('svg[data-heatmap="model-gen"] .row-labels text', (t) => t.length);
  assert.equal(rows, made);
  // The same seed and temperature give the same tokens as the package's stream in Node.
  const gen = await page.$$eval('[data-role="model-gen-text"] .model-gen-new', (s) => s.map((x) => Number(x.dataset.id)));
  const ids = [];
  for await (const t of model.stream(model.tokenizer.encode('And God said'), { maxTokens: made, temperature: 1, topK: 0, topP: 1, seed: 1 })) ids.push(t.id);
  assert.deepEqual(gen, ids, `the package’s tokens after a ${prompt}-token prompt`);
  // A seed that is not a whole number is said and not used: the run below is seed 1's, and says so.
  await page.fill('input[data-control="model-seed"]', '2.5');
  assert.equal(await page.textContent('[data-control="model-seed-problem"]'), 'The seed is a whole number from 0 to 999,999; Generate uses 1 until it is.');
  // Run to the end: the status says how many.
  await page.click('[data-control="model-generate"]');
  await page.waitForFunction(() => document.getElementById('model').dataset.generating === 'false' && document.getElementById('model').dataset.genResult === 'done', null, { timeout: 60000, polling: 100 });
  assert.match(await page.textContent('[data-role="model-gen-status"]'), /^Generated \d+ tokens? at T = 1, seed 1/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('a long generation keeps its heatmap labels legible: thinned to what fits, the newest row named, the rest read by pointing', async () => {
  const { page, log, done } = await openModelView();
  const text = 'In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the deep.';
  await typeText(page, text);
  await page.click('[data-control="model-generate"]');
  await page.waitForFunction(() => document.getElementById('model').dataset.genResult === 'done', null, { timeout: 120000, polling: 100 });
  const map = 'svg[data-heatmap="model-gen"]';
  const rows = await page.$$eval(`${map} .row-labels text`, (ts) => ts.map((t) => ({ text: t.textContent, selected: t.classList.contains('selected'), box: t.textContent ? (({ top, bottom }) => ({ top, bottom }))(t.getBoundingClientRect()) : null })));
  const cols = await page.$$eval(`${map} .col-labels text`, (ts) => ts.map((t) => ({ text: t.textContent, x: t.getScreenCTM().e, size: parseFloat(getComputedStyle(t).fontSize) })));
  const made = rows.length;
  assert.ok(made >= 20 && cols.length >= 60, `a long generation (${made} rows over ${cols.length} tokens)`);
  // The labels drawn never overlap: row labels' boxes stack, column labels (turned 55°) are a line apart across.
  const shownRows = rows.filter((r) => r.text);
  for (let k = 1; k < shownRows.length; k++) assert.ok(shownRows[k].box.top >= shownRows[k - 1].box.bottom - 0.5, `row labels “${shownRows[k - 1].text}” and “${shownRows[k].text}” overlap`);
  const shownCols = cols.filter((c) => c.text);
  for (let k = 1; k < shownCols.length; k++) {
    const across = (shownCols[k].x - shownCols[k - 1].x) * Math.sin((55 * Math.PI) / 180);
    assert.ok(across >= shownCols[k].size, `column labels “${shownCols[k - 1].text}” and “${shownCols[k].text}” are ${across.toFixed(1)} px apart`);
  }
  // The newest token's row keeps its label, marked, and so does its column.
  const ids = await page.$$eval('[data-role="model-gen-text"] .model-gen-new', (s) => s.map((x) => Number(x.dataset.id)));
  const all = model.tokenizer.encode(text).length + ids.length;
  const newest = `${all} ${showTokenName(model.tokenizer.tokens([ids.at(-1)])[0])}`;
  assert.equal(rows.at(-1).text, newest);
  assert.equal(rows.at(-1).selected, true, 'the newest row is marked');
  assert.equal(cols.at(-1).text, newest);
  // A row whose label was left out is named by pointing at one of its cells.
  const hidden = rows.findIndex((r) => !r.text);
  assert.ok(hidden >= 0, 'labels were thinned');
  await page.hover(`${map} g.cell:nth-child(${hidden * all + 1})`);
  assert.match(await page.textContent('[data-figure="model-next"] [data-role="heatmap-readout"]'), new RegExp(`^${all - made + hidden + 1} .* → 1 In: `));
  assert.deepEqual(log.errors, []);
  await page.mouse.move(0, 0);  // the next test's page in this tab: nothing under the pointer
  await done();
});

for (const width of [1280, 390]) {
  test(`axe finds no serious violation and the section fits at ${width} px (screenshot)`, async () => {
    const { page, done } = await openModelView('', { width });
    await page.click('[data-control="model-generate"]');
    await page.waitForFunction(() => document.getElementById('model').dataset.generating === 'false', null, { timeout: 60000, polling: 100 });
    await page.$$eval('#model details', (ds) => ds.forEach((d) => { d.open = true; }));
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const r = await window.axe.run('#model', { resultTypes: ['violations'] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
    });
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad, [], JSON.stringify(violations));
    // Nothing in the section is wider than the page: wide figures scroll inside their own boxes.
    const over = await page.evaluate(() => {
      const w = document.documentElement.clientWidth;
      return [...document.querySelectorAll('#model *')].filter((e) => {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.right <= w + 1) return false;
        for (let p = e.parentElement; p && p.id !== 'model'; p = p.parentElement) {
          const s = getComputedStyle(p);
          if (s.overflowX === 'auto' || s.overflowX === 'scroll') return false;
        }
        return true;
      }).map((e) => `${e.tagName}.${e.className}`).slice(0, 5);
    });
    assert.deepEqual(over, [], 'nothing overflows the page');
    ensureShotsDir();
    await shot(page.locator('#model'), `${shotsDir}/model-view-${width}.png`);
    await done();
  });
}

test('the offline single-file copy loads the shipped model from inside itself', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'attnlab-offline-model-'));
  try {
    copyFileSync(join(distDir, 'attnlab-explorer.html'), join(folder, 'attnlab-explorer.html'));
    const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const errors = [], requests = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${pathToFileURL(join(folder, 'attnlab-explorer.html')).href}#model`);
    await page.waitForSelector('#model[data-tokens]:not([data-tokens="0"])', { timeout: 60000 });
    const ids = model.tokenizer.encode('Houston we have a problem');
    assert.deepEqual(await page.$$eval('[data-role="model-tokens"] li', (ls) => ls.map((l) => Number(l.dataset.id))), Array.from(ids));
    const { attention } = model.forward(ids, { attention: true });
    const m = await readMatrix(page, 'model-head');
    assert.deepEqual(m.values.flat(), Array.from(attention[0][0]), 'layer 1 head 1, the package’s weights');
    assert.deepEqual(requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && !u.startsWith('file:')), [], 'nothing from the network');
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('“Try it” names the next tokens as the rest of the page shows tokens, spaces as ␣', async () => {
  const { page, log, done } = await openPage(env, '#open-model');
  await page.waitForFunction(() => document.querySelector('[data-figure="model-current"] [data-fact="name"]')?.textContent === 'kjv-fortunes-gpt', null, { timeout: 60000 });
  const text = 'In the beginning God created the';
  await page.fill('[data-control="model-try-text"]', text);
  await page.click('[data-control="model-try"]');
  await page.waitForFunction(() => document.querySelector('[data-figure="model-try-out"]').textContent.includes('predicts:'));
  const ids = model.tokenizer.encode(text);
  const V = model.config.vocabSize;
  const { logits } = model.forward(ids);
  const p = lab.softmax(logits.slice((ids.length - 1) * V), { cols: V });
  const top = Array.from({ length: V }, (_, i) => i).sort((a, b) => p[b] - p[a] || a - b).slice(0, 3);
  const shown = model.tokenizer.tokens(top).map((t) => t.replace(/ /g, '␣').replace(/\n/g, '↵') || '∅');
  assert.ok(shown.some((t) => t.startsWith('␣')), `the test needs a token with a leading space (${shown.join(' ')})`);
  assert.equal(await page.textContent('[data-figure="model-try-out"]'),
    `kjv-fortunes-gpt predicts: ${top.map((id, k) => `“${shown[k]}” ${(p[id] * 100).toFixed(1)} %`).join(', ')}`);
  assert.deepEqual(log.errors, []);
  await done();
});
