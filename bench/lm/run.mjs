#!/usr/bin/env node
// `npm run bench:lm` — a real model's speed: GPT-2 small's shape (12 layers, d 768, 12 heads, vocabulary 50257,
// context 1024: 124 M parameters) with random weights, one thread each, in one run:
//   attnlab          lab.loadModel / model.forward / model.generate (F32, and F16 and BF16 kept half-size)
//   onnxruntime-web  the same weights as an ONNX graph with past/present KV (what transformers.js runs), wasm EP
//   tfjs-wasm        the same state dict through a forward written in tfjs ops, KV cache as tensors
// Prefill: one forward over a 128-token prompt (logits for every position and the KV cache). Decode: greedy
// tokens after it, each step reading every weight once, so its ceiling is memory bandwidth: printed as GB/s next
// to what a plain wasm loop streaming the same number of bytes reaches (bench/lm/stream.mjs).
//
//   node bench/lm/run.mjs [--quick] [--rounds=N] [--only=attnlab,ort,tfjs] [--check] [--browser] [--out=DIR] [--verbose]
//
//   --quick     1 round, 1 timed prefill, 16 decode steps (a few minutes, most of it the first run's files)
//   --rounds=N  rounds (default 3), runtimes interleaved and the first rotated; prefill calls and decode steps are
//               pooled over the rounds and their medians reported
//   --check     the self-check instead (seconds): a 3-layer model, every runtime's logits against a float64
//               forward within a bound derived from float32 arithmetic, greedy tokens equal to float64's
//   --only=…    runtimes by name
//   --browser   every runtime in its own headless Chromium (bench/lm/browser.mjs) instead of a Node process
//
// The checkpoint (F32 498 MB, F16 and BF16 249 MB each, the ONNX graph) and the float64 references (one per
// weight type, each on its own rounded weights) are written once by bench/lm/checkpoint.py into build/lm-bench/
// and reused (bench/lm/files.mjs); the first run spends a few minutes on them (the references, about a minute
// each on a loaded machine). attnlab is this checkout's dist/ (ATTNLAB_LM_DIST=path/to/dist for another build);
// while the package has no lab.loadModel its rows say so. Results: artifacts/bench/lm-results.json.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, cpuSnapshot, otherLoad } from '../lib/system.mjs';
import { SHAPES, checkpoint, prompt as makePrompt, reference, safetensorsHead } from './files.mjs';
import { measureStream } from './stream.mjs';
import { decodeWeightBytes } from './safetensors.mjs';
import { compareLogits, runCheck } from './check.mjs';
import { printResults } from './report.mjs';
import { startPage, startServer } from './browser.mjs';
import { host as nodeHost } from './host-node.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const value = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (flag('help') || flag('h')) {
  const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
  console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
for (const a of args) {
  const name = a.replace(/^--/, '').split('=')[0];
  if (!['quick', 'rounds', 'only', 'check', 'browser', 'out', 'verbose', 'help', 'h'].includes(name)) { console.error(`unknown option ${a} (try --help)`); process.exit(2); }
}
const quick = flag('quick'), checkMode = flag('check'), verbose = flag('verbose');
const rounds = Math.max(1, Number(value('rounds') ?? (quick ? 1 : 3)) | 0);
const RUNTIMES = [
  { runtime: 'attnlab', dtype: 'F32', label: 'attnlab' },
  { runtime: 'attnlab', dtype: 'F16', label: 'attnlab' },
  { runtime: 'attnlab', dtype: 'BF16', label: 'attnlab' },
  { runtime: 'ort', dtype: 'F32', label: 'onnxruntime-web' },
  { runtime: 'tfjs', dtype: 'F32', label: 'tfjs-wasm' },
];
const only = value('only')?.split(',').map((s) => s.trim()).filter(Boolean);
const selected = RUNTIMES.filter((r) => !only || only.includes(r.runtime));
if (!selected.length) { console.error(`--only=${value('only')} names no runtime (attnlab, ort, tfjs)`); process.exit(2); }
const log = (...a) => console.log(...a);

// ---- workers: one process per runtime and weight type (or one Chromium each, --browser) ----
const workers = [];
const browserMode = flag('browser');
const server = browserMode ? await startServer() : null;
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { for (const w of workers) w.kill(); process.exit(130); });

/** A runtime's worker: { ...spec, info | missing | failed, send(msg) → result, close(), kill() }. */
async function startWorker(spec) {
  if (browserMode) {
    try {
      const page = await startPage(spec.runtime, server.origin, { verbose });
      return { ...spec, ...page, kill: page.close };
    } catch (e) {
      return { ...spec, failed: String(e.message).split('\n')[0], close() {}, kill() {} };
    }
  }
  return new Promise((resolve) => {
    const child = fork(path.join(here, 'worker.mjs'), [spec.runtime], { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const pending = new Map(), output = [];
    let seq = 0, dead = false;
    const w = {
      ...spec,
      kill: () => child.kill('SIGKILL'),
      close: () => { if (!dead) child.send({ type: 'exit' }); },
      send(msg, timeoutMs = 600000) {
        if (dead) return Promise.resolve({ failed: 'worker is gone (it crashed or timed out earlier)' });
        return new Promise((done) => {
          const id = ++seq;
          const timer = setTimeout(() => {
            pending.delete(id);
            dead = true;
            child.kill('SIGKILL');
            done({ failed: `no answer within ${timeoutMs / 1000} s: worker killed` });
          }, timeoutMs);
          pending.set(id, (result) => { clearTimeout(timer); done(result); });
          child.send({ ...msg, seq: id });
        });
      },
    };
    const keep = (chunk) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        output.push(line);
        if (verbose) console.error(`  [${spec.runtime} ${spec.dtype}] ${line}`);
      }
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('message', (msg) => {
      if (msg.type === 'ready') { w.info = msg.info; w.dtypes = msg.dtypes; resolve(w); }
      else if (msg.type === 'missing') { w.missing = msg.reason; resolve(w); }
      else if (msg.type === 'failed') { w.failed = msg.reason; resolve(w); }
      else if (msg.type === 'result') { pending.get(msg.seq)?.(msg.result); pending.delete(msg.seq); }
    });
    child.on('exit', (code, signal) => {
      dead = true;
      for (const done of pending.values()) done({ failed: `worker exited (${signal ?? code}); last output: ${output.slice(-3).join(' | ')}` });
      pending.clear();
      if (!w.info && !w.missing && !w.failed) { w.failed = `worker exited before it was ready (${signal ?? code}): ${output.slice(-3).join(' | ')}`; resolve(w); }
    });
  });
}

/** One request; its result carries the other load on the machine meanwhile (cores used by other processes). */
async function ask(w, msg) {
  const before = cpuSnapshot();
  const result = await w.send(msg);
  const load = otherLoad(before, cpuSnapshot(), result?.handlerCpuMs ?? 0);
  if (load) result.otherCores = +load.otherCores.toFixed(2);
  if (result.failed) w.dead = true;
  return result;
}

/** Starts and loads every selected runtime, one at a time (each holds its own copy of the weights). */
async function startAll(ck) {
  for (const spec of selected) {
    const w = await startWorker(spec);
    workers.push(w);
    const name = `${spec.label} ${spec.dtype}`;
    if (w.missing) { log(`  ${name.padEnd(22)} not available: ${w.missing}`); continue; }
    if (w.failed) { log(`  ${name.padEnd(22)} FAILED to start: ${w.failed}`); continue; }
    const dir = path.join(ck.dir, ck.manifest.dtypes[spec.dtype].folder);
    const r = await ask(w, { type: 'load', dir: browserMode ? server.ckUrl(dir) : dir });
    if (r.failed) { w.failed = r.failed; log(`  ${name.padEnd(22)} FAILED to load: ${r.failed}`); continue; }
    w.load = r;
    log(`  ${name.padEnd(22)} ${w.info.library} ${w.info.version}${w.browser ? ` in ${w.browser}` : ''}: loaded in ${(r.loadMs / 1000).toFixed(1)} s${r.rssAfterLoad ? `, process RSS ${(r.rssAfterLoad / 2 ** 20).toFixed(0)} MiB` : ''}`);
  }
  return workers.filter((w) => w.load);
}

const stopAll = () => Promise.all(workers.map((w) => w.close()));

// ---- the self-check ----
if (checkMode) {
  const t0 = performance.now();
  log(`attnlab LM bench self-check${browserMode ? ' in headless Chromium' : ''} — ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} load average`);
  const ck = checkpoint(SHAPES.check, log);
  const ok = await runCheck({ ck, startAll, ask, log, workers });
  await stopAll();
  server?.server.close();
  log(`self-check ${ok ? 'passed' : 'FAILED'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  process.exit(ok ? 0 : 1);
}

// ---- the bench ----
const plan = { prompt: 128, decode: quick ? 16 : 64, prefillReps: quick ? 1 : 2 };
const t0 = performance.now();
const machine = machineInfo();
log(`attnlab LM bench${quick ? ' (--quick)' : ''}${browserMode ? ' in headless Chromium' : ''} — ${machine.cpuModel}, ${machine.logicalCpus} logical CPUs, node ${process.version}, ${machine.date}`);
log(`load average at start: ${machine.loadAverageAtStart.join(' ')}${machine.loadAverageAtStart[0] > 0.5 ? '  (the machine is not idle: numbers will be noisier)' : ''}`);
const shape = SHAPES.gpt2;
const tCk = performance.now();
const ck = checkpoint(shape, log);
const { config } = ck.manifest;
log(`model: GPT-2 shape, ${config.n_layer} layers, d ${config.n_embd}, ${config.n_head} heads, vocabulary ${config.vocab_size}, context ${config.n_positions}: ${(ck.manifest.parameters / 1e6).toFixed(1)} M parameters, random weights (seed ${ck.manifest.seed})`);
log(`checkpoint: ${path.relative(root, ck.dir)}/ ${ck.written ? `written in ${((performance.now() - tCk) / 1000).toFixed(0)} s` : '(cached)'}; ` +
  Object.entries(ck.manifest.dtypes).map(([d, x]) => `${d} ${(x.bytes / 1e6).toFixed(1)} MB`).join(', '));
const ids = makePrompt(plan.prompt, config.vocab_size);
const refRows = [0, plan.prompt - 1];
// one float64 reference per weight type the selected runtimes read (each on its own rounded weights)
const refs = {};
for (const dtype of new Set(selected.map((r) => r.dtype))) {
  const tRef = performance.now();
  refs[dtype] = reference(ck.dir, dtype, ids, { rows: refRows }, log);
  if (!refs[dtype].cached) log(`float64 reference of ${dtype} written in ${((performance.now() - tRef) / 1000).toFixed(0)} s`);
}

// bytes one decode step reads, per weight type
const weightBytes = Object.fromEntries(Object.entries(ck.manifest.dtypes).map(([d, x]) =>
  [d, decodeWeightBytes(safetensorsHead(path.join(ck.dir, x.folder, 'model.safetensors')), config)]));
/** The streaming read, in this process or (--browser) in a Chromium of its own. */
async function streamRead() {
  if (!browserMode) return measureStream(weightBytes.F32, { cpuMs: nodeHost.cpuMs });
  const page = await startPage('stream', server.origin, { verbose });
  try {
    const r = await page.send({ type: 'stream', bytes: weightBytes.F32 });
    if (r.failed) throw new Error(`the streaming read failed in Chromium: ${r.failed}`);
    return r;
  } finally {
    await page.close();
  }
}
const streamStart = await streamRead();
const cpuGbps = (r) => (r.gbpsCpu ? ` (per CPU second ${r.gbpsCpu.toFixed(2)})` : '');
log(`wasm streaming read${browserMode ? ' in Chromium' : ''} of ${(streamStart.bytes / 1e6).toFixed(1)} MB (the F32 weights' size), one thread: median ${streamStart.gbps.toFixed(2)} GB/s${cpuGbps(streamStart)}, best ${streamStart.gbpsMax.toFixed(2)} GB/s`);

log(`\nstarting runtimes (${browserMode ? 'one Chromium' : 'one process'} each, one thread):`);
const live = await startAll(ck);
const results = Object.fromEntries(workers.map((w) => [`${w.runtime}:${w.dtype}`, {
  runtime: w.runtime, dtype: w.dtype, label: w.label, info: w.info, missing: w.missing, failed: w.failed, load: w.load,
  prefill: [], decode: [], prefillCpu: [], decodeCpu: [], firstMs: [], tokens: null, maxErrOverBound: null, otherCores: [],
}]));

log(`\n${rounds} round${rounds > 1 ? 's' : ''}: prefill ${plan.prompt} tokens (${plan.prefillReps} timed, after a warm-up in the first round), then ${plan.decode} greedy decode steps after it`);
for (let round = 0; round < rounds; ++round) {
  const order = live.map((_, i) => live[(i + round) % live.length]);
  for (const w of order) {
    const r = results[`${w.runtime}:${w.dtype}`];
    if (w.dead) continue;
    const p = await ask(w, { type: 'prefill', ids, reps: plan.prefillReps, warmup: round === 0 ? 1 : 0, rows: refRows, vocab: config.vocab_size });
    if (p.failed) { r.failed = p.failed; log(`  ${w.label} ${w.dtype}: prefill FAILED: ${p.failed}`); continue; }
    r.prefill.push(...p.samples);
    if (p.cpu) r.prefillCpu.push(...p.cpu);
    r.otherCores.push(p.otherCores);
    const c = compareLogits(p.rows.flat(), refs[w.dtype].logits, refs[w.dtype].bound);
    r.maxErrOverBound = Math.max(r.maxErrOverBound ?? 0, c.maxErrOverBound);
    r.maxAbsErr = Math.max(r.maxAbsErr ?? 0, c.maxAbsErr);
    const g = await ask(w, { type: 'generate', ids, steps: plan.decode + 1 });
    if (g.failed) { r.failed = g.failed; log(`  ${w.label} ${w.dtype}: generate FAILED: ${g.failed}`); continue; }
    r.decode.push(...g.intervals);
    if (g.cpuIntervals) r.decodeCpu.push(...g.cpuIntervals);
    r.firstMs.push(g.firstMs);
    r.tokens = g.tokens;
    r.memory = g.memory;
    r.rss = g.rss;
    r.otherCores.push(g.otherCores);
    const med = (x) => [...x].sort((a, b) => a - b)[x.length >> 1];
    const cpu = (x) => (x ? ` (CPU ${x})` : '');
    log(`  round ${round + 1}  ${`${w.label} ${w.dtype}`.padEnd(22)} prefill ${p.samples.map((x) => x.toFixed(0)).join(', ')} ms${cpu(p.cpu?.map((x) => x.toFixed(0)).join(', '))}` +
      `   decode ${med(g.intervals).toFixed(1)} ms/token${cpu(g.cpuIntervals && med(g.cpuIntervals).toFixed(1))}   (other load ${p.otherCores ?? '?'} / ${g.otherCores ?? '?'} cores)`);
  }
}
await stopAll();
const streamEnd = await streamRead();
// the better of the two runs: load only ever lowers it
const stream = { ...streamStart, gbpsAtStart: streamStart.gbps, gbpsAtEnd: streamEnd.gbps, gbps: Math.max(streamStart.gbps, streamEnd.gbps),
  gbpsMax: Math.max(streamStart.gbpsMax, streamEnd.gbpsMax), gbpsCpu: streamStart.gbpsCpu && Math.max(streamStart.gbpsCpu, streamEnd.gbpsCpu) };
server?.server.close();
log(`wasm streaming read at the end: median ${streamEnd.gbps.toFixed(2)} GB/s${cpuGbps(streamEnd)}, best ${streamEnd.gbpsMax.toFixed(2)} GB/s`);

const summary = {
  tool: 'attnlab LM bench (bench/lm/run.mjs)', command: `node bench/lm/run.mjs ${args.join(' ')}`.trim(), quick, rounds, plan,
  machine: { ...machine, loadAverageAtEnd: os.loadavg().map((x) => +x.toFixed(2)), seconds: +((performance.now() - t0) / 1000).toFixed(1) },
  model: { shape, manifest: ck.manifest, dir: path.relative(root, ck.dir), weightBytes },
  reference: Object.fromEntries(Object.entries(refs).map(([d, r]) => [d, { rows: r.rows, maxBound: r.maxBound, logitScale: r.logitScale }])),
  stream, results,
};
printResults(summary, log);
const outDir = path.resolve(root, value('out') ?? 'artifacts/bench');
fs.mkdirSync(outDir, { recursive: true });
const outFile = path.join(outDir, browserMode ? 'lm-results-browser.json' : 'lm-results.json');
fs.writeFileSync(outFile, JSON.stringify(summary, null, 1));
log(`\nwrote ${path.relative(root, outFile)} (${summary.machine.seconds} s)`);
