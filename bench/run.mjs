#!/usr/bin/env node
// `npm run bench` — attnlab against onnxruntime-web, TensorFlow.js (wasm backend) and plain JS, one thread each,
// on identical inputs, in one run.
//
//   node bench/run.mjs [--quick] [--only=attnlab,tfjs] [--rounds=N] [--stat=min] [--save-docs] [--out=DIR] [--from=FILE] [--verbose]
//
//   --quick      n ∈ {256, 1024}, d = 64, softmax 1024, shorter timing (about a minute)
//   --operator   only the whole-operator cells (decode step, batched prefill, batch × heads), with full timing
//   --threads    only the threads cells (attnlab threads: 2 vs 1 vs onnxruntime-web numThreads 2, 8 heads; bench/lib/threads.mjs)
//   --browser    the threads cells in headless Chromium instead (bench/browser.mjs), the same table
//   --only=…     libraries by family (attnlab, ort, tfjs, js) or id (attnlab-simd, ort-mha, …)
//   --rounds=N   measure every cell N times, libraries interleaved, and pool the calls (default 1)
//   --stat=min   report the fastest call instead of the median (steadier when other processes load the machine)
//   --from=FILE  measure nothing: rewrite the table and chart from a results.json of an earlier run
//   --train      the small GPT's training speed against TensorFlow.js instead (bench/train.mjs; `npm run bench:train`)
//
// One worker process per library (bench/worker.mjs, forked with --expose-gc). The orchestrator generates the
// inputs once per shape with a fixed-seed PRNG, writes them as raw float32 files in a temp dir, computes float64
// references, and then sends each cell to every worker in turn (cell by cell, so slow drifts of the machine's
// load hit every library alike). Results: artifacts/bench/results.json and chart.svg; --save-docs also writes
// docs/bench/chart.svg and docs/bench/results.md (docs/performance.md copies from them).
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { normals, writeF32, referenceRows, attentionReference, softmaxReference } from './lib/data.mjs';
import { machineInfo, cpuSnapshot, otherLoad } from './lib/system.mjs';
import { LIBRARIES, consoleCell, markdownReport, targets, fmtMs, fmtGf, fmtErr } from './lib/report.mjs';
import { chartSvg } from './lib/chart.mjs';
import { OPERATOR, decodeReference, headRowsReference, operatorInputs } from './lib/operator.mjs';
import { THREAD_LIBS, key as threadsKey, measureThreads, overheadLine, threadsInputs, threadsMarkdown } from './lib/threads.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

// ---- options ----
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const value = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (flag('help') || flag('h')) {
  const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
  console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
if (args.includes('--train')) {  // the training benchmark lives in its own script
  const { spawnSync } = await import('node:child_process');
  const rest = args.filter((a) => a !== '--train');
  process.exit(spawnSync(process.execPath, [fileURLToPath(new URL('./train.mjs', import.meta.url)), ...rest], { stdio: 'inherit' }).status ?? 1);
}
if (args.includes('--browser')) {  // the threads cells in Chromium live in their own script
  const { spawnSync } = await import('node:child_process');
  const rest = args.filter((a) => a !== '--browser');
  process.exit(spawnSync(process.execPath, [fileURLToPath(new URL('./browser.mjs', import.meta.url)), ...rest], { stdio: 'inherit' }).status ?? 1);
}
const known = ['quick', 'operator', 'threads', 'save-docs', 'verbose', 'help', 'h'];
for (const a of args) {
  const name = a.replace(/^--/, '').split('=')[0];
  if (!known.includes(name) && !['only', 'out', 'rounds', 'stat', 'from'].includes(name)) { console.error(`unknown option ${a} (try --help)`); process.exit(2); }
}
const quick = flag('quick');
const rounds = Math.max(1, Number(value('rounds') ?? 1) | 0);
const stat = value('stat') ?? 'median';
if (!['median', 'min'].includes(stat)) { console.error('--stat must be median or min'); process.exit(2); }
const pick = (r) => { if (r && (r.median || r.min)) r.ms = stat === 'min' ? r.min : r.median; return r; };
const verbose = flag('verbose');
const outDir = path.resolve(root, value('out') ?? 'artifacts/bench');
const onlyList = value('only')?.split(',').map((s) => s.trim()).filter(Boolean);
const selected = LIBRARIES.filter((l) => !onlyList || onlyList.some((o) => l.id === o || l.family === o || l.id.startsWith(`${o}-`)));
if (!selected.length) { console.error(`--only=${value('only')} matches no library; ids: ${LIBRARIES.map((l) => l.id).join(', ')}; families: attnlab, ort, tfjs, js`); process.exit(2); }

// --from=results.json: no measuring, only the table and chart again (after changing bench/lib/report.mjs or chart.mjs).
if (value('from')) {
  writeOutputs(JSON.parse(fs.readFileSync(path.resolve(value('from')), 'utf8')));
  process.exit(0);
}

const plan = quick
  ? { attention: { n: [256, 1024], d: [64], causal: [false, true] }, softmax: [1024], streaming: [1024, 2048, 4096],
      timing: { minMs: 100, minReps: 3, maxReps: 500, warmMs: 50, slowMs: 800 }, peak: { reps: 20, targetMs: 10 } }
  : { attention: { n: [64, 256, 1024, 2048, 4096], d: [64, 128], causal: [false, true] }, softmax: [256, 1024, 4096],
      streaming: [1024, 2048, 4096, 8192, 16384],
      timing: { minMs: 300, minReps: 5, maxReps: 2000, warmMs: 300, slowMs: 2500 }, peak: { reps: 40, targetMs: 10 } };
const MHA = { n: 32, dModel: 64, heads: 4 };
const operatorOnly = flag('operator'), threadsOnly = flag('threads');
if (operatorOnly || threadsOnly) Object.assign(plan, { attention: { n: [], d: [], causal: [] }, softmax: [] });

// ---- workers ----
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-bench-'));
const workers = new Map();   // id -> { child, info, seq, pending, output }
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const w of workers.values()) w.child.kill('SIGKILL');
    process.exit(130);
  });
}
const log = (...a) => console.log(...a);

function startWorker(id) {
  return new Promise((resolve) => {
    const child = fork(path.join(here, 'worker.mjs'), [id], { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const w = { id, child, seq: 0, pending: new Map(), output: [] };
    const keep = (prefix) => (chunk) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        w.output.push(line);
        if (verbose) console.error(`  [${id}${prefix}] ${line}`);
      }
    };
    child.stdout.on('data', keep(''));
    child.stderr.on('data', keep(' stderr'));
    child.on('message', (msg) => {
      if (msg.type === 'ready') { w.info = msg.info; resolve(w); }
      else if (msg.type === 'failed') resolve({ id, failed: msg.reason });
      else if (msg.type === 'result') { w.pending.get(msg.seq)?.(msg.result); w.pending.delete(msg.seq); }
    });
    child.on('exit', (code, signal) => {
      for (const done of w.pending.values()) done({ failed: `worker exited (${signal ?? code}); last output: ${w.output.slice(-3).join(' | ')}` });
      w.pending.clear();
      w.dead = true;
      if (!w.info) resolve({ id, failed: `worker exited before it was ready (${signal ?? code}): ${w.output.slice(-3).join(' | ')}` });
    });
  });
}

/** One request to a worker. A worker that does not answer within timeoutMs is killed and marked failed. */
function ask(w, msg, timeoutMs = 180000) {
  if (w.dead) return Promise.resolve({ failed: 'worker is gone (it crashed or timed out earlier)' });
  return new Promise((resolve) => {
    const seq = ++w.seq;
    const timer = setTimeout(() => {
      w.pending.delete(seq);
      w.dead = true;
      w.child.kill('SIGKILL');
      resolve({ failed: `no answer within ${timeoutMs / 1000} s: worker killed` });
    }, timeoutMs);
    w.pending.set(seq, (result) => { clearTimeout(timer); resolve(result); });
    w.child.send({ ...msg, seq });
  });
}

/** Sends a message and measures what else the machine did meanwhile. */
async function askMeasured(w, msg, timeoutMs) {
  const a = cpuSnapshot();
  const result = await ask(w, msg, timeoutMs);
  const b = cpuSnapshot();
  const load = otherLoad(a, b, result?.handlerCpuMs ?? 0);
  if (load) result.otherCores = +load.otherCores.toFixed(2), result.stealCores = +load.stealCores.toFixed(2);
  return result;
}

/** Merges the results of one more round of a cell: calls pooled, median over all of them. */
function pool(prev, r) {
  if (!prev) return { ...r, rounds: 1 };
  if (!prev.samples || !r.samples) return prev.samples ? prev : r;
  const samples = [...prev.samples, ...r.samples];
  const sorted = [...samples].sort((a, b) => a - b), mid = sorted.length >> 1;
  return {
    ...prev, samples, reps: samples.length, rounds: prev.rounds + 1,
    median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2, min: sorted[0],
    roundMedians: [...(prev.roundMedians ?? [prev.median]), r.median],
    cpuMedians: [...(prev.cpuMedians ?? [prev.cpuMedian]), r.cpuMedian],
    maxAbsError: Math.max(prev.maxAbsError, r.maxAbsError),
    otherCores: Math.max(prev.otherCores ?? 0, r.otherCores ?? 0),
    warmups: prev.warmups + r.warmups, cpuMs: prev.cpuMs + r.cpuMs,
  };
}

// ---- inputs and references (generated once per shape, shared by every worker) ----
const inputCache = new Map();
function attentionInputs(n, d) {
  const key = `${n}x${d}`;
  if (inputCache.has(key)) return inputCache.get(key);
  const files = {};
  const data = {};
  for (const name of ['q', 'k', 'v']) {
    data[name] = normals(`attnlab-bench/${name}/${n}/${d}`, n * d);
    files[name] = path.join(tmp, `${name}-${key}.f32`);
    writeF32(files[name], data[name]);
  }
  const entry = { files, data };
  inputCache.set(key, entry);
  return entry;
}

function writeReference(name, rows, ref, width) {
  const rowsFile = path.join(tmp, `${name}.rows.f64`), refFile = path.join(tmp, `${name}.ref.f64`);
  fs.writeFileSync(rowsFile, new Uint8Array(Float64Array.from(rows).buffer));
  fs.writeFileSync(refFile, new Uint8Array(ref.buffer));
  return { rowsFile, refFile, width, rows: rows.length };
}

function attentionReferenceFiles(n, d, causal, data, { full = 1024, sample = 256 } = {}) {
  const rows = referenceRows(n, full, sample);
  const ref = attentionReference(data.q, data.k, data.v, { nq: n, nk: n, dk: d, dv: d, causal, scale: 1 / Math.sqrt(d) }, rows);
  return writeReference(`att-${n}-${d}-${causal ? 'c' : 'f'}`, rows, ref, d);
}

// ---- run ----
const results = {
  tool: 'attnlab bench (bench/run.mjs)',
  command: `node bench/run.mjs ${args.join(' ')}`.trim(),
  quick,
  rounds,
  stat,
  machine: machineInfo(),
  method: {
    timing: `each call timed alone; ${rounds > 1 ? `${rounds} interleaved rounds per cell, calls pooled; ` : ''}${stat === 'min' ? 'fastest' : 'median'} of ≥ ${plan.timing.minReps} calls and ≥ ${plan.timing.minMs} ms per cell (3 calls when a cell passes ${plan.timing.slowMs} ms), after warm-up calls (≥ 5 and ≥ ${plan.timing.warmMs} ms, until calls stop getting faster; 1 when a call takes > 0.5 s); before every call, outside the timing, the previous output freed: gc() and one event-loop turn when the last call took longer than 1 ms, a minor GC (young generation) before every 8th shorter call`,
    scope: 'a call = Float32Array inputs in JS → Float32Array output in JS, through each library\'s public API (copies into and out of wasm memory included); model/session creation, Kᵀ transposition and mask tensors are prepared outside the timing',
    flops: 'attention: 4·n²·d per call (2·n²·d for Q·Kᵀ + 2·n²·d for P·V; softmax not counted). Causal calls are counted with the same dense 4·n²·d, so skipping masked work shows up as higher GFLOP/s',
    inputs: 'Q, K, V ~ N(0, 1) float32 (softmax logits ~ N(0, 3²)), fixed-seed PRNG, identical for every library; scale = 1/√d; nq = nk = n, dk = dv = d',
    reference: 'float64 in JS from the same float32 inputs; all rows for n ≤ 1024, 256 evenly spaced rows (first and last included) above; max |error| over the checked rows',
    ratio: `× fastest peer = (${stat} time of the fastest of onnxruntime-web / tfjs-wasm in that cell) ÷ (this library's ${stat} time); > 1 means faster than every peer`,
    threads: 'one thread everywhere (ort.env.wasm.numThreads = 1, tfjs setThreadsCount(1), attnlab\'s synchronous calls) except the threads cells: attnlab init({ threads: 2 }) with lab.attentionAsync, and onnxruntime-web numThreads 2',
  },
  libraries: {},
  peak: null,
  attention: [],
  softmax: [],
  streaming: null,
  multiHead: null,
  operator: null,
};

const t0 = performance.now();
log(`attnlab bench${quick ? ' (--quick)' : ''} — ${results.machine.cpuModel}, ${results.machine.logicalCpus} logical CPUs, node ${process.version}, ${results.machine.date}`);
log(`load average at start: ${results.machine.loadAverageAtStart.join(' ')}${results.machine.loadAverageAtStart[0] > 0.5 ? '  (the machine is not idle: numbers will be noisier)' : ''}`);

// Peak first (own process), again at the end; reported: the best call of both.
async function runPeak() {
  const w = await startWorker('peak');
  if (w.failed) return { failed: w.failed };
  const r = await askMeasured(w, { type: 'peak', options: plan.peak });
  w.child.send({ type: 'exit' });
  return r;
}
const peakStart = await runPeak();
if (peakStart.failed) log(`peak kernel FAILED: ${peakStart.failed}`);
else {
  log(`wasm SIMD128 peak (register-only f32x4 mul+add kernel): median ${fmtGf(peakStart.gflops)} GFLOP/s, best ${fmtGf(peakStart.gflopsMax)} GFLOP/s`);
  const fm = peakStart.freshMemory;
  log(`fresh memory: ${fm.usPerPage.toFixed(2)} µs per 4 KiB page (${fm.mib} MiB: ${fmtMs(fm.freshMs)} ms first touch vs ${fmtMs(fm.refillMs)} ms refill)`);
  results.machine.freshMemory = fm;
}

log(`starting workers: ${selected.map((l) => l.id).join(', ')}`);
for (const w of await Promise.all(selected.map((l) => startWorker(l.id)))) {
  if (w.failed) {
    results.libraries[w.id] = { failed: w.failed };
    log(`  ${w.id}: FAILED to start — ${w.failed}`);
  } else {
    workers.set(w.id, w);
    results.libraries[w.id] = w.info;
    log(`  ${w.id}: ${w.info.library} ${w.info.version}${w.info.backend ? ` (${w.info.backend})` : ''}`);
  }
}
const live = (filter) => selected.filter((l) => workers.has(l.id) && filter(l));
const peakRef = () => results.peak?.gflops ?? peakStart.gflopsMax;

// ---- attention cells ----
let cellIndex = 0;
const cells = [];
for (const d of plan.attention.d) for (const causal of plan.attention.causal) for (const n of plan.attention.n) cells.push({ n, d, causal });
cells.sort((a, b) => a.n - b.n || a.d - b.d || a.causal - b.causal);
log(`\nattention: ${cells.length} shapes × ${live(() => true).length} libraries; GFLOP/s = 4·n²·d / time for causal too (dense count: skipped work shows as throughput)`);
for (const { n, d, causal } of cells) {
  const { files, data } = attentionInputs(n, d);
  const ref = attentionReferenceFiles(n, d, causal, data);
  const cell = { kind: 'attention', n, d, causal, flops: 4 * n * n * d, referenceRows: ref.rows, results: {} };
  const libs = live(() => true);
  const order = libs.map((_, i) => libs[(i + cellIndex) % libs.length]);   // rotate who goes first
  ++cellIndex;
  for (let round = 0; round < rounds; ++round) {
    for (const l of order) {
      const r = await askMeasured(workers.get(l.id), { type: 'attention', n, d, causal, scale: 1 / Math.sqrt(d), files, ref, timing: plan.timing });
      cell.results[l.id] = pool(cell.results[l.id], r);
    }
  }
  for (const r of Object.values(cell.results)) if (pick(r).ms) r.gflops = cell.flops / r.ms / 1e6;
  results.attention.push(cell);
  log(consoleCell(cell, peakRef(), stat));
}

// ---- softmax cells ----
const smLibs = live((l) => l.softmax);
if (smLibs.length) log(`\nrow softmax over n×n (n rows of n): ${plan.softmax.length} sizes × ${smLibs.length} libraries`);
for (const n of plan.softmax) {
  const x = normals(`attnlab-bench/softmax/${n}`, n * n, 3);
  const xFile = path.join(tmp, `x-${n}.f32`);
  writeF32(xFile, x);
  const rows = referenceRows(n, 1024, 256);
  const ref = writeReference(`sm-${n}`, rows, softmaxReference(x, n, rows), n);
  const cell = { kind: 'softmax', n, elements: n * n, referenceRows: rows.length, results: {} };
  for (let round = 0; round < rounds; ++round) {
    for (const l of smLibs) {
      const r = await askMeasured(workers.get(l.id), { type: 'softmax', n, files: { x: xFile }, ref, timing: plan.timing });
      cell.results[l.id] = pool(cell.results[l.id], r);
    }
  }
  for (const r of Object.values(cell.results)) if (pick(r).ms) r.gelemPerS = (n * n) / r.ms / 1e6;
  results.softmax.push(cell);
  log(consoleCell(cell, peakRef(), stat));
  fs.rmSync(xFile);
}

// ---- attnlab extras: streaming memory and time / n², the explorer's multi-head call ----
const simdWorker = workers.get('attnlab-simd');
if (simdWorker && !operatorOnly && !threadsOnly) {
  const d = 64;
  const sizes = plan.streaming.map((n) => {
    const { files, data } = attentionInputs(n, d);
    const ref = attentionReferenceFiles(n, d, false, data, { full: 0, sample: 64 });
    return { n, d, scale: 1 / Math.sqrt(d), files, ref };
  });
  log(`\nattnlab SIMD streaming path (fresh instance, non-causal, d = ${d}, 64 rows checked against float64):`);
  // Every round measures all sizes again in a fresh instance, and the calls are pooled per size, so that one slow
  // spell of the machine cannot bend the time-per-n² curve on its own.
  // A round that fails after good ones is noted, and the good rounds are kept.
  let r = null;
  for (let round = 0; round < rounds; ++round) {
    const next = await askMeasured(simdWorker, { type: 'streaming', sizes, timing: { ...plan.timing, minReps: 3 } }, 900000);
    if (next.failed) {
      if (r) r.failedRound = next.failed;
      else r = next;
      break;
    }
    r = !r ? { ...next, rows: next.rows.map((row) => pool(null, row)) } : {
      ...r,
      otherCores: Math.max(r.otherCores ?? 0, next.otherCores ?? 0), stealCores: Math.max(r.stealCores ?? 0, next.stealCores ?? 0),
      rows: r.rows.map((row, i) => ({ ...pool(row, next.rows[i]), memoryBytes: Math.max(row.memoryBytes ?? 0, next.rows[i].memoryBytes ?? 0) || null })),
    };
  }
  if (r.failedRound) log(`  (a later round failed, kept the earlier ones: ${r.failedRound})`);
  if (r.failed) log(`  FAILED: ${r.failed}`);
  else {
    r.rows.forEach(pick);
    const base = r.rows[0].ms / r.rows[0].n ** 2;
    for (const row of r.rows) {
      row.nsPerN2 = (row.ms * 1e6) / row.n ** 2;
      row.relativeToFirst = row.ms / row.n ** 2 / base;
      row.gflops = (4 * row.n * row.n * d) / row.ms / 1e6;
    }
    const rel = r.rows.map((x) => x.relativeToFirst);
    r.timePerN2Spread = { min: Math.min(...rel), max: Math.max(...rel) };
    log(`      n   ${stat.padStart(6)} ms  GFLOP/s  ns / n²  vs n=${r.rows[0].n}  wasm memory     max |err|`);
    for (const row of r.rows) {
      log(`  ${String(row.n).padStart(5)}  ${fmtMs(row.ms).padStart(10)}  ${fmtGf(row.gflops).padStart(7)}  ${row.nsPerN2.toFixed(3).padStart(7)}  ${row.relativeToFirst.toFixed(2).padStart(8)}×  ${row.memoryBytes == null ? 'n/a'.padStart(9) : `${(row.memoryBytes / 2 ** 20).toFixed(1)} MiB`.padStart(9)}     ${fmtErr(row.maxAbsError)}`);
    }
    if (!r.hasMemoryBytes) log('  (lab.memoryBytes is missing from the package: wasm memory cannot be reported)');
  }
  results.streaming = r;

  log(`\nattnlab SIMD multiHeadAttention, explorer size (n = ${MHA.n} tokens, d_model = ${MHA.dModel}, ${MHA.heads} heads):`);
  const m = await askMeasured(simdWorker, { type: 'mha', ...MHA, timing: plan.timing });
  if (m.failed) log(`  FAILED: ${m.failed}`);
  else for (const row of m.rows) log(`  returnIntermediates ${String(pick(row).returnIntermediates).padEnd(5)} causal ${String(row.causal).padEnd(5)}  ${stat} ${(row.ms * 1000).toFixed(1)} µs per call (${row.reps} calls)`);
  results.multiHead = m;
}

// ---- the whole operator: a decode step with a KV cache and a batched prefill, attnlab against onnxruntime-web's
// Attention op; batch × heads in one call against the same heads one call each ----
if (simdWorker && !threadsOnly) {
  const ortWorker = workers.get('ort-graph-kt');
  const inputs = operatorInputs(tmp);
  const dc = OPERATOR.decode, pf = OPERATOR.prefill, bh = OPERATOR.batchHeads;
  const decodeRef = decodeReference(inputs.decode);
  const pfRows = referenceRows(pf.batch * pf.heads * pf.n, 0, 64);
  const bhRows = referenceRows(bh.batch * bh.heads * bh.n, 0, 64);
  const refs = {
    decode: writeReference('op-decode', decodeRef.rows, decodeRef.ref, dc.d),
    prefill: writeReference('op-prefill', pfRows, headRowsReference(inputs.prefill.data.q, inputs.prefill.data.k, inputs.prefill.data.v, { heads: pf.heads, nq: pf.n, nk: pf.n, d: pf.d, causal: pf.causal }, pfRows), pf.d),
    batchHeads: writeReference('op-bh', bhRows, headRowsReference(inputs.batchHeads.data.q, inputs.batchHeads.data.k, inputs.batchHeads.data.v, { heads: bh.heads, nq: bh.n, nk: bh.n, d: bh.d }, bhRows), bh.d),
  };
  const op = {
    decode: { ...dc, flops: 4 * dc.heads * (dc.past + 1) * dc.d, results: {} },
    prefill: { ...pf, flops: 4 * pf.batch * pf.heads * pf.n * pf.n * pf.d, results: {} },
    batchHeads: { ...bh, flops: 4 * bh.batch * bh.heads * bh.n * bh.n * bh.d, results: {} },
  };
  log(`\nthe whole operator (attnlab SIMD${ortWorker ? " vs onnxruntime-web's Attention op, opset 23" : ''}, one thread):`);
  const libs = [['attnlab-simd', simdWorker], ...(ortWorker ? [['ort-graph-kt', ortWorker]] : [])];
  for (let round = 0; round < rounds; ++round) {
    for (const cell of ['decode', 'prefill']) {
      for (const [id, w] of round % 2 ? [...libs].reverse() : libs) {
        const r = await askMeasured(w, { type: cell, shape: op[cell], files: inputs[cell].files, ref: refs[cell], timing: plan.timing });
        op[cell].results[id] = pool(op[cell].results[id], r);
      }
    }
    const r = await askMeasured(simdWorker, { type: 'batchHeads', shape: bh, files: inputs.batchHeads.files, ref: refs.batchHeads, timing: plan.timing });
    for (const part of ['batched', 'single']) op.batchHeads.results[part] = pool(op.batchHeads.results[part], r[part] ? { ...r[part], otherCores: r.otherCores, stealCores: r.stealCores } : r);
  }
  for (const cell of Object.values(op)) for (const r of Object.values(cell.results)) if (pick(r)?.ms) r.gflops = cell.flops / r.ms / 1e6;
  // CPU time per call (the median over rounds of each round's median): what other processes cannot inflate.
  for (const cell of Object.values(op))
    for (const r of Object.values(cell.results)) {
      const c = (r.cpuMedians ?? [r.cpuMedian]).filter((x) => x != null).sort((a, b) => a - b);
      if (c.length) r.cpuMs = c[c.length >> 1];
    }
  const line = (name, r) => (r?.ms ? `${name.padEnd(26)} ${fmtMs(r.ms).padStart(8)} ms  (CPU ${fmtMs(r.cpuMs)} ms)  ${fmtGf(r.gflops).padStart(6)} GFLOP/s  max |err| ${fmtErr(r.maxAbsError)}` : `${name.padEnd(26)} ${r?.unsupported ? `unsupported: ${r.unsupported}` : `FAILED: ${r?.failed ?? 'no result'}`}`);
  const ratio = (a, b) => (a?.ms && b?.ms ? `${(b.ms / a.ms).toFixed(2)}× (CPU time ${(b.cpuMs / a.cpuMs).toFixed(2)}×)` : '—');
  log(`  decode step (${dc.heads} heads over ${dc.kvHeads} KV heads, d = ${dc.d}, ${dc.past} cached keys + 1):`);
  log(`    ${line('attnlab kvCache', op.decode.results['attnlab-simd'])}`);
  if (ortWorker) log(`    ${line('ORT Attention past/present', op.decode.results['ort-graph-kt'])}\n    attnlab vs ORT: ${ratio(op.decode.results['attnlab-simd'], op.decode.results['ort-graph-kt'])}`);
  log(`  prefill (batch ${pf.batch}, ${pf.heads} heads, n = ${pf.n}, d = ${pf.d}, causal):`);
  log(`    ${line('attnlab', op.prefill.results['attnlab-simd'])}`);
  if (ortWorker) log(`    ${line('ORT Attention', op.prefill.results['ort-graph-kt'])}\n    attnlab vs ORT: ${ratio(op.prefill.results['attnlab-simd'], op.prefill.results['ort-graph-kt'])}`);
  log(`  batch × heads (batch ${bh.batch} × ${bh.heads} heads, n = ${bh.n}, d = ${bh.d}):`);
  log(`    ${line('one call', op.batchHeads.results.batched)}`);
  log(`    ${line(`${bh.batch * bh.heads} single-head calls`, op.batchHeads.results.single)}\n    one call vs the single-head calls: ${ratio(op.batchHeads.results.batched, op.batchHeads.results.single)}`);
  results.operator = op;
}

// ---- threads: attnlab's async twins on 2 workers against 1 thread and onnxruntime-web with numThreads 2 ----
if (!operatorOnly && (!onlyList || selected.some((l) => l.family === 'attnlab'))) {
  const { inputs, refs } = threadsInputs();
  const files = Object.fromEntries(Object.entries(inputs).map(([n, data]) => [n, Object.fromEntries(Object.entries(data).map(([t, arr]) => {
    const file = path.join(tmp, `threads-${t}-${n}.f32`);
    writeF32(file, arr);
    return [t, file];
  }))]));
  const refFiles = Object.fromEntries(Object.entries(refs).map(([k, r]) => [k, writeReference(`threads-${k}`, r.rows, r.ref, 64)]));
  const own = [];
  for (const { id } of THREAD_LIBS) {
    if (workers.has(id)) continue;
    const w = await startWorker(id);
    if (w.failed) log(`  ${id}: FAILED to start — ${w.failed}`);
    else workers.set(id, w), own.push(id), (results.libraries[id] = w.info);
  }
  const libs = THREAD_LIBS.map((l) => l.id).filter((id) => workers.has(id));
  log(`\nthreads (batch ${1} × 8 heads, d = 64, one call each; attnlab's async twin on 2 workers vs 1 thread, vs onnxruntime-web's Attention op with numThreads 1 and 2):`);
  const ask = (id, msg) => askMeasured(workers.get(id), msg.type === 'prefill'
    ? { type: 'prefill', shape: msg.shape, files: files[msg.n], ref: refFiles[threadsKey(msg.n, msg.causal)], timing: plan.timing }
    : { type: msg.type, timing: { ...plan.timing, minReps: 50 } });
  results.threads = await measureThreads({ ask, libs, rounds, pool, pick, log });
  log(overheadLine(results.threads.overhead));
}

for (const w of workers.values()) w.child.send({ type: 'exit' });

const peakEnd = await runPeak();
const peaks = [peakStart, peakEnd].filter((p) => p && !p.failed);
results.peak = peaks.length ? {
  kernel: peaks[0].kernel,
  gflops: Math.max(...peaks.map((p) => p.gflopsMax)),
  medianAtStart: peakStart.gflops, medianAtEnd: peakEnd.gflops,
  bestAtStart: peakStart.gflopsMax, bestAtEnd: peakEnd.gflopsMax,
  note: 'peak = the best single call of the register-only kernel at the start and the end of the run (noise only ever lowers it)',
} : { failed: peakStart.failed };
log(`\nwasm SIMD128 peak at the end: median ${fmtGf(peakEnd.gflops)}, best ${fmtGf(peakEnd.gflopsMax)} GFLOP/s → peak used for % figures: ${fmtGf(results.peak.gflops)} GFLOP/s`);

results.machine.loadAverageAtEnd = os.loadavg().map((x) => +x.toFixed(2));
results.machine.seconds = +((performance.now() - t0) / 1000).toFixed(1);
const loads = [...results.attention, ...results.softmax].flatMap((c) => Object.values(c.results)).map((r) => r.otherCores).filter((x) => x != null);
results.machine.otherCoresMean = loads.length ? +(loads.reduce((a, b) => a + b, 0) / loads.length).toFixed(2) : null;
results.machine.otherCoresMax = loads.length ? Math.max(...loads) : null;


writeOutputs(results);
fs.rmSync(tmp, { recursive: true, force: true });

// ---- outputs ----
function writeOutputs(results) {
  // Keep the JSON small: percentiles instead of every call when there are many.
  const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  for (const r of [...results.attention, ...results.softmax].flatMap((c) => Object.values(c.results))) {
    if (!r.samples) continue;
    const sorted = [...r.samples].sort((a, b) => a - b);
    r.percentiles = { p10: pct(sorted, 0.1), p25: pct(sorted, 0.25), p50: r.median, p75: pct(sorted, 0.75), p90: pct(sorted, 0.9) };
    if (r.samples.length > 30) delete r.samples;
  }
  for (const r of results.streaming?.rows ?? []) if (r.samples?.length > 30) delete r.samples;
  for (const r of Object.values(results.operator ?? {}).flatMap((c) => Object.values(c.results))) if (r.samples?.length > 30) delete r.samples;
  results.targets = targets(results);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 1));
  const svg = chartSvg(results);
  fs.writeFileSync(path.join(outDir, 'chart.svg'), svg);
  const md = markdownReport(results) + (results.threads ? `\n${threadsMarkdown(results.threads)}` : '');
  fs.writeFileSync(path.join(outDir, 'results.md'), md);
  console.log(`\n${md}`);
  console.log(`wrote ${path.relative(root, path.join(outDir, 'results.json'))}, chart.svg, results.md${results.machine.seconds ? ` (${results.machine.seconds} s)` : ''}`);
  if (flag('save-docs')) {
    const docs = path.join(root, 'docs/bench');
    fs.mkdirSync(docs, { recursive: true });
    fs.writeFileSync(path.join(docs, 'chart.svg'), svg);
    fs.writeFileSync(path.join(docs, 'results.md'), md);
    console.log('wrote docs/bench/chart.svg and docs/bench/results.md');
  }
}
