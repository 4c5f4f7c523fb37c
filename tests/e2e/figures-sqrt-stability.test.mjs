// The articles' figures: why √d_k (the engine's q·k statistics vs float64 over the same random draw) and numerical
// stability (naive float32 overflow/underflow vs the engine's max-subtracted softmax, the fully masked row).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle } from './helpers.mjs';
import { U } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const N = 200; // the page's SQRT_N

// The page's generator (mulberry32 + Box–Muller), replayed here so the reference sees the same q and k.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function unitNormals(seed, count) {
  const rand = mulberry32((0x9e3779b9 ^ seed) >>> 0);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rand()));
    const t = 2 * Math.PI * rand();
    out[i] = r * Math.cos(t);
    if (i + 1 < count) out[i + 1] = r * Math.sin(t);
  }
  return out;
}
function softmax64(x) {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}
const close = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got} vs float64 ${want} (tol ${tol})`);
const readCols = (page, table) => page.$$eval(`table[data-table="${table}"] td[data-col]`, (tds) => {
  const out = {};
  for (const td of tds) (out[td.dataset.col] ??= []).push(td.dataset.value.includes(',') ? td.dataset.value : Number(td.dataset.value));
  return out;
});

function sqrtReference(dk, seed) {
  const qk = unitNormals(seed, 2 * N * dk);
  let s1 = 0, s2 = 0, abs2 = 0;
  const row = [];
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      let d = 0, a = 0;
      for (let t = 0; t < dk; t++) { const p = qk[i * dk + t] * qk[N * dk + j * dk + t]; d += p; a += Math.abs(p); }
      s1 += d; s2 += d * d; abs2 += a * a;
      if (i === 0 && j < 8) row.push({ d, a });
    }
  }
  const m = N * N;
  return { meanSq: s2 / m, mean: s1 / m, row, absMeanSq: abs2 / m };
}

async function checkSqrt(page, dk, seed) {
  const ref = sqrtReference(dk, seed);
  const got = await readCols(page, 'sqrt-stats');
  // Each float32 dot product is off by ≤ γ_dk·Σ|q_t k_t|; the N² mean square adds rounding of its own sum.
  const g = (d) => (d * U) / (1 - d * U);
  const tolMs = 2 * g(dk) * ref.absMeanSq * 2 + g(N * N) * ref.meanSq * 2;
  close(got['var-raw'][0], ref.meanSq, tolMs, `mean (q·k)² at d_k=${dk}`);
  close(got['var-scaled'][0], ref.meanSq / dk, tolMs / dk + 4 * U, `mean (q·k/√d_k)² at d_k=${dk}`);
  // The statistics themselves: variance ≈ d_k unscaled, ≈ 1 scaled (40 000 products of 200 + 200 draws).
  assert.ok(Math.abs(got['var-raw'][0] / dk - 1) < 0.2, `variance ${got['var-raw'][0]} is near d_k = ${dk}`);
  assert.ok(Math.abs(got['var-scaled'][0] - 1) < 0.2, `scaled variance ${got['var-scaled'][0]} is near 1`);
  // One row: raw scores, their softmax, scaled scores, their softmax.
  const row = await readCols(page, 'sqrt-row');
  ref.row.forEach(({ d, a }, j) => {
    close(row.raw[j], d, 2 * g(dk) * a + 1e-7, `q·k₁${j}`);
    close(row.scaled[j], d / Math.sqrt(dk), (2 * g(dk) * a) / Math.sqrt(dk) + 2 * U * Math.abs(d) + 1e-7, `scaled ${j}`);
  });
  // Softmax of the page's own float32 scores, in float64.
  const pr = softmax64(row.raw), ps = softmax64(row.scaled);
  pr.forEach((p, j) => close(row['p-raw'][j], p, 1e-6 * p + 1e-12, `softmax raw ${j}`));
  ps.forEach((p, j) => close(row['p-scaled'][j], p, 1e-6 * p + 1e-12, `softmax scaled ${j}`));
  return { got, row };
}

test('why √d_k: the engine’s q·k statistics match float64 and the predicted variance d_k', async () => {
  const { page, log, done } = await openPage(env, '#sqrt-dk');
  await checkSqrt(page, 64, 1);
  // Keyboard: the slider moves in powers of two.
  await page.focus('input[data-control="sqrt-dk"]');
  await page.keyboard.press('ArrowRight'); // 64 → 128
  await settle(page);
  assert.match(page.url(), /rk=128/);
  const big = await checkSqrt(page, 128, 1);
  await page.keyboard.press('Home'); // d_k = 1
  await settle(page);
  await checkSqrt(page, 1, 1);
  // Large d_k: the unscaled row is much more peaked than the scaled one.
  assert.ok(Math.max(...big.row['p-raw']) > Math.max(...big.row['p-scaled']));
  await page.click('button[data-control="sqrt-reseed"]');
  await settle(page);
  assert.match(page.url(), /rs=2/);
  await checkSqrt(page, 1, 2);
  assert.deepEqual(log.errors, []);
  await done();
});

test('why √d_k: state from the URL', async () => {
  const { page, done } = await openPage(env, '?rk=512&rs=7#sqrt-dk');
  const { row } = await checkSqrt(page, 512, 7);
  assert.ok(Math.max(...row['p-raw']) > 0.99, 'at d_k = 512 the raw softmax is nearly one-hot');
  await done();
});

test('stability: naive float32 overflows to NaN, the engine does not; fully masked rows give zeros', async () => {
  const { page, log, done } = await openPage(env, '#stability');
  let c = await readCols(page, 'stability');
  // Naive contrast: e^100 and e^110 are Infinity in float32, Infinity / Infinity = NaN.
  assert.equal(c['naive-exp'][0], Math.fround(Math.exp(90)));
  assert.equal(c['naive-exp'][1], Infinity);
  assert.equal(c['naive-sum'][0], Infinity);
  assert.ok(Number.isNaN(c['naive-p'][2]));
  const check = (x) => {
    const ref = softmax64(x);
    const m = Math.max(...x);
    ref.forEach((p, j) => close(c.p[j], p, 1e-6 * p + 1e-30, `softmax ${j}`));
    ref.forEach((p, j) => { if (p > 0) close(c.logp[j], Math.log(p), 1e-6 * Math.abs(Math.log(p)) + 4e-7, `log-softmax ${j}`); });
    x.forEach((v, j) => close(c.shifted[j], v - m, U * Math.abs(v - m) + 1e-12, `x − m ${j}`));
  };
  check([90, 100, 110]);
  assert.match(await page.textContent('#stability .callout'), /Infinity \/ Infinity = NaN/);

  await page.click('button[data-control="stab-preset--1000_-990_-980"]');
  await settle(page);
  c = await readCols(page, 'stability');
  assert.equal(c['naive-sum'][0], 0);
  assert.ok(c['naive-p'].every(Number.isNaN));
  check([-1000, -990, -980]);
  assert.match(page.url(), /nx=-1000%2C-990%2C-980/);

  // Edit a logit in the table and add one.
  await page.fill('table[data-matrix="stab-logits"] input[data-r="0"][data-c="1"]', '-900');
  await page.click('button[data-control="stab-add"]');
  await settle(page);
  c = await readCols(page, 'stability');
  check([-1000, -900, -980, 0]);

  const mk = await readCols(page, 'stability-masked');
  assert.ok(mk.naive.every(Number.isNaN));
  assert.deepEqual(mk.softmax, [0, 0, 0]);
  assert.deepEqual(mk.weights, [0, 0, 0]);
  assert.equal(mk.output[0], '0,0');
  assert.deepEqual(log.errors, []);
  await done();
});
