// A real model on the workers in headless Chromium: on a page without cross-origin isolation (no SharedArrayBuffer:
// the workers exchange through MessagePorts) and on one that is isolated (COOP/COEP: shared memory), under a CSP
// that allows only 'self' scripts and blob: workers. The page loads a random-weight checkpoint from the server's
// resolve/main/-style folder onto two workers: greedy tokens equal the float64 reference's 32, the logits of a
// forward lie within its bounds (checked in the page), the calling thread's wasm memory holds none of it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { pageResults, pageRun, startPackagePage, WORKERS_CSP } from './support/browser-page.mjs';
import { reference, writeCheckpoints } from './support/lm-fixtures.mjs';

const CASE = 'llama-tied-bf16';
const { dir, cleanup } = writeCheckpoints([CASE]);
after(cleanup);
const ref = reference(dir, CASE);
const n = ref.ids.length;
const want = {
  prompt: ref.prompt, greedy: ref.greedy, ids: ref.ids, vocab: ref.vocab,
  rows: ref.logit_rows.filter((r) => r < n), logits: Array.from(ref.logits), bounds: Array.from(ref.logitsBound),
};

const pageScript = pageRun(`
import { init } from '/dist/index.js';
const want = ${JSON.stringify(want)};
async function run() {
  const lab = await init({ gpt: true, threads: 2 });
  const before = lab.memoryBytes;
  const model = await lab.loadModel(new URL('./ckpt/resolve/main/', location.href));
  const { tokens } = await model.generate(want.prompt, { maxTokens: 32, temperature: 0, stop: [] });
  const { logits } = await model.forwardAsync(want.ids);
  let outside = 0;
  want.rows.forEach((row, k) => {
    for (let j = 0; j < want.vocab; ++j)
      if (!(Math.abs(logits[row * want.vocab + j] - want.logits[k * want.vocab + j]) <= want.bounds[k * want.vocab + j])) ++outside;
  });
  const result = { tokens: Array.from(tokens), outside, split: model.split.threads, exchange: model.split.exchange,
    phases: (await model.workers()).map((w) => w.phases), grew: lab.memoryBytes - before,
    isolated: globalThis.crossOriginIsolated === true };
  model.dispose();
  lab.dispose();
  return result;
}
`);

let env;
before(async () => {
  env = await startPackagePage({
    csp: WORKERS_CSP,
    headers: (path) => (path.startsWith('/isolated') ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {}),
    pages: (path) => {
      const page = path.match(/^\/(plain|isolated)\/(.*)$/);
      if (!page) return null;
      const [, , rest] = page;
      if (rest === 'index.html') return { body: '<!doctype html><meta charset="utf-8"><title>lm threads</title><script type="module" src="./page.js"></script>', type: '.html' };
      if (rest === 'page.js') return { body: pageScript, type: '.js' };
      const file = rest.match(/^ckpt\/resolve\/main\/([\w.-]+)$/)?.[1];
      if (file && (file === 'config.json' || file === 'generation_config.json' || file.endsWith('.safetensors') || file === 'model.safetensors.index.json')) {
        try {
          return { body: readFileSync(join(dir, CASE, file)), type: '.bin' };
        } catch {
          return null;
        }
      }
      return null;
    },
  });
});
after(() => env?.close());

for (const [where, isolated] of [['plain', false], ['isolated', true]]) {
  test(`a model on two workers in Chromium, ${isolated ? 'cross-origin isolated (shared memory)' : 'not isolated (messages)'}`, async () => {
    const { got, problems } = await pageResults(env.browser, `${env.origin}/${where}/index.html`, { timeout: 120000 });
    assert.equal(got.failed, undefined, got.failed);
    assert.deepEqual(got.violations, []);
    // (the optional files the folder does not have — the index, the tokenizer's — are 404s the console reports)
    assert.deepEqual(problems.filter((p) => !/status of 404/.test(p)), []);
    assert.equal(problems.length, 5);
    assert.equal(got.isolated, isolated);
    assert.equal(got.exchange, isolated ? 'shared' : 'message');
    assert.equal(got.split, 2);
    assert.deepEqual(got.tokens, ref.greedy);
    assert.equal(got.outside, 0, 'logits outside the reference\'s bounds');
    assert.ok(got.phases.every((p) => p > 0), 'both workers ran the steps');
    assert.equal(got.grew, 0, 'the calling thread\'s wasm memory grew');
  });
}
