// How init() gets the module and how it fails: the inline entry, a URL served over HTTP with the right or the
// wrong MIME type (one request either way), and every way the .wasm can be missing, each an Error that names
// what it tried and what to do.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, init } from './support/load.mjs';

const { init: initInline, simdSupported: inlineSimd } = await import(pathToFileURL(`${dist}inline.js`).href);
const loader = await import(pathToFileURL(`${dist}loader.js`).href);
const x = new Float32Array([3, 1, 4, 1, 5, 9, 2, 6]);
const attentionInputs = { q: x, k: x.map((v) => v / 2), v: x.map((v) => -v), dk: 2, causal: true, returnWeights: true };

describe('attnlab/inline', () => {
  test('same API, same numbers as attnlab, both modules', async () => {
    assert.equal(inlineSimd(), true);
    for (const simd of [true, false]) {
      const [a, b] = [await init({ simd }), await initInline({ simd })];
      assert.equal(b.backend, simd ? 'wasm-simd' : 'wasm');
      assert.deepEqual(b.buildInfo(), { ...a.buildInfo(), source: 'inline' });
      assert.equal(a.buildInfo().source, 'file');
      assert.deepEqual(b.softmax(x, { cols: 4 }), a.softmax(x, { cols: 4 }));
      const [ra, rb] = [a.attention(attentionInputs), b.attention(attentionInputs)];
      assert.deepEqual(rb.output, ra.output);
      assert.deepEqual(rb.weights, ra.weights);
    }
  });

  test('its base64 text is the shipped .wasm, byte for byte', async () => {
    for (const kind of ['simd', 'scalar']) {
      const text = (await import(pathToFileURL(`${dist}attnlab-${kind}.inline.js`).href)).default;
      assert.deepEqual(Buffer.from(text, 'base64'), readFileSync(`${dist}attnlab-${kind}.wasm`));
    }
  });

  test('takes wasmUrl and wasmBinary like attnlab', async () => {
    const lab = await initInline({ simd: false, wasmBinary: readFileSync(`${dist}attnlab-scalar.wasm`) });
    assert.equal(lab.backend, 'wasm');
    await assert.rejects(initInline({ wasmUrl: `${dist}nowhere.wasm` }), /could not read the wasm module at .*nowhere\.wasm \(ENOENT\)/);
  });
});

describe('over HTTP', () => {
  let server, origin;
  const requests = [];
  const routes = {
    '/right/attnlab-simd.wasm': { type: 'application/wasm', body: readFileSync(`${dist}attnlab-simd.wasm`) },
    '/wrong/attnlab-simd.wasm': { type: 'application/octet-stream', body: readFileSync(`${dist}attnlab-simd.wasm`) },
    '/spa/attnlab-simd.wasm': { type: 'text/html', body: '<!doctype html><title>app</title>' },
  };
  before(async () => {
    server = createServer((req, res) => {
      requests.push(req.url);
      const route = routes[req.url];
      if (!route) return res.writeHead(404, 'Not Found').end();
      res.writeHead(200, { 'Content-Type': route.type }).end(route.body);
    });
    await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
    origin = `http://127.0.0.1:${server.address().port}`;
  });
  after(() => new Promise((ok) => server.close(ok)));

  test('application/wasm and application/octet-stream both load with one request each', async () => {
    for (const dir of ['right', 'wrong']) {
      requests.length = 0;
      const lab = await init({ simd: true, wasmUrl: `${origin}/${dir}/attnlab-simd.wasm` });
      assert.equal(lab.softmax(new Float32Array([0, 0]))[0], 0.5);
      assert.deepEqual(requests, [`/${dir}/attnlab-simd.wasm`]);
    }
  });

  test('404: an Error naming the URL, the status and what to do', async () => {
    const url = `${origin}/missing/attnlab-simd.wasm`;
    const err = await init({ simd: true, wasmUrl: (file) => `${origin}/missing/${file}` }).catch((e) => e);
    assert.ok(err instanceof Error && !(err instanceof TypeError), String(err));
    assert.match(err.message, new RegExp(`could not fetch the wasm module from ${url.replace(/[.]/g, '\\.')} \\(HTTP 404 Not Found\\)`));
    assert.match(err.message, /wasmUrl must point to attnlab-simd\.wasm as shipped in the package \(attnlab\/attnlab-simd\.wasm\)/);
  });

  test('a fallback page instead of the module: says what arrived', async () => {
    const err = await init({ simd: true, wasmUrl: `${origin}/spa/attnlab-simd.wasm` }).catch((e) => e);
    assert.match(err.message, /\/spa\/attnlab-simd\.wasm sent \(Content-Type "text\/html"\) is not a wasm module \(33 bytes starting "<!doctype html><", not "\\0asm", probably a page served in its place: the file is not at that URL\)/);
  });

  test('nothing listening: an Error naming the URL', async () => {
    const closed = createServer();
    await new Promise((ok) => closed.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${closed.address().port}/attnlab-simd.wasm`;
    await new Promise((ok) => closed.close(ok));
    const err = await init({ simd: true, wasmUrl: url }).catch((e) => e);
    assert.ok(err.message.startsWith(`init: could not fetch the wasm module from ${url} (`), err.message);
    assert.ok(err.cause, 'the network error is kept as cause');
  });

  test('attnlab\'s default file answered 404, or by a page: one request, then the copy inside the JS', async () => {
    const inline = () => import(pathToFileURL(`${dist}attnlab-simd.inline.js`).href);
    for (const [dir, why] of [['missing', /could not fetch the wasm module from .*\/missing\/attnlab-simd\.wasm \(HTTP 404 Not Found\)/], ['spa', /is not a wasm module .*probably a page served in its place/]]) {
      requests.length = 0;
      const got = await loader.compileBesideOrInline(new URL(`${origin}/${dir}/attnlab-simd.wasm`), 'attnlab-simd.wasm', inline);
      assert.equal(got.source, 'inline');
      assert.match(got.fallback, why);
      assert.deepEqual(requests, [`/${dir}/attnlab-simd.wasm`]);
    }
  });
});

describe('the default file cannot be found: attnlab runs its copy inside the JS and says why', () => {
  const inside = (file) => () => import(pathToFileURL(`${dist}${file.replace(/\.(wasm|js)$/, '.inline.js')}`).href);

  test('import.meta.url emptied by a CommonJS bundle: the inline copy, and buildInfo-style note of why', async () => {
    const got = await loader.compileBesideOrInline(undefined, 'attnlab-simd.wasm', inside('attnlab-simd.wasm'));
    assert.equal(got.source, 'inline');
    assert.ok(got.module instanceof WebAssembly.Module);
    assert.equal(got.fallback, "attnlab-simd.wasm: import.meta.url is not available here (was the package bundled to CommonJS?); its copy inside the package's JS ran instead.");
  });

  test('a file missing beside the JS (a bundle that did not copy it): the inline copy; the note names the path', async () => {
    const beside = pathToFileURL(`${dist}not-copied/attnlab-gpt-scalar.wasm`);
    const got = await loader.compileBesideOrInline(beside, 'attnlab-gpt-scalar.wasm', inside('attnlab-gpt-scalar.wasm'));
    assert.equal(got.source, 'inline');
    assert.match(got.fallback, /^attnlab-gpt-scalar\.wasm: could not read the wasm module at file:\/\/.*not-copied\/attnlab-gpt-scalar\.wasm \(ENOENT\); its copy inside the package's JS ran instead\.$/);
  });

  test('the file where it should be: no inline copy is imported', async () => {
    let imported = 0;
    const got = await loader.compileBesideOrInline(pathToFileURL(`${dist}attnlab-scalar.wasm`), 'attnlab-scalar.wasm', () => (imported++, inside('attnlab-scalar.wasm')()));
    assert.deepEqual([got.source, got.fallback, imported], ['file', undefined, 0]);
  });

  test('neither the file nor the inline copy: an Error naming both failures and what to do', async () => {
    const beside = pathToFileURL(`${dist}not-copied/attnlab-simd.wasm`);
    const err = await loader.compileBesideOrInline(beside, 'attnlab-simd.wasm', () => import(pathToFileURL(`${dist}not-copied/attnlab-simd.inline.js`).href)).catch((e) => e);
    assert.ok(err instanceof Error, String(err));
    assert.match(err.message, /^init: could not load attnlab-simd\.wasm: could not read the wasm module at file:\/\/.*not-copied\/attnlab-simd\.wasm \(ENOENT\); nor its copy inside the package's JS \(/);
    assert.match(err.message, /The file ships in the package as attnlab\/attnlab-simd\.wasm/);
    assert.match(err.message, /import \{ init \} from 'attnlab\/inline'/);
  });

  test('the workers\' script: the file, or where it is missing its copy inside the JS', async () => {
    const text = readFileSync(`${dist}attnlab-worker.js`, 'utf8');
    const file = await loader.readBesideOrInline(pathToFileURL(`${dist}attnlab-worker.js`), 'attnlab-worker.js', () => assert.fail('imported'));
    assert.deepEqual(file, { text });
    const missing = await loader.readBesideOrInline(pathToFileURL(`${dist}not-copied/attnlab-worker.js`), 'attnlab-worker.js', inside('attnlab-worker.js'));
    assert.equal(missing.text, text);
    assert.match(missing.fallback, /^attnlab-worker\.js: could not load file:\/\/.*not-copied\/attnlab-worker\.js \(ENOENT.*\); its copy inside the package's JS ran instead\.$/);
    const noMeta = await loader.readBesideOrInline(undefined, 'attnlab-worker.js', inside('attnlab-worker.js'));
    assert.equal(noMeta.text, text);
  });

  test('a copy of the package without its .wasm files and workers\' script: init() runs, with gpt and threads too; buildInfo says why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-no-files-'));
    try {
      for (const f of readdirSync(dist)) if (!f.endsWith('.wasm') && f !== 'attnlab-worker.js') copyFileSync(dist + f, join(dir, f));
      const { init: initCopy } = await import(pathToFileURL(join(dir, 'index.js')).href);
      const [lab, ref] = [await initCopy(), await init()];
      assert.deepEqual(lab.buildInfo(), { ...ref.buildInfo(), source: 'inline', fallback: lab.buildInfo().fallback });
      assert.match(lab.buildInfo().fallback, /^attnlab-simd\.wasm: could not read the wasm module at file:.*attnlab-no-files-.*\/attnlab-simd\.wasm \(ENOENT\); its copy inside the package's JS ran instead\.$/);
      assert.deepEqual(lab.attention(attentionInputs).output, ref.attention(attentionInputs).output);
      const gpt = await initCopy({ gpt: true, simd: false });
      assert.equal(gpt.buildInfo().source, 'inline');
      assert.match(gpt.buildInfo().fallback, /^attnlab-gpt-scalar\.wasm: /);
      gpt.createGPT({ vocabSize: 5, context: 4, dModel: 8, heads: 2, layers: 1, seed: 7 }).dispose();
      const threaded = await initCopy({ threads: 2 });
      try {
        assert.match(threaded.buildInfo().fallback, /^attnlab-simd\.wasm: .*ran instead\. attnlab-worker\.js: could not load file:.*\/attnlab-worker\.js \(ENOENT.*\); its copy inside the package's JS ran instead\.$/);
        const big = { q: new Float32Array(4 * 256 * 64).fill(0.01), k: new Float32Array(4 * 256 * 64).fill(0.02), v: new Float32Array(4 * 256 * 64).fill(1), heads: 4, dk: 64 };
        assert.deepEqual((await threaded.attentionAsync(big)).output, ref.attention(big).output);
      } finally {
        threaded.dispose();
      }
      // A wasmUrl the caller gave is theirs: no fallback, the error names it.
      await assert.rejects(initCopy({ wasmUrl: join(dir, 'attnlab-simd.wasm') }), /^Error: init: could not read the wasm module at .*attnlab-simd\.wasm \(ENOENT\)\. init's wasmUrl must point to/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bytes that are not a module', async () => {
    await assert.rejects(init({ wasmBinary: new TextEncoder().encode('<!doctype html>') }), /init's wasmBinary is not a wasm module \(15 bytes starting "<!doctype html>"/);
    await assert.rejects(init({ wasmBinary: new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 99]) }), /init's wasmBinary did not compile: /);
  });
});
