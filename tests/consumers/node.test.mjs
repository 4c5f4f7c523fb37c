// The installed tarball in Node: ESM import and CommonJS require of both entries, and esbuild's Node bundles
// (ESM and CommonJS) of the inline entry, which carries the module; the URL entry bundled that way cannot find
// its .wasm, and says where it looked and what to do.
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
    expectGood(r.url, 'attnlab');
    expectGood(r.inline, 'attnlab/inline');
    expectGood(r.urlGpt, 'attnlab, gpt: true', { gpt: true });
    expectGood(r.inlineGpt, 'attnlab/inline-gpt, gpt: true', { gpt: true });
  });

  test('CommonJS: require every entry, each variant, with no warning', () => {
    const { stdout, stderr } = run(process.execPath, ['node/cjs.cjs']);
    const r = JSON.parse(stdout);
    expectGood(r.url, 'attnlab');
    expectGood(r.inline, 'attnlab/inline');
    expectGood(r.urlGpt, 'attnlab, gpt: true', { gpt: true });
    expectGood(r.inlineGpt, 'attnlab/inline-gpt, gpt: true', { gpt: true });
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
      expectGood(node(outfile), `esbuild node ${format}`);
    });
  }

  test('esm: attnlab (the URL entry) fails with an Error naming the path it read and attnlab/inline', async () => {
    const { outfile } = await bundle('esbuild/node-url.mjs', 'esm');
    const { error } = node(outfile);
    assert.match(error, /^init: could not read the wasm module at file:\/\/.*\/out\/esbuild\/attnlab-simd\.wasm \(ENOENT\)\. The file ships in the package as attnlab\/attnlab-simd\.wasm\./);
    assert.match(error, /import \{ init \} from 'attnlab\/inline'/);
  });

  test('cjs: attnlab (the URL entry) fails with an Error saying import.meta is gone and what to do', async () => {
    const { outfile } = await bundle('esbuild/node-url.cjs', 'cjs');
    const { error } = node(outfile);
    assert.match(error, /^init: cannot locate attnlab-simd\.wasm: import\.meta\.url is not available here \(was the package bundled to CommonJS\?\)/);
    assert.match(error, /import \{ init \} from 'attnlab\/inline'/);
  });
});
