// The page's weight on the wire. The server gzips like a static host does (text and .wasm; woff2 is already
// compressed), so Content-Length is what the browser transfers. Two numbers, both printed:
//  - first view: every response while the page loads and the reader scrolls to the bottom;
//  - everything: every file the page can ever load (both engines, both workers, every font), the most a
//    reader can transfer. The offline copy is a download, not part of the page, and is not counted.
// Budget: under 1.25 MB for everything (1200.5 KiB measured: each module with the small GPT, the language models
// and the tokenizer is about 200 KiB of it; the learn lab's text task fetches the shipped model's tokenizer.json,
// 36.4 KiB gzipped, and its sample text, 9.2 KiB, only when that task is chosen; docs/performance.md#size).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { setup, openPage, distDir } from './helpers.mjs';

const BUDGET = 1_250_000;

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

test('first view and everything the page can load, gzip, under 1.25 MB', async () => {
  const { page, context, log } = await openPage(env, '');
  const sizes = new Map();
  context.on('response', async (r) => {
    if (!r.url().startsWith(env.origin)) return;
    const len = Number(r.headers()['content-length'] ?? NaN);
    sizes.set(r.url(), { len, enc: r.headers()['content-encoding'] ?? '' });
  });
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

  let everything = 0;
  const rows = [];
  for (const f of files(distDir)) {
    const name = relative(distDir, f);
    if (name === 'attnlab-explorer.html') continue;
    const raw = readFileSync(f);
    const wire = /\.(woff2|png|jpe?g)$/.test(name) ? raw.length : gzipSync(raw, { level: 9 }).length;
    everything += wire;
    rows.push([wire, name]);
  }
  rows.sort((a, b) => b[0] - a[0]);
  console.log(`payload: first view ${first.length} responses, ${kb(firstBytes)} transferred`);
  console.log(`payload: everything the page can load ${rows.length} files, ${kb(everything)} (largest: ${rows.slice(0, 4).map(([w, n]) => `${n} ${kb(w)}`).join(', ')})`);
  assert.ok(firstBytes <= everything, 'the first view is part of everything');
  assert.ok(everything < BUDGET, `everything ${everything} B is under ${BUDGET} B`);
  assert.deepEqual(log.errors, []);
  await context.close();
});
