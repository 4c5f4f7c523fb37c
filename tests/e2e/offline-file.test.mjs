// The offline copy (web/dist/attnlab-explorer.html) is one self-contained file: copied alone into an empty
// folder and opened from file://, it boots the wasm engine, computes the same numbers as the served page and
// loads nothing but itself (every other URL it uses is data: or blob:), carrying each wasm module once. The served
// page links to it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setup, openPage, readMatrix, settle, distDir } from './helpers.mjs';

let env;
let folder;
let fileUrl;
before(async () => {
  env = await setup();
  folder = mkdtempSync(join(tmpdir(), 'attnlab-offline-'));
  copyFileSync(join(distDir, 'attnlab-explorer.html'), join(folder, 'attnlab-explorer.html'));
  fileUrl = pathToFileURL(join(folder, 'attnlab-explorer.html')).href;
});
after(async () => {
  await env?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** Opens the copy from disk in a tab of helpers.openPage (every request and console message recorded). */
const openFile = (query = '') => openPage(env, query, { base: fileUrl });

test('the file is self-contained: one HTML document, a strict hash-based CSP, no external references', () => {
  const html = readFileSync(join(folder, 'attnlab-explorer.html'), 'utf8');
  // Each wasm module is inside once, as a data: URL in the page's script (1.59 MB of base64 for the operators' pair
  // and the pair with the small GPT, the language models and the tokenizer); the labs' workers receive those URLs
  // from the page instead of carrying the modules in their own scripts; the shipped language model's files as data: URLs,
  // 3.69 MB of base64 (its float16 weights are 2.67 MB). Budget 7.2 MB, a little above its size
  // (docs/performance.md#size). Most of the rest is code: the page's, and the package's again in each of the three
  // workers (with its workers' script, which threads start from); the learn lab's text task adds the shipped
  // model's tokenizer.json (92,963 bytes, 124 KB as base64) and its sample text (23,181 bytes, 31 KB).
  const size = statSync(join(folder, 'attnlab-explorer.html')).size;
  assert.ok(size < 7_200_000, `under 7.2 MB (${size} bytes)`);
  // One copy of each module: four data:application/wasm URLs in the whole file.
  assert.equal((html.match(/data:application\/wasm;base64,/g) ?? []).length, 4, 'each module once');
  // Nothing is fetched from a path: no src= or href= other than data: URLs and in-page anchors.
  const markup = html.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '').replace(/<style>[\s\S]*?<\/style>/g, '');
  const refs = [...markup.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
  const external = refs.filter((r) => !r.startsWith('data:') && !r.startsWith('#'));
  assert.deepEqual(external, [], 'no src/href outside the file');
  const style = html.match(/<style>([\s\S]*?)<\/style>/)?.[1] ?? '';
  assert.match(style, /url\(data:font\/woff2;base64,/, 'the fonts are inside');
  assert.doesNotMatch(style, /url\((?!["']?data:)[^)]*\)/, 'every CSS url() is a data: URL');
  const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/)?.[1];
  assert.ok(csp, 'the policy is in a meta tag');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|'unsafe-eval'|\*|https?:/);
  assert.equal((html.match(/<script/g) ?? []).length, 1, 'one inline script');
});

test('opened from file:// it boots the engine and matches the served page number for number', async () => {
  const query = '?text=The+cat+sat+on+the+mat&causal=1';
  const served = await openPage(env, query);
  const offline = await openFile(query);
  const { page, log } = offline;

  assert.equal(await page.getAttribute('body', 'data-backend'), 'wasm-simd');
  assert.match(await page.textContent('#engine-status'), /SIMD128/);
  assert.ok(await page.$('[data-offline-copy]'), 'the copy says it is the offline copy');
  assert.equal(await page.$('a[data-control="offline-download"]'), null, 'and offers no download of itself');
  for (const name of ['Q', 'weights', 'output']) {
    assert.deepEqual(await readMatrix(page, name), await readMatrix(served.page, name), `${name} equal to the served page`);
  }
  // The softmax lab recomputes from file:// too (a seed's numbers: [4, −1, 2.1] → 0.8648, 0.0058, 0.1294).
  await page.click('button[data-control="sm-preset-[4, −1, 2.1]"]');
  await settle(page);
  const p = await page.$$eval('table[data-table="softmax"] tbody td[data-value]', (tds) => tds.map((td) => Number(td.dataset.value)));
  [0.8648, 0.0058, 0.1294].forEach((v, i) => assert.ok(Math.abs(p[i] - v) <= 5e-5, `softmax[${i}] = ${p[i]}`));

  const elsewhere = log.requests.filter((u) => !(u === fileUrl || u.startsWith(`${fileUrl}?`) || u.startsWith('data:') || u.startsWith('blob:')));
  assert.deepEqual(elsewhere, [], 'nothing loaded but the file itself, data: and blob: URLs');
  assert.deepEqual(log.errors, [], 'no console errors (CSP violations would show here)');
  await served.done();
  await offline.done();
});

test('from file:// the labs’ workers run too (inline, started from blob: URLs): the measured curve and the speed lab', async () => {
  const { page, context, log } = await openFile('');
  await page.selectOption('select[data-control="cost-max-n"]', '256');
  await page.click('button[data-control="cost-measure"]');
  await page.waitForFunction(() => document.getElementById('cost').dataset.curveState !== 'running', null, { timeout: 120000, polling: 100 });
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'done', await page.textContent('[data-status="cost-curve"]'));
  const points = await page.$$eval('table[data-table="cost-curve"] tbody tr', (trs) => trs.length);
  assert.equal(points, 6, 'n = 64, 128, 256 on both paths, measured offline');
  // The package's worker pool starts inside the curve's worker here too (workers from blob: URLs inside a worker).
  const threads = await page.evaluate(() => Math.max(1, Math.min(8, navigator.hardwareConcurrency || 1)));
  if (threads >= 2) {
    assert.match(await page.textContent('[data-figure="cost-threads"]'), new RegExp(`^${threads} threads ran the async calls`));
    assert.equal(await page.$$eval('table[data-table="cost-curve"] td[data-col="ms-threads"][data-value]', (c) => c.length), 6, 'every point timed on the pool too');
  }

  await page.selectOption('select[data-control="speed-sizes"]', 'quick');
  await page.click('button[data-control="speed-run"]');
  await page.waitForFunction(() => document.querySelector('section#speed')?.dataset.state !== 'running', null, { timeout: 120000, polling: 100 });
  assert.equal(await page.getAttribute('section#speed', 'data-state'), 'done', await page.textContent('.bench-progress-text'));
  const simdCells = await page.$$eval('table[data-table="speed"] [data-simd="true"]', (c) => c.length);
  assert.ok(simdCells > 0, 'the worker ran the SIMD engine offline');
  if (threads >= 2) assert.equal(await page.getAttribute('.bench-env [data-impl="threads"]', 'data-threads'), String(threads), 'the speed lab’s pool ran offline');
  const elsewhere = log.requests.filter((u) => !(u.startsWith(fileUrl) || u.startsWith('data:') || u.startsWith('blob:')));
  assert.deepEqual(elsewhere, []);
  assert.deepEqual(log.errors, []);
  await context.close();
});

test('the served page links to the offline copy, and the server sends it', async () => {
  const { page, context } = await openPage(env, '');
  const href = await page.getAttribute('a[data-control="offline-download"]', 'href');
  assert.equal(href, './attnlab-explorer.html');
  const res = await page.request.get(new URL(href, env.url).href);
  assert.equal(res.status(), 200);
  assert.match(res.headers()['content-type'], /^text\/html/);
  assert.equal((await res.body()).length, statSync(join(distDir, 'attnlab-explorer.html')).size);
  assert.doesNotMatch(res.headers()['content-security-policy'], /'self'/, 'its own meta policy governs it');
  // Opened over http instead of downloaded, it works too.
  const log = [];
  page.on('console', (m) => { if (m.type() === 'error') log.push(m.text()); });
  await page.goto(new URL(href, env.url).href);
  await page.waitForSelector('body[data-ready]', { timeout: 20000 });
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', log.join('\n'));
  assert.deepEqual(log, []);
  await context.close();
});
