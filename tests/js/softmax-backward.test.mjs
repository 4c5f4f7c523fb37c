// lab.softmaxBackward against the float64 formula from the same float32 y and dy, with a bound derived from
// its float32 evaluation (support/softmax-backward-ref.mjs), on both backends; the formula against finite
// differences of softmax itself; edge cases and errors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { softmaxBackwardRef as reference } from './support/softmax-backward-ref.mjs';

const labs = await loadLabs();

function assertWithin(got, { value, bound }, what) {
  for (let i = 0; i < got.length; ++i)
    if (!(Math.abs(got[i] - value[i]) <= bound[i])) assert.fail(`${what}: dx[${i}] = ${got[i]}, want ${value[i]} ± ${bound[i]}`);
}

for (const { name, lab } of labs) {
  describe(`softmaxBackward (${name})`, () => {
    test('rows of every length 1…70 and around 128, temperatures, log, masked entries', () => {
      const r = rng(5);
      for (const cols of [...Array.from({ length: 70 }, (_, i) => i + 1), 127, 128, 129, 1000]) {
        const rows = r.int(1, 4);
        const x = r.array(rows * cols, -6, 6);
        for (let i = 0; i < x.length; i += 7) x[i] = -Infinity;
        const dy = r.array(rows * cols, -2, 2);
        for (const temperature of [1, 0.5, 3])
          for (const log of [false, true]) {
            const y = lab.softmax(x, { cols, temperature, log });
            const dx = lab.softmaxBackward({ y, dy, cols, temperature, log });
            assertWithin(dx, reference(y, dy, cols, temperature, log), `cols=${cols} T=${temperature} log=${log}`);
          }
      }
    });

    test('the formula is the gradient: finite differences of softmax in float64', () => {
      const r = rng(6);
      const cols = 5, x = Array.from({ length: cols }, () => r.next() * 4 - 2), dy = Array.from({ length: cols }, () => r.next() * 2 - 1);
      const L = (xs, log) => {
        const m = Math.max(...xs), z = xs.reduce((a, v) => a + Math.exp(v - m), 0);
        return xs.reduce((a, v, j) => a + dy[j] * (log ? v - m - Math.log(z) : Math.exp(v - m) / z), 0);
      };
      for (const log of [false, true]) {
        const y = lab.softmax(Float32Array.from(x), { log });
        const dx = lab.softmaxBackward({ y, dy: Float32Array.from(dy), log });
        for (let j = 0; j < cols; ++j) {
          const h = 1e-6, up = x.slice(), down = x.slice();
          up[j] += h, down[j] -= h;
          const fd = (L(up, log) - L(down, log)) / (2 * h);
          assert.ok(Math.abs(dx[j] - fd) < 1e-5, `log=${log} j=${j}: ${dx[j]} vs ${fd}`); // float32 y, dy: ~1e-7
        }
      }
    });

    test('all-masked rows give zeros; errors name the argument', () => {
      const dx = lab.softmaxBackward({ y: new Float32Array([0, 0, 0.25, 0.75]), dy: new Float32Array([1, 2, 3, 4]), cols: 2 });
      assert.deepEqual(Array.from(dx.subarray(0, 2)), [0, 0]);
      const lx = lab.softmaxBackward({ y: new Float32Array([-Infinity, -Infinity]), dy: new Float32Array([1, 2]), log: true });
      assert.deepEqual(Array.from(lx), [0, 0]);
      const y = new Float32Array([0.5, 0.5]), dy = new Float32Array([1, 0]);
      const bad = (opts, Cls, text) => assert.throws(() => lab.softmaxBackward(opts), (e) => e instanceof Cls && e.message.startsWith('softmaxBackward: ') && e.message.includes(text), text);
      bad({ y, dy: new Float32Array(3) }, RangeError, 'dy must have y.length = 2');
      bad({ y, dy, cols: 3 }, RangeError, 'cols = 3');
      bad({ y: new Float32Array([2, -1]), dy }, RangeError, "y[0] is 2; y must be the forward's output");
      bad({ y, dy, log: true }, RangeError, 'log-probabilities');
      bad({ y, dy: new Float32Array([NaN, 0]) }, RangeError, 'dy[0] is NaN');
      bad({ y, dy, temperature: 0 }, RangeError, 'temperature');
      bad({ y: [0.5, 0.5], dy }, TypeError, 'y must be a Float32Array');
      bad({ y, dy, columns: 2 }, TypeError, 'columns');
      bad(undefined, TypeError, 'options');
      assert.deepEqual(Array.from(lab.softmaxBackward({ y, dy })), [0.25, -0.25]); // still works
    });
  });
}
