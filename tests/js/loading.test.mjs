// init(): backend choice, the build each module reports, and the ways to hand it the .wasm.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, init, packageJson, simdSupported } from './support/load.mjs';

const loader = await import(pathToFileURL(`${dist}loader.js`).href);

const x = new Float32Array([1, 2, 3, 4]);

describe('init', () => {
  test('picks the SIMD module when the engine validates SIMD128 (Node ≥ 18 does)', async () => {
    assert.equal(simdSupported(), true);
    const lab = await init();
    assert.equal(lab.backend, 'wasm-simd');
    assert.deepEqual(lab.buildInfo(), { version: packageJson.version, backend: 'wasm-simd', simd: true, kernels: 'wasm-simd128', source: 'file' });
  });

  test('simd: false forces the scalar module', async () => {
    const lab = await init({ simd: false });
    assert.equal(lab.backend, 'wasm');
    assert.deepEqual(lab.buildInfo(), { version: packageJson.version, backend: 'wasm', simd: false, kernels: 'scalar', source: 'file' });
  });

  test('the SIMD modules really contain SIMD128 code and the scalar ones none (binaryen wasm-dis)', () => {
    const count = (file) => (execFileSync('wasm-dis', [dist + file], { maxBuffer: 1 << 28 }).toString().match(/\b(f32x4|i32x4|v128)\./g) ?? []).length;
    for (const variant of ['', 'gpt-']) {
      assert.ok(count(`attnlab-${variant}simd.wasm`) > 100, `attnlab-${variant}simd.wasm without vector instructions`);
      assert.equal(count(`attnlab-${variant}scalar.wasm`), 0);
    }
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
      assert.equal(lab.buildInfo().source, 'wasmBinary');
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
    for (const lab of [viaFn, viaUrl, viaPath]) assert.equal(lab.buildInfo().source, 'wasmUrl');
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

describe('variants: the operators alone, or with the small GPT (init({ gpt: true }))', () => {
  test('variant() names the module init() would load, for any code that must load the same one', () => {
    assert.deepEqual(loader.variant(), { simd: true, gpt: false, file: 'attnlab-simd.wasm' });
    assert.deepEqual(loader.variant({ simd: false }), { simd: false, gpt: false, file: 'attnlab-scalar.wasm' });
    assert.deepEqual(loader.variant({ gpt: true }), { simd: true, gpt: true, file: 'attnlab-gpt-simd.wasm' });
    assert.deepEqual(loader.variant({ simd: false, gpt: true, wasmUrl: 'x.wasm' }), { simd: false, gpt: true, file: 'attnlab-gpt-scalar.wasm' });
    assert.throws(() => loader.variant({ gpt: 1 }), /^TypeError: init: gpt must be a boolean, got 1$/);
    assert.throws(() => loader.variant({ threadz: 2 }), TypeError);
  });

  test('init({ gpt: true }) loads attnlab-gpt-{simd,scalar}.wasm: createGPT works; init() loads the module without it', async () => {
    for (const simd of [true, false]) {
      const seen = [];
      const lab = await init({ simd, gpt: true, wasmUrl: (file) => (seen.push(file), pathToFileURL(dist + file)) });
      assert.deepEqual(seen, [simd ? 'attnlab-gpt-simd.wasm' : 'attnlab-gpt-scalar.wasm']);
      const model = lab.createGPT({ vocabSize: 5, context: 4, dModel: 8, heads: 2, layers: 1 });
      assert.equal(model.parameterCount, 960);
      model.dispose();
      const lean = await init({ simd });
      assert.throws(() => lean.createGPT({ vocabSize: 5, context: 4, dModel: 8, heads: 2, layers: 1 }),
        (e) => e.constructor === Error && e.message === 'createGPT: this lab was loaded without the small GPT; load it with init({ gpt: true })');
    }
  });

  test('the operators\' modules carry none of the model: no GPT calls, under 60% of the GPT module\'s bytes', async () => {
    const factory = (await import(pathToFileURL(`${dist}attnlab.mjs`).href)).default;
    for (const kind of ['simd', 'scalar']) {
      const lean = await factory({ wasmBinary: readFileSync(`${dist}attnlab-${kind}.wasm`) });
      const full = await factory({ wasmBinary: readFileSync(`${dist}attnlab-gpt-${kind}.wasm`) });
      assert.equal(lean.callIndex('gptCreate'), -1);
      assert.ok(full.callIndex('gptCreate') >= 0);
      // The same operators in both: every function the lean module binds is in the GPT module.
      const bound = (m) => Object.keys(m).filter((k) => typeof m[k] === 'function' && !k.startsWith('_') && !/^(dynCall|stack)/.test(k));
      assert.deepEqual(bound(lean).filter((k) => !(k in full)), []);
      const size = (f) => readFileSync(dist + f).length;
      assert.ok(size(`attnlab-${kind}.wasm`) < 0.6 * size(`attnlab-gpt-${kind}.wasm`), `${size(`attnlab-${kind}.wasm`)} vs ${size(`attnlab-gpt-${kind}.wasm`)}`);
    }
  });

  test('gpt: true with wasmUrl or wasmBinary holding the operators\' module: an Error naming the file it needs', async () => {
    await assert.rejects(init({ gpt: true, wasmUrl: `${dist}attnlab-simd.wasm` }), (e) => e.constructor === Error &&
      e.message === 'init: gpt: true needs attnlab-gpt-simd.wasm, the module with the small GPT, but wasmUrl points to a module without it (attnlab-simd.wasm?).');
    await assert.rejects(init({ simd: false, gpt: true, wasmBinary: readFileSync(`${dist}attnlab-scalar.wasm`) }),
      /^Error: init: gpt: true needs attnlab-gpt-scalar\.wasm, the module with the small GPT, but init's wasmBinary holds a module without it \(attnlab-scalar\.wasm\?\)\.$/);
    // The other way round is fine: the GPT module has every operator.
    const lab = await init({ wasmUrl: `${dist}attnlab-gpt-simd.wasm` });
    assert.equal(lab.softmax(x).length, 4);
  });

  test('attnlab/inline-gpt carries the GPT pair; attnlab/inline refuses gpt: true and names it', async () => {
    const inlineGpt = await import(pathToFileURL(`${dist}inline-gpt.js`).href);
    for (const simd of [true, false]) {
      const lab = await inlineGpt.init({ simd, gpt: true });
      assert.equal(lab.backend, simd ? 'wasm-simd' : 'wasm');
      lab.createGPT({ vocabSize: 5, context: 4, dModel: 8, heads: 2, layers: 1 }).dispose();
    }
    const inline = await import(pathToFileURL(`${dist}inline.js`).href);
    await assert.rejects(inline.init({ gpt: true }), (e) => e.constructor === Error &&
      /^init: attnlab\/inline carries the operators' modules only; for gpt: true import \{ init \} from 'attnlab\/inline-gpt'/.test(e.message) &&
      /wasmUrl or wasmBinary with attnlab-gpt-simd\.wasm\.$/.test(e.message));
    const viaUrl = await inline.init({ gpt: true, wasmUrl: `${dist}attnlab-gpt-simd.wasm` });
    viaUrl.createGPT({ vocabSize: 5, context: 4, dModel: 8, heads: 2, layers: 1 }).dispose();
  });
});
