// init({ threads }) in real headless Chromium on a page without cross-origin isolation (no COOP/COEP, so no
// SharedArrayBuffer) under a CSP that allows only 'self' scripts and blob: workers: both entries (attnlab and
// attnlab/inline) start their workers, the async twins equal the synchronous calls bit for bit (compared in the
// page), an error comes back as a RangeError with the same message, the pool works after it, and dispose() ends
// the workers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { pageResults, pageRun, startPackagePage, WORKERS_CSP } from './support/browser-page.mjs';

const pageScript = (entry) => pageRun(`
import { init } from './dist/${entry}';
const rnd = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed) * 0.5);
const same = (a, b) => a.length === b.length && new Uint8Array(a.buffer, a.byteOffset, a.byteLength).every((x, i) => x === new Uint8Array(b.buffer, b.byteOffset, b.byteLength)[i]);
async function run() {
  const lab = await init({ threads: 3 });
  // Large enough to be cut (smaller calls run on the calling thread).
  const q = rnd(2 * 4 * 400 * 16, 1), k = rnd(2 * 2 * 420 * 16, 2), v = rnd(2 * 2 * 420 * 16, 3);
  const opts = { q, k, v, batch: 2, heads: 4, kvHeads: 2, nq: 400, nk: 420, dk: 16, causal: true, returnLse: true };
  const a = await lab.attentionAsync(opts), s = lab.attention(opts);
  const x = rnd(333 * 61, 4);
  const checks = {
    attention: same(a.output, s.output) && same(a.lse, s.lse),
    softmax: same(await lab.softmaxAsync(x, { cols: 61 }), lab.softmax(x, { cols: 61 })),
    matmul: same(await lab.matmulAsync(x.subarray(0, 201 * 61), x.subarray(0, 61 * 33), { m: 201, k: 61, n: 33 }), lab.matmul(x.subarray(0, 201 * 61), x.subarray(0, 61 * 33), { m: 201, k: 61, n: 33 })),
  };
  // The attention call went to the workers (3 parts); the small softmax and matmul stayed here; nothing ran twice.
  const valid = lab.threadStats();
  // A bad value in the last part's rows: the error the whole call names (the call runs again here, counted).
  const bad = { ...opts, q: q.slice() }; bad.q[q.length - 5] = NaN;
  let error = null, syncMessage = null;
  try { lab.attention(bad); } catch (e) { syncMessage = e.message; }
  try { await lab.attentionAsync(bad); } catch (e) { error = { isRangeError: e instanceof RangeError, message: e.message }; }
  const afterBad = lab.threadStats();
  checks.afterError = same((await lab.attentionAsync(opts)).output, s.output);
  const stats = { valid, reruns: afterBad.reruns, last: lab.threadStats() };
  lab.dispose();
  let disposed = null;
  try { await lab.softmaxAsync(x); } catch (e) { disposed = e.message; }
  return { checks, stats, error, syncMessage, disposed, threads: lab.threads, isolated: globalThis.crossOriginIsolated === true, sab: typeof SharedArrayBuffer };
}
`);

let env;
before(async () => {
  env = await startPackagePage({
    csp: WORKERS_CSP,
    pages: (path) => {
      const entry = path.match(/^\/(index|inline)\.html$/)?.[1];
      if (entry) return { body: `<!doctype html><meta charset="utf-8"><title>threads</title><script type="module" src="./${entry}.test.js"></script>`, type: '.html' };
      if (path === '/index.test.js' || path === '/inline.test.js') return { body: pageScript(path.slice(1, -8) + '.js'), type: '.js' };
      return null;
    },
  });
});
after(() => env?.close());

for (const entry of ['index', 'inline']) {
  test(`threads: 3 in Chromium without cross-origin isolation (${entry === 'index' ? 'attnlab' : 'attnlab/inline'})`, async () => {
    const { got, problems } = await pageResults(env.browser, `${env.origin}/${entry}.html`, { timeout: 60000 });
    assert.equal(got.failed, undefined, got.failed);
    assert.deepEqual(got.violations, []);
    assert.deepEqual(problems, []);
    assert.equal(got.isolated, false);
    assert.equal(got.sab, 'undefined', 'no SharedArrayBuffer on this page');
    assert.equal(got.threads, 3);
    assert.deepEqual(got.checks, { attention: true, softmax: true, matmul: true, afterError: true });
    assert.deepEqual(got.stats.valid, { workerParts: 3, inlineCalls: 2, reruns: 0 }, 'attention on the workers, softmax and matmul here');
    assert.equal(got.stats.reruns, 1, 'the call whose part met a NaN ran again on the calling thread');
    assert.equal(got.stats.last.reruns, 1, 'the valid call after it did not');
    assert.ok(got.stats.last.workerParts >= got.stats.valid.workerParts + 3);
    assert.equal(got.error.isRangeError, true);
    assert.equal(got.error.message, got.syncMessage);
    assert.match(got.disposed, /disposed/);
  });
}
