// Timing of one cell, inside a worker: warm-up (page faults of fresh buffers, the allocator settling, JIT/wasm
// tier-up), then repeated timed calls; every call is timed on its own and the median is what the bench reports.
//
// Every library returns a freshly allocated output array. Left to itself, V8 frees them late, and until it does
// the allocator hands out fresh pages, each a page fault, which would be timed as the library's.
// So before every call longer than 1 ms, warm-up and timed alike, gc() runs outside the timing and the event
// loop gets one turn (setTimeout 0) so V8's concurrent sweeping finishes before the next call starts. Shorter
// calls get a minor GC (young objects only, which frees the outputs' buffers) before every 8th call: with none,
// a fresh output costs page faults; before every call, short calls run slower on the caches it leaves cold.
// What each choice measured: docs/performance.md#how-the-bench-takes-its-numbers.

const now = () => performance.now();
const gc = globalThis.gc ?? (() => {});
const minorGc = globalThis.gc ? () => globalThis.gc({ type: 'minor' }) : () => {};
const GC_ABOVE_MS = 1;
const MINOR_GC_EVERY = 8;
const yieldTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * @param run      () => Float32Array | Promise<Float32Array>  — one complete call, result read back to JS
 * @param timing   { minMs, minReps, maxReps, warmMs, slowMs }
 * @param prepare  optional () => void run before every call, outside the timing (e.g. a KV cache put back to its length),
 *                 followed by one event-loop turn
 * @returns { samples (ms), median, min, reps, warmups, output (of the last call), cpuMs, cpuMedian (ms of this
 *            process's CPU time per call, median: steadier than wall time when other processes take the cores) }
 */
export async function measure(run, { minMs = 300, minReps = 5, maxReps = 2000, warmMs = 150, slowMs = 2500 } = {}, prepare = null) {
  const cpu0 = process.cpuUsage();
  prepare?.();
  gc();
  // The first call tells whether the API is async; sync calls are never awaited (no microtask in the timing).
  let t0 = now();
  let output = run();
  const isAsync = typeof output?.then === 'function';
  if (isAsync) output = await output;
  const first = now() - t0;
  let last = first, calls = 0, typical = null;
  const call = async () => {
    output = null;                                     // (drop our reference first)
    // A prepare() step (a cache refilled: a millisecond of work) ends with one event-loop turn, as long calls get.
    if (prepare) { prepare(); await yieldTurn(); }
    // Long or short is decided by the warm-up's median once there is one, not by the previous call: decided by the
    // previous call, one call slowed past 1 ms by another process got a full GC and a yield before the next, which
    // left the caches cold and made it slow too — seen as whole rounds of the 0.35 ms decode step at 1.1 ms.
    if ((typical ?? last) > GC_ABOVE_MS) { gc(); await yieldTurn(); } else if (++calls % MINOR_GC_EVERY === 0) minorGc();
    const c = process.cpuUsage(), t = now();
    output = isAsync ? await run() : run();
    last = now() - t;
    const used = process.cpuUsage(c);
    lastCpu = (used.user + used.system) / 1000;        // this process's CPU time: what waiting for a core does not inflate
    return last;
  };
  let lastCpu = 0;

  // Warm-up: at least 5 calls and warmMs, and on until the calls stop getting faster (no new best by > 10% in
  // the last 3 calls), at most max(4 × warmMs, 1 s). A call slower than 0.5 s needs one warm-up call only.
  let warmups = 1;
  const warm = [first];
  if (first < 500) {
    const start = now();
    let best = first, sinceBest = 0;
    for (;;) {
      const elapsed = now() - start;
      if (warmups >= 5 && elapsed >= warmMs && sinceBest >= 3) break;
      if (elapsed >= Math.max(4 * warmMs, 1000) || warmups >= 20000) break;
      const ms = await call();
      warm.push(ms);
      ++warmups;
      if (ms < 0.9 * best) sinceBest = 0; else ++sinceBest;
      if (ms < best) best = ms;
    }
  }
  typical = [...warm].sort((a, b) => a - b)[warm.length >> 1];

  const samples = [], cpuSamples = [];
  let total = 0;
  for (;;) {
    const ms = await call();
    samples.push(ms);
    cpuSamples.push(lastCpu);
    total += ms;
    const reps = samples.length;
    if (reps >= maxReps) break;
    if (reps >= minReps && total >= minMs) break;
    if (reps >= 3 && total >= slowMs) break;          // slow cells: 3 calls are enough, keep the bench short
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const cpu = process.cpuUsage(cpu0);
  const cpuSorted = [...cpuSamples].sort((a, b) => a - b);
  return { samples, median, min: sorted[0], reps: samples.length, warmups, output, cpuMs: (cpu.user + cpu.system) / 1000,
    cpuMedian: cpuSorted[cpuSorted.length >> 1] };
}
