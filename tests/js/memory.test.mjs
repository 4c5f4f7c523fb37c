// Wasm memory: tensors that force it to grow several times still come back right (no stale heap views),
// and a long run of small calls never grows it again (everything allocated per call is freed, on error too).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, init } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { attentionRef, softmaxRows, assertWithin } from './support/reference.mjs';

for (const { name, simd } of backends) {
  describe(`memory (${name})`, () => {
    test('inputs that grow memory several times give correct results', async () => {
      const lab = await init({ simd }); // fresh instance: memory starts at its initial size
      const r = rng(40);
      const sizes = [lab.memoryBytes];
      // Only weights requested: the engine's own nq×nk logits scratch grows memory during the call,
      // after the wrapper copied the inputs (a heap view taken before the call would be stale).
      {
        const [nq, nk, dk, dv] = [1024, 1024, 4, 4];
        const c = { q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv), nq, nk, dk, dv, returnWeights: true };
        const got = lab.attention(c);
        sizes.push(lab.memoryBytes);
        const ref = attentionRef(c);
        assertWithin(got.output, ref.out, 'output, memory grown inside the call');
        assertWithin(got.weights, ref.weights, 'weights, memory grown inside the call');
      }
      // softmax into `out` (all of x staged in wasm memory, computed in place there) over ever larger inputs:
      // 12, 24 and 48 MiB, each past what memory holds after the one before, so each grows it again (the growths
      // counted below). Every row is checked.
      for (const rows of [3 << 10, 3 << 11, 3 << 12]) {
        const cols = 1024;
        const x = r.array(rows * cols, -8, 8);
        const p = lab.softmax(x, { cols, out: new Float32Array(x.length) });
        sizes.push(lab.memoryBytes);
        for (let row = 0; row < rows; row += 1) {
          const slice = x.subarray(row * cols, (row + 1) * cols);
          assertWithin(p.subarray(row * cols, (row + 1) * cols), softmaxRows(slice, null, cols), `rows=${rows} row ${row}`);
        }
      }
      const growths = sizes.filter((s, i) => i > 0 && s > sizes[i - 1]).length;
      assert.ok(growths >= 4, `memory grew ${growths} times: ${sizes.join(' → ')}`);
    });

    test('softmax into a new array needs one chunk of wasm memory, however large x is', async () => {
      const lab = await init({ simd });
      const r = rng(42);
      const before = lab.memoryBytes;
      const cols = 1024, rows = 3 << 10; // 12 MiB: staged whole, x alone would grow the fresh memory several times over
      const x = r.array(rows * cols, -8, 8);
      assert.ok(x.byteLength > 4 * before, `x (${x.byteLength} bytes) against memory of ${before}`);
      const p = lab.softmax(x, { cols });
      assert.equal(lab.memoryBytes, before, `wasm memory grew from ${before} to ${lab.memoryBytes} bytes`);
      for (let row = 0; row < rows; row += 97) {
        const slice = x.subarray(row * cols, (row + 1) * cols);
        assertWithin(p.subarray(row * cols, (row + 1) * cols), softmaxRows(slice, null, cols), `row ${row}`);
      }
    });

    test('100 000 small calls (results and errors) do not grow memory after the first', async () => {
      const lab = await init({ simd });
      const r = rng(41);
      const x = r.array(24);
      const att = { q: r.array(8), k: r.array(12), v: r.array(6), nq: 2, nk: 3, dk: 4, dv: 2, causal: true, returnWeights: true };
      const mha = { x: r.array(12), n: 3, dModel: 4, heads: 2, kvHeads: 1, wq: r.array(16), wk: r.array(8), wv: r.array(8), wo: r.array(16), returnIntermediates: true };
      const want = [lab.softmax(x, { cols: 6 }), lab.attention(att), lab.multiHeadAttention(mha)];
      const before = lab.memoryBytes;
      for (let i = 0; i < 100_000; ++i) {
        switch (i % 5) {
          case 0: lab.softmax(x, { cols: 6, temperature: 0.5 }); break;
          case 1: lab.attention(att); break;
          case 2: lab.multiHeadAttention(mha); break;
          case 3: assert.throws(() => lab.attention({ ...att, v: Object.assign(att.v.slice(), { 1: NaN }) }), RangeError); break;
          case 4: assert.throws(() => lab.softmax(Object.assign(x.slice(), { 3: Infinity })), RangeError); break;
        }
      }
      assert.equal(lab.memoryBytes, before, `memory grew from ${before} to ${lab.memoryBytes} bytes`);
      // Memory starts at 1 MiB: one leaked allocation per call (≥ 16 bytes with its header) would have grown it.
      assert.ok(before <= 2 ** 21, `initial memory ${before}`);
      assert.deepEqual([lab.softmax(x, { cols: 6 }), lab.attention(att), lab.multiHeadAttention(mha)], want);
    });

    test('a call refused for its sizes allocates nothing: memory stays as it was, and the next refusal names its argument', async () => {
      const lab = await init({ simd, gpt: true });
      const r = rng(43);
      const before = lab.memoryBytes;
      const small = r.array(756);
      const model = lab.createGPT({ vocabSize: 4, context: 2, dModel: 4, heads: 1, layers: 1 });
      const grown = lab.memoryBytes; // (the model's own memory)
      // Each declares outputs of hundreds of MB or more (nq·dv, m·n, n·dModel…) next to inputs that do not match.
      const refused = [
        [() => lab.attention({ q: small, k: small, v: small, nq: 599186, dk: 1 }), 'q'],
        [() => lab.attention({ q: small, k: small, v: small, nq: 599186, nk: 756, dk: 1, dv: 1, returnWeights: true }), 'q'],
        [() => lab.matmul(small, small, { m: 50000, k: 1, n: 50000 }), 'a'],
        [() => lab.multiHeadAttention({ x: small, n: 100000, heads: 1, wq: small, wk: small, wv: small, wo: small, returnIntermediates: true }), 'x'],
        [() => lab.softmax(small, { cols: 757 }), 'x'],
        [() => lab.rope(small, { dk: 4, batch: 1000000 }), 'x'],
        [() => lab.attentionBackward({ q: small, k: small, v: small, nq: 599186, dk: 1, output: small, lse: small, dOutput: small }), 'q'],
        [() => model.forward(new Int32Array(3)), 'tokens'],
        [() => model.generate(new Int32Array(0), { maxTokens: 400000000 }), 'prompt'],
      ];
      for (const [call, arg] of refused)
        assert.throws(call, (e) => e instanceof RangeError && new RegExp(`\\b${arg}\\b`).test(e.message) && !/out of memory/.test(e.message), arg);
      assert.equal(lab.memoryBytes, grown, `a refused call grew memory from ${grown} to ${lab.memoryBytes} bytes`);
      assert.ok(grown - before < 2 ** 20, `${before} → ${grown}`);
      model.dispose();
    });

    test('sizes whose tensors would pass 2^31 elements, or 2 GiB in all, are refused naming the argument, not a buffer', async () => {
      const lab = await init({ simd });
      const before = lab.memoryBytes;
      const q = new Float32Array(65536);
      for (const [call, pattern] of [
        // 2^31 and more: past what a size is
        [() => lab.attention({ q, k: q, v: q, nq: 2 ** 31, dk: 1 }), /^attention: nq = 2147483648 is too large/],
        [() => lab.matmul(q, q, { m: 65536, k: 1, n: 65536 }), /^matmul: out is too large: m·n = 65536·65536 elements would not fit in memory$/],
        [() => lab.attention({ q, k: q, v: q, nq: 2 ** 20, dk: 1, dv: 2 ** 12 }), /^attention: out is too large: batch·heads·nq·dv = 1·1·1048576·4096 elements/],
        [() => lab.multiHeadAttention({ x: q, n: 65536, heads: 1, dk: 65536, wq: q, wk: q, wv: q, wo: q }), /^multiHeadAttention: q is too large: n·heads·dk = 65536 × 65536 elements/],
        [() => lab.attention({ q, k: q, v: q, dk: 1, returnWeights: true }), /^attention: nq·nk = 65536·65536 .* \(rawScores, scores, weights\)/],
        // 2^29 weights: 2 GiB, past wasm memory with anything else
        [() => lab.attention({ q: q.subarray(0, 32768), k: q.subarray(0, 16384), v: q.subarray(0, 16384), dk: 1, returnWeights: true }),
          /^attention: weights would have 536870912 elements: the call needs \d+ bytes of wasm memory in all, past its 2 GiB/],
      ])
        assert.throws(call, (e) => e instanceof RangeError && pattern.test(e.message), String(pattern));
      assert.equal(lab.memoryBytes, before);
    });

    test('a call too large for wasm32 memory throws and the instance keeps working', async () => {
      const lab = await init({ simd });
      const q = new Float32Array(70000), k = new Float32Array(70000), v = new Float32Array(70000);
      // nq·nk = 4.9e9 weights cannot exist in a 32-bit address space
      assert.throws(() => lab.attention({ q, k, v, dk: 1, returnWeights: true }), (e) => e instanceof RangeError && /weights/.test(e.message));
      assert.deepEqual(lab.attention({ q: q.subarray(0, 4), k: k.subarray(0, 4), v: v.subarray(0, 4), dk: 1 }).output, new Float32Array(4));
      // One query and key of 2²³ numbers: 64 MiB of inputs, but the packed Kᵀ (keys rounded up to a tile of 128)
      // would be 4 GiB, whose byte count wraps to 0 in 32 bits. It must fail as out of memory, not write past a buffer.
      const dk = 2 ** 23, big = new Float32Array(dk);
      assert.throws(() => lab.attention({ q: big, k: big, v: new Float32Array(1), nq: 1, nk: 1, dk, dv: 1 }),
        (e) => e.constructor === Error && /out of memory allocating scratch for the attention tiles/.test(e.message));
      assert.deepEqual(lab.attention({ q: q.subarray(0, 4), k: k.subarray(0, 4), v: v.subarray(0, 4), dk: 1 }).output, new Float32Array(4));
    });
  });
}
