// Run by scripts/test-js-debug.sh (node --test, explicitly: this file is not a *.test.mjs) before the suite:
// proves that ATTNLAB_DIST points at the checked build and that its checks are live, so a green run against it
// means something. Each probe takes a fresh instance, since a SAFE_HEAP fault aborts the module.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { altDist, dist } from './load.mjs';

const { engineCall } = await import(pathToFileURL(`${dist}call.js`).href);

const instance = async (kind) => {
  const factory = (await import(pathToFileURL(`${dist}attnlab.mjs`).href)).default;
  return factory({ wasmBinary: readFileSync(`${dist}attnlab-${kind}.wasm`) });
};

test('the tests run against another build than dist/ (ATTNLAB_DIST)', () => assert.ok(altDist, dist));

for (const kind of ['simd', 'scalar']) {
  describe(`debug module attnlab-${kind}`, () => {
    test('the glue carries SAFE_HEAP and the assertions', () => {
      const glue = readFileSync(`${dist}attnlab.mjs`, 'utf8');
      assert.match(glue, /SAFE_HEAP/);
      assert.match(glue, /checkStackCookie|STACK_OVERFLOW/i);
    });

    // softmax's call, its descriptor written by hand (call.js reads the fields from the module): x and out at `x`
    // and `out`, 4 floats in one row; through the engine's one entry point, as call.js calls it.
    const softmax = (m, x, out) => {
      const op = engineCall(m, 'softmax'), d = op.descriptor();
      d[op.F.x] = x, d[op.F.x + 1] = 4, d[op.F.out] = out, d[op.F.out + 1] = 4;
      const at = m._malloc(d.length * 8);
      m.HEAPF64.set(d, at >>> 3);
      return m._attnlab_call(m.callIndex('softmax'), at);
    };

    test('SAFE_HEAP: a misaligned float load aborts with an alignment fault', async () => {
      const m = await instance(kind);
      const p = m._malloc(64);
      assert.throws(() => softmax(m, p + 1, p + 32), (e) => e instanceof WebAssembly.RuntimeError && /alignment fault/.test(e.message));
    });

    test('SAFE_HEAP: a load past the end of the heap aborts with a segmentation fault', async () => {
      const m = await instance(kind);
      const p = m._malloc(64);
      assert.throws(() => softmax(m, 0x7fff0000, p), (e) => e instanceof WebAssembly.RuntimeError && /segmentation fault/.test(e.message));
    });

    test('ASSERTIONS: Embind range-checks integer arguments', async () => {
      const m = await instance(kind);
      assert.throws(() => m.callFields(2 ** 32), (e) => e instanceof TypeError && /outside the valid range/.test(e.message));
    });

    test('the same call, aligned and in bounds, is clean', async () => {
      const m = await instance(kind);
      const p = m._malloc(32);
      m.HEAPF32.set([4, -1, 2.1, 0], p >>> 2);
      assert.equal(softmax(m, p, p + 16), 0);
      const out = Array.from(m.HEAPF32.subarray((p + 16) >>> 2, (p + 32) >>> 2));
      assert.ok(Math.abs(out.reduce((a, b) => a + b) - 1) < 1e-6, String(out));
    });
  });
}
