// The built package in real headless Chromium: a static page on 127.0.0.1 imports dist/index.js, which must
// pick the SIMD module, stream the .wasm beside it, run under a CSP without 'unsafe-eval', and produce exactly
// the numbers the same module produces in Node.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { pageResults, startPackagePage } from './support/browser-page.mjs';
import { init } from './support/load.mjs';
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

let env;
before(async () => {
  env = await startPackagePage({
    csp: "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'",
    pages: (path) => (path === '/' ? { body: page, type: '.html' } : path === '/test.js' ? { body: pageScript, type: '.js' } : null),
  });
});
after(() => env?.close());

test('headless Chromium: SIMD backend chosen, same results as Node, errors are RangeErrors, strict CSP holds', async () => {
  const context = await env.browser.newContext();
  const { got, problems, requests } = await pageResults(context, `${env.origin}/`);
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
