// The articles' figures: transformed query/key/value spaces and the asymmetric bride/ring pull, against float64.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, readMatrix, settle } from './helpers.mjs';
import { U, matmul } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const close = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got} vs float64 ${want} (tol ${tol})`);
const rows2 = (flat) => [[flat[0], flat[1]], [flat[2], flat[3]]];
const f32 = (M) => M.map((r) => r.map(Math.fround));
function softmax64(x) {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}
/** Float64 attention with scale 1 over X·W projections: { Q, K, V, S, A, O }. */
function attend64(X, Wq, Wk, Wv) {
  const Q = matmul(X, Wq), K = matmul(X, Wk), V = matmul(X, Wv);
  const S = Q.map((q) => K.map((k) => q[0] * k[0] + q[1] * k[1]));
  const A = S.map(softmax64);
  return { Q, K, V, S, A, O: matmul(A, V) };
}

const ASYM_X = [[2, 0.2], [0.6, 1.8], [2.2, -0.4], [-0.4, 1.8]];

async function checkAsym(page, Wq, Wk) {
  const r = attend64(f32(ASYM_X), f32(Wq), f32(Wk), f32(Wq));
  const A = (await readMatrix(page, 'asym-A')).values;
  const D = (await readMatrix(page, 'asym-AmAt')).values;
  const SD = (await readMatrix(page, 'asym-SmSt')).values;
  const tolS = 1e-5 * 20; // |X|,|W| ≤ ~2.2: products ≤ ~20, a few float32 roundings
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      close(A[i][j], r.A[i][j], 4 * tolS * r.A[i][j] + 8 * U, `A(${i},${j})`);
      close(SD[i][j], r.S[i][j] - r.S[j][i], 2 * tolS, `S−Sᵀ(${i},${j})`);
      close(D[i][j], r.A[i][j] - r.A[j][i], 4 * tolS * (r.A[i][j] + r.A[j][i]) + 16 * U, `A−Aᵀ(${i},${j})`);
    }
  }
  const pull = await page.$$eval('table[data-table="asym-pull"] td[data-col]', (tds) => Object.fromEntries(tds.map((td) => [td.dataset.col, Number(td.dataset.value)])));
  close(pull['score-br'], r.S[1][0], tolS, 'bride pulls ring');
  close(pull['score-rb'], r.S[0][1], tolS, 'ring pulls bride');
  close(pull['weight-br'], r.A[1][0], 4 * tolS * r.A[1][0] + 8 * U, 'weight bride→ring');
  return { SD, D, pull };
}

test('asymmetric pull: separate W_Q/W_K make bride pull ring harder than ring pulls bride; shared space is symmetric', async () => {
  const { page, log, done } = await openPage(env, '#asym');
  const sep = await checkAsym(page, [[1, 0], [0, 1]], [[0.5, 0.87], [-0.87, 0.5]]);
  assert.ok(sep.pull['score-br'] > sep.pull['score-rb'] + 3, 'bride pulls ring much harder');
  assert.ok(sep.pull['weight-br'] > 10 * sep.pull['weight-rb']);
  // Antisymmetric: A − Aᵀ = −(A − Aᵀ)ᵀ exactly, and the diagonal is exactly 0.
  sep.D.forEach((row, i) => row.forEach((v, j) => assert.ok(v === -sep.D[j][i], `A−Aᵀ(${i},${j})`))); // === : 0 and −0 are equal

  await page.click('input[data-control="asym-separate"]');
  await settle(page);
  assert.match(page.url(), /as=0/);
  const shared = await checkAsym(page, [[1, 0], [0, 1]], [[1, 0], [0, 1]]);
  shared.SD.forEach((row) => row.forEach((v) => assert.equal(Math.abs(v), 0, 'one shared space: S − Sᵀ is exactly 0')));
  assert.equal(shared.pull['score-br'], shared.pull['score-rb']);

  // Edit W_Q through its table (shared mode: W_K follows).
  await page.fill('table[data-matrix="asym-Wq"] input[data-r="0"][data-c="1"]', '0.5');
  await settle(page);
  await checkAsym(page, [[1, 0.5], [0, 1]], [[1, 0.5], [0, 1]]);
  assert.match(decodeURIComponent(page.url()), /aq=1,0\.5,0,1/);
  assert.deepEqual(log.errors, []);
  await done();
});

async function readSpaces(page) {
  return page.$$eval('table[data-table="spaces"] td[data-col]', (tds) => {
    const out = {};
    for (const td of tds) (out[td.dataset.col] ??= []).push(td.dataset.value.split(',').map(Number));
    return out;
  });
}

async function checkSpaces(page, Wq, Wk, Wv, chosen) {
  const t = await readSpaces(page);
  // X is the pull figure's table (its positions at pi = 0).
  const X = await page.$$eval('table[data-table="pull"] tbody tr', (trs) => trs.filter((tr) => tr.querySelector('td[data-col="x0"]'))
    .map((tr) => [Number(tr.querySelector('td[data-col="x0"]').dataset.value), Number(tr.querySelector('td[data-col="x1"]').dataset.value)]));
  const r = attend64(X, f32(Wq), f32(Wk), f32(Wv));
  const tol = 1e-5 * 30;
  X.forEach((_, j) => {
    [0, 1].forEach((c) => {
      close(t.q[j][c], r.Q[j][c], tol, `q(${j},${c})`);
      close(t.k[j][c], r.K[j][c], tol, `k(${j},${c})`);
      close(t.v[j][c], r.V[j][c], tol, `v(${j},${c})`);
    });
    close(t.score[j][0], r.S[chosen][j], tol, `score ${j}`);
    close(t.weight[j][0], r.A[chosen][j], 4 * tol * r.A[chosen][j] + 16 * U, `weight ${j}`);
  });
  [0, 1].forEach((c) => close(t.new[0][c], r.O[chosen][c], 4 * tol, `new(${c})`));
  return r;
}

test('transformed spaces: weights from the query/key spaces, average in the value space, editable matrices', async () => {
  const { page, log, done } = await openPage(env, '#spaces');
  await checkSpaces(page, rows2([1, 0, 0, 1]), rows2([1, 0, 0, 1]), rows2([1.5, 0, 0, 0.6]), 6);
  // The basis vectors drawn are the rows of W_V: e₁ ↦ (1.5, 0).
  const label = await page.getAttribute('svg[data-space="sp-values"]', 'aria-label');
  assert.match(label, /e₁ goes to \(1\.5, 0\), e₂ to \(0, 0\.6\)/);
  await page.click('button[data-control="sp-preset-3"]'); // keys rotated 90°
  await settle(page);
  await checkSpaces(page, rows2([1, 0, 0, 1]), rows2([0, 1, -1, 0]), rows2([1, 0, 0, 1]), 6);
  await page.fill('table[data-matrix="sp-Wk"] input[data-r="1"][data-c="1"]', '2');
  await settle(page);
  await checkSpaces(page, rows2([1, 0, 0, 1]), rows2([0, 1, -1, 2]), rows2([1, 0, 0, 1]), 6);
  assert.match(decodeURIComponent(page.url()), /tk=0,1,-1,2/);
  assert.deepEqual(log.errors, []);
  // Reload from the URL (in the tab this page is through with: a new document from the link alone).
  const url = new URL(page.url()).search;
  await done();
  const again = await openPage(env, url);
  await checkSpaces(again.page, rows2([1, 0, 0, 1]), rows2([0, 1, -1, 2]), rows2([1, 0, 0, 1]), 6);
  assert.deepEqual(again.log.errors, []);
  await again.done();
});
