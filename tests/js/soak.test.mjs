// Soak: a long seeded run of random calls through the JS API, valid and invalid arguments mixed across softmax,
// attention (also over whole tensors, and through KV caches made and disposed on the way) and multiHeadAttention with
// small shapes. Every valid result is checked element by element against
// the float64 reference (support/reference.mjs, its derived bounds); every invalid call must throw the right class
// (TypeError for a wrong type, RangeError for a wrong size or value) with a message naming the argument; and the
// module's wasm memory must not grow after warm-up (nothing allocated per call survives it, error or not).
//
// 100 000 calls per backend by default; ATTNLAB_SOAK_CALLS=N changes it (scripts/test-js-debug.sh runs fewer
// against the -sSAFE_HEAP build). A failure prints the seed and the call's index, so it reproduces.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, init } from './support/load.mjs';
import { rng, randomMask } from './support/random.mjs';
import { attentionFullRef } from './support/attention-full-ref.mjs';
import { attentionRef, assertWithin, multiHeadRef, softmaxRows } from './support/reference.mjs';

const CALLS = Number(process.env.ATTNLAB_SOAK_CALLS ?? 100_000);
const WARMUP = Math.min(2000, Math.floor(CALLS / 10));
const SEED = 8_100;

// ---- valid calls: a call, and how to check what it returns ----

// A row of logits: moderate values around a shift (so that huge logits like 1e30 or 1e4 appear, where only the
// max subtraction keeps the result right), some -Infinity, sometimes a whole row of -Infinity.
function logits(r, rows, cols) {
  const x = new Float32Array(rows * cols);
  for (let row = 0; row < rows; ++row) {
    const shift = r.pick([0, 0, 0, 90, -1000, 1e4, 1e30]);
    for (let j = 0; j < cols; ++j) x[row * cols + j] = r.bool(0.08) ? -Infinity : shift + r.next() * 16 - 8;
    if (r.bool(0.04)) x.fill(-Infinity, row * cols, (row + 1) * cols);
  }
  return x;
}

// The bounds must be real numbers, or assertWithin's `err > bound` would pass vacuously.
function checked(ref, label) {
  for (let i = 0; i < ref.bound.length; ++i)
    if (!(ref.bound[i] >= 0)) throw new Error(`${label}: reference bound[${i}] is ${ref.bound[i]} (the case cannot be checked)`);
  return ref;
}

function validSoftmax(r) {
  const cols = r.int(1, 9), rows = r.int(1, 4);
  const x = logits(r, rows, cols);
  const opts = {};
  if (rows > 1 || r.bool()) opts.cols = cols;
  if (r.bool()) opts.temperature = Math.exp(Math.log(0.05) + r.next() * Math.log(400)); // 0.05 … 20, log-uniform
  if (r.bool(0.3)) opts.log = r.bool();
  return {
    fn: 'softmax', args: [x, opts],
    check(got, label) {
      const t = Math.fround(opts.temperature ?? 1);
      const ref = softmaxRows(x, null, cols, { mul: 1 / t, mulRounded: opts.temperature !== undefined && opts.temperature !== 1, log: !!opts.log });
      assertWithin(got, checked(ref, label), label);
    },
  };
}

// Attention with every size given (`explicit`) or some left to inference.
function attentionCase(r, explicit) {
  const nq = r.int(1, 5), nk = r.bool(0.1) ? r.int(60, 70) : r.int(1, 8), dk = r.int(1, 6), dv = r.int(1, 6);
  const c = { q: r.array(nq * dk, -2, 2), k: r.array(nk * dk, -2, 2), v: r.array(nk * dv, -2, 2) };
  if (explicit) Object.assign(c, { nq, nk, dk, dv });
  else {
    // dk, or nq or nk to infer it from; everything else given or not
    if (r.bool(0.7)) c.dk = dk;
    else if (r.bool()) c.nq = nq;
    else c.nk = nk;
    if (r.bool(0.6)) c.nq = nq;
    if (r.bool(0.6)) c.nk = nk;
    if (r.bool(0.6)) c.dv = dv;
  }
  if (r.bool()) c.causal = r.bool(0.8);
  if (r.bool(0.3)) c.mask = randomMask(r, nq, nk, r.int(0, 1));
  if (r.bool(0.3)) c.scale = r.pick([0.1, 0.5, 2, 1 / 3]);
  for (const flag of ['returnScores', 'returnWeights', 'returnRawScores']) if (r.bool(0.3)) c[flag] = r.bool(0.8);
  return { c, sizes: { nq, nk, dk, dv } };
}

function validAttention(r) {
  const { c, sizes } = attentionCase(r, false);
  return {
    fn: 'attention', args: [c],
    check(got, label) {
      const ref = attentionRef({ ...c, ...sizes, scale: c.scale === undefined ? undefined : Math.fround(c.scale) });
      assert.deepEqual(Object.keys(got).sort(), ['output', ...['scores', 'weights', 'rawScores'].filter((k) => c[`return${k[0].toUpperCase()}${k.slice(1)}`])].sort(), label);
      assertWithin(got.output, checked(ref.out, label), `${label} output`);
      if (c.returnScores) assertWithin(got.scores, ref.scores, `${label} scores`);
      if (c.returnWeights) assertWithin(got.weights, checked(ref.weights, label), `${label} weights`);
      if (c.returnRawScores) assertWithin(got.rawScores, ref.raw, `${label} rawScores`);
    },
  };
}

function mhaCase(r, explicit) {
  const heads = r.int(1, 4);
  const kvHeads = r.pick([1, 2, 3, 4].filter((g) => heads % g === 0));
  const hk = r.int(1, 3), hv = r.bool(0.6) ? hk : r.int(1, 3);
  const dModel = r.bool(0.6) ? heads * hk : r.int(1, 6);
  const n = r.int(1, 5);
  const c = {
    x: r.array(n * dModel), heads,
    wq: r.array(dModel * heads * hk), wk: r.array(dModel * kvHeads * hk),
    wv: r.array(dModel * kvHeads * hv), wo: r.array(heads * hv * dModel),
  };
  if (explicit) Object.assign(c, { n, dModel, kvHeads, dk: hk, dv: hv });
  else {
    if (r.bool(0.8)) c.dModel = dModel;
    if (r.bool(0.5) || c.dModel === undefined) c.n = n;
    if (kvHeads !== heads || r.bool(0.3)) c.kvHeads = kvHeads;
    if (dModel !== heads * hk || r.bool(0.3)) c.dk = hk;
    if (dModel !== heads * hv || r.bool(0.3)) c.dv = hv;
  }
  if (r.bool()) c.causal = r.bool(0.8);
  if (r.bool(0.3)) c.mask = randomMask(r, n, n, r.int(0, 1));
  if (r.bool(0.3)) c.scale = r.pick([0.1, 0.5, 2]);
  if (r.bool(0.3)) c.returnIntermediates = r.bool(0.8);
  return { c, sizes: { n, dModel, kvHeads, dk: hk, dv: hv } };
}

function validMha(r) {
  const { c, sizes } = mhaCase(r, false);
  return {
    fn: 'multiHeadAttention', args: [c],
    check(got, label) {
      const ref = multiHeadRef({ ...c, ...sizes, scale: c.scale === undefined ? undefined : Math.fround(c.scale) });
      assertWithin(got.output, checked(ref.out, label), `${label} output`);
      if (!c.returnIntermediates) {
        assert.deepEqual(Object.keys(got), ['output'], label);
        return;
      }
      for (const key of ['q', 'k', 'v', 'concat']) assertWithin(got[key], ref[key], `${label} ${key}`);
      assert.equal(got.heads.length, c.heads, label);
      got.heads.forEach((h, i) => {
        for (const key of ['q', 'k', 'v', 'scores', 'weights', 'output']) assertWithin(h[key], ref.heads[i][key], `${label} heads[${i}].${key}`);
      });
    },
  };
}

// ---- invalid calls: one thing wrong in an otherwise valid call, the error class and the argument to name ----

const notTensors = () => [undefined, null, [0.5, 1], new Float64Array(4), new Int32Array(4), 'abc', 3, {}];
const notNumbers = ['4', true, null, {}, 4n];
const badSizes = [0, -1, -7, 1.5, 0.999, NaN, Infinity, -Infinity, 2 ** 31, 1e300];
const badPositives = [0, -0, -1, -0.5, NaN, Infinity, -Infinity, 1e-46, 1e39, -1e-30];
const notFlags = [1, 0, 'true', 'false', null, {}, []];

const withValue = (a, r, v) => Object.assign(a.slice(), { [r.int(0, a.length - 1)]: v });
// A length ≥ 1 that differs from n.
const otherLength = (r, n) => {
  const d = r.int(1, 3) * (r.bool() || n <= 3 ? 1 : -1);
  return n + d;
};

function invalidSoftmax(r) {
  const { args: [x, opts] } = validSoftmax(r);
  opts.cols ??= x.length;
  const kinds = [
    () => [[r.pick(notTensors()), opts], TypeError, 'x'],
    () => [[new Float32Array(0), opts], RangeError, 'x'],
    () => [[withValue(x, r, NaN), opts], RangeError, 'x'],
    () => [[withValue(x, r, Infinity), opts], RangeError, 'x'],
    () => [[x, { ...opts, cols: r.pick(badSizes) }], RangeError, 'cols'],
    () => [[x, { ...opts, cols: r.pick(notNumbers) }], TypeError, 'cols'],
    () => [[x, { ...opts, cols: x.length + r.int(1, 3) }], RangeError, 'cols'],
    () => [[x, { ...opts, temperature: r.pick([...badPositives, 1e-40]) }], RangeError, 'temperature'],
    () => [[x, { ...opts, temperature: r.pick(notNumbers) }], TypeError, 'temperature'],
    () => [[x, { ...opts, log: r.pick(notFlags) }], TypeError, 'log'],
    () => { const key = r.pick(['col', 'temp', 'Cols', 'logits', 'axis']); return [[x, { ...opts, [key]: 1 }], TypeError, key]; },
    () => [[x, r.pick([4, 'cols', true, null])], TypeError, 'options'],
  ];
  const [args, Class, arg] = r.pick(kinds)();
  return { fn: 'softmax', args, Class, arg };
}

function invalidAttention(r) {
  const { c } = attentionCase(r, true);
  const { nq, nk } = c;
  const kinds = [
    () => [r.pick([undefined, null, 5, 'q']), TypeError, 'options'],
    () => { const t = r.pick(['q', 'k', 'v']); return [{ ...c, [t]: r.pick(notTensors()) }, TypeError, t]; },
    () => [{ ...c, mask: r.pick([[0], new Float64Array(nq * nk), 'mask', 1, {}]) }, TypeError, 'mask'],
    () => { const t = r.pick(['q', 'k', 'v']); return [{ ...c, [t]: r.array(otherLength(r, c[t].length)) }, RangeError, t]; },
    () => { const t = r.pick(['q', 'k', 'v', 'mask']); return [{ ...c, [t]: new Float32Array(0) }, RangeError, t]; },
    () => [{ ...c, mask: new Float32Array(otherLength(r, nq * nk)) }, RangeError, 'mask'],
    () => { const s = r.pick(['nq', 'nk', 'dk', 'dv']); return [{ ...c, [s]: r.pick(badSizes) }, RangeError, s]; },
    () => { const s = r.pick(['nq', 'nk', 'dk', 'dv']); return [{ ...c, [s]: r.pick(notNumbers) }, TypeError, s]; },
    () => [{ ...c, scale: r.pick(badPositives) }, RangeError, 'scale'],
    () => [{ ...c, scale: r.pick(notNumbers) }, TypeError, 'scale'],
    // (causal also takes 'bottom-right' and 'top-left': another string is a value it does not know, a RangeError)
    () => { const f = r.pick(['causal', 'returnScores', 'returnWeights', 'returnRawScores']), v = r.pick(notFlags); return [{ ...c, [f]: v }, f === 'causal' && typeof v === 'string' ? RangeError : TypeError, f]; },
    () => { const key = r.pick(['casual', 'Q', 'returnweights', 'heads', 'dK']); return [{ ...c, [key]: true }, TypeError, key]; },
    () => { const t = r.pick(['q', 'k', 'v']); return [{ ...c, [t]: withValue(c[t], r, r.pick([NaN, Infinity])) }, RangeError, t]; },
    () => [{ ...c, mask: withValue(c.mask ?? new Float32Array(nq * nk), r, r.pick([NaN, Infinity])) }, RangeError, 'mask'],
    () => [{ ...c, q: new Float32Array(c.q.length).fill(1e20), k: new Float32Array(c.k.length).fill(-1e20) }, RangeError, 'q'],
    () => [{ ...c, nq: undefined, nk: undefined, dk: undefined }, TypeError, 'dk'],
  ];
  const [opts, Class, arg] = r.pick(kinds)();
  return { fn: 'attention', args: [opts], Class, arg };
}

function invalidMha(r) {
  const { c } = mhaCase(r, true);
  const { n, heads } = c;
  const tensors = ['x', 'wq', 'wk', 'wv', 'wo'];
  const kinds = [
    () => [r.pick([undefined, null, 5, 'x']), TypeError, 'options'],
    () => { const t = r.pick(tensors); return [{ ...c, [t]: r.pick(notTensors()) }, TypeError, t]; },
    () => [{ ...c, mask: r.pick([[0], new Float64Array(n * n), 'mask', 1]) }, TypeError, 'mask'],
    () => { const t = r.pick(tensors); return [{ ...c, [t]: r.array(otherLength(r, c[t].length)) }, RangeError, t]; },
    () => { const t = r.pick([...tensors, 'mask']); return [{ ...c, [t]: new Float32Array(0) }, RangeError, t]; },
    () => [{ ...c, mask: new Float32Array(otherLength(r, n * n)) }, RangeError, 'mask'],
    () => { const s = r.pick(['n', 'dModel', 'heads', 'kvHeads', 'dk', 'dv']); return [{ ...c, [s]: r.pick(badSizes) }, RangeError, s]; },
    () => { const s = r.pick(['n', 'dModel', 'heads', 'kvHeads', 'dk', 'dv']); return [{ ...c, [s]: r.pick(notNumbers) }, TypeError, s]; },
    () => [{ ...c, heads: undefined }, TypeError, 'heads'],
    () => [{ ...c, n: undefined, dModel: undefined }, TypeError, 'dModel'],
    // kvHeads larger than heads, or (heads 4) 3: never a divisor
    () => [{ ...c, kvHeads: heads === 4 && r.bool() ? 3 : heads + r.int(1, 3) }, RangeError, 'kvHeads'],
    () => [{ ...c, scale: r.pick(badPositives) }, RangeError, 'scale'],
    () => [{ ...c, scale: r.pick(notNumbers) }, TypeError, 'scale'],
    () => { const f = r.pick(['causal', 'returnIntermediates']); return [{ ...c, [f]: r.pick(notFlags) }, TypeError, f]; },
    () => { const key = r.pick(['head', 'kvheads', 'Wq', 'q', 'returnWeights']); return [{ ...c, [key]: 1 }, TypeError, key]; },
    () => { const t = r.pick(tensors); return [{ ...c, [t]: withValue(c[t], r, r.pick([NaN, Infinity])) }, RangeError, t]; },
    () => [{ ...c, mask: withValue(c.mask ?? new Float32Array(n * n), r, r.pick([NaN, Infinity])) }, RangeError, 'mask'],
    () => [{ ...c, x: new Float32Array(c.x.length).fill(1e30), wq: new Float32Array(c.wq.length).fill(1e30) }, RangeError, 'wq'],
  ];
  const [opts, Class, arg] = r.pick(kinds)();
  return { fn: 'multiHeadAttention', args: [opts], Class, arg };
}

// The whole operator at small sizes: batch, GQA, layouts, every kind of mask and option, sometimes through a KV cache
// (created, filled, attended and disposed within the call, so a leak of its memory would show).
function validAttentionFull(r, lab) {
  const kvHeads = r.int(1, 2), heads = kvHeads * r.int(1, 3), batch = r.int(1, 2);
  const nq = r.int(1, 4), nk = r.int(1, 9), dk = r.int(1, 5), dv = r.int(1, 5), layout = r.pick(['bhsd', 'bshd']);
  const c = { q: r.array(batch * heads * nq * dk, -2, 2), k: r.array(batch * kvHeads * nk * dk, -2, 2), v: r.array(batch * kvHeads * nk * dv, -2, 2),
    batch, heads, kvHeads, dk, layout };
  if (r.bool()) c.causal = r.pick([true, 'top-left']);
  if (r.bool(0.3)) c.window = [r.int(-1, 3), r.int(-1, 3)];
  if (r.bool(0.3)) c.softcap = r.pick([1, 5]);
  if (r.bool(0.3)) c.keyLengths = Array.from({ length: batch }, () => r.int(0, nk));
  if (r.bool(0.3)) c.alibiSlopes = r.array(heads, 0, 0.5);
  if (r.bool(0.3)) {
    c.maskShape = [batch, 1, r.bool() ? nq : 1, nk];
    const n = c.maskShape.reduce((a, b) => a * b, 1);
    c.mask = r.bool() ? Uint8Array.from({ length: n }, () => (r.bool(0.8) ? 1 : 0)) : Float32Array.from({ length: n }, () => (r.bool(0.2) ? -Infinity : r.next()));
  }
  if (r.bool(0.3)) c.returnLse = true;
  const viaCache = r.bool(0.3);
  return {
    fn: 'attention', args: [c],
    call: () => {
      if (!viaCache) return lab.attention(c);
      const cache = lab.kvCache({ batch, kvHeads, dk, dv, capacity: nk + r.int(0, 3), layout });
      try {
        cache.append(c.k, c.v);
        return lab.attention({ ...c, k: undefined, v: undefined, cache });
      } finally {
        cache.dispose();
      }
    },
    check(got, label) {
      const ref = attentionFullRef({ ...c, nq, nk, dv, scale: undefined });
      assertWithin(got.output, checked(ref.out, label), `${label} output`);
      if (c.returnLse) assertWithin(got.lse, ref.lse, `${label} lse`);
    },
  };
}

const valid = { softmax: validSoftmax, attention: validAttention, multiHeadAttention: validMha };
const invalid = { softmax: invalidSoftmax, attention: invalidAttention, multiHeadAttention: invalidMha };

function nextCall(r, lab) {
  const t = r.next();
  const fn = t < 0.4 ? 'softmax' : t < 0.75 ? 'attention' : 'multiHeadAttention';
  if (fn === 'attention' && r.bool(0.3)) return validAttentionFull(r, lab);
  return r.bool() ? valid[fn](r) : invalid[fn](r);
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function run(lab, call, label) {
  if (!call.Class) {
    call.check(call.call ? call.call() : lab[call.fn](...call.args), label);
    return 'valid';
  }
  let thrown;
  try {
    lab[call.fn](...call.args);
  } catch (e) {
    thrown = e;
  }
  if (!thrown) throw new Error(`${label}: ${call.fn} should have thrown a ${call.Class.name} naming ${call.arg}`);
  if (thrown.constructor !== call.Class || !thrown.message.startsWith(`${call.fn}: `) || !new RegExp(`\\b${escape(call.arg)}\\b`).test(thrown.message))
    throw new Error(`${label}: expected a ${call.Class.name} from ${call.fn} naming ${call.arg}, got ${thrown.constructor.name}: ${thrown.message}`);
  return call.Class.name;
}

for (const { name, simd } of backends) {
  describe(`soak (${name})`, () => {
    test(`${CALLS} random calls, valid and invalid: results within the reference bounds, the right errors, memory flat`, async (t) => {
      const lab = await init({ simd }); // fresh instance: its memory history is this test's alone
      const seed = SEED + (simd ? 1 : 0);
      const r = rng(seed);
      const counts = { softmax: { valid: 0, TypeError: 0, RangeError: 0 }, attention: { valid: 0, TypeError: 0, RangeError: 0 }, multiHeadAttention: { valid: 0, TypeError: 0, RangeError: 0 } };
      const memory = { initial: lab.memoryBytes };
      const started = performance.now();
      for (let i = 0; i < CALLS; ++i) {
        if (i === WARMUP) memory.afterWarmup = lab.memoryBytes;
        const call = nextCall(r, lab);
        counts[call.fn][run(lab, call, `seed ${seed}, call ${i} (${call.fn}${call.Class ? `, invalid ${call.arg}` : ''})`)] += 1;
      }
      memory.final = lab.memoryBytes;
      const seconds = (performance.now() - started) / 1000;
      t.diagnostic(`${name}: ${CALLS} calls in ${seconds.toFixed(1)} s; ${JSON.stringify(counts)}`);
      t.diagnostic(`${name}: wasm memory ${memory.initial} B initially, ${memory.afterWarmup} B after ${WARMUP} calls, ${memory.final} B after ${CALLS}`);
      assert.equal(memory.final, memory.afterWarmup, `wasm memory grew after warm-up: ${JSON.stringify(memory)}`);
      assert.equal(lab.liveKvCaches, 0);
      // Every kind of call ran, and plenty of each.
      for (const [fn, c] of Object.entries(counts)) for (const [kind, k] of Object.entries(c)) assert.ok(k >= CALLS / 50, `${fn} ${kind}: only ${k} calls`);
    });
  });
}
