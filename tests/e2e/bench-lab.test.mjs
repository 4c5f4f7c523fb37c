// The speed lab: a live plain JS / wasm scalar / wasm SIMD / wasm SIMD on the package's threads benchmark in a Web
// Worker. Checks that a run finishes with sane numbers (not how fast: timings are noisy), that the SIMD column really
// ran the SIMD module, that the threads column ran on as many workers as the page says (one per logical core, at
// most 8) and gave the SIMD column's numbers bit for bit, that the page's threads sentence quotes the measured
// times, that the page stays responsive meanwhile, and that Cancel stops the worker and lets a new run start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, drainTasks } from './helpers.mjs';
import { U } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

// The worker's quick plan (web/src/workers/bench-worker.ts): attention has d = 64.
const QUICK = [
  { id: 'softmax-256', kind: 'softmax', n: 256 },
  { id: 'attention-64', kind: 'attention', n: 64, d: 64 },
  { id: 'attention-256-causal', kind: 'attention', n: 256, d: 64 },
  { id: 'attention-64-h4', kind: 'attention', n: 64, d: 64, heads: 4 }, // one call of 4 heads: the threads split it
];
const IMPLS = ['js', 'scalar', 'simd', 'threads'];
/** The pool the page asks for: one worker per logical core, at most 8 (web/src/labs/appendix/bench-lab.ts). */
const poolSize = (page) => page.evaluate(() => Math.max(1, Math.min(8, navigator.hardwareConcurrency || 1)));
/** The page's number format for milliseconds (fmtMs in bench-lab.ts). */
const fmtMs = (v) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));
const g = (k) => (k * U) / (1 - k * U);

/**
 * How far a float32 engine may be from the plain-JS result (float64 arithmetic, rounded to float32), a priori
 * from the sizes and the input ranges the worker draws (softmax logits in [-4, 4), q, k, v in [-1, 1)):
 * - softmax: x − max is one rounding of a number ≤ 8 in size (a logit error ≤ 8u, which moves a weight by ≤ 2·8u
 *   relative); exp, the n-term row sum and the division add (n + 8)u relative (a few ulps for the exp polynomial);
 *   weights are ≤ 1, so that is also the absolute bound.
 * - attention: each score is a d-term float32 dot product times the scale, off by ≤ (γ_d + u)·Σ|q_t k_t|·scale
 *   ≤ (γ_d + u)·d/√d =: ε; that moves each weight by a factor within e^{±2ε}, so the output Σ w_j v_j (|v| ≤ 1)
 *   by ≤ 2ε (to first order); softmax adds (n + 8)u as above, the n-term P·V sum γ_n, the online-softmax rescaling
 *   ~4u per key tile (64 keys or more), and the final division and rounding 2u.
 */
function bound(t) {
  if (t.kind === 'softmax') return 2 * 8 * U + (t.n + 8) * U;
  const eps = (g(t.d) + U) * t.d / Math.sqrt(t.d);
  return 2 * eps + (t.n + 8) * U + g(t.n) + 4 * U * (t.n / 64 + 1) + 2 * U;
}

const state = (page) => page.getAttribute('section#speed', 'data-state');
const progress = (page) => page.$eval('progress[data-progress="speed"]', (p) => ({ value: p.value, max: p.max }));

async function readRows(page) {
  return page.$$eval('table[data-table="speed"] tr[data-task]', (trs) => trs.map((tr) => {
    const cell = (c) => tr.querySelector(`td[data-col="${c}"]`);
    const num = (c) => { const v = cell(c)?.dataset.value; return v === undefined ? null : Number(v); };
    const out = { id: tr.dataset.task, complete: tr.dataset.complete === 'true', speedup: num('speedup'), threadsSpeedup: num('threads-speedup') };
    for (const i of ['js', 'scalar', 'simd', 'threads']) {
      out[i] = { ms: num(`ms-${i}`), calls: Number(cell(`ms-${i}`)?.dataset.calls), rate: num(`rate-${i}`), diff: num(`diff-${i}`), simd: cell(`ms-${i}`)?.dataset.simd, backend: cell(`ms-${i}`)?.dataset.backend };
    }
    return out;
  }));
}

test('a quick run measures all four implementations (one of them on the threads), with sane numbers, while the page stays responsive', async () => {
  const { page, log, done } = await openPage(env, '#speed');
  assert.equal(await state(page), 'idle');
  await page.selectOption('select[data-control="speed-sizes"]', 'quick');
  // Count main-thread timer ticks during the run: a benchmark on the main thread would starve them.
  await page.evaluate(() => {
    window.__ticks = [];
    window.__tickTimer = setInterval(() => window.__ticks.push(performance.now()), 20);
  });
  const t0 = await page.evaluate(() => performance.now());
  await page.click('button[data-control="speed-run"]');
  assert.equal(await state(page), 'running');
  assert.equal(await page.isDisabled('button[data-control="speed-run"]'), true, 'Run is disabled while running');
  await page.waitForFunction(() => document.querySelector('section#speed')?.dataset.state !== 'running', null, { timeout: 90000, polling: 100 });
  const t1 = await page.evaluate(() => performance.now());
  const ticks = await page.evaluate(() => { clearInterval(window.__tickTimer); return window.__ticks; });
  assert.equal(await state(page), 'done', `run ended in state done (${await page.textContent('.bench-progress-text')})`);

  // Responsiveness: the run takes ≥ 12 × 150 ms of timing loops; at a 20 ms interval most ticks must land. Had the
  // loops run on the main thread, ticks could only land between steps (~10 % of the expected count). The bounds
  // leave room for a machine shared with other work, which delays timers without starving them.
  const during = ticks.filter((t) => t >= t0 && t <= t1);
  const expected = (t1 - t0) / 20;
  let maxGap = 0;
  for (let i = 1; i < during.length; i++) maxGap = Math.max(maxGap, during[i] - during[i - 1]);
  console.log(`main thread: ${during.length} ticks in ${(t1 - t0).toFixed(0)} ms (~${expected.toFixed(0)} expected), longest gap ${maxGap.toFixed(0)} ms`);
  assert.ok(t1 - t0 > 1000, `the run took ${(t1 - t0).toFixed(0)} ms (long enough to tell)`);
  assert.ok(during.length >= 0.3 * expected, `main thread ticked ${during.length} times in ${(t1 - t0).toFixed(0)} ms (expected ~${expected.toFixed(0)})`);
  assert.ok(maxGap < 2000, `longest main-thread stall ${maxGap.toFixed(0)} ms`);

  // Progress reached its maximum: 3 tasks × 4 implementations (3 where the browser reports one core).
  const threads = await poolSize(page);
  const live = threads >= 2 ? IMPLS : IMPLS.slice(0, 3);
  const p = await progress(page);
  assert.equal(p.max, QUICK.length * live.length);
  assert.equal(p.value, p.max);
  assert.match(await page.textContent('.bench-progress-text'), new RegExp(`^Done: ${p.max} measurements`));

  // The worker's instances: the SIMD column ran the SIMD128 module, the scalar column did not.
  const implAttr = (id, a) => page.getAttribute(`.bench-env [data-impl="${id}"]`, a);
  assert.equal(await implAttr('simd', 'data-simd'), 'true');
  assert.equal(await implAttr('simd', 'data-backend'), 'wasm-simd');
  assert.equal(await implAttr('scalar', 'data-simd'), 'false');
  assert.equal(await implAttr('scalar', 'data-backend'), 'wasm');
  if (threads >= 2) {
    assert.equal(await implAttr('threads', 'data-threads'), String(threads), 'the pool has one worker per logical core (at most 8)');
    assert.equal(await implAttr('threads', 'data-simd'), 'true');
  }
  assert.match(await page.textContent('.bench-env [data-env="browser"]'), /\S+ \d+/, 'browser brand and version shown');
  assert.match(await page.textContent('.bench-env [data-env="page-engine"]'), /attnlab \d+\.\d+/);

  const rows = await readRows(page);
  assert.deepEqual(rows.map((r) => r.id), QUICK.map((t) => t.id), 'one row per task, in order');
  for (const t of QUICK) {
    const r = rows.find((x) => x.id === t.id);
    assert.ok(r.complete, `${t.id} complete`);
    for (const i of live) {
      const c = r[i];
      assert.ok(Number.isFinite(c.ms) && c.ms > 0 && c.ms < 10000, `${t.id} ${i}: ${c.ms} ms`);
      // Throughput is the work per call over the median time: GFLOP/s (4·n²·d per head) or M elements/s (n²).
      const want = t.kind === 'attention' ? (4 * t.n * t.n * t.d * (t.heads ?? 1)) / c.ms / 1e6 : (t.n * t.n) / c.ms / 1e3;
      assert.ok(Math.abs(c.rate - want) <= 1e-9 * want, `${t.id} ${i}: rate ${c.rate} vs ${want}`);
    }
    assert.equal(r.simd.simd, 'true', `${t.id}: the SIMD column ran on the SIMD module`);
    assert.equal(r.simd.backend, 'wasm-simd');
    assert.equal(r.scalar.simd, 'false', `${t.id}: the scalar column ran on the scalar module`);
    assert.ok(Math.abs(r.speedup - r.js.ms / r.simd.ms) <= 1e-9 * r.speedup, `${t.id}: speed-up is JS ms / SIMD ms`);
    // Sanity: plain JS is the reference; both wasm modules agree with it within the float32 bound.
    const b = bound(t);
    for (const i of ['scalar', 'simd']) {
      assert.ok(Number.isFinite(r[i].diff) && r[i].diff <= b, `${t.id} ${i}: max |Δ| ${r[i].diff} ≤ ${b.toExponential(2)}`);
    }
    if (threads >= 2) {
      // The async twin gives the synchronous call's result bit for bit: the same difference from plain JS.
      assert.equal(r.threads.diff, r.simd.diff, `${t.id}: the threads column computed the SIMD column's numbers`);
      assert.ok(Math.abs(r.threadsSpeedup - r.simd.ms / r.threads.ms) <= 1e-9 * r.threadsSpeedup, `${t.id}: threads vs 1 is SIMD ms / threads ms`);
    }
    console.log(`${t.id}: ${live.map((i) => `${i} ${r[i].ms.toPrecision(3)} ms ×${r[i].calls} (${r[i].rate.toPrecision(3)}${t.kind === 'attention' ? ' GFLOP/s' : ' Mel/s'}${r[i].diff === null ? '' : `, Δ ${r[i].diff.toExponential(1)}`})`).join(', ')}; SIMD ${r.speedup.toFixed(1)}× JS; bound ${b.toExponential(2)}`);
  }
  // The threads sentence quotes the measured times, task by task, and says how many threads ran.
  const said = await page.textContent('[data-figure="speed-threads"]');
  console.log(said);
  if (threads >= 2) {
    assert.ok(said.startsWith(`Threads: ${threads} workers ran the last column.`), said);
    for (const r of rows) assert.ok(said.includes(`${fmtMs(r.simd.ms)} ms on 1 thread, ${fmtMs(r.threads.ms)} ms on ${threads}`), `${said} quotes ${r.id}`);
  } else {
    assert.match(said, /^Threads: not measured/);
  }
  // Both charts drew one group per task.
  assert.equal(await page.$$eval('[data-chart="speed-attention"] rect.bench-bar', (r) => r.length), 3 * live.length);
  assert.equal(await page.$$eval('[data-chart="speed-softmax"] rect.bench-bar', (r) => r.length), live.length);
  assert.deepEqual(log.errors, [], 'no console errors');
  await done();
});

test('Cancel stops a run mid-way, keeps what finished, and a new run starts', async () => {
  const { page, log, done } = await openPage(env, '#speed');
  // The full plan is long (28 measurements, several seconds): there is time to cancel part-way.
  const live = (await poolSize(page)) >= 2 ? 4 : 3;
  assert.equal(await page.inputValue('select[data-control="speed-sizes"]'), 'full', 'full sizes by default');
  // From the keyboard: Run disables itself, so focus moves to Cancel, and back to Run after Cancel.
  const focused = () => page.evaluate(() => document.activeElement?.dataset.control);
  await page.focus('button[data-control="speed-run"]');
  await page.keyboard.press('Enter');
  assert.equal(await focused(), 'speed-cancel', 'focus moved to Cancel');
  await page.waitForFunction(() => document.querySelector('progress[data-progress="speed"]').value >= 2, null, { timeout: 60000, polling: 100 });
  assert.match(await page.textContent('.bench-progress-text'), new RegExp(`^\\S+ n=\\d+( causal)? · (plain JS|wasm scalar|wasm SIMD|wasm SIMD, \\d+ threads) \\(\\d+/${7 * live}\\)$`));
  await page.keyboard.press('Enter');
  assert.equal(await state(page), 'cancelled');
  assert.equal(await focused(), 'speed-run', 'focus back on Run');
  const before = await progress(page);
  const rowsBefore = await readRows(page);
  assert.ok(before.value >= 2 && before.value < before.max, `cancelled part-way (${before.value}/${before.max})`);
  assert.match(await page.textContent('.bench-progress-text'), new RegExp(`^Cancelled after \\d+ of ${7 * live}`));
  // The finished measurements stay: the first task's plain-JS time is on the page.
  assert.ok(rowsBefore[0]?.js.ms > 0, 'finished rows are kept');
  // Nothing more arrives: the worker is gone, and whatever it had posted before has been handled.
  await drainTasks(page);
  assert.deepEqual(await progress(page), before, 'progress stops after Cancel');
  assert.deepEqual(await readRows(page), rowsBefore, 'the table stops changing after Cancel');
  assert.equal(await page.isDisabled('button[data-control="speed-run"]'), false, 'Run is enabled again');
  assert.equal(await page.isDisabled('button[data-control="speed-cancel"]'), true, 'Cancel is disabled');

  // A new run starts from scratch and finishes.
  await page.selectOption('select[data-control="speed-sizes"]', 'quick');
  await page.click('button[data-control="speed-run"]');
  assert.equal(await state(page), 'running');
  await page.waitForFunction(() => document.querySelector('section#speed')?.dataset.state !== 'running', null, { timeout: 90000, polling: 100 });
  assert.equal(await state(page), 'done');
  const p = await progress(page);
  assert.equal(p.value, QUICK.length * live);
  assert.equal(p.max, QUICK.length * live);
  const rows = await readRows(page);
  assert.deepEqual(rows.map((r) => r.id), QUICK.map((t) => t.id));
  assert.ok(rows.every((r) => r.complete));
  assert.deepEqual(log.errors, [], 'no console errors');
  await done();
});
