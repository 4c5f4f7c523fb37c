// The timing policies of the page's two live measurements, each defined once: the workers time by them
// (bench-worker.ts, curve-worker.ts) and the labs' copy describes them (bench-lab.ts, cost-curve.ts).

/**
 * The speed lab: an adaptive warm-up of at least warmupMs (at most warmupMaxMs), then timed batches until there
 * are at least minSamples of them and minTotalMs in all; every batch lasts at least batchMs (without cross-origin
 * isolation browsers coarsen performance.now() to about 0.1 ms).
 */
export const BENCH_TIMING = { warmupMs: 40, warmupMaxMs: 1000, minTotalMs: 150, minSamples: 3, batchMs: 10 } as const;

/**
 * The cost curve, per point: a warm-up (at least one call, at least warmupMs), then up to maxBatches timed batches
 * within budgetMs (at least one), each at least batchMs (small n repeat the call, at most maxReps times). A path
 * whose first call takes longer than maxCallMs skips its larger n.
 */
export const CURVE_TIMING = { warmupMs: 10, maxBatches: 5, batchMs: 20, maxReps: 2000, budgetMs: 1000, maxCallMs: 4000 } as const;
