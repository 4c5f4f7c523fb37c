// The single-core wasm SIMD128 multiply+add peak, measured with a register-only kernel assembled here byte
// by byte (no toolchain): ACC independent f32x4 accumulators, each updated as acc = acc·m + c (f32x4.mul then
// f32x4.add, no FMA in SIMD128) UNROLL times per loop iteration. No memory is touched inside the loop.
// Flops counted: 2 per lane × 4 lanes per accumulator update.

import { F32, I32, MAGIC, V128, op, section, str, uleb, vec } from './wasm-encode.mjs';

const ACC = 12, UNROLL = 4;

/** Bytes of a module exporting `peak(iterations: i32) -> f32` (the sum of all lanes, so nothing is dead code). */
export function peakModuleBytes() {
  // locals: 0 = iterations (param), 1..ACC = accumulators, ACC+1 = m, ACC+2 = c
  const M = ACC + 1, C = ACC + 2;
  const body = [];
  body.push(...op.f32Const(0.999999), ...op.splat, ...op.localSet(M));
  body.push(...op.f32Const(1e-6), ...op.splat, ...op.localSet(C));
  for (let a = 1; a <= ACC; ++a) body.push(...op.f32Const(1 + a / 64), ...op.splat, ...op.localSet(a));
  body.push(...op.loop);
  for (let u = 0; u < UNROLL; ++u)
    for (let a = 1; a <= ACC; ++a)
      body.push(...op.localGet(a), ...op.localGet(M), ...op.mul, ...op.localGet(C), ...op.add, ...op.localSet(a));
  body.push(...op.localGet(0), ...op.i32Const(1), ...op.i32Sub, ...op.localTee(0), ...op.brIf(0), ...op.end);
  body.push(...op.f32Const(0));
  for (let a = 1; a <= ACC; ++a) for (let lane = 0; lane < 4; ++lane) body.push(...op.localGet(a), ...op.extract(lane), ...op.f32Add);
  body.push(...op.end);
  const fn = vec([0x01, ...uleb(ACC + 2), V128, ...body]);   // one group of ACC+2 v128 locals, then the body
  return new Uint8Array([
    ...MAGIC,
    ...section(1, [0x01, 0x60, 0x01, I32, 0x01, F32]),          // type 0: (i32) -> f32
    ...section(3, [0x01, 0x00]),                               // function 0 has type 0
    ...section(7, [0x01, ...str('peak'), 0x00, 0x00]),          // export "peak" = function 0
    ...section(10, [0x01, ...fn]),                              // code
  ]);
}

export const FLOPS_PER_ITERATION = ACC * UNROLL * 2 * 4;

/**
 * Measures the peak: warms the kernel up (so the optimizing tier runs it), then times `reps` calls of about
 * `targetMs` each. Returns GFLOP/s of every call, their median and max.
 */
export async function measurePeak({ reps = 15, targetMs = 40 } = {}) {
  const { instance } = await WebAssembly.instantiate(peakModuleBytes());
  const peak = instance.exports.peak;
  let iters = 1000;
  for (let i = 0; i < 20; ++i) peak(iters);                  // tier-up
  for (;;) {                                                  // size one call to ≈ targetMs
    const t0 = performance.now(); peak(iters); const ms = performance.now() - t0;
    if (ms > targetMs / 4) { iters = Math.max(1, Math.round(iters * targetMs / ms)); break; }
    iters *= 4;
  }
  const gflops = [];
  let sink = 0;
  for (let r = 0; r < reps; ++r) {
    const t0 = performance.now(); sink += peak(iters); const ms = performance.now() - t0;
    gflops.push((iters * FLOPS_PER_ITERATION) / ms / 1e6);
  }
  const sorted = [...gflops].sort((a, b) => a - b);
  return {
    kernel: `${ACC} f32x4 accumulators, acc = acc·m + c (f32x4.mul + f32x4.add), unrolled ×${UNROLL}, register-only`,
    iterationsPerCall: iters, flopsPerCall: iters * FLOPS_PER_ITERATION,
    gflops: sorted[sorted.length >> 1], gflopsMax: sorted[sorted.length - 1], samples: gflops,
    checksum: Number.isFinite(sink),
  };
}

/**
 * Cost of touching fresh memory on this machine: a new 64 MiB Float32Array filled once (page faults included)
 * against filling it again (pages already mapped). Every library here returns a freshly allocated output, so
 * outputs above the allocator's reuse threshold pay this on every call.
 */
export function measureFreshMemory({ mib = 64, reps = 5 } = {}) {
  const floats = (mib * 2 ** 20) / 4, pages = (mib * 2 ** 20) / 4096;
  const fresh = [], warm = [];
  for (let r = 0; r < reps; ++r) {
    globalThis.gc?.();
    let t0 = performance.now();
    const a = new Float32Array(floats);
    a.fill(1);
    fresh.push(performance.now() - t0);
    t0 = performance.now();
    a.fill(2);
    warm.push(performance.now() - t0);
  }
  const med = (x) => [...x].sort((p, q) => p - q)[x.length >> 1];
  return {
    mib, freshMs: med(fresh), refillMs: med(warm),
    usPerPage: ((med(fresh) - med(warm)) * 1000) / pages,
    note: `new Float32Array(${mib} MiB) + fill, minus a second fill of the same array; per 4 KiB page`,
  };
}
