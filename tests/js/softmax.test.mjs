// lab.softmax against the float64 reference with derived bounds (support/reference.mjs), both backends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { softmaxRows, assertWithin, u } from './support/reference.mjs';

const labs = await loadLabs();

// Reference for what the engine receives: float32 logits, and μ = 1/T of the float32 temperature.
function reference(x, cols, temperature = 1, log = false) {
  const t = Math.fround(temperature);
  return softmaxRows(x, null, cols, { mul: 1 / t, mulRounded: temperature !== 1, log });
}

function logits(r, n, spread) {
  const x = r.array(n, -spread, spread);
  for (let i = 0; i < n; ++i) if (r.bool(0.1)) x[i] = -Infinity;
  return x;
}

for (const { name, lab } of labs) {
  describe(`softmax (${name})`, () => {
    test('random shapes: every row length 1…70, several rows, temperatures, log', () => {
      const r = rng(1);
      for (let cols = 1; cols <= 70; ++cols) {
        const rows = r.int(1, 5);
        const x = logits(r, rows * cols, r.pick([1, 10, 60]));
        const temperature = r.pick([1, 0.5, 2, 0.1, 7.3]);
        for (const log of [false, true]) {
          const got = lab.softmax(x, { cols, temperature, log });
          assertWithin(got, reference(x, cols, temperature, log), `cols=${cols} T=${temperature} log=${log}`);
        }
      }
    });

    test('long rows around multiples of the vector width, up to 1024', () => {
      const r = rng(2);
      for (const cols of [127, 128, 129, 255, 256, 257, 1000, 1023, 1024]) {
        const x = logits(r, 3 * cols, 20);
        assertWithin(lab.softmax(x, { cols }), reference(x, cols), `cols=${cols}`);
        assertWithin(lab.softmax(x, { cols, log: true }), reference(x, cols, 1, true), `log cols=${cols}`);
      }
    });

    // Into a new array, x goes through wasm memory in chunks of whole rows (2¹⁶ floats, or one row when it is
    // longer): row counts that leave a short last chunk, and rows longer than a chunk, must come out the same
    // as when all of x is staged at once (the `out` path), bit for bit.
    test('chunked and staged paths agree bit for bit, with short last chunks and rows longer than a chunk', () => {
      const r = rng(4);
      for (const [rows, cols] of [[67, 1000], [131, 1024], [2, 65536], [3, 65537], [2, 100000], [300, 7]]) {
        const x = logits(r, rows * cols, 30);
        for (const opts of [{ cols }, { cols, log: true }, { cols, temperature: 0.6 }]) {
          const chunked = lab.softmax(x, opts);
          const staged = lab.softmax(x, { ...opts, out: new Float32Array(x.length) });
          assert.deepEqual(chunked, staged, `${rows}×${cols} ${JSON.stringify(opts)}`);
        }
        const sample = x.subarray(0, 2 * cols);
        assertWithin(lab.softmax(x, { cols }).subarray(0, 2 * cols), reference(sample, cols), `${rows}×${cols} rows 0–1`);
        const tail = x.subarray((rows - 2) * cols);
        assertWithin(lab.softmax(x, { cols }).subarray((rows - 2) * cols), reference(tail, cols), `${rows}×${cols} last rows`);
      }
    });

    test('a bad value in the first or a later chunk is named by its index in x', () => {
      const cols = 1000;
      for (const [at, value, shown] of [[17, NaN, 'NaN'], [150 * cols + 17, NaN, 'NaN'], [199 * cols + 999, Infinity, 'Infinity']]) {
        const x = new Float32Array(200 * cols).fill(0.5);
        x[at] = value;
        const message = `softmax: x[${at}] is ${shown}; values must be finite or -Infinity`;
        assert.throws(() => lab.softmax(x, { cols }), { name: 'RangeError', message }, `x[${at}] = ${value}`);
        assert.throws(() => lab.softmax(x, { cols, out: new Float32Array(x.length) }), { name: 'RangeError', message }, `staged, x[${at}]`);
      }
      // An error every chunk would raise comes from the first one.
      const x = new Float32Array(200 * cols).fill(0.5);
      assert.throws(() => lab.softmax(x, { cols, temperature: 1e-40 }), { name: 'RangeError', message: /^softmax: temperature must be at least/ });
    });

    test('logits that overflow exp without the max subtraction', () => {
      const x = new Float32Array([1000, 999, 0, -1000, 88.8, 3.4e38, 3.4e38, -3.4e38]);
      assertWithin(lab.softmax(x, { cols: 4 }), reference(x, 4), 'large logits');
      const p = lab.softmax(x, { cols: 4 });
      assert.ok(p.every(Number.isFinite));
    });

    test('cols defaults to x.length (one row); rows sum to 1; the input is not modified', () => {
      const x = new Float32Array([2, 1, 0.1]);
      const copy = x.slice();
      const p = lab.softmax(x);
      const ref = reference(x, 3);
      assertWithin(p, ref, 'one row');
      assert.ok(Math.abs(p[0] + p[1] + p[2] - 1) <= ref.bound.reduce((a, b) => a + b)); // Σ reference = 1
      assert.deepEqual(x, copy);
    });

    test('-Infinity gets exactly 0, and an all -Infinity row gives zeros (log: -Infinity), never NaN', () => {
      const x = new Float32Array([-Infinity, 0, -Infinity, -Infinity, -Infinity, -Infinity, 1, 2, 3]);
      assert.deepEqual(Array.from(lab.softmax(x, { cols: 3 }).slice(0, 6)), [0, 1, 0, 0, 0, 0]);
      const lp = lab.softmax(x, { cols: 3, log: true });
      assert.deepEqual(Array.from(lp.slice(0, 6)), [-Infinity, 0, -Infinity, -Infinity, -Infinity, -Infinity]);
    });

    test('temperature T gives softmax(logits / T)', () => {
      const r = rng(3);
      for (const t of [0.25, 0.7, 3, 11]) {
        const x = r.array(40, -5, 5);
        const scaled = x.map((v) => v / t); // float32: each z rounded once more (u·|z|, carried as dx)
        const a = lab.softmax(x, { cols: 8, temperature: t });
        const b = lab.softmax(scaled, { cols: 8 });
        const ra = reference(x, 8, t);
        const rb = softmaxRows(x.map((v) => v / Math.fround(t)), Float64Array.from(scaled, (z) => u * Math.abs(z)), 8);
        assertWithin(a, ra, `T=${t}`);
        assertWithin(b, rb, `x/T, T=${t}`);
        for (let i = 0; i < a.length; ++i) assert.ok(Math.abs(a[i] - b[i]) <= ra.bound[i] + rb.bound[i], `T=${t} [${i}]`);
      }
      // Limits: a tiny temperature picks the max, a huge one flattens.
      const x = new Float32Array([1, 2, 3]);
      assert.deepEqual(Array.from(lab.softmax(x, { temperature: 1e-3 })), [0, 0, 1]);
      for (const p of lab.softmax(x, { temperature: 1e6 })) assert.ok(Math.abs(p - 1 / 3) < 1e-5);
    });
  });
}
