// Editing the attention lab changes its tables as the math says. The weights and outputs on the page are
// compared with a float64 reference computed here from the page's own X and W tables (exact float32 values
// from data-value), within a float32 error bound derived in reference.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, readMatrix, readAttentionLab, settle } from './helpers.mjs';
import { attentionReference, weightTolerance, rowSumTolerance, outputTolerance, matmul, U } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });


/** Checks every weight, row sum, mask and output cell against the reference; returns the worst error ratio. */
async function checkAgainstReference(page, { causal }) {
  await settle(page);
  const { X, Wq, Wk, Wv, W, O, M, scale } = await readAttentionLab(page);
  const ref = attentionReference({ X, Wq, Wk, Wv, scale, causal });
  const n = X.length;
  assert.equal(W.length, n);
  let worst = 0;
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const w = W[i][j];
      sum += w;
      if (causal && j > i) {
        assert.equal(w, 0, `causal: weight (${i},${j}) must be exactly 0`);
        assert.equal(M[i][j], -Infinity, `causal: masked score (${i},${j}) must be −∞`);
        continue;
      }
      assert.ok(Number.isFinite(M[i][j]), `score (${i},${j}) is finite`);
      const tol = weightTolerance(ref, i, j, n) + 1e-37; // floor: float32 flushes weights below ~1e-38 to 0
      const err = Math.abs(w - ref.weights[i][j]);
      worst = Math.max(worst, err / tol);
      assert.ok(err <= tol, `weight (${i},${j}) = ${w}, reference ${ref.weights[i][j]}, |err| ${err} > tol ${tol}`);
    }
    assert.ok(Math.abs(sum - 1) <= rowSumTolerance(n), `row ${i} sums to ${sum}`);
    for (let k = 0; k < O[0].length; k++) {
      const tol = outputTolerance(ref, X, Wv, i, k) + 1e-30;
      const err = Math.abs(O[i][k] - ref.output[i][k]);
      assert.ok(err <= tol, `output (${i},${k}) = ${O[i][k]}, reference ${ref.output[i][k]}, |err| ${err} > tol ${tol}`);
    }
  }
  return { worst, ref, X, Wq, Wk, Wv, W };
}

// Three checks of the default view on one page load (each only reads the page or moves the focus, until the last
// one's closing preset): the numbers, the keyboard, and what the page says of W_Q, W_K, W_V.
test('the default view, on one page', async (t) => {
  const { page, log, done } = await openPage(env, '');
  await t.test('default view matches the float64 reference, and a wrong reference is caught', async () => {
    const { ref, X, Wq, Wk, Wv, W } = await checkAgainstReference(page, { causal: false });
    // The check can fail: the same weights against a reference without the 1/√d_k factor do not match.
    const wrong = attentionReference({ X, Wq, Wk, Wv, scale: 1, causal: false });
    const mismatches = W.flat().filter((w, idx) => Math.abs(w - wrong.weights[Math.floor(idx / X.length)][idx % X.length]) > 1e-4);
    assert.ok(mismatches.length > 0, 'an unscaled reference must disagree with the scaled page');
    assert.ok(ref.weights.length === 7, 'the default sentence has 7 tokens');
  });

  await t.test('matrix cells are reachable and movable with the keyboard', async () => {
    await page.focus('table[data-matrix="QKt"] td[tabindex="0"]');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const pos = await page.evaluate(() => [document.activeElement.dataset.r, document.activeElement.dataset.c]);
    assert.deepEqual(pos, ['1', '1']);
    // Exactly one tab stop per table.
    const stops = await page.$$eval('table[data-matrix="QKt"] [tabindex="0"]', (els) => els.length);
    assert.equal(stops, 1);
  });

  await t.test('at 1280 px the default 7 × 7 score tables fit their steps whole; with 6 tokens the two steps sit side by side', async () => {
    const fits = () => page.$$eval('table[data-matrix="QKt"], table[data-matrix="scores"]', (ts) => ts.map((t) => {
      const box = t.closest('.table-scroll');
      box.scrollIntoView();
      return box.scrollWidth <= box.clientWidth + 1;
    }));
    assert.deepEqual(await fits(), [true, true], 'no column of the 7 × 7 score tables hidden past the edge');
    const sideBySide = () => page.$eval('#attention [data-step="4"]', (a) => a.getBoundingClientRect().top === document.querySelector('#attention [data-step="5"]').getBoundingClientRect().top);
    assert.equal(await sideBySide(), false);
    await page.fill('input[data-control="text"]', 'the cat sat on the mat');
    await settle(page);
    assert.equal(await sideBySide(), true, 'six tokens: steps 4 and 5 share a row');
    assert.deepEqual(await fits(), [true, true]);
    await page.fill('input[data-control="text"]', 'I ate a banana and an apple');
    await settle(page);
  });

  await t.test('where W_Q, W_K, W_V first appear the page says they are learned, and why three; identity weights make Q = K = V', async () => {
    const spaces = await page.textContent('#spaces .callout.learned');
    assert.match(spaces, /learned: training adjusts their numbers/);
    assert.match(spaces, /Why three\?/);
    assert.match(await page.textContent('#attention [data-step="2"]'), /learned/);
    assert.match(await page.textContent('#attention [data-step="3"] .step-note'), /the three tables below are identical: Q = K = V = X/);
    const [Q, K, V] = [await readMatrix(page, 'Q'), await readMatrix(page, 'K'), await readMatrix(page, 'V')];
    assert.deepEqual(Q.values, K.values);
    assert.deepEqual(K.values, V.values);
    await page.click('button[data-control="preset-rnd"]');
    await settle(page);
    assert.equal(await page.textContent('#attention [data-step="3"] .step-note'), '', 'the note goes once the weights differ');
  });
  assert.deepEqual(log.errors, []);
  await done();
});

test('causal toggle zeroes the upper triangle exactly; scaling toggle changes the scale', async () => {
  const { page, log, done } = await openPage(env, '');
  const before = (await readMatrix(page, 'weights')).values;
  await page.check('input[data-control="causal"]');
  await checkAgainstReference(page, { causal: true });
  const after = (await readMatrix(page, 'weights')).values;
  assert.notDeepEqual(after, before, 'causal mask changed the weights');
  assert.equal(after[0][0], 1, 'the first token can only attend to itself');

  // √d_k off: the scaled and masked scores equal the raw scores where a key is visible (scale 1), −∞ above the
  // diagonal; the weights follow the unscaled reference.
  await page.uncheck('input[data-control="scaled"]');
  await settle(page);
  const raw = (await readMatrix(page, 'QKt')).values;
  const scores = (await readMatrix(page, 'scores')).values;
  raw.forEach((row, i) => row.forEach((r, j) => assert.equal(scores[i][j], j > i ? -Infinity : r, `scores (${i},${j}) without scaling`)));
  await checkAgainstReference(page, { causal: true });
  await page.check('input[data-control="scaled"]');
  await page.uncheck('input[data-control="causal"]');
  await settle(page);
  const raw2 = (await readMatrix(page, 'QKt')).values;
  const scores2 = (await readMatrix(page, 'scores')).values;
  const s = 1 / Math.sqrt(2);
  raw2.forEach((row, i) => row.forEach((r, j) => {
    assert.ok(Math.abs(scores2[i][j] - r * s) <= 4 * U * Math.abs(r * s) + 1e-30, `scaled (${i},${j})`);
  }));
  assert.deepEqual(log.errors, []);
  await done();
});

test('editing the text, an X cell, a W cell, the preset and d_k recompute correctly', async () => {
  const { page, log, done } = await openPage(env, '');
  await page.fill('input[data-control="text"]', 'Houston, we have a problem!');
  await settle(page);
  const x = await readMatrix(page, 'X');
  assert.equal(x.rows, 5, 'five words; punctuation dropped');
  const labels = await page.$$eval('table[data-matrix="X"] tbody th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(labels, ['1 houston', '2 we', '3 have', '4 a', '5 problem'], 'tokens are numbered from 1');
  await checkAgainstReference(page, { causal: false });

  // X cell: every occurrence of a word moves together.
  await page.fill('input[data-control="text"]', 'I ate a banana and an apple and a pear');
  await settle(page);
  const cell = 'table[data-matrix="X"] input[data-r="6"][data-c="0"]'; // "apple", fruit axis
  await page.fill(cell, '-2.5');
  await settle(page);
  const X2 = (await readMatrix(page, 'X')).values;
  assert.equal(X2[6][0], -2.5);
  assert.ok(await page.$('table[data-matrix="X"] td.edited'), 'the edited cell is marked');
  const xa = (await readMatrix(page, 'X')).values;
  assert.equal(xa[2][0], xa[8][0], 'both "a" rows share one embedding');
  // A value the cell refuses is marked, changes nothing, and leaving the cell shows the value in use again.
  await page.fill(cell, '1e9');
  assert.equal(await page.getAttribute(cell, 'aria-invalid'), 'true');
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue(cell), '-2.5');
  assert.equal(await page.getAttribute(cell, 'aria-invalid'), null);
  assert.equal((await readMatrix(page, 'X')).values[6][0], -2.5);
  await checkAgainstReference(page, { causal: false });

  // W_K cell, then the asymmetric preset: QKᵀ stops being symmetric.
  await page.fill('table[data-matrix="Wk"] input[data-r="0"][data-c="1"]', '0.8');
  await settle(page);
  assert.equal((await readMatrix(page, 'Wk')).values[0][1], Number(Math.fround(0.8)));
  await checkAgainstReference(page, { causal: false });
  await page.click('button[data-control="preset-asym"]');
  await settle(page);
  const S = (await readMatrix(page, 'QKt')).values;
  assert.ok(S.some((row, i) => row.some((v, j) => Math.abs(v - S[j][i]) > 1e-3)), 'asymmetric W_Q, W_K give QKᵀ ≠ (QKᵀ)ᵀ');
  await checkAgainstReference(page, { causal: false });

  // Random weights with d_model 8, d_k 3, d_v 5, temperature 0.5.
  await page.click('button[data-control="preset-rnd"]');
  await page.selectOption('select[data-control="dmodel"]', '8');
  await page.selectOption('select[data-control="dk"]', '3');
  await page.selectOption('select[data-control="dv"]', '5');
  await page.$eval('input[data-control="attn-temp"]', (el) => { el.value = String(Math.log10(0.5)); el.dispatchEvent(new Event('input', { bubbles: true })); });
  await settle(page);
  const wq = await readMatrix(page, 'Wq');
  assert.deepEqual([wq.rows, wq.cols], [8, 3]);
  assert.equal((await readMatrix(page, 'output')).cols, 5);
  await checkAgainstReference(page, { causal: false });
  await page.check('input[data-control="causal"]');
  await checkAgainstReference(page, { causal: true });
  assert.deepEqual(log.errors, []);
  await done();
});

test('the one-query step-through: a heatmap row click shows its steps beside the heatmap, summing into the output row', async () => {
  const { page, log, done } = await openPage(env, '');
  await page.selectOption('select[data-control="query"]', '3');
  await settle(page);
  const O = (await readMatrix(page, 'output')).values;
  const readContext = () => page.$eval('.stepper td[data-context]', (td) => td.dataset.value.split(',').map(Number));
  (await readContext()).forEach((v, k) => assert.equal(v, O[3][k], `context vector ${k} is output row 4`));
  // The weighted values aᵢⱼ·vⱼ (one engine product) add up to the output row, within float32 rounding.
  const parts = await page.$$eval('.stepper tbody tr:not(.sum-row) td:last-child', (tds) => tds.map((td) => td.dataset.value.split(',').map(Number)));
  O[3].forEach((o, k) => {
    const sum = parts.reduce((a, p) => a + p[k], 0);
    const mag = parts.reduce((a, p) => a + Math.abs(p[k]), 0);
    assert.ok(Math.abs(sum - o) <= 16 * U * mag + 1e-30, `Σ aⱼvⱼ = ${sum} vs output ${o}`);
  });
  assert.equal(await page.$eval('table[data-matrix="weights"] tr.highlight th', (th) => th.textContent), '4 banana');
  assert.match(await page.textContent('.stepper-title'), /“banana” \(token 4\)/);

  // A click on a heatmap row: the step-through follows it and is on screen, beside the heatmap.
  await page.click('svg[data-heatmap="weights"] g.cell >> nth=14'); // row 3 (0-based 2): "a"
  await settle(page);
  assert.match(await page.textContent('.stepper-title'), /“a” \(token 3\)/);
  assert.equal(await page.getAttribute('.stepper', 'data-stage'), '5', 'reduced motion: every stage at once');
  const [heat, step] = await Promise.all([page.$eval('svg[data-heatmap="weights"]', (e) => e.getBoundingClientRect().toJSON()), page.$eval('.stepper', (e) => e.getBoundingClientRect().toJSON())]);
  assert.ok(step.left >= heat.right - 1 && step.top < heat.bottom, `the step-through sits beside the heatmap at 1280 px (${JSON.stringify({ heat, step })})`);
  assert.ok(step.top < 900 && step.bottom > 0, 'the step-through is in the viewport after the click');
  const stages = await page.$$eval('.stepper-stages .stage', (li) => li.map((x) => x.className));
  assert.deepEqual(stages, ['stage done', 'stage done', 'stage done', 'stage done', 'stage now']);
  // The token menu keeps the keyboard focus while it changes the query (it is not rebuilt on each change).
  await page.focus('select[data-control="query"]');
  await page.selectOption('select[data-control="query"]', '5');
  await settle(page);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.control), 'query');
  assert.match(await page.textContent('.stepper-title'), /“an” \(token 6\)/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('the step-through plays query → scores → ÷√d_k → softmax → weighted sum without reduced motion; on a phone the click scrolls it into view', async () => {
  const { page, log, done } = await openPage(env, '', { width: 390, height: 800, reducedMotion: 'no-preference' });
  await page.$eval('svg[data-heatmap="weights"]', (svg) => svg.scrollIntoView({ block: 'start' }));
  const seen = page.evaluate(() => new Promise((resolve) => {
    const root = document.querySelector('.stepper');
    const stages = [root.dataset.stage];
    new MutationObserver(() => {
      if (stages[stages.length - 1] !== root.dataset.stage) stages.push(root.dataset.stage);
      if (root.dataset.stage === '5' && !root.dataset.playing) resolve(stages);
    }).observe(root, { attributes: true, attributeFilter: ['data-stage', 'data-playing'] });
  }));
  await page.click('svg[data-heatmap="weights"] g.cell >> nth=7'); // row 2: "ate"
  const stages = await seen;
  assert.deepEqual(stages.slice(-5), ['1', '2', '3', '4', '5'], `the stages played in order: ${stages.join(' → ')}`);
  const box = await page.$eval('.stepper-title', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(box.top >= 0 && box.bottom <= 800 + 1, `the step-through is on screen after the click (${JSON.stringify(box)})`);
  assert.match(await page.textContent('.stepper-title'), /“ate” \(token 2\)/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('an edit costs a handful of engine calls: three projections and one attention call, plus one product for the step-through', async () => {
  const { page, log, done } = await openPage(env, '');
  const calls = async (edit) => {
    await edit();
    await settle(page);
    return Number(await page.getAttribute('body', 'data-engine-calls-last-edit'));
  };
  // A W_Q cell: Q, K, V re-projected (3 matmul), one attention call, one matmul for the weighted values.
  assert.equal(await calls(() => page.fill('table[data-matrix="Wq"] input[data-r="0"][data-c="1"]', '0.5')), 5);
  // The mask changes nothing upstream: the projections are reused.
  assert.equal(await calls(() => page.check('input[data-control="causal"]')), 2);
  // Another query: the same attention call again, and the step-through's product.
  assert.equal(await calls(() => page.selectOption('select[data-control="query"]', '2')), 2);
  // The sentence feeds the multi-head lab too: one multiHeadAttention call more.
  assert.equal(await calls(() => page.fill('input[data-control="text"]', 'Houston we have a problem')), 6);
  assert.match(await page.textContent('#build-info'), /last edit: 6 engine calls/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('multi-head: per-head weights are distributions and the output has X’s shape', async () => {
  const { page, log, done } = await openPage(env, '?mt=0&mc=0'); // random weights, no mask (the lab opens on trained, causal)
  await page.selectOption('select[data-control="heads"]', '3');
  await page.selectOption('select[data-control="head-dim"]', '2');
  await settle(page);
  const X = (await readMatrix(page, 'mh-X')).values;
  const out = await readMatrix(page, 'mh-output');
  assert.deepEqual([out.rows, out.cols], [X.length, 6]);
  const concat = await readMatrix(page, 'mh-concat');
  assert.deepEqual([concat.rows, concat.cols], [X.length, 6]);
  // Reference: per-head attention from the page's X and weight tables, concat, W_O.
  const Wq = (await readMatrix(page, 'mh-Wq')).values;
  const Wk = (await readMatrix(page, 'mh-Wk')).values;
  const Wv = (await readMatrix(page, 'mh-Wv')).values;
  const Wo = (await readMatrix(page, 'mh-Wo')).values;
  const cols = (M, from, to) => M.map((r) => r.slice(from, to));
  const concatRef = X.map(() => []);
  for (let h = 0; h < 3; h++) {
    const ref = attentionReference({ X, Wq: cols(Wq, 2 * h, 2 * h + 2), Wk: cols(Wk, 2 * h, 2 * h + 2), Wv: cols(Wv, 2 * h, 2 * h + 2), scale: 1 / Math.sqrt(2), causal: false });
    const W = (await readMatrix(page, `mh-head${h + 1}-weights`)).values;
    W.forEach((row, i) => {
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) <= rowSumTolerance(row.length), `head ${h + 1} row ${i}`);
      row.forEach((w, j) => assert.ok(Math.abs(w - ref.weights[i][j]) <= 1e-5, `head ${h + 1} weight (${i},${j})`));
    });
    ref.output.forEach((r, i) => concatRef[i].push(...r));
  }
  const outRef = matmul(concatRef, Wo);
  // Loose bound here: the single-head test above does the tight float32 analysis.
  out.values.forEach((r, i) => r.forEach((v, k) => assert.ok(Math.abs(v - outRef[i][k]) <= 1e-4, `output (${i},${k})`)));
  // Editing W_O changes the output.
  await page.click('.weights-details summary');
  await page.fill('table[data-matrix="mh-Wo"] input[data-r="0"][data-c="0"]', '3');
  await settle(page);
  assert.notDeepEqual((await readMatrix(page, 'mh-output')).values, out.values);
  assert.deepEqual(log.errors, []);
  await done();
});

test('edge cases: no words, one word, more than 32 words', async () => {
  const { page, log, done } = await openPage(env, '');
  await page.fill('input[data-control="text"]', '  ,.!  ');
  await settle(page);
  assert.match(await page.textContent('.tokens'), /No words yet/);
  await page.fill('input[data-control="text"]', 'apple');
  await settle(page);
  const W = (await readMatrix(page, 'weights')).values;
  assert.deepEqual(W, [[1]], 'a single token attends only to itself');
  await page.fill('input[data-control="text"]', Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '));
  await settle(page);
  assert.equal((await readMatrix(page, 'X')).rows, 32);
  assert.match(await page.textContent('#attention'), /Only the first 32 words are used/);
  await checkAgainstReference(page, { causal: false });
  assert.deepEqual(log.errors, []);
  await done();
});
