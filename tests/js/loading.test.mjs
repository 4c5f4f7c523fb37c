// init(): backend choice, the build each module reports, and the ways to hand it the .wasm.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, init, packageJson, simdSupported } from './support/load.mjs';

const x = new Float32Array([1, 2, 3, 4]);

describe('init', () => {
  test('picks the SIMD module when the engine validates SIMD128 (Node ≥ 18 does)', async () => {
    assert.equal(simdSupported(), true);
    const lab = await init();
    assert.equal(lab.backend, 'wasm-simd');
    assert.deepEqual(lab.buildInfo(), { version: packageJson.version, backend: 'wasm-simd', simd: true, kernels: 'wasm-simd128' });
  });

  test('simd: false forces the scalar module', async () => {
    const lab = await init({ simd: false });
    assert.equal(lab.backend, 'wasm');
    assert.deepEqual(lab.buildInfo(), { version: packageJson.version, backend: 'wasm', simd: false, kernels: 'scalar' });
  });

  test('the SIMD module really contains SIMD128 code and the scalar one none (binaryen wasm-dis)', () => {
    const count = (file) => (execFileSync('wasm-dis', [dist + file], { maxBuffer: 1 << 28 }).toString().match(/\b(f32x4|i32x4|v128)\./g) ?? []).length;
    assert.ok(count('attnlab-simd.wasm') > 100, 'SIMD module without vector instructions');
    assert.equal(count('attnlab-scalar.wasm'), 0);
  });

  test('both modules compute the same thing', async () => {
    const [a, b] = [await init({ simd: true }), await init({ simd: false })];
    const pa = a.softmax(x), pb = b.softmax(x);
    for (let i = 0; i < 4; ++i) assert.ok(Math.abs(pa[i] - pb[i]) < 1e-6);
  });

  test('wasmBinary: bytes given by the caller (ArrayBuffer or Uint8Array)', async () => {
    const bytes = readFileSync(`${dist}attnlab-scalar.wasm`);
    for (const wasmBinary of [new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)]) {
      const lab = await init({ simd: false, wasmBinary });
      assert.equal(lab.backend, 'wasm');
      assert.equal(lab.softmax(x).length, 4);
    }
  });

  test('wasmUrl: a URL, a path, or a function of the file name', async () => {
    const seen = [];
    const viaFn = await init({ wasmUrl: (file) => (seen.push(file), pathToFileURL(dist + file)) });
    assert.deepEqual(seen, ['attnlab-simd.wasm']);
    assert.equal(viaFn.backend, 'wasm-simd');
    const viaUrl = await init({ simd: false, wasmUrl: pathToFileURL(`${dist}attnlab-scalar.wasm`) });
    assert.equal(viaUrl.backend, 'wasm');
    const viaPath = await init({ simd: false, wasmUrl: `${dist}attnlab-scalar.wasm` });
    assert.equal(viaPath.backend, 'wasm');
    await assert.rejects(init({ wasmUrl: `${dist}missing.wasm` }), /ENOENT|missing/);
  });

  test('instances are independent; methods work destructured', async () => {
    const a = await init(), b = await init();
    const { softmax, attention } = a;
    assert.deepEqual(softmax(x), b.softmax(x));
    assert.throws(() => attention({ q: x, k: x, v: x, dk: 3 }), RangeError);
    assert.deepEqual(b.softmax(x), softmax(x));
  });
});
