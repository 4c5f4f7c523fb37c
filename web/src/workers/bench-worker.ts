// The speed lab's benchmark, off the main thread: timing loops of up to a few hundred milliseconds would
// freeze the page if they ran beside the UI. One run = one worker; the page cancels by terminating it.
//
// Four implementations on identical seeded inputs: the plain-JS baseline (plainjs.mjs, the same file
// `npm run bench` times), the engine's scalar module and its SIMD128 module (two independent instances), and the
// SIMD module again through the package's async calls on a pool of workers (init({ threads }), started from this
// worker), so the page shows what the threads buy for each task.
import { simdSupported, type Lab } from 'attnlab';
import { attention as jsAttention, softmax as jsSoftmax } from './plainjs.mjs';
import { median, uniform } from './sample';
import { BENCH_TIMING } from './timing';
import { initFrom, type WasmFiles } from '../wasm-files';

export type Impl = 'js' | 'scalar' | 'simd' | 'threads';
export type Sizes = 'quick' | 'full';

export interface TaskSpec {
  id: string;
  kind: 'softmax' | 'attention';
  n: number;
  /** Query/key and value width (attention only). */
  d: number;
  causal: boolean;
  /** Attention heads in one call (q, k, v of [heads, n, d]): the package's threads split a call by head. */
  heads: number;
  /** Work per call: flops (attention, dense 4·n²·d per head) or elements (softmax, n·n). */
  work: number;
}

export interface ImplInfo {
  id: Impl;
  available: boolean;
  /** Why it is unavailable, when it is. */
  note?: string;
  /** From buildInfo() of the instance that ran (wasm only). */
  version?: string;
  backend?: string;
  simd?: boolean;
  kernels?: string;
  /** Workers that ran the calls (the threads implementation: the pool's size). */
  threads?: number;
}

export interface Measurement {
  task: string;
  impl: Impl;
  /** Median time of one call, ms. */
  ms: number;
  /** Calls timed (after warm-up). */
  calls: number;
  /** Largest |difference| from the plain-JS result of the same call (0 for plain JS itself). */
  maxDiff: number;
}

/** threads: the pool's size for the threads implementation (below 2: not run); wasm: the page's module files. */
export type BenchRequest = { type: 'run'; sizes: Sizes; threads: number; wasm: WasmFiles };
export type BenchMessage =
  | { type: 'start'; tasks: TaskSpec[]; impls: ImplInfo[]; total: number }
  | { type: 'step'; task: string; impl: Impl; index: number; total: number }
  | { type: 'result'; m: Measurement; done: number; total: number }
  | { type: 'done'; elapsedMs: number }
  | { type: 'error'; message: string };

const D = 64;
const att = (n: number, causal = false, heads = 1): TaskSpec => ({
  id: `attention-${n}${causal ? '-causal' : ''}${heads > 1 ? `-h${heads}` : ''}`, kind: 'attention', n, d: D, causal, heads, work: 4 * n * n * D * heads,
});
const soft = (n: number): TaskSpec => ({ id: `softmax-${n}`, kind: 'softmax', n, d: 0, causal: false, heads: 1, work: n * n });

/**
 * Full: the bench's shapes (docs/performance.md) that run in seconds, and one call of 8 heads (a layer's attention: the package's
 * threads split it by head). Quick: small shapes, for a first look (and the e2e test).
 */
const PLANS: Record<Sizes, TaskSpec[]> = {
  full: [soft(256), soft(1024), att(64), att(256), att(1024), att(1024, true), att(256, false, 8)],
  quick: [soft(256), att(64), att(256, true), att(64, false, 4)],
};

const { warmupMs: WARMUP_MS, warmupMaxMs: WARMUP_MAX_MS, minTotalMs: MIN_TOTAL_MS, minSamples: MIN_SAMPLES, batchMs: BATCH_MS } = BENCH_TIMING;

// web/tsconfig has the DOM lib, not the WebWorker one: inside a dedicated worker, postMessage(message) has the
// same shape as Worker's.
const post = (m: BenchMessage) => (self as unknown as Worker).postMessage(m);

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d; // also catches NaN, so a broken result cannot look perfect
  }
  return m;
}

type Call = () => Float32Array | Promise<Float32Array>;

async function measure(fn: Call): Promise<{ ms: number; calls: number; out: Float32Array }> {
  const first = fn();
  const sync = !(first instanceof Promise);
  // A batch of `reps` calls: a plain loop for synchronous calls (no microtask per call), each awaited before the
  // next for async ones.
  const batch = async (reps: number): Promise<Float32Array> => {
    let last!: Float32Array;
    if (sync) for (let r = 0; r < reps; r++) last = fn() as Float32Array;
    else for (let r = 0; r < reps; r++) last = await fn();
    return last;
  };
  // Warm-up, adaptive: the JS JIT and V8's wasm tier-up (baseline code first, optimized code compiled in the
  // background once a function is hot) both change the speed during the first calls. Batches run until two in a
  // row are no faster than the best so far (at least WARMUP_MS, at most WARMUP_MAX_MS).
  let out = await first;
  let reps = 1, best = Infinity, stale = 0;
  const w0 = performance.now();
  for (;;) {
    const t0 = performance.now();
    out = await batch(reps);
    const t1 = performance.now();
    const dt = t1 - t0;
    // Only batches long enough for the coarse timer count towards "no faster than the best".
    if (dt >= BATCH_MS) {
      const per = dt / reps;
      if (per < 0.97 * best) { best = per; stale = 0; } else stale++;
    } else {
      // Grow geometrically: a batch that read as 0 ms must not turn into a huge one.
      reps *= Math.min(8, Math.max(2, Math.ceil(BATCH_MS / Math.max(dt, 0.1))));
    }
    if ((stale >= 2 && t1 - w0 >= WARMUP_MS) || t1 - w0 >= WARMUP_MAX_MS) break;
  }
  const samples: number[] = [];
  let total = 0;
  while (samples.length < MIN_SAMPLES || total < MIN_TOTAL_MS) {
    const t0 = performance.now();
    out = await batch(reps);
    const dt = performance.now() - t0;
    samples.push(dt / reps);
    total += dt;
  }
  return { ms: median(samples), calls: samples.length * reps, out };
}

/**
 * The three implementations of one task, as closures over the task's inputs. Each writes into its own output
 * buffer, allocated once here: a fresh multi-megabyte array per call would time the browser's allocator and
 * page faults (several ms per 4 MB in Chromium), not the computation.
 */
function runners(t: TaskSpec, engines: Partial<Record<Impl, Lab>>): Record<Impl, Call | undefined> {
  const seed = 0x5eed ^ (t.n * 131 + (t.causal ? 7 : 0));
  if (t.kind === 'softmax') {
    // Logits spread over [-4, 4): rows neither flat nor one-hot.
    const x = uniform(seed, t.n * t.n, 4);
    const wasm = (lab?: Lab) => { const out = new Float32Array(x.length); return lab && (() => lab.softmax(x, { cols: t.n, out })); };
    const jsOut = new Float32Array(x.length);
    const pooled = engines.threads, poolOut = new Float32Array(x.length);
    return { js: () => jsSoftmax(x, t.n, jsOut), scalar: wasm(engines.scalar), simd: wasm(engines.simd),
      threads: pooled && (() => pooled.softmaxAsync(x, { cols: t.n, out: poolOut })) };
  }
  // Unit-scale inputs in [-1, 1): the e2e test derives its error bound from that range. Heads: [heads, n, d].
  const { n, d, causal, heads } = t;
  const size = heads * n * d;
  const hs = heads > 1 ? heads * 7919 : 0; // one head: the inputs of the plain shapes as they always were
  const q = uniform(seed + hs, size, 1), k = uniform(seed + 1 + hs, size, 1), v = uniform(seed + 2 + hs, size, 1);
  const scale = 1 / Math.sqrt(d);
  const opts = { q, k, v, heads, nq: n, nk: n, dk: d, dv: d, causal, scale };
  const wasm = (lab?: Lab) => { const out = new Float32Array(size); return lab && (() => lab.attention({ ...opts, out }).output); };
  const jsOut = new Float32Array(size);
  // Plain JS: one head at a time (each head's rows are contiguous in [heads, n, d]).
  const js = () => {
    for (let h = 0; h < heads; h++) {
      const at = h * n * d, end = at + n * d;
      jsAttention(q.subarray(at, end), k.subarray(at, end), v.subarray(at, end), n, n, d, d, causal, scale, jsOut.subarray(at, end));
    }
    return jsOut;
  };
  const pooled = engines.threads, poolOut = new Float32Array(size);
  return { js, scalar: wasm(engines.scalar), simd: wasm(engines.simd),
    threads: pooled && (async () => (await pooled.attentionAsync({ ...opts, out: poolOut })).output) };
}

function info(id: Impl, lab: Lab): ImplInfo {
  const b = lab.buildInfo();
  return { id, available: true, version: b.version, backend: b.backend, simd: b.simd, kernels: b.kernels };
}

async function run(sizes: Sizes, threads: number, wasm: WasmFiles): Promise<void> {
  const init = (options: Parameters<typeof initFrom>[1]) => initFrom(wasm, options);
  const t0 = performance.now();
  const engines: Partial<Record<Impl, Lab>> = {};
  const impls: ImplInfo[] = [{ id: 'js', available: true }];
  engines.scalar = await init({ simd: false });
  impls.push(info('scalar', engines.scalar));
  // No SIMD128 in this engine: the row shows it unavailable instead of the whole run failing.
  if (simdSupported()) {
    try {
      engines.simd = await init({ simd: true });
      impls.push(info('simd', engines.simd));
    } catch (err) {
      impls.push({ id: 'simd', available: false, note: err instanceof Error ? err.message : String(err) });
    }
  } else {
    impls.push({ id: 'simd', available: false, note: 'this browser does not support WebAssembly SIMD128' });
  }
  // The pool: the SIMD module where there is one (init picks it), on `threads` workers.
  if (threads < 2) {
    impls.push({ id: 'threads', available: false, threads: 1, note: 'this browser reports one logical core' });
  } else {
    try {
      engines.threads = await init({ threads });
      impls.push({ ...info('threads', engines.threads), threads: engines.threads.threads });
    } catch (err) {
      impls.push({ id: 'threads', available: false, threads, note: err instanceof Error ? err.message : String(err) });
    }
  }

  const tasks = PLANS[sizes];
  const live = impls.filter((i) => i.available).map((i) => i.id);
  const total = tasks.length * live.length;
  post({ type: 'start', tasks, impls, total });
  let done = 0;
  for (const t of tasks) {
    const fns = runners(t, engines);
    let reference: Float32Array | undefined;
    for (const impl of live) {
      post({ type: 'step', task: t.id, impl, index: done + 1, total });
      const r = await measure(fns[impl]!);
      reference ??= r.out; // plain JS runs first and is the reference
      post({ type: 'result', m: { task: t.id, impl, ms: r.ms, calls: r.calls, maxDiff: maxAbsDiff(r.out, reference) }, done: ++done, total });
    }
  }
  engines.threads?.dispose();
  post({ type: 'done', elapsedMs: performance.now() - t0 });
}

self.addEventListener('message', (e: MessageEvent<BenchRequest>) => {
  if (e.data?.type !== 'run') return;
  const threads = Number.isInteger(e.data.threads) ? Math.max(1, Math.min(e.data.threads, 64)) : 1;
  run(e.data.sizes === 'quick' ? 'quick' : 'full', threads, e.data.wasm).catch((err) => {
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  });
});
