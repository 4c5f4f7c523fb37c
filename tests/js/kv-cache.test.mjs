// lab.kvCache, both backends: a prefill then single-token decode steps equal one attention call over the whole
// sequence (bit for bit), with GQA, both layouts and every option; the contents round-trip; an append past
// capacity is a RangeError that changes nothing; a disposed cache is a clear Error; a dropped cache is freed by
// the garbage collector (FinalizationRegistry) and its memory is reused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';

import { at, attentionFullRef } from './support/attention-full-ref.mjs';
import { backends, init, loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { assertWithin } from './support/reference.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const labs = await loadLabs();

// Positions [s0, s1) of the sequence axis of a [B, H, n, d] 'bhsd' tensor, as [B, H, s1 − s0, d] in `layout`.
function slice(x, B, H, n, d, s0, s1, layout) {
  const r = new Float32Array(B * H * (s1 - s0) * d);
  for (let b = 0; b < B; ++b) for (let h = 0; h < H; ++h) for (let s = s0; s < s1; ++s) for (let c = 0; c < d; ++c)
    r[at(layout, b, h, s - s0, c, H, s1 - s0, d)] = x[at('bhsd', b, h, s, c, H, n, d)];
  return r;
}

for (const { name, lab } of labs) {
  describe(`kvCache (${name})`, () => {
    test('prefill + single-token decode = one call over the whole sequence, bit for bit (GQA, both layouts, every option)', () => {
      const r = rng(70);
      const [B, H, G, d, n, prefill] = [2, 8, 2, 16, 140, 120]; // decode crosses the 128-key tile
      const q = r.array(B * H * n * d), k = r.array(B * G * n * d), v = r.array(B * G * n * d);
      const keep = Uint8Array.from({ length: B * n }, (_, t) => ((t * 7) % 11 === 3 ? 0 : 1));
      const options = [
        { causal: true },
        { causal: true, window: [40, 0], softcap: 20, alibiSlopes: r.array(H, 0, 0.3), mask: keep },
      ];
      for (const layout of ['bhsd', 'bshd']) for (const o of options) {
        const maskFor = (len) => (o.mask ? { mask: Uint8Array.from({ length: B * len }, (_, t) => keep[Math.floor(t / len) * n + (t % len)]), maskShape: [B, 1, 1, len] } : {});
        const full = lab.attention({ q: slice(q, B, H, n, d, 0, n, layout), k: slice(k, B, G, n, d, 0, n, layout), v: slice(v, B, G, n, d, 0, n, layout),
          batch: B, heads: H, kvHeads: G, dk: d, layout, ...o, ...maskFor(n) }).output;
        const cache = lab.kvCache({ batch: B, kvHeads: G, dk: d, dv: d, capacity: n, layout });
        const got = new Float32Array(full.length);
        for (let s0 = 0; s0 < n; s0 = s0 === 0 ? prefill : s0 + 1) {
          const s1 = s0 === 0 ? prefill : s0 + 1;
          cache.append(slice(k, B, G, n, d, s0, s1, layout), slice(v, B, G, n, d, s0, s1, layout));
          const out = lab.attention({ q: slice(q, B, H, n, d, s0, s1, layout), cache, heads: H, layout, ...o, ...maskFor(s1) }).output;
          for (let b = 0; b < B; ++b) for (let h = 0; h < H; ++h) for (let i = s0; i < s1; ++i) for (let c = 0; c < d; ++c)
            got[at(layout, b, h, i, c, H, n, d)] = out[at(layout, b, h, i - s0, c, H, s1 - s0, d)];
        }
        assert.deepEqual(got, full, `${layout} ${JSON.stringify(Object.keys(o))}`);
        assert.deepEqual(Array.from(cache.lengths), [n, n]);
        cache.dispose();
      }
    });

    test('append with rope rotates the keys at their cache positions: = lab.rope over the whole sequence, and decode = one call', () => {
      const r = rng(75);
      const [B, H, G, d, n, prefill] = [2, 4, 2, 16, 40, 33];
      const q = r.array(B * H * n * d), k = r.array(B * G * n * d), v = r.array(B * G * n * d);
      for (const rope of [{}, { base: 500, rotaryDim: 8, interleaved: true }]) {
        const cache = lab.kvCache({ batch: B, kvHeads: G, dk: d, dv: d, capacity: n });
        const got = new Float32Array(B * H * n * d);
        for (let s0 = 0; s0 < n; s0 = s0 === 0 ? prefill : s0 + 1) {
          const s1 = s0 === 0 ? prefill : s0 + 1;
          cache.append(slice(k, B, G, n, d, s0, s1, 'bhsd'), slice(v, B, G, n, d, s0, s1, 'bhsd'), { rope });
          // the queries are rotated at the same positions with lab.rope
          const qs = lab.rope(slice(q, B, H, n, d, s0, s1, 'bhsd'), { batch: B, heads: H, dk: d, offset: s0, ...rope });
          const out = lab.attention({ q: qs, cache, heads: H, causal: true }).output;
          for (let b = 0; b < B; ++b) for (let h = 0; h < H; ++h) got.set(out.subarray((b * H + h) * (s1 - s0) * d, (b * H + h + 1) * (s1 - s0) * d), ((b * H + h) * n + s0) * d);
        }
        const kr = lab.rope(k, { batch: B, heads: G, dk: d, ...rope }), qr = lab.rope(q, { batch: B, heads: H, dk: d, ...rope });
        assert.deepEqual(cache.keys(), kr, `keys ${JSON.stringify(rope)}`);
        assert.deepEqual(got, lab.attention({ q: qr, k: kr, v, batch: B, heads: H, kvHeads: G, dk: d, causal: true }).output, `decode ${JSON.stringify(rope)}`);
        cache.dispose();
      }
      const cache = lab.kvCache({ dk: 4, dv: 4, capacity: 8 });
      assert.throws(() => cache.append(r.array(4), r.array(4), { rope: { rotaryDim: 3 } }), (e) => e instanceof RangeError && /^kvCache\.append: rope: rotaryDim/.test(e.message));
      // The rope option is validated as lab.rope validates its own: a rotaryDim of 0 (or 2.5) is refused by both,
      // by the engine, with the same words.
      for (const rotaryDim of [0, 2.5, -2]) {
        let want;
        assert.throws(() => lab.rope(r.array(4), { dk: 4, rotaryDim }), (e) => (want = e) instanceof RangeError);
        assert.throws(() => cache.append(r.array(4), r.array(4), { rope: { rotaryDim } }),
          (e) => e instanceof RangeError && e.message === want.message.replace(/^rope: /, 'kvCache.append: rope: '), `rotaryDim ${rotaryDim}`);
      }
      assert.throws(() => cache.append(r.array(4), r.array(4), { rope: { theta: 1 } }), (e) => e instanceof TypeError && /theta/.test(e.message));
      assert.throws(() => cache.append(r.array(4), r.array(4), { rope: 10000 }), TypeError);
      assert.deepEqual(Array.from(cache.lengths), [0]);
      cache.dispose();
    });

    test('attention over a cache matches the reference with every option, and returns its matrices and lse', () => {
      const r = rng(71);
      const [B, H, G, dk, dv, n, nq] = [2, 4, 2, 6, 5, 50, 3];
      const k = r.array(B * G * n * dk), v = r.array(B * G * n * dv), q = r.array(B * H * nq * dk);
      const cache = lab.kvCache({ batch: B, kvHeads: G, dk, dv, capacity: 64 });
      cache.append(k, v);
      const o = { causal: 'bottom-right', window: [20, 1], softcap: 4, scale: 0.5, keyLengths: [50, 41], alibiSlopes: new Float32Array([0.1, 0.2, 0.3, 0.4]),
        mask: r.array(nq * n), returnWeights: true, returnScores: true, returnLse: true };
      const got = lab.attention({ q, cache, heads: H, ...o });
      const ref = attentionFullRef({ q, k, v, batch: B, heads: H, kvHeads: G, nq, nk: n, dk, dv, ...o, scale: Math.fround(0.5) });
      assertWithin(got.output, ref.out, 'output');
      assertWithin(got.weights, ref.weights, 'weights');
      assertWithin(got.scores, ref.scores, 'scores');
      assertWithin(got.lse, ref.lse, 'lse');
      assertWithin(lab.attention({ q, cache, heads: H, ...o, returnWeights: false, returnScores: false }).output, ref.out, 'streaming output');
      cache.dispose();
    });

    test('keys() and values() give the contents as bhsd, whatever layout was appended; reset() empties it', () => {
      const r = rng(72);
      const [B, G, dk, dv, n] = [2, 3, 4, 5, 10];
      const k = r.array(B * G * n * dk), v = r.array(B * G * n * dv);
      const cache = lab.kvCache({ batch: B, kvHeads: G, dk, dv, capacity: 16, layout: 'bshd' });
      assert.deepEqual([cache.batch, cache.kvHeads, cache.dk, cache.dv, cache.capacity, cache.layout], [B, G, dk, dv, 16, 'bshd']);
      cache.append(slice(k, B, G, n, dk, 0, 4, 'bshd'), slice(v, B, G, n, dv, 0, 4, 'bshd'));
      cache.append(slice(k, B, G, n, dk, 4, n, 'bhsd'), slice(v, B, G, n, dv, 4, n, 'bhsd'), { layout: 'bhsd' });
      assert.deepEqual(cache.keys(), k);
      assert.deepEqual(cache.values(), v);
      assert.deepEqual(Array.from(cache.reset().lengths), [0, 0]);
      assert.equal(cache.keys().length, 0);
      assert.throws(() => lab.attention({ q: r.array(B * G * dk), cache }), (e) => e instanceof RangeError && /cache is empty/.test(e.message));
      cache.dispose();
    });

    test('appending past capacity is a RangeError naming capacity, and the cache is unchanged', () => {
      const r = rng(73);
      const cache = lab.kvCache({ dk: 2, dv: 3, capacity: 5 });
      cache.append(r.array(8), r.array(12));
      const keys = cache.keys(), values = cache.values();
      assert.throws(() => cache.append(r.array(4), r.array(6)), (e) => e instanceof RangeError &&
        e.message === 'kvCache.append: appending 2 tokens to the 4 held would exceed capacity = 5; the cache is unchanged');
      for (const [k, v, arg] of [[r.array(3), r.array(3), 'k'], [r.array(2), r.array(4), 'v'], [Object.assign(r.array(2), { 1: NaN }), r.array(3), 'k']])
        assert.throws(() => cache.append(k, v), (e) => e instanceof RangeError && new RegExp(`\\b${arg}\\b`).test(e.message), arg);
      assert.throws(() => cache.append([1, 2], r.array(3)), TypeError);
      assert.throws(() => cache.append(r.array(2), r.array(3), { layout: 'bsdh' }), RangeError);
      assert.throws(() => cache.append(r.array(2), r.array(3), { rotate: true }), TypeError);
      assert.throws(() => cache.append(r.array(2), r.array(3), { rope: { base: 0 } }), (e) => e instanceof RangeError && /rope: base/.test(e.message));
      assert.deepEqual(cache.keys(), keys);
      assert.deepEqual(cache.values(), values);
      assert.deepEqual(Array.from(cache.append(r.array(2), r.array(3)).lengths), [5]);
      cache.dispose();
    });

    test('bad sizes are RangeErrors naming them; bad types TypeErrors', () => {
      const live = lab.liveKvCaches;
      for (const [opts, Class, arg] of [
        [{ dk: 0, dv: 1, capacity: 4 }, RangeError, 'dk'], [{ dk: 1, dv: 1.5, capacity: 4 }, RangeError, 'dv'],
        [{ dk: 1, dv: 1, capacity: -4 }, RangeError, 'capacity'], [{ batch: 0, dk: 1, dv: 1, capacity: 4 }, RangeError, 'batch'],
        [{ kvHeads: NaN, dk: 1, dv: 1, capacity: 4 }, RangeError, 'kvHeads'], [{ dk: 1, dv: 1 }, TypeError, 'capacity'],
        [{ dk: '1', dv: 1, capacity: 4 }, TypeError, 'dk'], [{ dk: 1, dv: 1, capacity: 4, layout: 'hsd' }, RangeError, 'layout'],
        [{ dk: 1, dv: 1, capacity: 4, heads: 2 }, TypeError, 'heads'], [{ dk: 1, dv: 1, capacity: 2 ** 40 }, RangeError, 'capacity'],
      ])
        assert.throws(() => lab.kvCache(opts), (e) => e.constructor === Class && e.message.startsWith('kvCache: ') && new RegExp(`\\b${arg}\\b`).test(e.message), JSON.stringify(opts));
      assert.equal(lab.liveKvCaches, live);
    });

    test('a disposed cache: every use is an Error saying so; dispose() twice is fine', () => {
      const r = rng(74);
      const cache = lab.kvCache({ dk: 2, dv: 2, capacity: 4 });
      cache.append(r.array(2), r.array(2));
      const live = lab.liveKvCaches;
      cache.dispose();
      cache.dispose();
      assert.equal(lab.liveKvCaches, live - 1);
      assert.equal(cache.disposed, true);
      for (const use of [() => cache.append(r.array(2), r.array(2)), () => cache.keys(), () => cache.values(), () => cache.reset(), () => cache.lengths,
        () => lab.attention({ q: r.array(2), cache })])
        assert.throws(use, (e) => e.constructor === Error && /the cache was disposed/.test(e.message));
    });

    test('a cache of another instance, or not a cache, is a TypeError', async () => {
      const other = await init({ simd: name === 'wasm-simd' });
      const foreign = other.kvCache({ dk: 2, dv: 2, capacity: 4 });
      foreign.append(new Float32Array(2), new Float32Array(2));
      assert.throws(() => lab.attention({ q: new Float32Array(2), cache: foreign }), (e) => e instanceof TypeError && /cache/.test(e.message));
      assert.throws(() => lab.attention({ q: new Float32Array(2), cache: { dk: 2 } }), TypeError);
      foreign.dispose();
    });
  });
}

for (const { name, simd } of backends) {
  describe(`kvCache lifetime (${name})`, () => {
    test('caches dropped without dispose() are freed by the garbage collector, and their memory is reused', async () => {
      const lab = await init({ simd });
      const make = () => lab.kvCache({ batch: 1, kvHeads: 4, dk: 64, dv: 64, capacity: 8192 }); // 16 MiB each
      make(); // dropped at once
      // Wait for the condition, not for a time: collect and yield until the registry has run.
      for (let i = 0; i < 200 && lab.liveKvCaches > 0; ++i) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(lab.liveKvCaches, 0, 'the dropped cache was not finalized');
      const after = lab.memoryBytes;
      for (let round = 0; round < 8; ++round) {
        make();
        for (let i = 0; i < 200 && lab.liveKvCaches > 0; ++i) {
          gc();
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      assert.equal(lab.liveKvCaches, 0);
      assert.equal(lab.memoryBytes, after, `wasm memory grew from ${after} to ${lab.memoryBytes} bytes over 8 dropped 16 MiB caches`);
    });
  });
}
