// lab.rope against the float64 reference with derived bounds (support/rope-reference.mjs), both backends: every
// option, every form of positions, given tables, the inverse, `out`, memory, every error; then two independent
// implementations: onnxruntime-web's RotaryEmbedding (ONNX opset 23) and Hugging Face's formulation in NumPy.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

import { model, node, valueInfo, DataType } from '../../bench/lib/onnx.mjs';
import { loadLabs, repo } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { assertWithin, u } from './support/reference.mjs';
import { engineEta, positionOf, ropeIndex, ropeReference, ropeTables } from './support/rope-reference.mjs';

const labs = await loadLabs();

function expected(x, opts) {
  const seq = x.length / ((opts.batch ?? 1) * (opts.heads ?? 1) * opts.dk);
  return ropeReference(x, { ...opts, positionOf: positionOf(opts, seq) });
}

const label = (opts) => JSON.stringify(opts, (k, v) => (ArrayBuffer.isView(v) ? `${v.constructor.name}(${v.length})` : v));

// Pair counts below, at and above multiples of the vector width (4 pairs per SIMD step).
const HALVES = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 32, 33, 64];

for (const { name, lab } of labs) {
  describe(`rope (${name})`, () => {
    test('both pairings × both layouts × partial rotaryDim × inverse, head widths around multiples of 4 pairs', () => {
      const r = rng(1);
      for (const half of HALVES)
        for (const extra of [0, 2])
          for (const layout of ['bhsd', 'bshd'])
            for (const interleaved of [false, true])
              for (const inverse of [false, true]) {
                const dk = 2 * half + extra, batch = r.int(1, 3), heads = r.int(1, 3), seq = r.int(1, 5);
                const x = r.array(batch * heads * seq * dk, -2, 2);
                const opts = { batch, heads, dk, layout, interleaved, inverse, offset: r.int(0, 5000) };
                if (extra) opts.rotaryDim = 2 * half;
                assertWithin(lab.rope(x, opts), expected(x, opts), label(opts));
              }
    });

    test('defaults: batch 1, heads 1, layout bhsd, positions 0 … seq − 1, base 10000, rotaryDim dk, half-split', () => {
      const x = rng(2).array(3 * 2 * 8);
      const all = { batch: 1, heads: 3, dk: 8, layout: 'bhsd', offset: 0, base: 10000, rotaryDim: 8, interleaved: false, inverse: false };
      assert.deepEqual(lab.rope(x, { heads: 3, dk: 8 }), lab.rope(x, all));
      assert.deepEqual(lab.rope(x, { dk: 8 }), lab.rope(x, { ...all, heads: 1 })); // heads 1: seq = 6
      assertWithin(lab.rope(x, { heads: 3, dk: 8 }), expected(x, { heads: 3, dk: 8 }), 'defaults');
    });

    test('every form of positions names the same positions', () => {
      const r = rng(3);
      const batch = 3, heads = 2, seq = 5, dk = 12;
      for (const layout of ['bhsd', 'bshd']) {
        const x = r.array(batch * heads * seq * dk);
        const base = { batch, heads, dk, layout };
        const shared = [9, 0, 4, 4, 70];
        const a = lab.rope(x, { ...base, positions: shared });
        assert.deepEqual(lab.rope(x, { ...base, positions: Int32Array.from(shared) }), a, 'array = Int32Array');
        assertWithin(a, expected(x, { ...base, positions: shared }), `${layout} [seq] positions`);
        // Left padding: a row per item ([batch·seq]).
        const rows = [0, 1, 2, 3, 4, 1, 1, 1, 2, 3, 1, 1, 1, 1, 2];
        assertWithin(lab.rope(x, { ...base, positions: rows }), expected(x, { ...base, positions: rows }), `${layout} [batch·seq] positions`);
        // offset: a number, one per item (array or Int32Array), each equal to the positions it stands for.
        const one = lab.rope(x, { ...base, offset: 17 });
        assert.deepEqual(lab.rope(x, { ...base, positions: [17, 18, 19, 20, 21] }), one, 'offset 17 = positions 17…21');
        assert.deepEqual(lab.rope(x, { ...base, offset: [17] }), one, 'offset [17] = offset 17');
        const each = lab.rope(x, { ...base, offset: [0, 40, 1000] });
        assert.deepEqual(lab.rope(x, { ...base, offset: Int32Array.of(0, 40, 1000) }), each, 'offset array = Int32Array');
        const list = [0, 40, 1000].flatMap((o) => [0, 1, 2, 3, 4].map((s) => o + s));
        assert.deepEqual(lab.rope(x, { ...base, positions: list }), each, 'offset per item = its positions');
        assertWithin(each, expected(x, { ...base, offset: [0, 40, 1000] }), `${layout} offset per item`);
        assert.deepEqual(lab.rope(x, { ...base, offset: 0 }), lab.rope(x, base), 'offset 0 = the default');
      }
    });

    test('a decode step sees the same bits as the prefill at its position', () => {
      const r = rng(4);
      const heads = 4, dk = 64, seq = 130;
      const x = r.array(seq * heads * dk);
      const prefill = lab.rope(x, { heads, dk, layout: 'bshd', offset: 1000 });
      for (const s of [0, 63, 64, 129]) {
        const token = x.subarray(s * heads * dk, (s + 1) * heads * dk);
        assert.deepEqual(lab.rope(token, { heads, dk, layout: 'bshd', offset: 1000 + s }), prefill.subarray(s * heads * dk, (s + 1) * heads * dk), `token ${s}`);
      }
    });

    test('base (500 000, 10⁶, 1) and large positions, up to 2³¹ − 1', () => {
      const r = rng(5);
      for (const b of [500000, 1e6, 1, 10000])
        for (const p of [0, 100000, 1048576, 2147483647]) {
          const x = r.array(2 * 2 * 128);
          const opts = { heads: 2, dk: 128, base: b, positions: [p, Math.max(0, p - 1)] };
          assertWithin(lab.rope(x, opts), expected(x, opts), label(opts));
        }
    });

    test('cos/sin tables (ONNX cos_cache / sin_cache) are used as given, scaled ones too', () => {
      const r = rng(6);
      for (const half of [3, 4, 8, 9])
        for (const layout of ['bhsd', 'bshd'])
          for (const interleaved of [false, true]) {
            const maxPosition = 37, dk = 2 * half + 2, batch = 2, heads = 3, seq = 4;
            const cos = r.array(maxPosition * half, -1.5, 1.5), sin = r.array(maxPosition * half, -1.5, 1.5);
            const x = r.array(batch * heads * seq * dk);
            for (const where of [{ positions: [36, 0, 5, 5, 1, 2, 3, 35] }, { offset: 33 }, { offset: [0, 30] }, {}]) {
              const opts = { batch, heads, dk, layout, interleaved, rotaryDim: 2 * half, cos, sin, ...where };
              assertWithin(lab.rope(x, opts), expected(x, opts), label(opts));
              assertWithin(lab.rope(x, { ...opts, inverse: true }), expected(x, { ...opts, inverse: true }), `inverse ${label(opts)}`);
            }
          }
      // Tables equal to the exact angles give the computed result within both bounds.
      const { cos, sin } = ropeTables(50, 16);
      const x = r.array(2 * 10 * 16);
      const opts = { heads: 2, dk: 16, offset: 40 };
      assertWithin(lab.rope(x, { ...opts, cos, sin }), expected(x, opts), 'float64 tables rounded once vs computed angles');
    });

    test('inverse undoes the rotation, and is its transpose (the backward)', () => {
      const r = rng(7);
      for (const interleaved of [false, true]) {
        const opts = { batch: 2, heads: 3, dk: 10, rotaryDim: 8, layout: 'bshd', interleaved, offset: [5, 90000] };
        const x = r.array(2 * 3 * 7 * 10), y = r.array(x.length);
        const back = lab.rope(lab.rope(x, opts), { ...opts, inverse: true });
        // Per pair v, ‖v″ − v‖ ≤ (2u + 4√2·u + 2√2·η)‖v‖(1 + 4u) (tests/native/rope_test.cpp derives it).
        const seq = 7, pos = positionOf(opts, seq);
        for (let b = 0; b < 2; ++b)
          for (let s = 0; s < seq; ++s)
            for (let h = 0; h < 3; ++h) {
              const at = ropeIndex({ heads: 3, seq, dk: 10, layout: 'bshd' }, b, h, s);
              for (const d of [8, 9]) assert.equal(back[at + d], x[at + d], 'pass-through entries are exact');
              for (let i = 0; i < 4; ++i) {
                const ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + 4;
                const norm = Math.hypot(x[at + ia], x[at + ib]);
                const eta = engineEta(pos(b, s) * Math.pow(10000, -i / 4), 10000);
                const bound = (2 * u + 4 * Math.SQRT2 * u + 2 * Math.SQRT2 * eta) * norm * (1 + 4 * u);
                assert.ok(Math.abs(back[at + ia] - x[at + ia]) <= bound && Math.abs(back[at + ib] - x[at + ib]) <= bound, `b=${b} s=${s} h=${h} pair ${i}`);
              }
            }
        // ⟨rope(x), y⟩ = ⟨x, rope⁻¹(y)⟩ up to both rotations' roundings, 2√2·u(1 + u)·‖(ĉ, ŝ)‖·Σ_pairs ‖x_p‖‖y_p‖
        // each (native test), with ‖(ĉ, ŝ)‖ ≤ 1 + u + √2·η and Σ_pairs ‖x_p‖‖y_p‖ ≤ ‖x‖‖y‖ (Cauchy–Schwarz).
        const rx = lab.rope(x, opts), ry = lab.rope(y, { ...opts, inverse: true });
        let lhs = 0, rhs = 0, xx = 0, yy = 0;
        for (let j = 0; j < x.length; ++j) lhs += rx[j] * y[j], rhs += x[j] * ry[j], xx += x[j] * x[j], yy += y[j] * y[j];
        const allowed = 4 * Math.SQRT2 * u * (1 + u) ** 3 * Math.sqrt(xx * yy) + 1e-15 * Math.abs(lhs);
        assert.ok(Math.abs(lhs - rhs) <= allowed, `${lhs} vs ${rhs}, allowed ${allowed}`);
      }
    });

    test('out: a new array by default; into out (returned); in place with out = x; untouched when the call throws', () => {
      const r = rng(8);
      const x = r.array(4 * 16), opts = { heads: 2, dk: 16, offset: 3 };
      const fresh = lab.rope(x, opts);
      assert.notEqual(fresh, x);
      const out = new Float32Array(x.length);
      assert.equal(lab.rope(x, { ...opts, out }), out);
      assert.deepEqual(out, fresh);
      const inPlace = x.slice();
      assert.equal(lab.rope(inPlace, { ...opts, out: inPlace }), inPlace);
      assert.deepEqual(inPlace, fresh);
      const kept = new Float32Array(x.length).fill(7);
      assert.throws(() => lab.rope(x, { ...opts, positions: [-1, 0], offset: undefined, out: kept }), RangeError);
      const bad = x.slice();
      bad[5] = NaN;
      assert.throws(() => lab.rope(bad, { ...opts, out: bad }), RangeError);
      assert.ok(Number.isNaN(bad[5]) && bad[0] === x[0], 'x given as out is untouched by a throwing call');
      assert.ok(kept.every((v) => v === 7), 'out is untouched by a throwing call');
    });

    test('an x that grows wasm memory comes back right; 5 000 calls (valid and invalid) keep memory flat', () => {
      const r = rng(9);
      const x = r.array(1 << 22, -1, 1); // 16 MiB
      const opts = { heads: 8, dk: 128, layout: 'bshd', offset: 7 };
      const got = lab.rope(x, opts);
      const seq = x.length / (8 * 128);
      for (const s of [0, 1, seq >> 1, seq - 1]) {
        const slice = x.subarray(s * 1024, (s + 1) * 1024);
        assertWithin(got.subarray(s * 1024, (s + 1) * 1024), expected(slice, { ...opts, offset: 7 + s }), `token ${s}`);
      }
      const small = r.array(2 * 8 * 16);
      lab.rope(small, { heads: 2, dk: 16 });
      const before = lab.memoryBytes;
      for (let i = 0; i < 5000; ++i) {
        if (i % 3 === 0) assert.throws(() => lab.rope(small, { heads: 2, dk: 16, positions: [0, 1, 2] }), RangeError);
        else lab.rope(small, { heads: 2, dk: 16, offset: i, interleaved: i % 2 === 0 });
      }
      assert.equal(lab.memoryBytes, before);
    });

    describe('errors name the argument; the instance keeps working', () => {
      const x = rng(10).array(2 * 3 * 4 * 8); // batch 2, heads 3, seq 4, dk 8
      const ok = { batch: 2, heads: 3, dk: 8 };
      const cos = new Float32Array(10 * 4).fill(1), sin = new Float32Array(10 * 4);
      const withNaN = x.slice();
      withNaN[77] = NaN;
      // [description, x, options, class, argument named]
      const cases = [
        ['x missing', undefined, ok, TypeError, 'x'],
        ['x a plain array', [1, 2], ok, TypeError, 'x'],
        ['x empty', new Float32Array(0), ok, RangeError, 'x'],
        ['options not an object', x, 8, TypeError, 'options'],
        ['unknown option', x, { ...ok, theta: 10000 }, TypeError, 'theta'],
        ['dk missing', x, { batch: 2, heads: 3 }, TypeError, 'dk'],
        ['dk a string', x, { ...ok, dk: '8' }, TypeError, 'dk'],
        ['dk 0', x, { ...ok, dk: 0 }, RangeError, 'dk'],
        ['dk odd', x.subarray(0, 2 * 3 * 7), { ...ok, dk: 7 }, RangeError, 'dk'],
        ['batch 1.5', x, { ...ok, batch: 1.5 }, RangeError, 'batch'],
        ['heads 0', x, { ...ok, heads: 0 }, RangeError, 'heads'],
        ['x.length not a multiple of batch·heads·dk', x.subarray(0, 50), ok, RangeError, 'x'],
        ['x with NaN', withNaN, ok, RangeError, 'x'],
        ['layout a number', x, { ...ok, layout: 1 }, TypeError, 'layout'],
        ['layout unknown', x, { ...ok, layout: 'bsd' }, RangeError, 'layout'],
        ['rotaryDim odd', x, { ...ok, rotaryDim: 5 }, RangeError, 'rotaryDim'],
        ['rotaryDim > dk', x, { ...ok, rotaryDim: 10 }, RangeError, 'rotaryDim'],
        ['rotaryDim a string', x, { ...ok, rotaryDim: '4' }, TypeError, 'rotaryDim'],
        ['base a string', x, { ...ok, base: '10000' }, TypeError, 'base'],
        ['base < 1', x, { ...ok, base: 0.5 }, RangeError, 'base'],
        ['base NaN', x, { ...ok, base: NaN }, RangeError, 'base'],
        ['base Infinity', x, { ...ok, base: Infinity }, RangeError, 'base'],
        ['interleaved a number', x, { ...ok, interleaved: 1 }, TypeError, 'interleaved'],
        ['inverse a string', x, { ...ok, inverse: 'yes' }, TypeError, 'inverse'],
        ['positions a Float32Array', x, { ...ok, positions: new Float32Array(4) }, TypeError, 'positions'],
        ['positions a string', x, { ...ok, positions: '0123' }, TypeError, 'positions'],
        ['positions with a string', x, { ...ok, positions: [0, 1, '2', 3] }, TypeError, 'positions'],
        ['positions empty', x, { ...ok, positions: [] }, RangeError, 'positions'],
        ['positions not integers', x, { ...ok, positions: [0, 1, 2.5, 3] }, RangeError, 'positions'],
        ['positions past int32', x, { ...ok, positions: [0, 1, 2, 2 ** 31] }, RangeError, 'positions'],
        ['positions negative', x, { ...ok, positions: [0, -1, 2, 3] }, RangeError, 'positions'],
        ['positions of the wrong length', x, { ...ok, positions: [0, 1, 2] }, RangeError, 'positions'],
        ['positions and offset', x, { ...ok, positions: [0, 1, 2, 3], offset: 2 }, RangeError, 'offset'],
        ['offset a string', x, { ...ok, offset: '2' }, TypeError, 'offset'],
        ['offset not an integer', x, { ...ok, offset: 0.5 }, RangeError, 'offset'],
        ['offset negative', x, { ...ok, offset: -3 }, RangeError, 'offset'],
        ['offset one per item, wrong count', x, { ...ok, offset: [1, 2, 3] }, RangeError, 'offset'],
        ['offset + seq − 1 past int32', x, { ...ok, offset: 2 ** 31 - 2 }, RangeError, 'offset'],
        ['cos not a Float32Array', x, { ...ok, cos: [1, 2], sin }, TypeError, 'cos'],
        ['cos without sin', x, { ...ok, cos }, RangeError, 'sin'],
        ['sin without cos', x, { ...ok, sin }, RangeError, 'cos'],
        ['cos.length not a multiple of rotaryDim/2', x, { ...ok, cos: cos.subarray(0, 39), sin: sin.subarray(0, 39) }, RangeError, 'cos'],
        ['sin shorter than cos', x, { ...ok, cos, sin: sin.subarray(0, 36) }, RangeError, 'sin'],
        ['cos with NaN', x, { ...ok, cos: Float32Array.of(NaN, ...cos.subarray(1)), sin }, RangeError, 'cos'],
        ['base with tables', x, { ...ok, cos, sin, base: 10000 }, RangeError, 'base'],
        ['positions past the tables', x, { ...ok, cos, sin, positions: [0, 1, 2, 10] }, RangeError, 'positions'],
        ['offset past the tables', x, { ...ok, cos, sin, offset: 7 }, RangeError, 'offset'],
        ['default positions past the tables', x, { ...ok, cos: cos.subarray(0, 12), sin: sin.subarray(0, 12) }, RangeError, 'positions'],
        ['out a plain array', x, { ...ok, out: [] }, TypeError, 'out'],
        ['out of the wrong length', x, { ...ok, out: new Float32Array(10) }, RangeError, 'out'],
      ];
      const before = lab.rope(x, ok);
      for (const [what, xs, opts, Class, arg] of cases)
        test(what, () => {
          assert.throws(() => lab.rope(xs, opts), (e) => {
            assert.equal(e.constructor, Class, `${e.constructor.name}: ${e.message}`);
            assert.ok(e.message.startsWith('rope: '), e.message);
            assert.match(e.message, new RegExp(`\\b${arg}\\b`), e.message);
            return true;
          });
          assert.deepEqual(lab.rope(x, ok), before);
        });
    });
  });
}

// ---------------------------------------------------------------- independent implementations

describe('rope vs onnxruntime-web RotaryEmbedding (ONNX opset 23, wasm)', async () => {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = `${repo}node_modules/onnxruntime-web/dist/`;
  ort.env.logLevel = 'error';
  const F = DataType.FLOAT;

  // x is 4-D [batch, heads, seq, dk] ('bhsd') or 3-D [batch, seq, heads·dk] ('bshd', with num_heads).
  async function ortRope(x, { batch, heads, seq, dk, layout, rotaryDim, interleaved, cos, sin, positions }) {
    const shape = layout === 'bhsd' ? [batch, heads, seq, dk] : [batch, seq, heads * dk];
    const attrs = { interleaved: interleaved ? 1 : 0 };
    if (rotaryDim !== dk) attrs.rotary_embedding_dim = rotaryDim;
    if (layout === 'bshd') attrs.num_heads = heads;
    const rows = cos.length / (rotaryDim / 2);
    const bytes = model({
      nodes: [node('RotaryEmbedding', ['x', 'cos', 'sin', 'pos'], ['y'], attrs)],
      inputs: [valueInfo('x', F, shape), valueInfo('cos', F, [rows, rotaryDim / 2]), valueInfo('sin', F, [rows, rotaryDim / 2]), valueInfo('pos', DataType.INT64, [batch, seq])],
      outputs: [valueInfo('y', F, shape)],
      opsets: { '': 23 },
    });
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    try {
      const feeds = {
        x: new ort.Tensor('float32', x, shape),
        cos: new ort.Tensor('float32', cos, [rows, rotaryDim / 2]),
        sin: new ort.Tensor('float32', sin, [rows, rotaryDim / 2]),
        pos: new ort.Tensor('int64', BigInt64Array.from(positions, BigInt), [batch, seq]),
      };
      return (await session.run(feeds)).y.data;
    } finally {
      await session.release();
    }
  }

  const r = rng(20);
  for (const layout of ['bhsd', 'bshd'])
    for (const interleaved of [false, true])
      for (const rotaryDim of [16, 10])
        test(`${layout}, ${interleaved ? 'interleaved' : 'half-split'}, rotaryDim ${rotaryDim} of dk 16`, async () => {
          const batch = 2, heads = 3, seq = 5, dk = 16, maxPosition = 300;
          const x = r.array(batch * heads * seq * dk, -2, 2);
          const positions = Int32Array.from({ length: batch * seq }, () => r.int(0, maxPosition - 1));
          const { cos, sin } = ropeTables(maxPosition, rotaryDim);
          const got = await ortRope(x, { batch, heads, seq, dk, layout, rotaryDim, interleaved, cos, sin, positions });
          const opts = { batch, heads, dk, layout, rotaryDim, interleaved, positions };
          // ORT and attnlab with the same tables: both within the given-tables bound of the exact product.
          const withTables = expected(x, { ...opts, cos, sin });
          assertWithin(got, withTables, 'onnxruntime-web');
          for (const { name, lab } of labs) {
            assertWithin(lab.rope(x, { ...opts, cos, sin }), withTables, `attnlab ${name}, same tables`);
            // attnlab's own angles against ORT fed float64 tables rounded to float32: both within the
            // computed-angle bound of the float64 reference (which covers table rounding).
            const computed = expected(x, opts);
            assertWithin(lab.rope(x, opts), computed, `attnlab ${name}, computed angles`);
            assertWithin(got, computed, 'onnxruntime-web vs computed angles');
          }
        });
});

// Debian's python3 (python3-numpy), not whatever `python3` is first on PATH.
const PYTHON = '/usr/bin/python3';

describe('rope vs Hugging Face formulation in float64 NumPy (support/rope_hf.py)', () => {
  test('both pairings, partial rotary, both layouts, left-padded positions, several bases', () => {
    const probe = spawnSync(PYTHON, ['-c', 'import numpy'], { encoding: 'utf8' });
    assert.equal(probe.status, 0, `${PYTHON} with numpy is needed (Debian: python3-numpy; scripts/bootstrap.sh installs it): ${probe.stderr}`);
    const r = rng(21);
    const cases = [];
    for (const layout of ['bhsd', 'bshd'])
      for (const interleaved of [false, true])
        for (const [dk, rotaryDim, base] of [[64, 64, 10000], [32, 16, 500000], [18, 10, 1e6]]) {
          const batch = 2, heads = 3, seq = 6;
          const positions = [0, 1, 2, 3, 4, 5, 1, 1, 1, 2, 3, 4 + r.int(0, 50000)]; // item 1 left-padded
          cases.push({ x: Array.from(r.array(batch * heads * seq * dk, -2, 2)), batch, heads, dk, layout, positions, base, rotaryDim, interleaved });
        }
    const run = spawnSync(PYTHON, [`${repo}tests/js/support/rope_hf.py`], { input: cases.map((c) => JSON.stringify(c)).join('\n'), encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, `rope_hf.py failed: ${run.stderr}`);
    const results = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(results.length, cases.length);
    cases.forEach((c, i) => {
      const { x: xs, ...rest } = c;
      const x = Float32Array.from(xs), opts = { ...rest, positions: Int32Array.from(c.positions) };
      // |attnlab − NumPy| ≤ |attnlab − exact| + |NumPy − exact|: the reference's bound covers both (NumPy's
      // angles are float64 like the JS reference's).
      const { bound } = expected(x, opts);
      for (const { name, lab } of labs) assertWithin(lab.rope(x, opts), { value: results[i], bound }, `${name} vs HF ${label(rest)}`);
    });
  });
});
