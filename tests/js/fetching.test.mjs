// How init() gets the module and how it fails: the inline entry, a URL served over HTTP with the right or the
// wrong MIME type (one request either way), and every way the .wasm can be missing, each an Error that names
// what it tried and what to do.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
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
      assert.deepEqual(b.buildInfo(), a.buildInfo());
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
});

describe('the default file cannot be found', () => {
  test('import.meta.url emptied by a CommonJS bundle: says so and what to do', () => {
    assert.throws(() => loader.compileBeside(undefined, 'attnlab-simd.wasm'),
      (e) => e instanceof Error && /cannot locate attnlab-simd\.wasm: import\.meta\.url is not available here/.test(e.message) &&
        /import \{ init \} from 'attnlab\/inline'/.test(e.message) && /init\(\{ wasmUrl \}\)/.test(e.message));
  });

  test('a file missing beside the JS (a bundle that did not copy it): names the path and the inline entry', async () => {
    const beside = pathToFileURL(`${dist}not-copied/attnlab-simd.wasm`);
    const err = await loader.compileBeside(beside, 'attnlab-simd.wasm').catch((e) => e);
    assert.match(err.message, /could not read the wasm module at file:\/\/.*not-copied\/attnlab-simd\.wasm \(ENOENT\)/);
    assert.match(err.message, /The file ships in the package as attnlab\/attnlab-simd\.wasm/);
    assert.match(err.message, /'attnlab\/inline'/);
  });

  test('bytes that are not a module', async () => {
    await assert.rejects(init({ wasmBinary: new TextEncoder().encode('<!doctype html>') }), /init's wasmBinary is not a wasm module \(15 bytes starting "<!doctype html>"/);
    await assert.rejects(init({ wasmBinary: new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 99]) }), /init's wasmBinary did not compile: /);
  });
});
