#!/usr/bin/env node
// How GPT.trainStepAsync's training step scales with workers: the small GPT of bench/train.mjs (4 layers, 4 heads,
// d = 128, context 128, vocabulary 256: 842 496 parameters) at batch 16 × 128, trainStep on one thread against
// trainStepAsync on init({ threads }) — shared memory, and messages (exchange: 'message') — on the same batches.
//
//   node bench/train-threads.mjs [--steps=N] [--threads=2,…] [--simd=false] [--dist=PATH] [--independent]
//
//   --dist=PATH  another build of the package (e.g. an earlier commit's dist/, to compare under the same load)
//   --independent  also the machine's ceiling: n replicas training on 16/n rows each at once, exchanging nothing
//
// Prints ms per step (median) for each, the step's serial milliseconds (lab.trainTimes(): the step's wall time less
// its slowest worker's gradient time — the rounds' messages, the weights brought up to date, the slices' sums and
// updates, this thread's checks: what more workers do not divide — and the work in it) and each round's wall time,
// then the projection for 2, 4, 8 and 16 threads (below). Measured on more cores only where the machine has them
// (--threads=2,4,8,16); otherwise marked "projected".
// The other load on the machine is printed beside every number: on a busy machine the workers wait for cores.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { cpuSnapshot, otherLoad, machineInfo } from './lib/system.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name, d) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d;
const STEPS = Number(value('steps', 10)), SIMD = value('simd', 'true') !== 'false';
const THREADS = value('threads', '2').split(',').map(Number);
const CONFIG = { vocabSize: 256, context: 128, dModel: 128, heads: 4, layers: 4, seed: 1 };
const BATCH = 16, T = CONFIG.context, TRAIN = { lr: 1e-3, gradClip: 1 };

function batch(step) {
  let s = (1000 + step) >>> 0;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) & 255;
  const x = Int32Array.from({ length: BATCH * T }, next);
  return { x, y: Int32Array.from(x, (t, i) => x[(i + 1) % x.length] ^ (t & 3)) };
}

const { init } = await import(path.resolve(value('dist', path.join(root, 'dist')), 'index.js'));
const info = machineInfo();
console.log(`train-threads bench: ${info.cpuModel}, ${info.logicalCpus} cpus, node ${info.node}, load average at start ${info.loadAverageAtStart.join(' ')}`);

async function run(label, lab, step) {
  const model = lab.createGPT(CONFIG);
  await step(model, batch(0)); // (first step: replicas made, workspaces sized)
  const before = cpuSnapshot(), times0 = lab.trainTimes?.(), ms = [], cpu0 = process.cpuUsage();
  for (let s = 1; s <= STEPS; ++s) {
    const { x, y } = batch(s), t0 = performance.now();
    await step(model, { x, y });
    ms.push(performance.now() - t0);
  }
  const load = otherLoad(before, cpuSnapshot(), 0), cpu = process.cpuUsage(cpu0); // (the workers' threads counted)
  ms.sort((p, q) => p - q);
  const r = { label, median: ms[ms.length >> 1], min: ms[0], load: load ? load.otherCores : NaN, loadavg: os.loadavg()[0], cpu: (cpu.user + cpu.system) / 1000 / STEPS };
  if (times0 && lab.trainTimes().steps > times0.steps) {
    const t = lab.trainTimes(), per = (k) => (t[k] - times0[k]) / (t.steps - times0.steps);
    Object.assign(r, { serial: per('serialMs'), work: per('serialWorkMs'), worker: per('workerMs'), parts: ['mainMs', 'gatherMs', 'sumMs', 'adamwMs'].map(per), rounds: ['seedMs', 'gradientsMs', 'reduceMs', 'updateMs'].map(per) });
  }
  model.dispose();
  const extra = r.serial === undefined ? '' : `; serial ${r.serial.toFixed(1)} ms/step (its work ${r.work.toFixed(1)} ms: this thread ${r.parts[0].toFixed(1)}, weights up to date ${r.parts[1].toFixed(1)}, slices summed ${r.parts[2].toFixed(1)}, AdamW ${r.parts[3].toFixed(1)}), slowest worker's gradient ${r.worker.toFixed(1)} ms ` +
    `(rounds: seed ${r.rounds[0].toFixed(1)}, gradients ${r.rounds[1].toFixed(1)}, reduce ${r.rounds[2].toFixed(1)}, update ${r.rounds[3].toFixed(1)} ms)`;
  console.log(`${label.padEnd(30)} ${r.median.toFixed(1).padStart(7)} ms/step (best ${r.min.toFixed(1)}; CPU ${r.cpu.toFixed(1)} ms/step; other load ${r.load.toFixed(2)} cores, load average ${r.loadavg.toFixed(2)})${extra}`);
  return r;
}

const one = await init({ simd: SIMD, gpt: true });
console.log(`model: ${one.createGPT(CONFIG).parameterCount} parameters, batch ${BATCH} × ${T}, AdamW lr ${TRAIN.lr}, gradClip ${TRAIN.gradClip}; ${STEPS} timed steps each`);
const base = await run('1 thread (trainStep)', one, (m, { x, y }) => m.trainStep(x, y, TRAIN));
const results = [];
for (const n of THREADS) {
  for (const exchange of ['shared', 'message']) {
    const sharedMemory = exchange === 'shared';
    let lab;
    try {
      lab = await init({ simd: SIMD, gpt: true, threads: n, exchange });
    } catch {
      if (!sharedMemory) continue; // (a build without the option: one exchange)
      lab = await init({ simd: SIMD, gpt: true, threads: n });
    }
    const r = await run(`${n} threads (${sharedMemory ? 'shared memory' : 'messages'})`, lab, (m, { x, y }) => m.trainStepAsync(x, y, TRAIN));
    lab.dispose();
    results.push({ n, sharedMemory, ...r });
    console.log(`${''.padEnd(30)} ${(base.median / r.median).toFixed(2)}× one thread (median), ${(base.min / r.min).toFixed(2)}× (best); CPU per step ${(r.cpu / base.cpu).toFixed(2)}× one thread's`);
  }
}
// The machine's own ceiling for this split: n workers, each training its own replica on its 16/n rows of the batch
// at the same time, with nothing exchanged — what n cores give this work when only the cores, caches and memory
// bandwidth they share limit it. The step on n workers cannot beat the slowest replica here.
async function independent(n) {
  const url = pathToFileURL(path.resolve(value('dist', path.join(root, 'dist')), 'index.js')).href;
  const code = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    import(${JSON.stringify(url)}).then(async ({ init }) => {
      const lab = await init({ simd: w.simd, gpt: true });
      const model = lab.createGPT(w.config), times = [];
      const go = new Int32Array(w.go);
      const part = (b) => ({ x: b.x.subarray(w.from, w.to), y: b.y.subarray(w.from, w.to) });
      model.trainStep(part(w.batches[0]).x, part(w.batches[0]).y, w.train);
      Atomics.add(go, 1, 1), Atomics.notify(go, 1);
      Atomics.wait(go, 0, 0);
      for (let s = 1; s < w.batches.length; ++s) {
        const { x, y } = part(w.batches[s]), t0 = performance.now();
        model.trainStep(x, y, w.train);
        times.push(performance.now() - t0);
      }
      parentPort.postMessage(times);
    });`;
  const go = new SharedArrayBuffer(8), flags = new Int32Array(go);
  const batches = Array.from({ length: STEPS + 1 }, (_, s) => batch(s));
  const rows = BATCH / n;
  const workers = Array.from({ length: n }, (_, r) => new Worker(code, { eval: true, workerData: {
    simd: SIMD, config: CONFIG, train: TRAIN, go, batches, from: Math.round(r * rows) * T, to: Math.round((r + 1) * rows) * T } }));
  const done = workers.map((w) => new Promise((resolve, reject) => (w.once('message', resolve), w.once('error', reject))));
  while (Atomics.load(flags, 1) < n) await new Promise((r) => setTimeout(r, 5));  // every replica warmed up
  const before = cpuSnapshot();
  Atomics.store(flags, 0, 1), Atomics.notify(flags, 0);
  const times = await Promise.all(done);
  const load = otherLoad(before, cpuSnapshot(), 0);
  await Promise.all(workers.map((w) => w.terminate()));
  const step = Array.from({ length: STEPS }, (_, s) => Math.max(...times.map((t) => t[s]))).sort((p, q) => p - q);
  return { median: step[step.length >> 1], load: load ? load.otherCores : NaN };
}

if (args.includes('--independent')) {
  console.log(`\nthe machine's ceiling: n replicas, each training on its 16/n rows, at once and exchanging nothing (median of the slowest replica's step; the one-thread step of the whole batch: ${base.median.toFixed(1)} ms)`);
  for (const n of THREADS.filter((k) => k > 1 && BATCH % k === 0)) {
    const c = await independent(n), at = results.find((r) => r.n === n && r.sharedMemory);
    console.log(`  ${String(n).padStart(2)} replicas  ${c.median.toFixed(1).padStart(6)} ms/step = ${(base.median / c.median).toFixed(2)}× one thread` +
      `${at ? `; the shared-memory step reaches ${(100 * c.median / at.median).toFixed(0)} % of it (${(base.median / at.median).toFixed(2)}×)` : ''}` +
      `   (other load ${c.load.toFixed(2)} cores, load average ${os.loadavg()[0].toFixed(2)})`);
  }
}

const at2 = results.find((r) => r.n === 2 && r.sharedMemory);
if (at2?.work !== undefined) {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  // The step on n workers: one thread's step divided, T₁/n, plus the serial part. T₁ is the one-thread step's CPU
  // time (what it takes on a free core; on a busy machine its wall time is mostly waiting). The serial part,
  // measured at 2 threads: S, its wall time (waits for a core included), or its work alone, S_w, plus three rounds
  // of messages at 0.3 ms each (a part's round trip in Node on a quiet machine, docs/performance.md): what it costs
  // on free cores. Each worker's share of S_w stays the same at any n (it brings P floats of weights up to date and
  // sums P floats of slices; its update shrinks as P/n); this thread posts n messages a round.
  const t1 = base.cpu, quiet = at2.work + 3 * 0.3;
  console.log(`\nprojection: T(n) = T₁/n + S, T₁ = ${t1.toFixed(1)} ms (one thread's CPU time a step); S = ${quiet.toFixed(1)} ms on free cores (the serial work, ${at2.work.toFixed(1)} ms, and three rounds of messages at 0.3 ms) or ${at2.serial.toFixed(1)} ms (its wall time at 2 threads under this load)`);
  for (const n of [2, 4, 8, 16]) {
    const a = t1 / n + at2.serial, b = t1 / n + quiet;
    const how = n <= cores ? (n === 2 ? `measured: ${(base.median / at2.median).toFixed(2)}× at this load` : 'this machine has the cores: measure with --threads') : `projected (this machine has ${cores} cores)`;
    console.log(`  ${String(n).padStart(2)} threads: ${(t1 / b).toFixed(2)}× one thread on free cores (${b.toFixed(1)} ms/step); ${(t1 / a).toFixed(2)}× with this load's serial wall time (${a.toFixed(1)} ms/step) — ${how}`);
  }
}
