// GPT.trainStepAsync in real headless Chromium: Web Workers from a Blob URL running the GPT module, on a page
// without cross-origin isolation (the workers exchange by messages) and on one with it (COOP + COEP: by shared
// memory), under a CSP of 'self' scripts and blob: workers, from both entries that can load the GPT (attnlab with
// gpt: true, attnlab/inline-gpt). A one-sequence batch (one worker computes the whole
// gradient, as trainStep does) gives trainStep's loss and weights bit for bit; a batch of 5 over 2 workers gives its
// loss to an ulp; an argument error is trainStep's; dispose() during a step rejects and changes nothing.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';

import { launchChromium } from '../chromium.mjs';
import { pageRun, WORKERS_CSP } from './support/browser-page.mjs';
import { dist } from './support/load.mjs';

const pageScript = (entry) => pageRun(`
import { init } from './dist/${entry}';
const C = { vocabSize: 29, context: 8, dModel: 16, heads: 2, kvHeads: 1, layers: 2, seed: 3 };
const batch = (n, seed) => ({ x: Int32Array.from({ length: n * 8 }, (_, i) => (i * 7 + seed) % 29), y: Int32Array.from({ length: n * 8 }, (_, i) => (i * 11 + seed) % 29) });
const bytes = (m) => Object.values(m.getWeights()).flatMap((w) => Array.from(new Uint8Array(w.buffer)));
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
async function run() {
  const lab = await init({ gpt: true, threads: 2 });
  const a = lab.createGPT(C), b = lab.createGPT(C);
  const one = batch(1, 1), five = batch(5, 2);
  const checks = {};
  checks.oneLoss = a.trainStep(one.x, one.y) === (await b.trainStepAsync(one.x, one.y));
  checks.oneWeights = same(bytes(a), bytes(b)) && a.steps === b.steps;
  const want = a.trainStep(five.x, five.y), got = await b.trainStepAsync(five.x, five.y);
  checks.fiveLoss = Math.abs(got - want) <= 2 ** (Math.floor(Math.log2(want)) - 23);
  const stats = lab.threadStats(); // two steps: one part (a batch of one), then one per worker
  let syncMessage = null, error = null;
  try { a.trainStep(five.x, five.y, { lr: -1 }); } catch (e) { syncMessage = e.message; }
  try { await b.trainStepAsync(five.x, five.y, { lr: -1 }); } catch (e) { error = { isRangeError: e instanceof RangeError, message: e.message }; }
  const kept = bytes(b), step = b.trainStepAsync(five.x, five.y);
  lab.dispose();
  let disposed = null;
  try { await step; } catch (e) { disposed = e.message; }
  checks.unchanged = same(bytes(b), kept) && b.steps === 2;
  return { checks, stats, error, syncMessage, disposed, isolated: globalThis.crossOriginIsolated === true };
}
`);

const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
let server, origin, browser;

before(async () => {
  server = createServer(async (req, res) => {
    let path = new URL(req.url, 'http://x').pathname;
    const headers = { 'Content-Security-Policy': WORKERS_CSP, 'Cache-Control': 'no-store' };
    // Under /isolated/ the same files, cross-origin isolated (SharedArrayBuffer available to the page and workers).
    if (path.startsWith('/isolated/')) {
      path = path.slice('/isolated'.length);
      Object.assign(headers, { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
    }
    let body, type;
    if (path === '/favicon.ico') return res.writeHead(204).end();
    const entry = path.match(/^\/(index|inline-gpt)\.html$/)?.[1];
    if (entry) (body = `<!doctype html><meta charset="utf-8"><title>trainStepAsync</title><script type="module" src="./${entry}.test.js"></script>`), (type = 'text/html');
    else if (path === '/index.test.js' || path === '/inline-gpt.test.js') (body = pageScript(path.slice(1, -8) + '.js')), (type = types['.js']);
    else if (/^\/dist\/[\w.-]+$/.test(path)) {
      body = await readFile(dist + path.slice('/dist/'.length)).catch(() => null);
      type = types[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
    }
    if (body == null) return res.writeHead(404).end();
    res.writeHead(200, { ...headers, 'Content-Type': type }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();   // the run's shared browser under npm test (tests/chromium.mjs)
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

for (const isolated of [false, true]) for (const entry of ['index', 'inline-gpt']) {
  test(`trainStepAsync on 2 Web Workers in Chromium (${entry === 'index' ? 'attnlab' : 'attnlab/inline-gpt'}, ${isolated ? 'cross-origin isolated: shared memory' : 'not isolated: messages'})`, async () => {
    const tab = await browser.newPage();
    const problems = [];
    tab.on('console', (m) => ['error', 'warning'].includes(m.type()) && problems.push(`${m.type()}: ${m.text()}`));
    tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await tab.goto(`${origin}${isolated ? '/isolated' : ''}/${entry}.html`);
    await tab.waitForFunction(() => window.__results !== undefined, null, { timeout: 60000 });
    const got = await tab.evaluate(() => window.__results);
    await tab.close();
    assert.equal(got.failed, undefined, got.failed);
    assert.deepEqual(got.violations, []);
    assert.deepEqual(problems, []);
    assert.equal(got.isolated, isolated);
    assert.deepEqual(got.checks, { oneLoss: true, oneWeights: true, fiveLoss: true, unchanged: true });
    assert.deepEqual(got.stats, { workerParts: 3, inlineCalls: 0, reruns: 0 }, 'the workers computed every part');
    assert.equal(got.error.isRangeError, true);
    assert.equal(got.error.message, got.syncMessage);
    assert.match(got.disposed, /this lab was disposed/);
  });
}
