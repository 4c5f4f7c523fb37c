// Where the time of a split attentionAsync call goes, phase by phase, on the bench's threads cells (batch 1 ×
// 8 heads, d = 64, n 1024 and 2048, dense and causal), with two workers of this script's own running exactly the
// sub-calls the async twin sends (dist/attention-parts.js, its buffers reused as there; each sub-call a descriptor
// of the engine's attention call, run by call.js as a worker runs it): slicing the parts' inputs on the calling
// thread, post → received, the worker's calls (the engine's check, copy in, validate, compute, read out), the rest
// of those calls without the compute (the same calls with keyLengths [0]: no key tile is visited), posting back
// and merging. Also the CPU time of the
// synchronous call and of the slowest part (Linux: /proc/thread-self/schedstat), which a busy machine does not
// distort the way it distorts wall time: on an idle machine two threads take about max(part CPU) + the fixed
// phases. Minimum over the repetitions.
//   npm run build && node bench/threads-phases.mjs [reps]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const index = pathToFileURL(path.join(root, 'dist/index.js')).href, wasm = path.join(root, 'dist/attnlab-simd.wasm');
const { init } = await import(index);
const { planAttention, partCalls, mergeAttention, recycle } = await import(pathToFileURL(path.join(root, 'dist/attention-parts.js')).href);
const { CALLS } = await import(pathToFileURL(path.join(root, 'dist/lab.js')).href);
const reps = Number(process.argv[2] ?? 7);

const now = () => performance.timeOrigin + performance.now();
const cpu = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
const lab = await init({ simd: true, wasmBinary: fs.readFileSync(wasm) });
const source = `
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
const createAttnlab = (await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist/attnlab.mjs')).href)})).default;
const { engineCall } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist/call.js')).href)});
const now = () => performance.timeOrigin + performance.now();
const cpu = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
const attention = engineCall(await createAttnlab({ wasmBinary: fs.readFileSync(${JSON.stringify(wasm)}) }), 'attention');
parentPort.on('message', ({ calls }) => {
  const t0 = now();
  for (const { d, given } of calls) attention.call('attention', d.slice(), { ...given, out: undefined, keyLengths: Int32Array.of(0) });
  const t1 = now(), c1 = cpu();
  const values = calls.map(({ d, given }) => attention.call('attention', d, given));
  const t2 = now(), c2 = cpu();
  const spare = calls.flatMap(({ given }) => Object.entries(given).filter(([key]) => key !== 'out').map(([, v]) => v));
  parentPort.postMessage({ values, spare, t0, fixed: t1 - t0, call: t2 - t1, cpu: c2 - c1, t2 },
    [...values.flatMap((v) => Object.values(v).map((a) => a.buffer)), ...spare.map((a) => a.buffer)]);
});
parentPort.postMessage('ready');`;
const workers = await Promise.all([0, 1].map(() => new Promise((resolve) => {
  const w = new Worker(source, { eval: true, type: 'module' });
  w.once('message', () => resolve(w));
})));

let seed = 1;
const random = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1);
const min = (xs) => Math.min(...xs);
const heads = 8, d = 64;
console.log(`threads phases (ms, minimum/median of ${reps}; load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')})`);
for (const n of [1024, 2048]) {
  const q = random(heads * n * d), k = random(heads * n * d), v = random(heads * n * d);
  for (const causal of [false, true]) {
    const opts = { q, k, v, heads, nq: n, nk: n, dk: d, dv: d, causal };
    const t = { syncCpu: [], syncWall: [], partCpu: [], slice: [], post: [], fixed: [], call: [], back: [], merge: [], total: [] };
    for (let rep = 0; rep < reps; ++rep) {
      const s0 = now(), c0 = cpu();
      lab.attention(opts);
      t.syncCpu.push(cpu() - c0), t.syncWall.push(now() - s0);
      const start = now();
      const plan = planAttention(lab[CALLS].attention.prepare(opts), lab[CALLS].attention.op.F, 2, 1e6);
      let sliced = 0;
      const got = await Promise.all(plan.plan.map((rects, i) => {
        const a = now();
        const { calls, transfer } = partCalls(plan, rects);
        const posted = now();
        sliced += posted - a;
        return new Promise((resolve) => {
          workers[i].once('message', (m) => resolve({ ...m, posted, received: now() }));
          workers[i].postMessage({ calls }, transfer);
        });
      }));
      const m0 = now();
      mergeAttention(plan, got.map((g) => g.values));
      const end = now();
      recycle(got.flatMap((g) => [...g.spare, ...g.values.flatMap(Object.values)]));  // as attentionAsync does
      t.slice.push(sliced), t.merge.push(end - m0), t.total.push(end - start);
      t.post.push(Math.max(...got.map((g) => g.t0 - g.posted))), t.back.push(Math.max(...got.map((g) => g.received - g.t2)));
      t.fixed.push(Math.max(...got.map((g) => g.fixed))), t.call.push(Math.max(...got.map((g) => g.call))), t.partCpu.push(Math.max(...got.map((g) => g.cpu)));
    }
    const med = (x) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)];
    const f = (x) => `${min(x).toFixed(2)}/${med(x).toFixed(2)}`;
    console.log(`  n=${n} ${causal ? 'causal' : 'dense '}  CPU: sync ${f(t.syncCpu)}, slowest part ${f(t.partCpu)} (${(min(t.syncCpu) / min(t.partCpu)).toFixed(2)}×)` +
      `  | wall: sync ${f(t.syncWall)}, 2 workers ${f(t.total)} : slice ${f(t.slice)}, post→received ${f(t.post)}, worker calls ${f(t.call)}` +
      ` (of which not compute ${f(t.fixed)}), back ${f(t.back)}, merge ${f(t.merge)}`);
  }
}
for (const w of workers) await w.terminate();
