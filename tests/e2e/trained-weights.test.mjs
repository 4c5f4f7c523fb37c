// Trained weights in the attention and multi-head labs. The page's weights for the trained preset (causal mask on)
// are the model's own layer-1 attention: compared with the package's GPT forward on the same committed file. The
// captions quote what the weights on screen show (the query's largest weights; each head's pattern).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setup, openPage, settle, readMatrix, repo } from './helpers.mjs';

let env;
let gpt;
before(async () => {
  env = await setup();
  const { init } = await import(`${repo}dist/index.js`);
  const lab = await init({ gpt: true, simd: true, wasmBinary: readFileSync(`${repo}dist/attnlab-gpt-simd.wasm`) });
  gpt = lab.loadGPT(readFileSync(`${repo}web/src/model/trained/words-gpt.safetensors`));
});
after(async () => { gpt?.dispose(); await env?.close(); });

// Weights are in [0, 1]. The page's X (LayerNorm in float64, rounded once) and the engine's (float32, d = 16 terms)
// differ by ≲ 20u relative; q·k over d_k = 8 terms of products of ~1-sized numbers, ≤ 16 in size here, so scores
// differ by ≲ (20 + 8 + 8)u·16·2 ≈ 7e-5 and a weight by at most twice that. 2e-4 covers it with room, and is far
// below the 0.1-sized differences a wrong head or position would make.
const TOL = 2e-4;

test('trained preset: the attention lab shows the model’s own layer-1 weights, and its caption quotes them', async () => {
  const text = 'I got a new phone from apple';
  const { page, log, done } = await openPage(env, `?wp=trained&c=1&th=1&qi=6&t=${encodeURIComponent(text)}#attention`);
  await settle(page);
  const W = (await readMatrix(page, 'weights')).values;
  const n = W.length;
  assert.equal(n, 7);
  const ids = await page.$$eval('#attention .tokens [data-token]', (bs) => bs.map((b) => b.textContent.replace(/^\d+/, '')));
  assert.deepEqual(ids, ['i', 'got', 'a', 'new', 'phone', 'from', 'apple']);
  // The model file holds no vocabulary: the page lists the corpus's (sorted words, then "."; <unk> last) in the learn lab.
  const vocab = await page.$eval('.learn-vocab', (p) => p.textContent.split(' · '));
  const all = [...vocab, '<unk>'];
  assert.equal(all.length, gpt.config.vocabSize);
  const tokens = Int32Array.from(ids.map((w) => all.indexOf(w)));
  assert.ok(tokens.every((t) => t >= 0));
  const f = gpt.forward(tokens, { returnAttention: true });
  const head = 1;
  let worst = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) worst = Math.max(worst, Math.abs(W[i][j] - f.attention[0][(head * n + i) * n + j]));
  console.log(`trained head 2 on "${text}": largest |page − model| weight difference ${worst.toExponential(2)}`);
  assert.ok(worst <= TOL, `page weights equal the model's layer-1 head-2 weights (worst ${worst})`);
  // The caption: the query's two largest weights, by word and value.
  const note = await page.$eval('[data-figure="trained-note"]', (p) => p.textContent);
  const row = W[6].map((w, j) => ({ w, j })).sort((a, b) => b.w - a.w);
  const expect = row.slice(0, 2).map((x) => `“${ids[x.j]}” (${x.j + 1}) ${x.w.toFixed(2)}`).join(', then ');
  assert.ok(note.includes(`From “apple” (7) its largest weights: ${expect}.`), `${note} quotes ${expect}`);
  assert.match(note, /“phone” \(5\) 0\.\d\d/, 'from “apple”, this head looks at “phone” most');
  assert.deepEqual(log.errors, []);
  await done();
});

test('multi-head on trained weights: the heads differ, and each caption quotes its own weights', async () => {
  const text = 'the capital of spain is madrid';
  const { page, log, done } = await openPage(env, `?mt=1&mc=1&t=${encodeURIComponent(text)}#multihead`);
  await settle(page);
  const n = 6;
  const heads = [];
  for (const h of [1, 2]) {
    await page.$eval(`[data-disclosure="mh-head${h}-table"]`, (d) => { d.open = true; });
    heads.push((await readMatrix(page, `mh-head${h}-weights`)).values);
  }
  // Average weight on the previous word (rows 1…n−1) and what spreading evenly over the visible words gives.
  const prev = (W) => W.slice(1).reduce((s, r, i) => s + r[i], 0) / (n - 1);
  const even = Array.from({ length: n - 1 }, (_, i) => 1 / (i + 2)).reduce((a, b) => a + b) / (n - 1);
  const captions = await Promise.all([1, 2].map((h) => page.$eval(`[data-figure="mh-head${h}-pattern"]`, (p) => p.textContent)));
  console.log(captions.join('\n'));
  const [p1, p2] = heads.map(prev);
  assert.ok(Math.abs(p1 - p2) > 0.15, `the two heads differ in how much they look at the previous word (${p1.toFixed(2)} vs ${p2.toFixed(2)})`);
  const strong = p1 > p2 ? 0 : 1;
  assert.ok(captions[strong].includes(`Mostly looks at the word just before: ${heads[strong] && prev(heads[strong]).toFixed(2)} of its weight on average (spreading evenly would give ${even.toFixed(2)})`), captions[strong]);
  assert.deepEqual(log.errors, []);
  await done();
});

// "Mostly" is said of more than half the weight only: under half, a head that clears the naming bar spreads its
// attention. Seed 3 (the lab's default) has a head at 0.41 on itself; seed 4 one at 0.47; seed 1 none in 0.4 – 0.5.
for (const seed of [3, 4, 1]) test(`random weights (seed ${seed}): each multi-head caption states what the weights on screen show, or that there is no clear pattern`, async () => {
  const { page, log, done } = await openPage(env, `?mt=0&mc=1&ms=${seed}#multihead`); // the lab opens on trained weights
  await settle(page);
  await page.$$eval('[data-disclosure^="mh-head"]', (ds) => ds.forEach((d) => { d.open = true; }));
  const captions = await page.$$eval('[data-figure^="mh-head"][data-figure$="-pattern"]', (ps) => ps.map((p) => p.textContent));
  assert.ok(captions.length >= 2);
  for (let h = 0; h < captions.length; h++) {
    const W = (await readMatrix(page, `mh-head${h + 1}-weights`)).values;
    const n = W.length;
    const avg = (f) => W.slice(1).reduce((s, r, i) => s + f(r, i + 1), 0) / (n - 1);
    const scores = { 'the word just before': avg((r, i) => r[i - 1]), itself: avg((r, i) => r[i]), 'the first word': avg((r) => r[0]) };
    const even = Array.from({ length: n - 1 }, (_, i) => 1 / (i + 2)).reduce((a, b) => a + b) / (n - 1);
    const [what, v] = Object.entries(scores).reduce((a, b) => (b[1] > a[1] ? b : a));
    const strong = v >= Math.max(0.4, 1.5 * even);
    console.log(`random head ${h + 1}: ${captions[h]}`);
    if (v <= 0.5) assert.doesNotMatch(captions[h], /mostly/i, `${v.toFixed(3)} is not most of the weight`);
    if (strong && v > 0.5) assert.ok(captions[h].startsWith(`Mostly looks at ${what}: ${v.toFixed(2)} of its weight on average (spreading evenly would give ${even.toFixed(2)})`), captions[h]);
    else if (strong) assert.ok(captions[h].startsWith(`Spreads its attention, most on ${what}: ${v.toFixed(2)} of its weight on average (spreading evenly would give ${even.toFixed(2)})`), captions[h]);
    else if (v >= 1.5 * even) assert.ok(captions[h].startsWith(`A weak lean toward ${what}: ${v.toFixed(2)} of its weight on average, at least 1.5 times the ${even.toFixed(2)} of spreading evenly but short of the 0.4 that would name it.`), captions[h]);
    else assert.ok(captions[h].startsWith(`No clear pattern: its largest average, ${v.toFixed(2)} on ${what}, is under 1.5 times the ${even.toFixed(2)} of spreading evenly, as expected from random weights.`), captions[h]);
  }
  assert.deepEqual(log.errors, []);
  await done();
});

test('multi-head on trained weights: a head that follows content words is named with its count, computed here from the model', async () => {
  // The default view: "I ate a banana and an apple" on the trained weights with the causal mask.
  const { page, log, done } = await openPage(env, '#multihead');
  await settle(page);
  const words = ['i', 'ate', 'a', 'banana', 'and', 'an', 'apple'];
  const n = words.length;
  const vocab = await page.$eval('.learn-vocab', (p) => p.textContent.split(' · '));
  const all = [...vocab, '<unk>'];
  const f = gpt.forward(Int32Array.from(words.map((w) => all.indexOf(w))), { returnAttention: true });
  // The rule, written again here: content words are all but the closed list of function words; a row with a content
  // word before it counts when its largest weight (keys 0…i) is on the nearest such word.
  const FUNCTION = new Set(['a', 'an', 'the', 'i', 'and']);
  const captions = [];
  for (const head of [0, 1]) {
    const W = (i, j) => f.attention[0][(head * n + i) * n + j];
    let rows = 0, previous = 0, nearest = -1;
    const hits = [];
    for (let i = 0; i < n; i++) {
      if (nearest >= 0) {
        rows++;
        let top = 0;
        for (let j = 1; j <= i; j++) if (W(i, j) > W(i, top)) top = j;
        // The page reads float32 weights close to these: a near-tie could flip the top key, and the test would be moot.
        const second = Math.max(...Array.from({ length: i + 1 }, (_, j) => (j === top ? -1 : W(i, j))));
        assert.ok(W(i, top) - second > 10 * TOL, `row ${i}: a clear largest weight`);
        if (top === nearest) hits.push({ i, j: top, w: W(i, top) });
        if (top === i - 1) previous++;
      }
      if (!FUNCTION.has(words[i])) nearest = i;
    }
    const caption = await page.$eval(`[data-figure="mh-head${head + 1}-pattern"]`, (p) => p.textContent);
    captions.push(caption);
    const named = rows >= 3 && hits.length >= 0.75 * rows && hits.length > previous;
    console.log(`head ${head + 1}: ${hits.length} of ${rows} rows on the nearest earlier content word (previous word: ${previous}); ${named ? 'named' : 'not named'}\n  ${caption}`);
    if (!named) {
      assert.doesNotMatch(caption, /content/, `head ${head + 1} says nothing of content`);
      continue;
    }
    assert.ok(caption.includes(`Follows content words: in ${hits.length} of the ${rows} rows that have a content word before them, its largest weight is on the nearest one`), caption);
    // Each quoted link is one of the counted rows, with the model's weight to 2 decimals.
    const quoted = [...caption.matchAll(/“([^”]+)” → “([^”]+)” (\d\.\d+)/g)];
    assert.ok(quoted.length >= 2, caption);
    for (const [, from, to, w] of quoted.filter((m) => caption.indexOf(m[0]) > caption.indexOf('Follows content'))) {
      const hit = hits.find((h) => words[h.i] === from && words[h.j] === to);
      assert.ok(hit, `${from} → ${to} is a counted row`);
      assert.ok(Math.abs(Number(w) - hit.w) <= 0.005 + TOL, `${from} → ${to}: ${w} vs the model's ${hit.w}`);
    }
  }
  // On this sentence the model's head 2 follows content words (a → ate, and → banana) and head 1 does not.
  assert.match(captions[1], /Follows content words: in 4 of the 5 rows/);
  assert.doesNotMatch(captions[0], /content/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('multi-head: greyed size menus say why, and the note goes when they can be chosen', async () => {
  // With trained weights the heads and their width are the model's; the menus beside them must say so, or a reader
  // who tries to change h finds a dead control with the reason in the other box.
  const { page, log, done } = await openPage(env, '#multihead');
  const note = () => page.textContent('[data-figure="mh-size-note"]');
  assert.equal(await page.$eval('select[data-control="heads"]', (s) => s.disabled), true);
  assert.match(await note(), /^The trained model’s own: 2 heads of width 8\. Switch off “trained weights” to choose them\.$/);
  await page.$eval('#multihead input[data-control="mh-trained"]', (i) => i.click());
  await settle(page);
  assert.equal(await page.$eval('select[data-control="heads"]', (s) => s.disabled), false);
  assert.equal(await note(), '');
  assert.deepEqual(log.errors, []);
  await done();
});
