// The installed tarball in Node: ESM import and CommonJS require of every entry, and Node bundles with no
// configuration: esbuild's (ESM and CommonJS) and Rollup's (only @rollup/plugin-node-resolve) of attnlab, which
// finds no .wasm beside the bundle (or no import.meta.url at all) and runs its copies inside the JS, saying why in
// buildInfo(), and esbuild's of attnlab/inline, which carries its modules.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { app, expectGood, packageJson, prepared, run } from './support.mjs';

before(() => prepared());

const node = (file) => JSON.parse(run(process.execPath, [file]).stdout);

describe('Node', () => {
  test(`engines names Node versions whose require() loads ES modules (this one: ${process.version})`, () => {
    assert.equal(packageJson.engines.node, '^20.19.0 || >=22.12.0');
    const [major, minor] = process.versions.node.split('.').map(Number);
    assert.ok((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22, `this Node (${process.version}) is outside engines`);
  });

  test('ES module: import attnlab, attnlab/inline and attnlab/inline-gpt; init() and init({ gpt: true })', () => {
    const r = node('node/esm.mjs');
    expectGood(r.url, 'attnlab', { source: 'file' });
    expectGood(r.inline, 'attnlab/inline', { source: 'inline' });
    expectGood(r.urlGpt, 'attnlab, gpt: true', { gpt: true, source: 'file' });
    expectGood(r.inlineGpt, 'attnlab/inline-gpt, gpt: true', { gpt: true, source: 'inline' });
  });

  test('CommonJS: require every entry, each variant, with no warning', () => {
    const { stdout, stderr } = run(process.execPath, ['node/cjs.cjs']);
    const r = JSON.parse(stdout);
    expectGood(r.url, 'attnlab', { source: 'file' });
    expectGood(r.inline, 'attnlab/inline', { source: 'inline' });
    expectGood(r.urlGpt, 'attnlab, gpt: true', { gpt: true, source: 'file' });
    expectGood(r.inlineGpt, 'attnlab/inline-gpt, gpt: true', { gpt: true, source: 'inline' });
    assert.equal(stderr, '', 'require() of the package printed something');
  });

  test('attnlab/inline with gpt: true and no wasmUrl: an Error that names attnlab/inline-gpt', async () => {
    const { stdout } = run(process.execPath, ['--input-type=module', '-e',
      "import { init } from 'attnlab/inline'; init({ gpt: true }).then(() => console.log('loaded'), (e) => console.log(e.constructor.name + ': ' + e.message));"]);
    assert.match(stdout, /^Error: init: attnlab\/inline carries the operators' modules only; for gpt: true import \{ init \} from 'attnlab\/inline-gpt'/);
  });
});

describe('esbuild, Node bundles', () => {
  let esbuild;
  before(async () => {
    esbuild = await import('esbuild');
  });
  const bundle = async (entry, format) => {
    const outfile = join(app, 'out/esbuild', `${entry.replace(/[/.]/g, '-')}.${format === 'cjs' ? 'cjs' : 'mjs'}`);
    const res = await esbuild.build({ absWorkingDir: app, entryPoints: [entry], bundle: true, platform: 'node', format, outfile, logLevel: 'silent' });
    return { outfile, warnings: res.warnings.map((w) => w.text) };
  };

  for (const format of ['esm', 'cjs']) {
    test(`${format}: attnlab/inline runs from the bundle alone, no warnings`, async () => {
      const { outfile, warnings } = await bundle(`esbuild/node.${format === 'cjs' ? 'cjs' : 'mjs'}`, format);
      assert.deepEqual(warnings, []);
      expectGood(node(outfile), `esbuild node ${format}`, { source: 'inline' });
    });
  }

  test('esm: attnlab runs from the bundle alone: no .wasm beside it, so its copies inside the JS, and buildInfo says why', async () => {
    const { outfile, warnings } = await bundle('esbuild/node-url.mjs', 'esm');
    assert.deepEqual(warnings, []);
    const r = node(outfile);
    for (const [where, gpt] of [['main', false], ['gpt', true]]) expectGood(r[where], `esbuild node esm, attnlab (${where})`, { gpt, source: 'inline', fallback: true });
    assert.match(r.main.fallback, /^attnlab-simd\.wasm: could not read the wasm module at file:\/\/.*\/out\/esbuild\/attnlab-simd\.wasm \(ENOENT\); its copy/);
  });

  test('cjs: attnlab runs from the bundle alone: no import.meta.url, so its copies inside the JS, and buildInfo says why', async () => {
    const { outfile, warnings } = await bundle('esbuild/node-url.cjs', 'cjs');
    assert.deepEqual(warnings, []);
    const r = node(outfile);
    for (const [where, gpt] of [['main', false], ['gpt', true]]) expectGood(r[where], `esbuild node cjs, attnlab (${where})`, { gpt, source: 'inline', fallback: true });
    assert.equal(r.main.fallback, "attnlab-simd.wasm: import.meta.url is not available here (was the package bundled to CommonJS?); its copy inside the package's JS ran instead.");
  });
});

test('Rollup 4, only @rollup/plugin-node-resolve, output.dir: attnlab runs in Node from the bundle and its chunks', async () => {
  const { rollup } = await import('rollup');
  const { nodeResolve } = await import('@rollup/plugin-node-resolve');
  const warnings = [];
  const bundle = await rollup({ input: join(app, 'rollup/node.js'), plugins: [nodeResolve()], onwarn: (w) => warnings.push(w.message) });
  const { output } = await bundle.write({ dir: join(app, 'out/rollup-node'), format: 'es' });
  await bundle.close();
  assert.deepEqual(warnings, []);
  // The copies inside the JS are chunks of their own, loaded only for the module that runs; the workers' side of
  // models too, loaded only for a model placed on workers.
  assert.deepEqual(output.filter((c) => c.type === 'chunk' && !c.isEntry).map((c) => c.name).sort(),
    ['attnlab-gpt-scalar.inline', 'attnlab-gpt-simd.inline', 'attnlab-scalar.inline', 'attnlab-simd.inline', 'attnlab-worker.inline', 'lm-workers']);
  const r = node(join(app, 'out/rollup-node/node.js'));
  for (const [where, gpt] of [['main', false], ['gpt', true]]) expectGood(r[where], `rollup node, attnlab (${where})`, { gpt, source: 'inline', fallback: true });
  assert.match(r.main.fallback, /^attnlab-simd\.wasm: could not read the wasm module at file:\/\/.*\/out\/rollup-node\/attnlab-simd\.wasm \(ENOENT\); its copy/);
});
