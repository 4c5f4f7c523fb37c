// The built package in real headless Chromium: a static page on 127.0.0.1 imports dist/index.js, which must
// pick the SIMD module, stream the .wasm beside it, run under a CSP without 'unsafe-eval', and produce exactly
// the numbers the same module produces in Node.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

import { dist, init } from './support/load.mjs';
import { rng } from './support/random.mjs';

const r = rng(50);
const inputs = {
  x: Array.from(r.array(40, -5, 5)),
  q: Array.from(r.array(3 * 4)), k: Array.from(r.array(5 * 4)), v: Array.from(r.array(5 * 2)),
  mha: { x: Array.from(r.array(12)), wq: Array.from(r.array(16)), wk: Array.from(r.array(8)), wv: Array.from(r.array(8)), wo: Array.from(r.array(16)) },
};

// Runs in the page (and, for the expected values, in Node on the same module).
const pageScript = `
import { init } from './dist/index.js';
const inputs = ${JSON.stringify(inputs)};
const F = (a) => new Float32Array(a);
async function run(options) {
  const lab = await init(options);
  const att = lab.attention({ q: F(inputs.q), k: F(inputs.k), v: F(inputs.v), nq: 3, nk: 5, dk: 4, dv: 2, causal: true, returnWeights: true });
  const mha = lab.multiHeadAttention({ x: F(inputs.mha.x), n: 3, dModel: 4, heads: 2, kvHeads: 1, wq: F(inputs.mha.wq),
    wk: F(inputs.mha.wk), wv: F(inputs.mha.wv), wo: F(inputs.mha.wo) });
  let error = null;
  try { lab.softmax(F([1, NaN])); } catch (e) { error = { name: e.name, isRangeError: e instanceof RangeError, message: e.message }; }
  return {
    backend: lab.backend, info: lab.buildInfo(),
    softmax: Array.from(lab.softmax(F(inputs.x), { cols: 8, temperature: 0.7 })),
    output: Array.from(att.output), weights: Array.from(att.weights), mha: Array.from(mha.output), error,
  };
}
const violations = [];
document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective + ' ' + e.blockedURI));
try {
  window.__results = { auto: await run(), scalar: await run({ simd: false }), violations };
} catch (e) {
  window.__results = { failed: String(e && e.stack || e), violations };
}
`;

const page = `<!doctype html><html><head><meta charset="utf-8"><title>attnlab package test</title>
<script type="module" src="./test.js"></script></head><body></body></html>`;

const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
let server, origin, browser;

before(async () => {
  server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const headers = { 'Content-Security-Policy': "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'", 'Cache-Control': 'no-store' };
    let body, type;
    if (path === '/favicon.ico') return res.writeHead(204).end();
    if (path === '/') (body = page), (type = types['.html']);
    else if (path === '/test.js') (body = pageScript), (type = types['.js']);
    else if (/^\/dist\/[\w.-]+$/.test(path)) {
      body = await readFile(dist + path.slice('/dist/'.length)).catch(() => null);
      type = types[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
    }
    if (body == null) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': type }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

test('headless Chromium: SIMD backend chosen, same results as Node, errors are RangeErrors, strict CSP holds', async () => {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const problems = [], requests = [];
  tab.on('console', (m) => ['error', 'warning'].includes(m.type()) && problems.push(`${m.type()}: ${m.text()}`));
  tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  tab.on('request', (q) => requests.push(new URL(q.url()).pathname));
  await tab.goto(`${origin}/`);
  await tab.waitForFunction(() => window.__results !== undefined, null, { timeout: 30000 });
  const got = await tab.evaluate(() => window.__results);
  await context.close();

  assert.equal(got.failed, undefined, got.failed);
  assert.deepEqual(got.violations, []);
  assert.deepEqual(problems, []);
  assert.equal(got.auto.backend, 'wasm-simd');
  assert.equal(got.auto.info.simd, true);
  assert.equal(got.scalar.backend, 'wasm');
  assert.ok(requests.includes('/dist/attnlab-simd.wasm') && requests.includes('/dist/attnlab-scalar.wasm'), requests.join(' '));

  // The same module in Node must give bit-identical results (wasm float arithmetic is deterministic).
  const expected = {};
  for (const [key, simd] of [['auto', true], ['scalar', false]]) {
    const lab = await init({ simd });
    const F = (a) => new Float32Array(a);
    const att = lab.attention({ q: F(inputs.q), k: F(inputs.k), v: F(inputs.v), nq: 3, nk: 5, dk: 4, dv: 2, causal: true, returnWeights: true });
    expected[key] = {
      softmax: Array.from(lab.softmax(F(inputs.x), { cols: 8, temperature: 0.7 })),
      output: Array.from(att.output), weights: Array.from(att.weights),
      mha: Array.from(lab.multiHeadAttention({ x: F(inputs.mha.x), n: 3, dModel: 4, heads: 2, kvHeads: 1, wq: F(inputs.mha.wq),
        wk: F(inputs.mha.wk), wv: F(inputs.mha.wv), wo: F(inputs.mha.wo) }).output),
    };
    for (const field of ['softmax', 'output', 'weights', 'mha']) assert.deepEqual(got[key][field], expected[key][field], `${key} ${field}`);
    assert.equal(got[key].error.name, 'RangeError');
    assert.equal(got[key].error.isRangeError, true);
    assert.match(got[key].error.message, /\bx\[1\] is NaN/);
  }
});
