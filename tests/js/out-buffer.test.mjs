// The optional `out` buffer: results land in the caller's Float32Array, bit for bit what the allocating call
// returns; `out` may be an input (softmax in place); a failing call leaves it untouched; and reusing it keeps
// wasm memory flat like the allocating calls do.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';

const labs = await loadLabs();

for (const { name, lab } of labs) {
  describe(`out buffer (${name})`, () => {
    const r = rng(77);

    test('softmax writes into out and returns it; equal to the allocating call', () => {
      for (const [rows, cols] of [[1, 3], [5, 7], [16, 64], [3, 129]]) {
        const x = r.array(rows * cols, -6, 6);
        const want = lab.softmax(x, { cols, temperature: 0.7 });
        const out = new Float32Array(rows * cols).fill(NaN);
        const got = lab.softmax(x, { cols, temperature: 0.7, out });
        assert.equal(got, out, 'returns the same buffer');
        assert.deepEqual(out, want);
        const logOut = new Float32Array(rows * cols);
        lab.softmax(x, { cols, log: true, out: logOut });
        assert.deepEqual(logOut, lab.softmax(x, { cols, log: true }));
      }
    });

    test('softmax in place: out may be x itself', () => {
      const x = r.array(4 * 33, -5, 5);
      const want = lab.softmax(x, { cols: 33 });
      assert.equal(lab.softmax(x, { cols: 33, out: x }), x);
      assert.deepEqual(x, want);
    });

    test('attention and multiHeadAttention write output into out; the other results are unchanged', () => {
      const [nq, nk, dk, dv] = [9, 13, 8, 5];
      const opts = { q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv), nq, nk, dk, dv, causal: true };
      const want = lab.attention({ ...opts, returnWeights: true });
      const out = new Float32Array(nq * dv);
      const got = lab.attention({ ...opts, returnWeights: true, out });
      assert.equal(got.output, out);
      assert.deepEqual(out, want.output);
      assert.deepEqual(got.weights, want.weights);
      // Streaming path too (no matrix requested).
      const streamOut = new Float32Array(nq * dv);
      lab.attention({ ...opts, out: streamOut });
      assert.deepEqual(streamOut, lab.attention(opts).output);

      const m = { x: r.array(6 * 8), n: 6, dModel: 8, heads: 2, wq: r.array(64), wk: r.array(64), wv: r.array(64), wo: r.array(64) };
      const mOut = new Float32Array(48);
      assert.equal(lab.multiHeadAttention({ ...m, out: mOut }).output, mOut);
      assert.deepEqual(mOut, lab.multiHeadAttention(m).output);
    });

    test('out may alias an input of attention (inputs are copied in before anything is written)', () => {
      const n = 6, d = 6;
      const q = r.array(n * d), k = r.array(n * d), v = r.array(n * d);
      const want = lab.attention({ q, k, v, nq: n, dk: d }).output;
      const qq = q.slice();
      lab.attention({ q: qq, k, v, nq: n, dk: d, out: qq });
      assert.deepEqual(qq, want);
    });

    test('a call that throws leaves out untouched', () => {
      const out = new Float32Array(6).fill(42);
      assert.throws(() => lab.softmax(new Float32Array([1, NaN, 2, 3, 4, 5]), { out }), RangeError);
      assert.ok(out.every((v) => v === 42));
      const aOut = new Float32Array(4).fill(42);
      const q = new Float32Array(6).fill(1e20);
      assert.throws(() => lab.attention({ q, k: new Float32Array(6).fill(1e20), v: new Float32Array(4), nq: 2, dk: 3, out: aOut }), RangeError);
      assert.ok(aOut.every((v) => v === 42));
    });

    test('reusing out across 2 000 calls keeps wasm memory flat', () => {
      const x = r.array(64 * 64);
      const out = new Float32Array(x.length);
      lab.softmax(x, { cols: 64, out });
      const before = lab.memoryBytes;
      for (let i = 0; i < 2000; i++) lab.softmax(x, { cols: 64, out });
      assert.equal(lab.memoryBytes, before);
    });
  });
}
