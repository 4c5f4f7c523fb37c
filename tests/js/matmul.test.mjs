// lab.matmul against the float64 reference with the derived bound γ(k)·Σ|aᵢₚbₚⱼ| (support/reference.mjs), on
// both backends: sizes around the vector width, the 4×8 register block and the op's 128-column and 256-deep
// blocks, both layouts of b, the out buffer, and every error (class, message naming the argument, nothing written).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { assertWithin, matmul as matmulRef } from './support/reference.mjs';

const labs = await loadLabs();

const transpose = (b, rows, cols) => {
  const t = new Float32Array(b.length);
  for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) t[c * rows + r] = b[r * cols + c];
  return t;
};

// a·b as given and a·bᵀ with b transposed: both against one reference.
function check(lab, a, b, m, k, n, label) {
  const ref = matmulRef(a, null, b, null, m, k, n);
  assertWithin(lab.matmul(a, b, { m, k, n }), ref, label);
  assertWithin(lab.matmul(a, transpose(b, k, n), { m, k, n, transposeB: true }), ref, `${label}, transposeB`);
}

for (const { name, lab } of labs) {
  describe(`matmul (${name})`, () => {
    test('sizes around 4, 8, 32 and 128, both layouts of b', () => {
      const r = rng(40);
      for (const m of [1, 3, 4, 5, 8, 9, 33])
        for (const k of [1, 4, 7, 8, 32, 33])
          for (const n of [1, 3, 4, 8, 9, 31, 127, 128, 129]) check(lab, r.array(m * k), r.array(k * n), m, k, n, `m=${m} k=${k} n=${n}`);
    });

    test('the depth block (k = 255, 256, 257, 600) and larger shapes', () => {
      const r = rng(41);
      for (const [m, k, n] of [[4, 255, 8], [5, 256, 9], [3, 257, 130], [64, 600, 70], [128, 128, 128], [1, 1000, 1]])
        check(lab, r.array(m * k, -3, 3), r.array(k * n, -0.5, 0.5), m, k, n, `m=${m} k=${k} n=${n}`);
    });

    test('Q = X·W and Q·Kᵀ as the explorer uses them; small integers come out exact', () => {
      const r = rng(42);
      const x = r.array(7 * 2), w = r.array(2 * 2);
      const q = lab.matmul(x, w, { m: 7, k: 2, n: 2 });
      assertWithin(q, matmulRef(x, null, w, null, 7, 2, 2), 'X·W');
      const s = lab.matmul(q, q, { m: 7, k: 2, n: 7, transposeB: true });
      for (let i = 0; i < 7; ++i) for (let j = 0; j < 7; ++j) assert.equal(s[i * 7 + j], s[j * 7 + i], 'Q·Qᵀ is symmetric bit for bit');
      const ints = Float32Array.from({ length: 12 }, (_, i) => (i % 5) - 2);
      assert.deepEqual(Array.from(lab.matmul(ints, ints, { m: 3, k: 4, n: 3, transposeB: true })), [6, -2, -5, -2, 9, 0, -5, 0, 10]);
    });

    test('out: the result lands in it and it is returned; a failing call leaves it untouched', () => {
      const r = rng(43);
      const a = r.array(6 * 5), b = r.array(5 * 4);
      const out = new Float32Array(24).fill(7);
      assert.equal(lab.matmul(a, b, { m: 6, k: 5, n: 4, out }), out);
      assert.deepEqual(out, lab.matmul(a, b, { m: 6, k: 5, n: 4 }));
      const keep = out.slice();
      const bad = Object.assign(b.slice(), { 3: NaN });
      assert.throws(() => lab.matmul(a, bad, { m: 6, k: 5, n: 4, out }), RangeError);
      assert.deepEqual(out, keep);
      // out may not be an input, but an input may be reused as the next call's out after the call.
      const sq = r.array(16);
      const sq2 = lab.matmul(sq, sq, { m: 4, k: 4, n: 4 });
      assert.deepEqual(lab.matmul(sq, sq, { m: 4, k: 4, n: 4, out: sq }), sq2);
    });

    test('memory: calls free what they allocate', () => {
      const r = rng(44);
      const a = r.array(64 * 64), b = r.array(64 * 64);
      lab.matmul(a, b, { m: 64, k: 64, n: 64, transposeB: true });
      const before = lab.memoryBytes;
      for (let i = 0; i < 200; ++i) lab.matmul(a, b, { m: 64, k: 64, n: 64, transposeB: i % 2 === 0 });
      assert.equal(lab.memoryBytes, before);
    });

    const r = rng(45);
    const a = r.array(6), b = r.array(12);
    const ok = () => lab.matmul(a, b, { m: 2, k: 3, n: 4 });
    const before = ok();
    // [what, a, b, options, error class, argument named, text in the message]
    const cases = [
      ['a missing', undefined, b, { m: 2, k: 3, n: 4 }, TypeError, 'a', 'must be a Float32Array'],
      ['a a plain array', [1, 2, 3, 4, 5, 6], b, { m: 2, k: 3, n: 4 }, TypeError, 'a', 'must be a Float32Array'],
      ['b a Float64Array', a, new Float64Array(12), { m: 2, k: 3, n: 4 }, TypeError, 'b', 'must be a Float32Array'],
      ['options missing', a, b, undefined, TypeError, 'options', 'expected an options object'],
      ['unknown option', a, b, { m: 2, k: 3, n: 4, transpose: true }, TypeError, 'transpose', 'unknown option'],
      ['n missing', a, b, { m: 2, k: 3 }, TypeError, 'n', 'must be a number'],
      ['k a string', a, b, { m: 2, k: '3', n: 4 }, TypeError, 'k', 'must be a number'],
      ['transposeB not a boolean', a, b, { m: 2, k: 3, n: 4, transposeB: 1 }, TypeError, 'transposeB', 'must be a boolean'],
      ['out a plain array', a, b, { m: 2, k: 3, n: 4, out: new Array(8) }, TypeError, 'out', 'must be a Float32Array'],
      ['m 0', a, b, { m: 0, k: 3, n: 4 }, RangeError, 'm', 'm must be an integer >= 1, got 0'],
      ['m negative', a, b, { m: -2, k: 3, n: 4 }, RangeError, 'm', 'm must be an integer >= 1, got -2'],
      ['k not an integer', a, b, { m: 2, k: 1.5, n: 4 }, RangeError, 'k', 'k must be an integer >= 1, got 1.5'],
      ['n NaN', a, b, { m: 2, k: 3, n: NaN }, RangeError, 'n', 'n must be an integer >= 1, got NaN'],
      ['a wrong length', a, b, { m: 3, k: 3, n: 4 }, RangeError, 'a', 'a must have m·k = 3·3 = 9 elements, got 6'],
      ['a empty', new Float32Array(0), b, { m: 2, k: 3, n: 4 }, RangeError, 'a', 'a must have m·k = 2·3 = 6 elements, got 0'],
      ['b wrong length', a, b, { m: 2, k: 3, n: 3 }, RangeError, 'b', 'b must have k·n = 3·3 = 9 elements, got 12'],
      ['b wrong length, transposed', a, b.subarray(1), { m: 2, k: 3, n: 4, transposeB: true }, RangeError, 'b', 'b must have n·k = 4·3 = 12 elements, got 11'],
      ['out too short', a, b, { m: 2, k: 3, n: 4, out: new Float32Array(7) }, RangeError, 'out', 'out must have m·n = 2·4 = 8 elements, got 7'],
      ['a with NaN', Object.assign(a.slice(), { 4: NaN }), b, { m: 2, k: 3, n: 4 }, RangeError, 'a', 'a[4] is NaN'],
      ['b with +Infinity', a, Object.assign(b.slice(), { 11: Infinity }), { m: 2, k: 3, n: 4 }, RangeError, 'b', 'b[11] is Infinity'],
      ['b with -Infinity', a, Object.assign(b.slice(), { 0: -Infinity }), { m: 2, k: 3, n: 4 }, RangeError, 'b', 'b[0] is -Infinity'],
      ['a product that could overflow float32', new Float32Array(6).fill(1e19), new Float32Array(12).fill(1e19), { m: 2, k: 3, n: 4 }, RangeError, 'a', 'could overflow float32'],
      ['a call too large for wasm memory', a, b, { m: 65536, k: 3, n: 65536 }, RangeError, 'out', 'out is too large: m·n = 65536·65536 elements would not fit in memory'],
    ];
    for (const [what, x, y, opts, Class, arg, text] of cases) {
      test(`error: ${what} → ${Class.name} naming ${arg}; the next call works`, () => {
        assert.throws(() => lab.matmul(x, y, opts), (e) => {
          assert.equal(e.constructor, Class, `${e.constructor.name}: ${e.message}`);
          assert.match(e.message, /^matmul: /);
          assert.match(e.message, new RegExp(`\\b${arg}\\b`), e.message);
          assert.ok(e.message.includes(text), e.message);
          return true;
        });
        assert.deepEqual(ok(), before);
      });
    }
  });
}
