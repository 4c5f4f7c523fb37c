// Every bad input throws the right class with a message naming the argument (and what was expected and
// got); the instance keeps working afterwards, returning exactly what it returned before the error.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init, loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';

const labs = await loadLabs();
const r = rng(30);
const f32 = (...v) => new Float32Array(v);

// A valid call of each function; each bad case below changes one thing.
const good = {
  softmax: [r.array(12), { cols: 4, temperature: 0.5 }],
  attention: { q: r.array(6), k: r.array(9), v: r.array(6), nq: 2, nk: 3, dk: 3, dv: 2, returnWeights: true },
  multiHeadAttention: { x: r.array(12), n: 3, dModel: 4, heads: 2, wq: r.array(16), wk: r.array(16), wv: r.array(16), wo: r.array(16) },
};
const withNaN = (a, i = 1) => Object.assign(a.slice(), { [i]: NaN });
const withInf = (a, i = 0) => Object.assign(a.slice(), { [i]: Infinity });

// [function, description, bad arguments, error class, argument the message must name]
const cases = [
  ['softmax', 'x missing', [undefined], TypeError, 'x'],
  ['softmax', 'x a plain array', [[1, 2, 3]], TypeError, 'x'],
  ['softmax', 'x a Float64Array', [new Float64Array(4)], TypeError, 'x'],
  ['softmax', 'x empty', [f32()], RangeError, 'x'],
  ['softmax', 'options not an object', [good.softmax[0], 4], TypeError, 'options'],
  ['softmax', 'unknown option', [good.softmax[0], { col: 4 }], TypeError, 'col'],
  ['softmax', 'cols 0', [good.softmax[0], { cols: 0 }], RangeError, 'cols'],
  ['softmax', 'cols negative', [good.softmax[0], { cols: -4 }], RangeError, 'cols'],
  ['softmax', 'cols not an integer', [good.softmax[0], { cols: 2.5 }], RangeError, 'cols'],
  ['softmax', 'cols NaN', [good.softmax[0], { cols: NaN }], RangeError, 'cols'],
  ['softmax', 'cols a string', [good.softmax[0], { cols: '4' }], TypeError, 'cols'],
  ['softmax', 'x.length not a multiple of cols', [good.softmax[0], { cols: 5 }], RangeError, 'cols'],
  ['softmax', 'temperature 0', [good.softmax[0], { temperature: 0 }], RangeError, 'temperature'],
  ['softmax', 'temperature negative', [good.softmax[0], { temperature: -1 }], RangeError, 'temperature'],
  ['softmax', 'temperature NaN', [good.softmax[0], { temperature: NaN }], RangeError, 'temperature'],
  ['softmax', 'temperature Infinity', [good.softmax[0], { temperature: Infinity }], RangeError, 'temperature'],
  ['softmax', 'temperature 1e-45 (1/T overflows float32)', [good.softmax[0], { temperature: 1e-45 }], RangeError, 'temperature'],
  ['softmax', 'x with NaN', [withNaN(good.softmax[0], 7)], RangeError, 'x'],
  ['softmax', 'x with +Infinity', [withInf(good.softmax[0])], RangeError, 'x'],
  ['softmax', 'log not a boolean', [good.softmax[0], { log: 1 }], TypeError, 'log'],
  ['softmax', 'out a plain array', [good.softmax[0], { out: new Array(12).fill(0) }], TypeError, 'out'],
  ['softmax', 'out too short', [good.softmax[0], { out: new Float32Array(11) }], RangeError, 'out'],

  ['attention', 'options missing', [undefined], TypeError, 'options'],
  ['attention', 'q missing', [{ ...good.attention, q: undefined }], TypeError, 'q'],
  ['attention', 'k a plain array', [{ ...good.attention, k: Array.from(good.attention.k) }], TypeError, 'k'],
  ['attention', 'v null', [{ ...good.attention, v: null }], TypeError, 'v'],
  ['attention', 'mask a plain array', [{ ...good.attention, mask: [0, 0, 0, 0, 0, 0] }], TypeError, 'mask'],
  ['attention', 'unknown option', [{ ...good.attention, casual: true }], TypeError, 'casual'],
  ['attention', 'q wrong length', [{ ...good.attention, q: r.array(5) }], RangeError, 'q'],
  ['attention', 'k wrong length', [{ ...good.attention, k: r.array(8) }], RangeError, 'k'],
  ['attention', 'v wrong length', [{ ...good.attention, v: r.array(7) }], RangeError, 'v'],
  ['attention', 'nq 0', [{ ...good.attention, nq: 0 }], RangeError, 'nq'],
  ['attention', 'nk not an integer', [{ ...good.attention, nk: 2.5 }], RangeError, 'nk'],
  ['attention', 'dk negative', [{ ...good.attention, dk: -3 }], RangeError, 'dk'],
  ['attention', 'dv Infinity', [{ ...good.attention, dv: Infinity }], RangeError, 'dv'],
  ['attention', 'dk a string', [{ ...good.attention, dk: '3' }], TypeError, 'dk'],
  ['attention', 'no size to infer dk from', [{ ...good.attention, nq: undefined, nk: undefined, dk: undefined }], TypeError, 'dk'],
  ['attention', 'mask wrong size', [{ ...good.attention, mask: new Float32Array(5) }], RangeError, 'mask'],
  ['attention', 'scale 0', [{ ...good.attention, scale: 0 }], RangeError, 'scale'],
  ['attention', 'scale negative', [{ ...good.attention, scale: -0.5 }], RangeError, 'scale'],
  ['attention', 'scale NaN', [{ ...good.attention, scale: NaN }], RangeError, 'scale'],
  ['attention', 'scale Infinity', [{ ...good.attention, scale: Infinity }], RangeError, 'scale'],
  ['attention', 'scale 1e39 (Infinity in float32)', [{ ...good.attention, scale: 1e39 }], RangeError, 'scale'],
  ['attention', 'q with NaN', [{ ...good.attention, q: withNaN(good.attention.q) }], RangeError, 'q'],
  ['attention', 'k with +Infinity', [{ ...good.attention, k: withInf(good.attention.k) }], RangeError, 'k'],
  ['attention', 'v with NaN', [{ ...good.attention, v: withNaN(good.attention.v) }], RangeError, 'v'],
  ['attention', 'mask with NaN', [{ ...good.attention, mask: withNaN(new Float32Array(6)) }], RangeError, 'mask'],
  ['attention', 'mask with +Infinity', [{ ...good.attention, mask: withInf(new Float32Array(6)) }], RangeError, 'mask'],
  ['attention', 'q and k so large the scores overflow', [{ ...good.attention, q: new Float32Array(6).fill(1e20), k: new Float32Array(9).fill(1e20) }], RangeError, 'q'],
  ['attention', 'causal not a boolean', [{ ...good.attention, causal: 1 }], TypeError, 'causal'],
  ['attention', 'returnWeights not a boolean', [{ ...good.attention, returnWeights: 'yes' }], TypeError, 'returnWeights'],
  ['attention', 'out a Float64Array', [{ ...good.attention, out: new Float64Array(4) }], TypeError, 'out'],
  ['attention', 'out too long', [{ ...good.attention, out: new Float32Array(5) }], RangeError, 'out'],

  // the whole operator
  ['attention', 'batch 0', [{ ...good.attention, batch: 0 }], RangeError, 'batch'],
  ['attention', 'heads a string', [{ ...good.attention, heads: '2' }], TypeError, 'heads'],
  ['attention', 'heads 2: q too short for batch·heads·nq·dk', [{ ...good.attention, heads: 2 }], RangeError, 'q'],
  ['attention', 'kvHeads does not divide heads', [{ ...good.attention, heads: 1, kvHeads: 2 }], RangeError, 'kvHeads'],
  ['attention', 'kvHeads 1.5', [{ ...good.attention, kvHeads: 1.5 }], RangeError, 'kvHeads'],
  ['attention', 'layout unknown', [{ ...good.attention, layout: 'bsdh' }], RangeError, 'layout'],
  ['attention', 'layout not a string', [{ ...good.attention, layout: 1 }], TypeError, 'layout'],
  ['attention', 'causal an unknown alignment', [{ ...good.attention, causal: 'bottom-left' }], RangeError, 'causal'],
  ['attention', 'window not a pair', [{ ...good.attention, window: 3 }], TypeError, 'window'],
  ['attention', 'window of strings', [{ ...good.attention, window: ['1', 2] }], TypeError, 'window'],
  ['attention', 'window -2', [{ ...good.attention, window: [-2, 0] }], RangeError, 'window'],
  ['attention', 'window 1.5', [{ ...good.attention, window: [1, 1.5] }], RangeError, 'window'],
  ['attention', 'softcap 0', [{ ...good.attention, softcap: 0 }], RangeError, 'softcap'],
  ['attention', 'softcap NaN', [{ ...good.attention, softcap: NaN }], RangeError, 'softcap'],
  ['attention', 'softcap not a number', [{ ...good.attention, softcap: true }], TypeError, 'softcap'],
  ['attention', 'scale 1e-50 (0 in float32)', [{ ...good.attention, scale: 1e-50 }], RangeError, 'scale'],
  ['attention', 'mask a Float64Array', [{ ...good.attention, mask: new Float64Array(6) }], TypeError, 'mask'],
  ['attention', 'boolean mask wrong size', [{ ...good.attention, mask: new Uint8Array(5) }], RangeError, 'mask'],
  ['attention', 'maskShape not an array', [{ ...good.attention, mask: new Uint8Array(6), maskShape: 6 }], TypeError, 'maskShape'],
  ['attention', 'maskShape does not broadcast', [{ ...good.attention, mask: new Uint8Array(6), maskShape: [3, 2] }], RangeError, 'maskShape'],
  ['attention', 'maskShape with 5 dimensions', [{ ...good.attention, mask: new Uint8Array(6), maskShape: [1, 1, 1, 2, 3] }], RangeError, 'maskShape'],
  ['attention', 'maskShape 0', [{ ...good.attention, mask: new Uint8Array(6), maskShape: [0, 3] }], RangeError, 'maskShape'],
  ['attention', 'maskShape without a mask', [{ ...good.attention, maskShape: [2, 3] }], RangeError, 'maskShape'],
  ['attention', 'mask length ≠ maskShape', [{ ...good.attention, mask: new Uint8Array(5), maskShape: [1, 3] }], RangeError, 'mask'],
  ['attention', 'keyLengths longer than batch', [{ ...good.attention, keyLengths: [1, 2] }], RangeError, 'keyLengths'],
  ['attention', 'keyLengths past nk', [{ ...good.attention, keyLengths: [4] }], RangeError, 'keyLengths'],
  ['attention', 'keyLengths negative', [{ ...good.attention, keyLengths: new Int32Array([-1]) }], RangeError, 'keyLengths'],
  ['attention', 'keyLengths 1.5', [{ ...good.attention, keyLengths: [1.5] }], RangeError, 'keyLengths'],
  ['attention', 'keyLengths a Float32Array', [{ ...good.attention, keyLengths: new Float32Array([1]) }], TypeError, 'keyLengths'],
  ['attention', 'alibiSlopes a plain array', [{ ...good.attention, alibiSlopes: [0.5] }], TypeError, 'alibiSlopes'],
  ['attention', 'alibiSlopes wrong length', [{ ...good.attention, alibiSlopes: f32(0.5, 0.25) }], RangeError, 'alibiSlopes'],
  ['attention', 'alibiSlopes NaN', [{ ...good.attention, alibiSlopes: f32(NaN) }], RangeError, 'alibiSlopes'],
  ['attention', 'returnLse not a boolean', [{ ...good.attention, returnLse: 1 }], TypeError, 'returnLse'],
  ['attention', 'cache not a cache', [{ ...good.attention, cache: {} }], TypeError, 'cache'],

  ['multiHeadAttention', 'x missing', [{ ...good.multiHeadAttention, x: undefined }], TypeError, 'x'],
  ['multiHeadAttention', 'wq a plain array', [{ ...good.multiHeadAttention, wq: new Array(16).fill(0) }], TypeError, 'wq'],
  ['multiHeadAttention', 'wo missing', [{ ...good.multiHeadAttention, wo: undefined }], TypeError, 'wo'],
  ['multiHeadAttention', 'heads missing', [{ ...good.multiHeadAttention, heads: undefined }], TypeError, 'heads'],
  ['multiHeadAttention', 'heads 0', [{ ...good.multiHeadAttention, heads: 0 }], RangeError, 'heads'],
  ['multiHeadAttention', 'n not an integer', [{ ...good.multiHeadAttention, n: 1.5 }], RangeError, 'n'],
  ['multiHeadAttention', 'dModel and n both missing', [{ ...good.multiHeadAttention, n: undefined, dModel: undefined }], TypeError, 'dModel'],
  ['multiHeadAttention', 'x wrong length for n·dModel', [{ ...good.multiHeadAttention, x: r.array(11) }], RangeError, 'x'],
  ['multiHeadAttention', 'kvHeads does not divide heads', [{ ...good.multiHeadAttention, kvHeads: 3 }], RangeError, 'kvHeads'],
  ['multiHeadAttention', 'dModel not a multiple of heads, dk not given', [{ ...good.multiHeadAttention, heads: 3 }], RangeError, 'dk'],
  ['multiHeadAttention', 'wk wrong length', [{ ...good.multiHeadAttention, wk: r.array(15) }], RangeError, 'wk'],
  ['multiHeadAttention', 'wo wrong length', [{ ...good.multiHeadAttention, wo: r.array(20) }], RangeError, 'wo'],
  ['multiHeadAttention', 'mask wrong size', [{ ...good.multiHeadAttention, mask: new Float32Array(8) }], RangeError, 'mask'],
  ['multiHeadAttention', 'scale negative', [{ ...good.multiHeadAttention, scale: -1 }], RangeError, 'scale'],
  ['multiHeadAttention', 'wv with NaN', [{ ...good.multiHeadAttention, wv: withNaN(good.multiHeadAttention.wv) }], RangeError, 'wv'],
  ['multiHeadAttention', 'x with +Infinity', [{ ...good.multiHeadAttention, x: withInf(good.multiHeadAttention.x) }], RangeError, 'x'],
  ['multiHeadAttention', 'x·wq overflows float32', [{ ...good.multiHeadAttention, x: new Float32Array(12).fill(1e30), wq: new Float32Array(16).fill(1e30) }], RangeError, 'wq'],
  ['multiHeadAttention', 'returnIntermediates not a boolean', [{ ...good.multiHeadAttention, returnIntermediates: 1 }], TypeError, 'returnIntermediates'],
  ['multiHeadAttention', 'out wrong length', [{ ...good.multiHeadAttention, out: new Float32Array(13) }], RangeError, 'out'],
];

const call = (lab, fn, args) => (fn === 'softmax' ? lab.softmax(...args) : lab[fn](...args));

for (const { name, lab } of labs) {
  describe(`errors (${name})`, () => {
    const before = Object.fromEntries(Object.keys(good).map((fn) => [fn, call(lab, fn, fn === 'softmax' ? good[fn] : [good[fn]])]));

    for (const [fn, what, args, Class, arg] of cases) {
      test(`${fn}: ${what} → ${Class.name} naming ${arg}; the next call works`, () => {
        assert.throws(() => call(lab, fn, args), (e) => {
          assert.equal(e.constructor, Class, `${e.constructor.name}: ${e.message}`);
          assert.match(e.message, new RegExp(`^${fn}: `));
          assert.match(e.message, new RegExp(`\\b${arg}\\b`), e.message);
          assert.match(e.message, /got|expected|must|too large|overflow|exceeds|without/, e.message);
          return true;
        });
        const after = call(lab, fn, fn === 'softmax' ? good[fn] : [good[fn]]);
        assert.deepEqual(after, before[fn]);
      });
    }

    test('-Infinity is a valid logit and mask value (not an error)', () => {
      assert.deepEqual(Array.from(lab.softmax(f32(-Infinity, 0))), [0, 1]);
      const mask = new Float32Array(6).fill(-Infinity, 0, 2);
      assert.ok(lab.attention({ ...good.attention, mask }).output.every(Number.isFinite));
    });
  });
}

describe('init errors', () => {
  for (const [what, options] of [
    ['options not an object', 5],
    ['simd not a boolean', { simd: 'yes' }],
    ['unknown option', { wasm: 'x' }],
    ['wasmBinary not bytes', { wasmBinary: 'bytes' }],
    ['wasmUrl not a string or URL', { wasmUrl: 5 }],
  ]) {
    test(`${what} → TypeError`, async () => {
      await assert.rejects(init(options), TypeError);
    });
  }
});
