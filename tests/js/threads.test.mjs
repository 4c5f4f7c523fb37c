// init({ threads }): every async twin resolves to its synchronous form's result bit for bit, on both backends,
// with 1, 2 and 3 threads (sizes chosen so the parts are uneven and do not divide); errors come back as the same
// class and message, from whichever part meets them; the pool survives them; dispose() ends the workers and a
// script with a pool exits by itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { after, describe, test } from 'node:test';

import { altDist, backends, dist, init, repo } from './support/load.mjs';
import { rng } from './support/random.mjs';

// Bit for bit: the same bytes, and the same keys in the same order for result objects.
function same(got, want, what) {
  if (ArrayBuffer.isView(want)) {
    assert.ok(ArrayBuffer.isView(got), `${what}: a typed array`);
    assert.equal(got.length, want.length, `${what}: length`);
    assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength)), `${what}: bytes differ`);
    return;
  }
  assert.deepEqual(Object.keys(got), Object.keys(want), `${what}: keys`);
  for (const key of Object.keys(want)) {
    if (Array.isArray(want[key])) want[key].forEach((w, i) => same(got[key][i], w, `${what}.${key}[${i}]`));
    else if (ArrayBuffer.isView(want[key]) || (want[key] && typeof want[key] === 'object')) same(got[key], want[key], `${what}.${key}`);
    else assert.equal(got[key], want[key], `${what}.${key}`);
  }
}

// The error the synchronous call throws, and the one the async twin rejects with: same class, same message.
async function sameError(sync, twin, what) {
  let want;
  try {
    sync();
  } catch (e) {
    want = e;
  }
  assert.ok(want, `${what}: the synchronous call throws`);
  await assert.rejects(twin(), (e) => {
    assert.equal(e.constructor, want.constructor, `${what}: class`);
    assert.equal(e.message, want.message, `${what}: message`);
    return true;
  });
}

// The package runs calls below about a millisecond of work on the calling thread (async.js's tuning); this file's
// sizes are small to stay fast, so the thresholds go down to send them through the workers as large calls are.
const { tuning } = await import(pathToFileURL(`${dist}async.js`).href);
Object.assign(tuning, { inlineFloats: 1 << 12, minPartFloats: 1 << 14, inlineMatmul: 1e5, inlineWork: 2.5e5, minPartWork: 1e6 });

const r = rng(2024);
// Sizes past the point where calls are cut (16 Ki floats a part), none a multiple of the parts.
const x = r.array(1001 * 37, -8, 8);
const dy = r.array(x.length, -1, 1);
const a = r.array(197 * 37, -1, 1), b = r.array(37 * 29, -1, 1), bt = r.array(29 * 37, -1, 1);
const rope = r.array(2 * 3 * 45 * 16, -1, 1);
const mha = { x: r.array(40 * 24, -1, 1), n: 40, heads: 4, kvHeads: 2, wq: r.array(24 * 24, -0.3, 0.3), wk: r.array(24 * 12, -0.3, 0.3), wv: r.array(24 * 12, -0.3, 0.3), wo: r.array(24 * 24, -0.3, 0.3) };
// attention: batch 2 × kvHeads 3 = 6 items (GQA, heads 6); and batch 5 × 1 head = 5 items (uneven over 2 and 3).
const gqa = { q: r.array(2 * 6 * 101 * 24, -1, 1), k: r.array(2 * 3 * 77 * 24, -1, 1), v: r.array(2 * 3 * 77 * 20, -1, 1), batch: 2, heads: 6, kvHeads: 3, nq: 101, nk: 77, dk: 24, dv: 20 };
const five = { q: r.array(5 * 130 * 32, -1, 1), k: r.array(5 * 130 * 32, -1, 1), v: r.array(5 * 130 * 32, -1, 1), batch: 5, nq: 130, dk: 32 };
const mask = new Uint8Array(2 * 101 * 77).map(() => (r.next() < 0.8 ? 1 : 0));
// Cut by query rows too: one head (rows only), MQA (4 query heads over one K/V head: folded rows), more queries
// than keys (rows that see nothing under a bottom-right causal mask).
const single = { q: r.array(300 * 20, -1, 1), k: r.array(260 * 20, -1, 1), v: r.array(260 * 12, -1, 1), nq: 300, nk: 260, dk: 20, dv: 12 };
const mqa = { q: r.array(2 * 4 * 90 * 16, -1, 1), k: r.array(2 * 140 * 16, -1, 1), v: r.array(2 * 140 * 16, -1, 1), batch: 2, heads: 4, kvHeads: 1, nq: 90, nk: 140, dk: 16, dv: 16 };
const wide = { ...single, k: single.k.subarray(0, 150 * 20), v: single.v.subarray(0, 150 * 12), nk: 150 };
const parts = await import(pathToFileURL(`${dist}attention-parts.js`).href);
// A plan's sub-calls are descriptors of the engine's call, as the workers run them: here they run one by one on a
// module of this thread's own (no worker, no fallback to hide behind). The calls are prepared (types, the engine's
// check) by the lab's own prepare/run pairs.
const { CALLS } = await import(pathToFileURL(`${dist}lab.js`).href);
const { engineCall } = await import(pathToFileURL(`${dist}call.js`).href);
const factory = (await import(pathToFileURL(`${dist}attnlab.mjs`).href)).default;
const moduleFor = async (simd) => factory({ wasmBinary: readFileSync(`${dist}attnlab-${simd ? 'simd' : 'scalar'}.wasm`) });
const runCalls = (m, name, calls) => calls.map(({ d, given }) => engineCall(m, name).call(name, d, given));

// The synchronous results the async twins are compared with. A backend's synchronous call on the same inputs gives
// the same bytes whichever lab makes it (1, 2 or 3 threads), so each is computed once per backend and reused by the
// other thread counts; inputs drawn inside a test differ between them and are computed afresh. A call with an out
// buffer, or an argument that is not plain data (a KV cache, a function), is made every time.
const syncResults = new Map();
function sync(lab, backend, name, ...args) {
  let key;
  try {
    key = `${backend}.${name}(${JSON.stringify(args, (k, v) => {
      if (k === 'out' || typeof v === 'function') throw new Error('not plain data');
      if (typeof v === 'number') return `\0${Object.is(v, -0) ? '-0' : v}`; // (NaN, ±Infinity and '37' apart)
      if (ArrayBuffer.isView(v)) return `${v.constructor.name} ${v.length} ${createHash('sha1').update(Buffer.from(v.buffer, v.byteOffset, v.byteLength)).digest('hex')}`;
      if (v && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype) throw new Error('not plain data');
      return v;
    })})`;
  } catch {
    return lab[name](...args);
  }
  if (!syncResults.has(key)) syncResults.set(key, lab[name](...args));
  return syncResults.get(key);
}

for (const backend of backends) {
  for (const threads of [1, 2, 3]) {
    describe(`threads: ${threads} (${backend.name})`, async () => {
      const lab = await init({ simd: backend.simd, threads });
      after(() => lab.dispose());
      const own = await moduleFor(backend.simd); // (the parts' own module)
      // This backend's own y: the describes of other backends and thread counts set up while this one runs.
      const want = (name, ...args) => sync(lab, backend.name, name, ...args);
      const y = want('softmax', x, { cols: 37 });

      test('every async twin equals its synchronous form bit for bit', async () => {
        assert.equal(lab.threads, threads);
        const cases = [
          ['softmax', [x, { cols: 37, temperature: 0.7 }]],
          ['softmax', [x, { cols: 37, log: true }]],
          ['softmax', [x.subarray(0, 5 * 37), { cols: 37 }]],
          ['softmaxBackward', [{ y, dy, cols: 37 }]],
          ['matmul', [a, b, { m: 197, k: 37, n: 29 }]],
          ['matmul', [a, bt, { m: 197, k: 37, n: 29, transposeB: true }]],
          ['rope', [rope, { batch: 2, heads: 3, dk: 16, offset: 5 }]],
          ['multiHeadAttention', [{ ...mha, causal: true, returnIntermediates: true }]],
          ['attention', [{ ...gqa }]],
          ['attention', [{ ...gqa, causal: true, window: [40, 0], returnLse: true }]],
          ['attention', [{ ...gqa, mask, maskShape: [2, 1, 101, 77], returnWeights: true, returnScores: true, returnRawScores: true }]],
          ['attention', [{ ...gqa, layout: 'bshd', keyLengths: [77, 50], softcap: 5 }]],
          ['attention', [{ ...five, causal: 'top-left', alibiSlopes: new Float32Array([0.25]) }]],
          ['attention', [{ ...five, layout: 'bshd', returnLse: true }]],
          ['attention', [{ ...single, causal: true, returnLse: true }]],
          ['attention', [{ ...single, mask: r.array(300 * 260, -2, 0), returnWeights: true }]],
          ['attention', [{ ...wide, causal: true, window: [60, 10], alibiSlopes: new Float32Array([0.125]), softcap: 4 }]],
          ['attention', [{ ...mqa, causal: 'top-left', keyLengths: new Int32Array([140, 71]), returnLse: true }]],
          ['attention', [{ ...mqa, layout: 'bshd', mask: r.array(130, -1, 0), maskShape: [1, 1, 1, 130], returnScores: true }]],
        ];
        const before = lab.threadStats();
        for (const [name, args] of cases) same(await lab[`${name}Async`](...args), want(name, ...args), `${name}Async`);
        const backward = [
          { ...gqa, causal: true },
          { ...gqa, layout: 'bshd', keyLengths: [77, 50], mask, maskShape: [2, 1, 101, 77], alibiSlopes: r.array(6, 0, 0.3) },
          { ...mqa, causal: 'top-left', window: [20, 5], mask: r.array(140, -1, 0), maskShape: [140] },
          { ...five, softcap: 3 },
        ];
        for (const opts of backward) {
          const fwd = want('attention', { ...opts, returnLse: true });
          const grad = { ...opts, output: fwd.output, lse: fwd.lse, dOutput: r.array(fwd.output.length, -1, 1) };
          same(await lab.attentionBackwardAsync(grad), want('attentionBackward', grad), 'attentionBackwardAsync');
        }
        // Where the work ran: with workers, every call but the 5-row softmax (below the lowered threshold) went to
        // them, in at least one part each, and no valid call ran again on this thread; with threads: 1, all here.
        const after = lab.threadStats(), calls = cases.length + backward.length;
        const delta = Object.fromEntries(Object.keys(after).map((key) => [key, after[key] - before[key]]));
        assert.equal(delta.reruns, 0, 'valid calls rerun nothing');
        if (threads === 1) assert.deepEqual(delta, { workerParts: 0, inlineCalls: calls, reruns: 0 });
        else {
          assert.equal(delta.inlineCalls, 1, 'only the small softmax stays on the calling thread');
          assert.ok(delta.workerParts >= calls - 1, `${delta.workerParts} parts for ${calls - 1} calls`);
        }
      });

      test('attentionBackward: every part of a plan runs alone and the parts merge bit for bit', { skip: threads !== 3 }, async () => {
        for (const [c, opts] of [
          { ...gqa, causal: true, layout: 'bshd', keyLengths: [60, 77], mask, maskShape: [2, 1, 101, 77] },
          { ...mqa, alibiSlopes: r.array(4, 0, 0.2), window: [30, 30] },
        ].entries()) {
          const fwd = lab.attention({ ...opts, returnLse: true });
          const grad = { ...opts, output: fwd.output, lse: fwd.lse, dOutput: r.array(fwd.output.length, -1, 1) };
          const want = lab.attentionBackward(grad);
          const backward = lab[CALLS].attentionBackward;
          for (let count = 2; count <= 4; ++count) {
            const plan = parts.planBackward(backward.prepare(grad), backward.op.F, count, 1);
            assert.equal(plan.plan.length, Math.min(count, c === 0 ? 6 : 2), `call ${c}: parts`);
            const results = plan.plan.map((rects) => runCalls(own, 'attentionBackward', parts.backwardCalls(plan, rects).calls));
            same(parts.mergeBackward(plan, results), want, `backward call ${c}, ${count} parts`);
          }
        }
      });

      test('attention: every part of a plan runs alone and the parts merge bit for bit', { skip: threads !== 3 }, async () => {
        // The plans the async twin makes, run here part by part (so no part can hide behind the synchronous
        // fallback): 2 to 5 parts, cut by batch item, K/V head and query rows.
        const calls = [
          { ...gqa, causal: true, mask, maskShape: [2, 1, 101, 77], returnLse: true, returnWeights: true },
          { ...gqa, layout: 'bshd', keyLengths: [77, 50], alibiSlopes: r.array(6, 0, 0.3) },
          { ...single, causal: 'top-left', window: [30, 2], mask: r.array(260, -1, 0), maskShape: [260] },
          { ...mqa, causal: true, layout: 'bshd', returnRawScores: true, returnLse: true },
          { ...wide, causal: true, returnLse: true, out: new Float32Array(300 * 12) },
        ];
        const attention = lab[CALLS].attention;
        for (const [c, opts] of calls.entries())
          for (let count = 2; count <= 5; ++count) {
            const plan = parts.planAttention(attention.prepare(opts), attention.op.F, count, 1);
            assert.equal(plan.plan.length, count, `call ${c}: ${count} parts`);
            const results = plan.plan.map((rects) => runCalls(own, 'attention', parts.partCalls(plan, rects).calls));
            same(parts.mergeAttention(plan, results), lab.attention(opts), `call ${c}, ${count} parts`);
          }
      });

      test('out buffers are honoured', async () => {
        const out = new Float32Array(x.length);
        assert.equal(await lab.softmaxAsync(x, { cols: 37, out }), out);
        same(out, want('softmax', x, { cols: 37 }), 'softmax out');
        const mOut = new Float32Array(197 * 29);
        assert.equal(await lab.matmulAsync(a, b, { m: 197, k: 37, n: 29, out: mOut }), mOut);
        same(mOut, want('matmul', a, b, { m: 197, k: 37, n: 29 }), 'matmul out');
        for (const layout of ['bhsd', 'bshd']) {
          const aOut = new Float32Array(2 * 6 * 101 * 20);
          const got = await lab.attentionAsync({ ...gqa, layout, out: aOut, returnLse: true });
          assert.equal(got.output, aOut);
          same(got, want('attention', { ...gqa, layout, returnLse: true }), `attention out (${layout})`);
        }
        const rOut = new Float32Array(rope.length);
        assert.equal(await lab.ropeAsync(rope, { batch: 2, heads: 3, dk: 16, out: rOut }), rOut);
        same(rOut, want('rope', rope, { batch: 2, heads: 3, dk: 16 }), 'rope out');
        const fwd = want('attention', { ...five, returnLse: true });
        const grad = { ...five, output: fwd.output, lse: fwd.lse, dOutput: fwd.output.map((o) => o - 0.5) };
        const dq = new Float32Array(five.q.length), dv = new Float32Array(five.v.length);
        const got = await lab.attentionBackwardAsync({ ...grad, out: { dq, dv } });
        assert.ok(got.dq === dq && got.dv === dv, 'attentionBackwardAsync: the out buffers are the result');
        same(got, want('attentionBackward', grad), 'attentionBackward out');
      });

      // A cut in blocks of 64 rows leaves a last part of 1–3 rows at m = 64·j + 1…3: alone, such rows would take the
      // engine's few-row path (one dot product per entry, over all of k), whose sums round unlike the same rows
      // inside a larger call; the cut gives them to the part before. 65 × 2048 × 3072 is a product the package's
      // own threshold cuts (about 4e8 multiply-adds) with a transposed b.
      test('matmul: rows past the last 64-row block are the rows a whole call gives', { skip: threads === 1 }, async () => {
        const cases = [[65, 37, 61], [66, 37, 61], [67, 37, 61], [129, 37, 61]]; // (past the lowered threshold: cut)
        if (threads === 2 && !altDist) cases.push([65, 2048, 3072]); // (not in the debug build: 4e8 checked multiply-adds)
        for (const [m, k, n] of cases) {
          const ma = r.array(m * k, -1, 1), mb = r.array(n * k, -1, 1), opts = { m, k, n, transposeB: true };
          const before = lab.threadStats();
          same(await lab.matmulAsync(ma, mb, opts), lab.matmul(ma, mb, opts), `matmulAsync m ${m}, k ${k}, n ${n}`);
          const stats = lab.threadStats();
          assert.ok(stats.workerParts > before.workerParts && stats.reruns === before.reruns, `m ${m}: cut, run by the workers, nothing rerun`);
        }
      });

      test('a KV cache stays on the calling thread and gives the same result', async () => {
        const cache = lab.kvCache({ batch: 1, kvHeads: 2, dk: 8, dv: 8, capacity: 16 });
        cache.append(r.array(2 * 5 * 8, -1, 1), r.array(2 * 5 * 8, -1, 1));
        const q = r.array(4 * 2 * 8, -1, 1);
        const before = lab.threadStats();
        same(await lab.attentionAsync({ q, cache, heads: 4 }), lab.attention({ q, cache, heads: 4 }), 'attention over a cache');
        assert.deepEqual(lab.threadStats(), { ...before, inlineCalls: before.inlineCalls + 1 }, 'counted as kept on the calling thread');
        cache.dispose();
      });

      test('out buffers backed by a SharedArrayBuffer: filled once the call succeeded, untouched when it fails', async () => {
        const shared = (n) => new Float32Array(new SharedArrayBuffer(4 * n));
        const rOut = shared(rope.length);
        assert.equal(await lab.ropeAsync(rope, { batch: 2, heads: 3, dk: 16, out: rOut }), rOut);
        same(new Float32Array(rOut), want('rope', rope, { batch: 2, heads: 3, dk: 16 }), 'ropeAsync into shared memory');
        const mOut = shared(40 * 24);
        const got = await lab.multiHeadAttentionAsync({ ...mha, out: mOut });
        assert.equal(got.output, mOut);
        same(new Float32Array(mOut), want('multiHeadAttention', mha).output, 'multiHeadAttentionAsync into shared memory');
        const xOut = shared(x.length);
        assert.equal(await lab.softmaxAsync(x, { cols: 37, out: xOut }), xOut);
        same(new Float32Array(xOut), want('softmax', x, { cols: 37 }), 'softmaxAsync into shared memory');
        // A call that fails (a NaN the engine meets in the worker) leaves the shared buffer as it was.
        const kept = shared(rope.length).fill(7), nan = rope.slice();
        nan[rope.length - 1] = NaN;
        await sameError(() => lab.rope(nan, { batch: 2, heads: 3, dk: 16 }), () => lab.ropeAsync(nan, { batch: 2, heads: 3, dk: 16, out: kept }), 'rope NaN');
        assert.ok(kept.every((v) => v === 7), 'ropeAsync: a shared out is untouched on error');
        const mKept = shared(40 * 24).fill(7);
        await sameError(() => lab.multiHeadAttention({ ...mha, x: mha.x.map((v, i) => (i === 5 ? NaN : v)) }),
          () => lab.multiHeadAttentionAsync({ ...mha, x: mha.x.map((v, i) => (i === 5 ? NaN : v)), out: mKept }), 'multiHeadAttention NaN');
        assert.ok(mKept.every((v) => v === 7), 'multiHeadAttentionAsync: a shared out is untouched on error');
      });

      test('errors: the same class and message, from any part; the pool keeps working', async () => {
        const start = lab.threadStats();
        const bad = x.slice();
        bad[900 * 37 + 3] = NaN; // in the last part
        await sameError(() => lab.softmax(bad, { cols: 37 }), () => lab.softmaxAsync(bad, { cols: 37 }), 'NaN in a late row');
        const two = x.slice();
        two[600 * 37] = Infinity, two[950 * 37] = NaN; // two parts fail: the first is named
        await sameError(() => lab.softmax(two, { cols: 37 }), () => lab.softmaxAsync(two, { cols: 37 }), 'two bad rows');
        await sameError(() => lab.softmax(x, { cols: 37, temperature: 0 }), () => lab.softmaxAsync(x, { cols: 37, temperature: 0 }), 'temperature 0');
        await sameError(() => lab.softmax(x, { cols: 36 }), () => lab.softmaxAsync(x, { cols: 36 }), 'cols not dividing');
        const yBad = y.slice();
        yBad[990 * 37] = 1.5;
        await sameError(() => lab.softmaxBackward({ y: yBad, dy, cols: 37 }), () => lab.softmaxBackwardAsync({ y: yBad, dy, cols: 37 }), 'y out of range');
        await sameError(() => lab.matmul(a, b, { m: 197, k: 37, n: 28 }), () => lab.matmulAsync(a, b, { m: 197, k: 37, n: 28 }), 'matmul sizes');
        const kBad = gqa.k.slice();
        kBad[kBad.length - 1] = NaN;
        await sameError(() => lab.attention({ ...gqa, k: kBad }), () => lab.attentionAsync({ ...gqa, k: kBad }), 'NaN in k');
        await sameError(() => lab.attention({ ...gqa, scale: -1 }), () => lab.attentionAsync({ ...gqa, scale: -1 }), 'bad scale');
        await sameError(() => lab.attention({ ...gqa, heads: 4 }), () => lab.attentionAsync({ ...gqa, heads: 4 }), 'kvHeads not dividing');
        await sameError(() => lab.attention({ ...gqa, bogus: 1 }), () => lab.attentionAsync({ ...gqa, bogus: 1 }), 'unknown option');
        await sameError(() => lab.attention({ ...gqa, out: new Float32Array(3) }), () => lab.attentionAsync({ ...gqa, out: new Float32Array(3) }), 'out too short');
        await sameError(() => lab.rope(rope, { dk: 7 }), () => lab.ropeAsync(rope, { dk: 7 }), 'rope dk');
        // Errors met by one part of a call cut by query rows: named as the whole call names them.
        const qBad = single.q.slice();
        qBad[290 * 20 + 7] = NaN;
        await sameError(() => lab.attention({ ...single, q: qBad }), () => lab.attentionAsync({ ...single, q: qBad }), 'NaN in a late q row');
        const mBad = r.array(300 * 260, -1, 0);
        mBad[250 * 260 + 3] = Infinity;
        await sameError(() => lab.attention({ ...single, mask: mBad }), () => lab.attentionAsync({ ...single, mask: mBad }), '+inf in a late mask row');
        for (const [what, extra] of [
          ['keyLengths past nk', { keyLengths: [140, 141] }], ['keyLengths short', { keyLengths: [140] }],
          ['alibi too large', { alibiSlopes: new Float32Array([1, 1, 1, 1e35]) }], ['alibi short', { alibiSlopes: new Float32Array(3) }],
          ['maskShape not broadcasting', { mask: new Float32Array(2 * 140), maskShape: [2, 1, 140] }],
          ['maskShape without a mask', { maskShape: [1, 140] }], ['window bound', { window: [-3, 0] }], ['softcap', { softcap: 0 }],
        ])
          await sameError(() => lab.attention({ ...mqa, ...extra }), () => lab.attentionAsync({ ...mqa, ...extra }), what);
        const fwd = want('attention', { ...five, returnLse: true });
        const badGrad = { ...five, output: fwd.output, lse: fwd.lse.subarray(1), dOutput: fwd.output };
        const dqKept = new Float32Array(five.q.length).fill(7);
        await sameError(() => lab.attentionBackward(badGrad), () => lab.attentionBackwardAsync({ ...badGrad, out: { dq: dqKept } }), 'backward lse length');
        assert.ok(dqKept.every((v) => v === 7), 'attentionBackwardAsync: out untouched on error');
        // Met by one part of a split backward (the last item's): named as the whole call names them.
        const gFwd = want('attention', { ...gqa, returnLse: true });
        const gGrad = { ...gqa, output: gFwd.output, lse: gFwd.lse, dOutput: r.array(gFwd.output.length, -1, 1) };
        const dOutBad = gGrad.dOutput.slice();
        dOutBad[dOutBad.length - 5] = NaN;
        const lseBad = gGrad.lse.slice();
        lseBad[lseBad.length - 3] += 1;
        const dkKept = new Float32Array(gqa.k.length).fill(7);
        await sameError(() => lab.attentionBackward({ ...gGrad, dOutput: dOutBad }), () => lab.attentionBackwardAsync({ ...gGrad, dOutput: dOutBad, out: { dk: dkKept } }), 'backward: NaN in a late dOutput');
        await sameError(() => lab.attentionBackward({ ...gGrad, lse: lseBad }), () => lab.attentionBackwardAsync({ ...gGrad, lse: lseBad }), 'backward: a late lse that does not match');
        assert.ok(dkKept.every((v) => v === 7), 'attentionBackwardAsync: out untouched when a part fails');
        await sameError(() => lab.attention({ ...gqa, scale: () => 1 }), () => lab.attentionAsync({ ...gqa, scale: () => 1 }), 'an option that cannot be posted');
        // A call refused by the engine's check (sizes, options) is refused on the calling thread before any part
        // exists: no part, nothing run again. A bad value met by a part runs the whole call again here, counted.
        const checked = lab.threadStats();
        for (const [sync, twin] of [
          [() => lab.softmax(x, { cols: 36 }), () => lab.softmaxAsync(x, { cols: 36 })],
          [() => lab.matmul(a, b, { m: 197, k: 37, n: 28 }), () => lab.matmulAsync(a, b, { m: 197, k: 37, n: 28 })],
          [() => lab.attention({ ...gqa, heads: 4 }), () => lab.attentionAsync({ ...gqa, heads: 4 })],
          [() => lab.rope(rope, { dk: 7 }), () => lab.ropeAsync(rope, { dk: 7 })],
        ])
          await sameError(sync, twin, 'a size the engine refuses');
        assert.deepEqual(lab.threadStats(), checked, 'refused by the check: no part, no rerun');
        const qNaN = single.q.slice();
        qNaN[3] = NaN;
        await sameError(() => lab.attention({ ...single, q: qNaN }), () => lab.attentionAsync({ ...single, q: qNaN }), 'NaN met by a part');
        assert.equal(lab.threadStats().reruns - checked.reruns, threads === 1 ? 0 : 1, 'a part that meets a bad value: the call runs again, counted');
        assert.ok(lab.threadStats().reruns > start.reruns || threads === 1, 'the bad values above were rerun, counted');
        const settled = lab.threadStats();
        same(await lab.attentionAsync({ ...gqa }), want('attention', { ...gqa }), 'after the errors');
        assert.equal(lab.threadStats().reruns, settled.reruns, 'a valid call after the errors runs once');
      });

      test('concurrent calls share the pool', async () => {
        const calls = [lab.softmaxAsync(x, { cols: 37 }), lab.attentionAsync({ ...five }), lab.matmulAsync(a, b, { m: 197, k: 37, n: 29 })];
        const [s, at, m] = await Promise.all(calls);
        same(s, want('softmax', x, { cols: 37 }), 'softmax');
        same(at, want('attention', { ...five }), 'attention');
        same(m, want('matmul', a, b, { m: 197, k: 37, n: 29 }), 'matmul');
      });
    });
  }
}

describe('init({ threads }) and dispose()', () => {
  test('threads is checked', async () => {
    await assert.rejects(init({ threads: '2' }), { name: 'TypeError', message: 'init: threads must be a number, got "2"' });
    await assert.rejects(init({ threads: 0 }), { name: 'RangeError', message: 'init: threads must be an integer from 1 to 256, got 0' });
    await assert.rejects(init({ threads: 1.5 }), RangeError);
  });

  test('after dispose() async calls reject, synchronous calls still work', async () => {
    const lab = await init({ threads: 2 });
    lab.dispose();
    lab.dispose(); // twice is fine
    await assert.rejects(lab.softmaxAsync(x, { cols: 37 }), { name: 'Error', message: /disposed/ });
    assert.equal(lab.softmax(new Float32Array([0, 0])).length, 2);
  });

  test('a script with a pool exits by itself (idle workers do not hold Node open), with and without dispose()', () => {
    for (const end of ['', 'lab.dispose();']) {
      const script = `const { init } = await import(${JSON.stringify(pathToFileURL(`${dist}index.js`).href)});
        const lab = await init({ threads: 2 });
        const s = await lab.softmaxAsync(new Float32Array(40000), { cols: 40 });
        console.log(s[0]); ${end}`;
      // (the debug build's glue needs the globals the debug suite installs, in this child too)
      const debug = altDist ? ['--import', pathToFileURL(`${repo}tests/js/support/debug-globals.mjs`).href] : [];
      const res = spawnSync(process.execPath, [...debug, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(res.status, 0, res.stderr);
      assert.equal(res.stdout.trim(), '0.02500000037252903');
    }
  });
});
