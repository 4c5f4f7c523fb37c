// The page's weight on the wire. The server gzips like a static host does (text and .wasm; woff2 is already
// compressed), so Content-Length is what the browser transfers. Two numbers, both printed:
//  - first view: every response while the page loads and the reader scrolls to the bottom;
//  - everything: every file the page can ever load (both engines, both workers, every font), the most a
//    reader can transfer. The offline copy is a download, not part of the page, and is not counted.
// Budget: under 1.25 MB for everything but the shipped language model (1184.6 KiB measured: each module with the
// small GPT, the language models and the tokenizer is about 200 KiB of it; the learn lab's text task fetches its
// sample text, 9.2 KiB gzipped, only when that task is chosen; docs/performance.md#size). The model's
// files (web/models/kjv-fortunes-gpt/, loaded when the model view comes into sight) are counted apart: float16
// weights barely compress (2.67 MB, 2.46 MB gzipped), so their budget is their size plus a margin, 2.7 MB.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { setup, openPage, distDir } from './helpers.mjs';

const BUDGET = 1_250_000;
const MODEL_BUDGET = 2_700_000;
// The shipped model's files as the build names them (hashed, beside the page).
const MODEL_FILE = /^assets[\\/](config|generation_config|head-scores|model|tokenizer|tokenizer_config)-[\w-]+\.(json|safetensors)$/;

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const kb = (b) => `${(b / 1024).toFixed(1)} KB`;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

test('first view and everything the page can load, gzip, under 1.25 MB and the model under 2.7 MB', async () => {
  const { page, context, log } = await openPage(env, '');
  const sizes = new Map();
  context.on('response', async (r) => {
    if (!r.url().startsWith(env.origin)) return;
    const len = Number(r.headers()['content-length'] ?? NaN);
    sizes.set(r.url(), { len, enc: r.headers()['content-encoding'] ?? '' });
  });
  // The browser's cache off: every response is a transfer (the server answers 304 to a cached copy).
  await (await context.newCDPSession(page)).send('Network.setCacheDisabled', { cacheDisabled: true });
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  for (let y = 0, h = 1; y < h; y += 700) {
    h = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.mouse.wheel(0, 700);
    // One frame after each step: the sections that load on sight see it before the next step.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
  await page.waitForLoadState('networkidle');
  const first = [...sizes.values()];
  assert.ok(first.every((s) => Number.isFinite(s.len)), 'every response has a length');
  assert.ok(first.some((s) => s.enc === 'gzip'), 'the server compresses');
  const firstBytes = first.reduce((a, s) => a + s.len, 0);

  let everything = 0, model = 0;
  const rows = [];
  for (const f of files(distDir)) {
    const name = relative(distDir, f);
    if (name === 'attnlab-explorer.html') continue;
    const raw = readFileSync(f);
    const wire = /\.(woff2|png|jpe?g)$/.test(name) ? raw.length : gzipSync(raw, { level: 9 }).length;
    if (MODEL_FILE.test(name)) model += wire;
    else everything += wire;
    rows.push([wire, name]);
  }
  rows.sort((a, b) => b[0] - a[0]);
  console.log(`payload: first view ${first.length} responses, ${kb(firstBytes)} transferred`);
  console.log(`payload: the shipped model ${kb(model)}; everything else the page can load ${rows.filter(([, n]) => !MODEL_FILE.test(n)).length} files, ${kb(everything)} (largest: ${rows.slice(0, 4).map(([w, n]) => `${n} ${kb(w)}`).join(', ')})`);
  assert.ok(firstBytes <= everything + model, 'the first view is part of everything');
  assert.ok(model > 0, 'the shipped model is among the files');
  assert.ok(everything < BUDGET, `everything but the model, ${everything} B, is under ${BUDGET} B`);
  assert.ok(model < MODEL_BUDGET, `the model, ${model} B, is under ${MODEL_BUDGET} B`);
  assert.deepEqual(log.errors, []);
  await context.close();
});
