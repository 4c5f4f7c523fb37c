// Measures the engine's attention at growing n, off the main thread so the page stays responsive.
// Each (path, n) point gets a FRESH engine instance: wasm memory grows on demand and never shrinks, so
// memoryBytes of a shared instance would only ever report the largest call so far. Each point is timed twice:
// the synchronous call on this worker's thread, and the package's async twin on its pool of `threads` workers
// (init({ threads }), started from here: workers inside a worker). The pool is made once per run; its workers'
// memory is theirs, so the memory column comes from the fresh one-thread instance alone.
import type { Lab } from 'attnlab';
import { median, uniform } from './sample';
import { CURVE_TIMING } from './timing';
import { initFrom, type WasmFiles } from '../wasm-files';

export type CurvePath = 'materialized' | 'streaming';

export interface CurveRequest {
  type: 'run';
  points: { n: number; path: CurvePath }[];
  d: number;
  seed: number;
  /** Time spent timing one point (after the warm-up); at least one timed batch always runs. */
  budgetMs: number;
  /** A path whose warm-up call alone takes longer than this skips its larger n. */
  maxCallMs: number;
  /** Workers for the threaded timing (init({ threads })); below 2 only the one-thread timing runs. */
  threads: number;
  /** The page's module files. */
  wasm: WasmFiles;
}

export interface CurvePoint {
  n: number;
  path: CurvePath;
  /** Median time of one attention call, ms. */
  ms: number;
  /** Timed batches (the median is over these) and calls per batch (small n repeat to beat timer resolution). */
  batches: number;
  reps: number;
  /** This instance's wasm memory after the calls (measured: a fresh instance per point). */
  memoryBytes: number;
  backend: string;
  /** The same call through attentionAsync on the pool: median ms, batches, calls per batch (absent: not run). */
  threaded?: { ms: number; batches: number; reps: number };
}

export type CurveMessage =
  | { type: 'start'; index: number; total: number; n: number; path: CurvePath }
  | { type: 'point'; index: number; total: number; point: CurvePoint }
  | { type: 'skip'; index: number; total: number; n: number; path: CurvePath; reason: string }
  | { type: 'threads'; threads: number; error?: string }
  | { type: 'done'; total: number }
  | { type: 'error'; message: string };

const post = (m: CurveMessage) => (self as unknown as Worker).postMessage(m);

/**
 * Times `call` by CURVE_TIMING: the warm-up keeps first-touch memory growth and the JIT tiers out of the timings;
 * batches are long because the worker's clock ticks in 0.1 ms steps, so small n repeat the call. Returns the
 * first call's time too (the too-slow check).
 */
async function time(call: () => unknown, budgetMs: number): Promise<{ ms: number; batches: number; reps: number; first: number }> {
  let t0 = performance.now();
  await call();
  const first = performance.now() - t0;
  let warmCalls = 1;
  while (performance.now() - t0 < CURVE_TIMING.warmupMs) { await call(); warmCalls += 1; }
  const perCall = (performance.now() - t0) / warmCalls;
  const reps = Math.max(1, Math.min(CURVE_TIMING.maxReps, Math.ceil(CURVE_TIMING.batchMs / Math.max(perCall, 0.01))));
  const times: number[] = [];
  const start = performance.now();
  while (times.length < CURVE_TIMING.maxBatches && (times.length === 0 || performance.now() - start < budgetMs)) {
    t0 = performance.now();
    for (let r = 0; r < reps; r++) await call();
    times.push((performance.now() - t0) / reps);
  }
  return { ms: median(times), batches: times.length, reps, first };
}

async function run(req: CurveRequest): Promise<void> {
  const total = req.points.length;
  const tooSlow = new Set<CurvePath>();
  const cache = new Map<number, Float32Array>();
  // The pool for the threaded timings; if it cannot start (a policy without worker-src blob:, no nested workers),
  // the run goes on with one thread and says why.
  let pool: Lab | undefined;
  if (req.threads >= 2) {
    try {
      pool = await initFrom(req.wasm, { threads: req.threads });
      post({ type: 'threads', threads: pool.threads });
    } catch (err) {
      post({ type: 'threads', threads: 1, error: err instanceof Error ? err.message : String(err) });
    }
  } else {
    post({ type: 'threads', threads: 1 });
  }
  try {
    for (let index = 0; index < total; index++) {
      const { n, path } = req.points[index];
      if (tooSlow.has(path)) {
        post({ type: 'skip', index, total, n, path, reason: 'a smaller n already exceeded the time budget' });
        continue;
      }
      post({ type: 'start', index, total, n, path });
      const d = req.d;
      let qkv = cache.get(n);
      if (!qkv) { // q, k, v in [−1, 1), seeded per n
        cache.clear();
        qkv = uniform(req.seed ^ Math.imul(n, 0x9e3779b1), 3 * n * d);
        cache.set(n, qkv);
      }
      const opts = {
        q: qkv.subarray(0, n * d), k: qkv.subarray(n * d, 2 * n * d), v: qkv.subarray(2 * n * d),
        nq: n, nk: n, dk: d, dv: d,
        // returnWeights makes the engine build (and hand back) the n×n matrix; without it the engine streams.
        returnWeights: path === 'materialized',
      };
      const lab = await initFrom(req.wasm);
      const one = await time(() => lab.attention(opts), req.budgetMs);
      const memoryBytes = lab.memoryBytes; // before the threaded timing: a fresh instance's memory after its calls
      const threaded = pool ? await time(() => pool!.attentionAsync(opts), req.budgetMs) : undefined;
      post({
        type: 'point', index, total,
        point: {
          n, path, ms: one.ms, batches: one.batches, reps: one.reps, memoryBytes, backend: lab.backend,
          threaded: threaded && { ms: threaded.ms, batches: threaded.batches, reps: threaded.reps },
        },
      });
      if (one.first > req.maxCallMs) tooSlow.add(path);
    }
  } finally {
    pool?.dispose();
  }
  post({ type: 'done', total });
}

self.addEventListener('message', (e: MessageEvent<CurveRequest>) => {
  if (e.data?.type !== 'run') return;
  run(e.data).catch((err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
});
