#!/usr/bin/env node
// `npm run bench -- --browser`: the threads cells of the Node bench (bench/lib/threads.mjs) in headless Chromium
// (Debian's /usr/bin/chromium through playwright-core): attnlab on 1 thread and with init({ threads: 2 }) (module
// page, workers from Blob URLs), onnxruntime-web's Attention op with numThreads 1 and 2, each library in its own
// page, identical inputs (the same fixed-seed files, fetched), the same table. attnlab's pages are served without
// cross-origin isolation (its workers need none); onnxruntime-web's with COOP/COEP, which its threads require.
//
//   node bench/browser.mjs [--only=attnlab,ort] [--rounds=N] [--stat=min] [--out=DIR] [--verbose]
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { writeF32, maxAbsError } from './lib/data.mjs';
import { machineInfo, cpuSnapshot, treeCpuMs } from './lib/system.mjs';
import { THREAD_LIBS, key, measureThreads, overheadLine, threadsInputs, threadsMarkdown } from './lib/threads.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
for (const a of args) {
  const name = a.replace(/^--/, '').split('=')[0];
  if (!['rounds', 'stat', 'out', 'verbose', 'quick', 'threads', 'only'].includes(name)) { console.error(`bench --browser: unknown option ${a}`); process.exit(2); }
}
const rounds = Math.max(1, Number(value('rounds') ?? 1) | 0);
const stat = value('stat') ?? 'median';
const outDir = path.resolve(root, value('out') ?? 'artifacts/bench');
const verbose = args.includes('--verbose');
const timing = { minMs: 300, minReps: 5, slowMs: 2500, warmMs: 300 };
if (!fs.existsSync(path.join(root, 'dist/index.js'))) { console.error('dist/index.js not found: run `npm run build` first'); process.exit(1); }

// ---- inputs, as files the pages fetch ----
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-bench-browser-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const { inputs, refs } = threadsInputs();
for (const [n, data] of Object.entries(inputs)) for (const [t, arr] of Object.entries(data)) writeF32(path.join(tmp, `${t}-${n}.f32`), arr);

// ---- a static server on 127.0.0.1: the package (dist/), the bench page, onnxruntime-web's files, the inputs ----
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.f32': 'application/octet-stream' };
const mounts = [['/dist/', path.join(root, 'dist/')], ['/bench/', path.join(root, 'bench/')], ['/ort/', path.join(root, 'node_modules/onnxruntime-web/dist/')], ['/inputs/', `${tmp}/`]];
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const isolate = (url.searchParams.get('lib') ?? '').startsWith('ort') || req.headers.referer?.includes('lib=ort');
  const headers = isolate ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {};
  if (url.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html', ...headers });
    return res.end('<!doctype html><meta charset="utf-8"><title>attnlab bench</title><script type="module" src="/bench/browser-page.mjs"></script>');
  }
  const mount = mounts.find(([prefix]) => url.pathname.startsWith(prefix));
  const file = mount && path.join(mount[1], decodeURIComponent(url.pathname.slice(mount[0].length)));
  if (!file || !file.startsWith(mount[1]) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Cross-Origin-Resource-Policy': 'same-origin', ...headers });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--js-flags=--expose-gc'],
});
const pages = new Map();
const results = {
  tool: 'attnlab bench in Chromium (bench/browser.mjs)', command: `node bench/browser.mjs ${args.join(' ')}`.trim(),
  machine: { ...machineInfo(), browser: `Chromium ${browser.version()}` }, rounds, stat, libraries: {},
};
try {
  console.log(`attnlab bench in headless Chromium ${browser.version()} — ${results.machine.cpuModel}, ${results.machine.logicalCpus} logical CPUs, load average ${results.machine.loadAverageAtStart.join(' ')}`);
  const only = value('only')?.split(',');
  for (const { id } of THREAD_LIBS.filter((l) => !only || only.some((o) => l.id.startsWith(o)))) {
    const page = await browser.newPage();
    page.on('pageerror', (e) => verbose && console.error(`  [${id}] ${e.message}`));
    if (verbose) page.on('console', (m) => console.error(`  [${id}] ${m.text()}`));
    await page.goto(`${origin}/?lib=${id}`);
    await page.waitForFunction(() => window.bench !== undefined);
    try {
      results.libraries[id] = await page.evaluate(() => window.bench.setup());
      pages.set(id, page);
      console.log(`  ${id}: ${JSON.stringify(results.libraries[id])}`);
    } catch (e) {
      results.libraries[id] = { failed: String(e.message).split('\n')[0] };
      console.log(`  ${id}: FAILED to start — ${results.libraries[id].failed}`);
    }
  }
  const pick = (r) => { if (r && (r.median || r.min)) r.ms = stat === 'min' ? r.min : r.median; return r; };
  const pool = (prev, r) => {
    if (!prev || !prev.samples || !r.samples) return prev?.samples ? prev : r;
    const samples = [...prev.samples, ...r.samples], sorted = [...samples].sort((a, b) => a - b), mid = sorted.length >> 1;
    return { ...prev, samples, reps: samples.length, median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2, min: sorted[0],
      maxAbsError: Math.max(prev.maxAbsError, r.maxAbsError), otherCores: Math.max(prev.otherCores ?? 0, r.otherCores ?? 0) };
  };
  const ask = async (id, msg) => {
    const page = pages.get(id);
    if (!page) return { failed: results.libraries[id]?.failed ?? 'not started' };
    const a = cpuSnapshot(), treeA = treeCpuMs();
    let r;
    try {
      if (msg.type === 'prefill') {
        const ref = refs[key(msg.n, msg.causal)];
        const files = Object.fromEntries(['q', 'k', 'v'].map((t) => [t, `/inputs/${t}-${msg.n}.f32`]));
        r = await page.evaluate((m) => window.bench.prefill(m), { shape: msg.shape, files, rows: Array.from(ref.rows), timing });
        r.maxAbsError = maxAbsError(Float32Array.from(r.rows), ref.ref, Int32Array.from(ref.rows.keys()), msg.shape.d);
        delete r.rows;
      } else {
        r = await page.evaluate((m) => window.bench.overhead(m), { timing: { ...timing, minReps: 50 } });
      }
    } catch (e) {
      r = { failed: String(e.message).split('\n')[0] };
    }
    const b = cpuSnapshot(), treeB = treeCpuMs();
    if (a && b) r.otherCores = +Math.max(0, (b.busyMs - a.busyMs - (treeB - treeA)) / (b.wallMs - a.wallMs)).toFixed(2);
    return r;
  };
  console.log('\nthreads (batch 1 × 8 heads, d = 64, one call each, in Chromium):');
  results.threads = await measureThreads({ ask, libs: [...pages.keys()], rounds, pool, pick, log: console.log });
  console.log(overheadLine(results.threads.overhead));
} finally {
  await browser.close();
  server.close();
}
results.machine.loadAverageAtEnd = os.loadavg().map((x) => +x.toFixed(2));
for (const c of results.threads.cells) for (const r of Object.values(c.results)) if (r.samples?.length > 30) delete r.samples;
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'browser-results.json'), JSON.stringify(results, null, 1));
const md = threadsMarkdown(results.threads, `Chromium ${browser.version()}`);
fs.writeFileSync(path.join(outDir, 'browser-results.md'), md);
console.log(`\n${md}\nwrote ${path.relative(root, path.join(outDir, 'browser-results.json'))} and browser-results.md`);
