// The causal-mask figure, written out row by row, and the per-cell trace of one weight. The reference is float64
// attention over the attention lab's own X and W tables, with the causal mask.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, readMatrix, settle } from './helpers.mjs';
import { attentionReference, weightTolerance, outputTolerance, U } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const close = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got} vs float64 ${want} (tol ${tol})`);

async function reference(page) {
  const X = (await readMatrix(page, 'X')).values;
  const Wq = (await readMatrix(page, 'Wq')).values;
  const Wk = (await readMatrix(page, 'Wk')).values;
  const Wv = (await readMatrix(page, 'Wv')).values;
  const sc = await page.evaluate(() => new URLSearchParams(location.search).get('sc'));
  const scale = sc === '0' ? 1 : 1 / Math.sqrt(Wq[0].length);
  return { X, Wv, scale, ref: attentionReference({ X, Wq, Wk, Wv, scale, causal: true }) };
}

async function checkCausal(page) {
  // The figure renders when it is on screen (edits made elsewhere are applied as it scrolls into view).
  await page.$eval('section#causal', (s) => s.scrollIntoView());
  await settle(page);
  const { X, Wv, ref } = await reference(page);
  const n = X.length;
  const M = (await readMatrix(page, 'causal-mask')).values;
  const W = (await readMatrix(page, 'causal-weights')).values;
  const S = (await readMatrix(page, 'causal-scores')).values;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (j > i) {
        assert.equal(M[i][j], -Infinity, `M(${i},${j})`);
        assert.equal(S[i][j], -Infinity, `scores(${i},${j})`);
        assert.equal(W[i][j], 0, `weight (${i},${j}) is exactly 0`);
      } else {
        assert.equal(M[i][j], 0);
        close(W[i][j], ref.weights[i][j], weightTolerance(ref, i, j, n) + 1e-37, `weight (${i},${j})`);
      }
    }
  }
  // The written-out rows: O₁ = S₁,₁V₁, O₂ = S₂,₁V₁ + S₂,₂V₂, …, with the engine's output row.
  const rows = await page.$$eval('table[data-table="causal-sums"] tbody tr', (trs) => trs.map((tr) => ({
    terms: tr.querySelector('td.sum-terms').textContent,
    out: tr.querySelector('td[data-col="output"]').dataset.value.split(',').map(Number),
  })));
  assert.equal(rows.length, n);
  // (The article's S_{i,j}: a comma between the indices, so that S₁₁,₁₀ reads one way.)
  assert.equal(rows[0].terms, 'S₁,₁V₁');
  if (n > 1) assert.equal(rows[1].terms, 'S₂,₁V₁ + S₂,₂V₂');
  rows.forEach((r, i) => r.out.forEach((v, k) => close(v, ref.output[i][k], outputTolerance(ref, X, Wv, i, k) + 1e-30, `O(${i},${k})`)));
  return { ref, X, W };
}

async function checkTrace(page, i, j) {
  const { X, ref, scale } = await reference(page);
  const n = X.length;
  const t = await page.$eval('table[data-table="cell-trace"]', (tb) => ({
    i: Number(tb.dataset.i), j: Number(tb.dataset.j),
    ...Object.fromEntries([...tb.querySelectorAll('td[data-step]')].map((td) => [td.dataset.step, td.dataset.value])),
  }));
  assert.equal(t.i, i);
  assert.equal(t.j, j);
  const q = ref.Q[i], k = ref.K[j];
  const terms = t.terms.split(',').map(Number);
  const mag = q.reduce((s, v, c) => s + Math.abs(v * k[c]), 0);
  const tolQK = 1e-5 * (1 + mag) + 8 * U * mag; // Q and K are float32 projections of X
  terms.forEach((v, c) => close(v, q[c] * k[c], 1e-5 * (1 + Math.abs(q[c] * k[c])), `term ${c}`));
  close(Number(t.raw), ref.raw[i][j], tolQK, 'q·k');
  const masked = j > i;
  if (masked) {
    assert.equal(Number(t.scaled), -Infinity, 'a hidden key: the engine writes −∞');
    assert.equal(Number(t.weight), 0);
    assert.deepEqual(t.part.split(',').map(Number).map(Math.abs), ref.V[0].map(() => 0));
  } else {
    close(Number(t.scaled), ref.raw[i][j] * scale, tolQK * scale + U, 'scaled + mask 0');
    const row = ref.raw[i].map((s, c) => (c > i ? -Infinity : s * scale));
    const m = Math.max(...row);
    close(Number(t.shifted), row[j] - m, 2 * tolQK * scale + 4 * U * Math.abs(m), 's − m');
    close(Number(t.exp), Math.exp(row[j] - m), 4 * tolQK * scale + 1e-5, 'exp');
    close(Number(t.rowsum), row.reduce((s, v) => s + Math.exp(v - m), 0), 1e-5 * n, 'row sum');
    close(Number(t.weight), ref.weights[i][j], weightTolerance(ref, i, j, n) + 1e-37, 'weight');
    t.part.split(',').map(Number).forEach((v, c) => close(v, ref.weights[i][j] * ref.V[j][c], 1e-5 * (1 + Math.abs(ref.V[j][c])), `a·v ${c}`));
  }
}

test('causal mask: −∞ above the diagonal, zero weights, rows written out, all against float64', async () => {
  const { page, log, done } = await openPage(env, '#causal');
  await checkCausal(page);
  await checkTrace(page, 6, 3); // default: apple ← banana
  // Another sentence and scaling off: the figure follows the attention lab's state.
  await page.fill('input[data-control="text"]', 'Houston we have a problem');
  await page.click('input[data-control="scaled"]');
  await settle(page);
  const { W } = await checkCausal(page);
  assert.equal(W.length, 5);
  await checkTrace(page, 4, 3); // clamped to the last row
  assert.deepEqual(log.errors, []);
  await done();
});

test('per-cell trace: click a weight, move with the arrow keys, masked cells, URL state', async () => {
  const { page, log, done } = await openPage(env, '#causal');
  await page.click('table[data-matrix="causal-weights"] td[data-r="2"][data-c="1"]');
  await settle(page);
  await checkTrace(page, 2, 1);
  assert.match(page.url(), /ci=2&cj=1/);
  await page.keyboard.press('ArrowRight'); // (2, 2)
  await page.keyboard.press('ArrowRight'); // (2, 3): masked
  await settle(page);
  await checkTrace(page, 2, 3);
  assert.match(await page.textContent('table[data-table="cell-trace"]'), /−∞/);
  assert.deepEqual(log.errors, []);
  await done();
  // A link to a cell (in the tab this page is through with).
  const again = await openPage(env, '?ci=5&cj=0#causal');
  await checkTrace(again.page, 5, 0);
  assert.deepEqual(again.log.errors, []);
  await again.done();
});
