// The attention views on a real model's head: the model that ships with the page (web/models/kjv-fortunes-gpt),
// opened in Node with the package on the same folder. The page's weights for a head (recomputed from the head's
// q and k) equal the package's forward; the step-through's q·k and scaled score are the engine's q and k; the causal
// figure's zeros are exact; the multi-head lab shows every head of the layer; switching back to the page's own
// weights gives back the view it had. axe on the changed sections; screenshots at 1280 and 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setup, openPage, settle, readMatrix, repo, shotsDir, shot, ensureShotsDir, openDisclosures, renderWhole } from './helpers.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const folder = `${repo}web/models/kjv-fortunes-gpt`;
const TEXT = 'And God said, Let there be light: and there was light.';

let env, lab, model;
before(async () => {
  env = await setup();
  const { init } = await import(`${repo}dist/index.js`);
  lab = await init({ gpt: true, simd: true, wasmBinary: readFileSync(`${repo}dist/attnlab-gpt-simd.wasm`) });
  const files = Object.fromEntries(readdirSync(folder).filter((f) => /\.(json|safetensors)$/.test(f)).map((f) => [f, readFileSync(`${folder}/${f}`)]));
  model = await lab.loadModel(files, { threads: 1 });
});
after(async () => { model?.dispose(); await env?.close(); });

const u = 2 ** -24;
const showToken = (t) => t.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';

/** The package's forward on `text`, and head h of layer l's rows of q, k (its K/V head's), v. */
function reference(text, l) {
  const ids = model.tokenizer.encode(text);
  const f = model.forward(ids, { attention: true, qkv: true });
  const { heads: H, kvHeads: G, headDim: d } = model.config;
  const row = (m, width, h, i) => Array.from(m.subarray((i * width + h) * d, (i * width + h + 1) * d));
  const head = (h) => {
    const g = Math.floor(h / (H / G));
    const n = ids.length;
    return {
      q: Array.from({ length: n }, (_, i) => row(f.qkv[l].q, H, h, i)),
      k: Array.from({ length: n }, (_, i) => row(f.qkv[l].k, G, g, i)),
      weights: f.attention[l][h], scale: f.qkv[l].scale,
    };
  };
  return { ids, tokens: model.tokenizer.tokens(ids).map(showToken), n: ids.length, d, head };
}

/**
 * The bound between two float32 computations of softmax(q·kᵀ·scale + mask) from the same q and k (the page's
 * lab.attention and the model's own attention, which may sum in another order and normalise in tiles). Each score
 * is within γ_d·Σₜ|qₜkₜ|·scale of exact (γ_d = d·u/(1 − d·u)), plus u·|s| for the multiply by the scale: between the
 * two, twice that; call δᵢ the largest over row i. A weight aᵢⱼ = e^(sᵢⱼ − m)/Σₗ e^(sᵢₗ − m) then moves by a
 * relative e^(2δᵢ) − 1 (its score and the log of the row sum each by δᵢ); each computation's own rounding of the
 * softmax adds at most (n + 8)·u relative (n − 1 additions in the row sum, the subtraction, the division, and
 * exp within 4 ulp), twice between the two. So |Δaᵢⱼ| ≤ max(aᵢⱼ) · (e^(2δᵢ) − 1 + 2(n + 8)·u).
 */
function weightBound(ref, h, i, j, a) {
  const { q, k, scale } = ref.head(h);
  const d = ref.d;
  const gamma = (d * u) / (1 - d * u);
  let delta = 0;
  for (let c = 0; c <= i; c++) {
    let abs = 0, dot = 0;
    for (let t = 0; t < d; t++) { abs += Math.abs(q[i][t] * k[c][t]); dot += q[i][t] * k[c][t]; }
    delta = Math.max(delta, 2 * (gamma * abs * scale + u * Math.abs(dot * scale)));
  }
  return a * (Math.expm1(2 * delta) + 2 * (ref.n + 8) * u);
}

function compareWeights(W, ref, h, what) {
  const { weights } = ref.head(h);
  const n = ref.n;
  let worst = 0, worstRatio = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const a = W[i][j], b = weights[i * n + j];
      if (j > i) { assert.equal(a, 0, `${what}: (${i}, ${j}) is masked: exactly 0`); assert.equal(b, 0); continue; }
      const bound = weightBound(ref, h, i, j, Math.max(a, b));
      worst = Math.max(worst, Math.abs(a - b));
      worstRatio = Math.max(worstRatio, Math.abs(a - b) / bound);
      assert.ok(Math.abs(a - b) <= bound, `${what}: weight (${i}, ${j}) page ${a} vs model ${b}, bound ${bound}`);
    }
  }
  console.log(`${what}: largest |page − model| ${worst.toExponential(2)}, ${(worstRatio * 100).toFixed(1)} % of its bound at most`);
}

const tokensOf = (page, sel) => page.$$eval(sel, (bs) => bs.map((b) => b.lastElementChild.textContent));

test('attention lab on a real head: its weights are the package forward’s, its step-through the engine’s q·k', async () => {
  const L = 1, H = 2, qi = 9;
  const { page, log, done } = await openPage(env, `?wp=real&c=1&rl=${L}&rh=${H}&qi=${qi}&t=${encodeURIComponent(TEXT)}#attention`);
  await page.waitForFunction(() => /^Layer 2, head 3 of the real model/.test(document.querySelector('[data-figure="real-note"]')?.textContent ?? ''), null, { timeout: 60000 });
  await settle(page);
  const ref = reference(TEXT, L);
  assert.deepEqual(await tokensOf(page, '#attention .tokens [data-token]'), ref.tokens, 'the tokens as the tokenizer cut them');
  const W = (await readMatrix(page, 'weights')).values;
  assert.equal(W.length, ref.n);
  compareWeights(W, ref, H, 'attention lab, layer 2 head 3');

  // The step-through's row for query qi: q·kⱼ and the scaled score for every key, against float64 from the engine's q, k.
  const cells = await page.$$eval('[data-table="walkthrough"] tbody tr:not(.sum-row)', (rows) => rows.map((r) => ({
    raw: Number(r.querySelector('[data-stage-col="scores"]').dataset.value),
    scaled: Number(r.querySelector('[data-stage-col="scale"]').dataset.value),
  })));
  const { q, k, scale } = ref.head(H);
  const gamma = (ref.d * u) / (1 - ref.d * u);
  assert.equal(cells.length, ref.n);
  cells.forEach(({ raw, scaled }, j) => {
    let dot = 0, abs = 0;
    for (let t = 0; t < ref.d; t++) { dot += q[qi][t] * k[j][t]; abs += Math.abs(q[qi][t] * k[j][t]); }
    // The page's q·k is one float32 dot product of d terms: within γ_d·Σ|qₜkₜ| of the float64 sum.
    assert.ok(Math.abs(raw - dot) <= gamma * abs, `q·k for key ${j}: page ${raw}, float64 ${dot}`);
    if (j > qi) { assert.equal(scaled, Number.NEGATIVE_INFINITY, `key ${j} is masked`); return; }
    assert.ok(Math.abs(scaled - dot * scale) <= (gamma * abs + u * Math.abs(dot)) * scale, `scaled score for key ${j}: page ${scaled}, float64 ${dot * scale}`);
  });
  // The step-through's terms are the engine's products q_t·k_t and add up to its q·k.
  const note = await page.$eval('[data-figure="real-note"]', (p) => p.textContent);
  const row = W[qi].map((w, j) => ({ w, j })).sort((a, b) => b.w - a.w);
  const top = row.slice(0, 2).map((x) => `“${ref.tokens[x.j]}” (${x.j + 1}) ${x.w.toFixed(2).replace(/\.?0+$/, '')}`).join(', then ');
  assert.ok(note.includes(`its largest weights: ${top}.`), `${note} quotes ${top}`);
  assert.deepEqual(log.errors, []);
  await done();
});

test('cell trace and causal figure on a real head: exact zeros, the model’s weights, q·k term by term', async () => {
  const L = 3, H = 0;
  const { page, log, done } = await openPage(env, `?wp=real&c=1&rl=${L}&rh=${H}&ci=7&cj=2&t=${encodeURIComponent(TEXT)}#causal`);
  await page.waitForFunction(() => /^On the real model .*layer 4, head 1/.test(document.querySelector('[data-figure="causal-source"]')?.textContent ?? ''), null, { timeout: 60000 });
  await settle(page);
  const ref = reference(TEXT, L);
  const W = (await readMatrix(page, 'causal-weights')).values;
  compareWeights(W, ref, H, 'causal figure, layer 4 head 1');
  const terms = await page.$eval('[data-table="cell-trace"] [data-step="terms"]', (td) => td.dataset.value.split(',').map(Number));
  const sum = await page.$eval('[data-table="cell-trace"] [data-step="raw"]', (td) => Number(td.dataset.value));
  const { q, k } = ref.head(H);
  assert.equal(terms.length, ref.d);
  // Each term is one float32 product of the engine's q and k (exact to half an ulp); they add up to q·k within γ_d.
  terms.forEach((t, c) => assert.equal(t, Math.fround(q[7][c] * k[2][c]), `term ${c}`));
  const abs = terms.reduce((s, t) => s + Math.abs(t), 0);
  assert.ok(Math.abs(terms.reduce((s, t) => s + t, 0) - sum) <= (ref.d * u) / (1 - ref.d * u) * abs);
  assert.match(await page.$eval('[data-table="cell-trace"] [data-step="terms"]', (td) => td.textContent), /\(t = \d+\) \+ .* the other 28 terms, -?[\d.]+(e-?\d+)? in all$/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('switching the causal figure to the real model and back restores the page’s own view', async () => {
  const text = 'I ate a banana and an apple';
  const { page, log, done } = await openPage(env, `?t=${encodeURIComponent(text)}&wp=asym&sc=0#causal`);
  await settle(page);
  const read = async () => ({
    lab: (await readMatrix(page, 'weights')).values, causal: (await readMatrix(page, 'causal-weights')).values,
    url: await page.evaluate(() => [...new URLSearchParams(location.search)].sort().join('&')),
  });
  const beforeView = await read();
  await page.check('input[data-control="causal-real"]');
  await page.waitForFunction(() => /^On the real model \(/.test(document.querySelector('[data-figure="causal-source"]')?.textContent ?? ''), null, { timeout: 60000 });
  await settle(page);
  const realCausal = (await readMatrix(page, 'causal-weights')).values;
  assert.notDeepEqual(realCausal, beforeView.causal, 'the real model’s weights are not the asymmetric pair’s');
  assert.equal(await page.$eval('[data-control="preset-real"]', (b) => b.getAttribute('aria-pressed')), 'true', 'the attention lab follows');
  await page.uncheck('input[data-control="causal-real"]');
  await page.waitForFunction(() => document.querySelector('[data-figure="causal-source"]')?.textContent === '');
  await settle(page);
  assert.deepEqual(await read(), beforeView);
  assert.deepEqual(log.errors, []);
  await done();
});

test('multi-head on a real layer: every head, each the package forward’s', async () => {
  const L = 2;
  const { page, log, done } = await openPage(env, `?mr=1&rl=${L}&t=${encodeURIComponent(TEXT)}#multihead`);
  await page.waitForFunction(() => /^Layer 3 of the real model/.test(document.querySelector('[data-figure="mh-weights-note"]')?.textContent ?? ''), null, { timeout: 60000 });
  await settle(page);
  const ref = reference(TEXT, L);
  for (let h = 0; h < model.config.heads; h++) compareWeights((await readMatrix(page, `mh-head${h + 1}-weights`)).values, ref, h, `multi-head, layer 3 head ${h + 1}`);
  assert.equal(await page.$$eval('#multihead .head-card', (c) => c.length), model.config.heads);
  assert.deepEqual(log.errors, []);
  await done();
});

test('switching the attention lab to the real model starts its step-through on the last token; switching back restores the word', async () => {
  // Word 3 ("said,") of the page's own weights: on the real model the index counts tokens, and token 3 would be "␣said".
  const { page, log, done } = await openPage(env, `?qi=2&t=${encodeURIComponent(TEXT)}#attention`);
  await settle(page);
  const state = () => page.evaluate(() => ({
    qi: new URLSearchParams(location.search).get('qi'),
    select: document.querySelector('#attention select[data-control="query"]').value,
    title: document.querySelector('#attention .stepper-title').textContent,
  }));
  assert.deepEqual((await state()).qi, '2');
  await page.click('#attention [data-control="preset-real"]');
  await page.waitForFunction(() => /^Layer 1, head 1 of the real model/.test(document.querySelector('[data-figure="real-note"]')?.textContent ?? ''), null, { timeout: 60000 });
  await settle(page);
  const ref = reference(TEXT, 0);
  const last = ref.n - 1;
  let s = await state();
  assert.equal(s.qi, String(last), 'the URL names the last token');
  assert.equal(s.select, String(last), 'the menu shows it');
  assert.ok(s.title.endsWith(`“${ref.tokens[last]}” (token ${ref.n})`), s.title);
  assert.ok((await page.textContent('[data-figure="real-note"]')).includes(`From “${ref.tokens[last]}” (${ref.n}) its largest weights`));
  // Back on the page's own weights: the word it followed before.
  await page.click('#attention [data-control="preset-id"]');
  await settle(page);
  s = await state();
  assert.equal(s.qi, '2');
  assert.equal(s.select, '2');
  assert.ok(s.title.endsWith('(token 3)'), s.title);
  assert.deepEqual(log.errors, []);
  await done();
});

test('heatmaps on a phone: no number drawn below 10 px nor label below 9 px (the picture scrolls in its box instead); a tap on a cell reads its labels and value', async () => {
  const { page, log, done } = await openPage(env, `?wp=real&c=1&rl=1&rh=1&mr=1&t=${encodeURIComponent(TEXT)}#attention`, { width: 390 });
  await page.waitForFunction(() => /^Layer 2 of the real model/.test(document.querySelector('[data-figure="mh-weights-note"]')?.textContent ?? '')
    && /^Layer 2, head 2/.test(document.querySelector('[data-figure="real-note"]')?.textContent ?? ''), null, { timeout: 60000 });
  await settle(page);
  const maps = ['weights', 'head1', 'head2', 'head3', 'head4'];
  for (const name of maps) {
    const sel = `svg[data-heatmap="${name}"]`;
    await page.$eval(sel, (e) => e.scrollIntoView());
    await settle(page);
    // The on-screen size of every number drawn in a cell: its font size times the SVG's scale on the page.
    const sizes = await page.$$eval(`${sel} .cell text`, (ts) => ts.filter((t) => t.textContent && getComputedStyle(t).display !== 'none')
      .map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a));
    assert.ok(sizes.every((px) => px >= 10), `${name}: numbers drawn at ${Math.min(...sizes).toFixed(1)} px`);
    console.log(`${name} at 390 px: ${sizes.length} numbers drawn`);
    // The labels too: the picture shrinks no further than they stay legible, and its own box scrolls past that.
    const labels = await page.$$eval(`${sel} .row-labels text, ${sel} .col-labels text`, (ts) => ts.filter((t) => t.textContent)
      .map((t) => { const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); }));  // (column labels are rotated)
    assert.ok(labels.length > 0 && labels.every((px) => px >= 9 - 1e-6), `${name}: labels drawn at ${Math.min(...labels).toFixed(1)} px`);
  }
  assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth <= window.innerWidth), 'the page itself does not scroll sideways');
  // The attention lab's weights: tap a cell (a click, as a tap gives) and read it under the picture.
  const W = (await readMatrix(page, 'weights')).values;
  const ref = reference(TEXT, 1);
  const [i, j] = [5, 2];
  await page.click(`svg[data-heatmap="weights"] g.cell:nth-child(${i * ref.n + j + 1})`);
  const readout = page.locator('#attention [data-step="6"] [data-role="heatmap-readout"]');
  assert.equal(await readout.isVisible(), true, 'the readout is shown');
  const fmt4 = (v) => v.toFixed(4).replace(/\.?0+$/, '');
  assert.equal(await readout.textContent(), `${i + 1} ${ref.tokens[i]} → ${j + 1} ${ref.tokens[j]}: ${fmt4(W[i][j])}`);
  assert.deepEqual(log.errors, []);
  await page.mouse.move(0, 0);  // the next page in this tab (the 390 px screenshots): nothing under the pointer
  await done();
});

test('axe and screenshots of the real-model views at 1280 and 390 px', async () => {
  ensureShotsDir();
  for (const width of [1280, 390]) {
    const { page, log, done } = await openPage(env, `?wp=real&c=1&rl=1&rh=1&qi=6&mr=1&t=${encodeURIComponent(TEXT)}#attention`, { width });
    await page.waitForFunction(() => /^Layer 2 of the real model/.test(document.querySelector('[data-figure="mh-weights-note"]')?.textContent ?? '')
      && /^Layer 2, head 2/.test(document.querySelector('[data-figure="real-note"]')?.textContent ?? ''), null, { timeout: 60000 });
    await settle(page);
    // Each part on its own, scrolled into view first (an element screenshot does), so it is laid out and painted.
    const parts = { controls: '#attention .controls', qkv: '#attention [data-step="3"]', weights: '#attention [data-step="6"]', causal: '#causal', multihead: '#multihead .heads-grid' };
    for (const [name, sel] of Object.entries(parts)) {
      await page.$eval(sel, (e) => e.scrollIntoView());
      await settle(page);
      await shot(await page.$(sel), `${shotsDir}/real-${name}-${width}.png`);
    }
    await openDisclosures(page);
    await renderWhole(page, width);  // as a reader scrolling down would see it
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const r = await window.axe.run({ include: [['#attention'], ['#causal'], ['#multihead']] }, { resultTypes: ['violations'] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
    });
    for (const v of violations) console.log(`axe ${width}px: ${v.impact} ${v.id} ${v.nodes.slice(0, 3).join('; ')}`);
    assert.deepEqual(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], `${width} px: no serious or critical violation`);
    assert.deepEqual(log.errors, []);
    await done();
  }
});

test('positions lab: the real model’s learned position vectors, their similarities as the page says', async () => {
  const { page, log, done } = await openPage(env, '#position');
  await page.click('[data-control="pos-real"]');
  await page.waitForFunction(() => /^The real model that ships/.test(document.querySelector('[data-figure="learned-real-claim"]')?.textContent ?? ''), null, { timeout: 60000 });
  assert.equal(await page.isVisible('[data-control="pos-real"]'), false, 'the button goes once its figure is shown');
  // wpe read here from the same file: float16 bits to numbers, cosines in float64.
  const bytes = readFileSync(`${folder}/model.safetensors`);
  const n = Number(bytes.readBigUInt64LE(0));
  const t = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'))['transformer.wpe.weight'];
  assert.equal(t.dtype, 'F16');
  const [P, d] = t.shape, T = Math.min(32, P);
  const half = (i) => {
    const h = bytes.readUInt16LE(8 + n + t.data_offsets[0] + 2 * i);
    const e = (h >> 10) & 31, f = h & 1023, s = h >> 15 ? -1 : 1;
    return s * (e ? 2 ** (e - 15) * (1 + f / 1024) : 2 ** -14 * (f / 1024));
  };
  const vecs = Array.from({ length: T }, (_, p) => Array.from({ length: d }, (_, c) => half(p * d + c)));
  const dot = (a, b) => a.reduce((s, x, c) => s + x * b[c], 0);
  const cos = (i, j) => dot(vecs[i], vecs[j]) / Math.sqrt(dot(vecs[i], vecs[i]) * dot(vecs[j], vecs[j]));
  let near = 0, nn = 0, far = 0, nf = 0;
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    if (Math.abs(i - j) === 1) { near += cos(i, j); nn++; }
    if (Math.abs(i - j) >= 8) { far += cos(i, j); nf++; }
  }
  const shown = await page.$eval('#position', (s) => ({ near: Number(s.dataset.realPosNear), far: Number(s.dataset.realPosFar) }));
  // The page's cosines: float32 dot products of d = 128 terms (γ_d ≈ 7.6e-6 relative to Σ|products|, and the
  // vectors' entries are of one size), then a float32 division; its means are shown to 4 decimals: 5e-5, plus 1e-4.
  assert.ok(Math.abs(shown.near - near / nn) <= 1.5e-4, `near: page ${shown.near}, float64 ${near / nn}`);
  assert.ok(Math.abs(shown.far - far / nf) <= 1.5e-4, `far: page ${shown.far}, float64 ${far / nf}`);
  // The grid is a figure like the page's others: its title and its colour scale (cosines: −1 to 1).
  assert.equal(await page.textContent('[data-figure="pos-cos-real"] figcaption'), `The real model’s first ${T} position vectors: the cosine similarity of every pair (rows and columns: positions)`);
  assert.equal(await page.getAttribute('[data-figure="pos-cos-real"] .legend svg', 'aria-label'), 'Colour scale from -1.00 to 1.00');
  assert.equal(await page.textContent('[data-figure="pos-cos-real"] .legend-label'), 'cosine similarity');
  const claim = await page.$eval('[data-figure="learned-real-claim"]', (p) => p.textContent);
  assert.ok(claim.includes(`has ${P} learned position vectors of ${d} numbers; its first ${T} are drawn`), claim);
  assert.deepEqual(log.errors, []);
  await done();
});
