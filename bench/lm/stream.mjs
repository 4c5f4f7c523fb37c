// What one thread of wasm can read from memory: a module assembled here byte by byte (bench/lib/wasm-encode.mjs)
// whose loop sums a buffer with v128.load into ACC independent i32x4 accumulators (integer adds: one cycle, so
// the loads alone set the pace), 16·ACC bytes per iteration. Decode reads every weight once per token, so this
// is its ceiling on the same machine, for a buffer of the weights' size (far past every cache).
import { I32, MAGIC, V128, op, section, str, uleb, vec } from '../lib/wasm-encode.mjs';

const ACC = 8, STEP = 16 * ACC;
const PAGE = 65536;

/** Bytes of a module with `pages` pages of memory (exported as "memory") and `sum(bytes: i32) -> i32`. */
export function streamModuleBytes(pages) {
  // locals: 0 = bytes (param), 1 = p, 2 .. ACC + 1 = accumulators
  const P = 1;
  const body = [...op.loop];
  for (let a = 0; a < ACC; ++a) body.push(...op.localGet(2 + a), ...op.localGet(P), ...op.v128Load(16 * a), ...op.i32x4Add, ...op.localSet(2 + a));
  body.push(...op.localGet(P), ...op.i32Const(STEP), ...op.i32Add, ...op.localTee(P), ...op.localGet(0), ...op.i32LtU, ...op.brIf(0), ...op.end);
  body.push(...op.i32Const(0));
  for (let a = 0; a < ACC; ++a) for (let lane = 0; lane < 4; ++lane) body.push(...op.localGet(2 + a), ...op.i32x4Extract(lane), ...op.i32Add);
  body.push(...op.end);
  const fn = vec([0x02, 0x01, I32, ...uleb(ACC), V128, ...body]);   // locals: one i32 (p), ACC v128
  return new Uint8Array([
    ...MAGIC,
    ...section(1, [0x01, 0x60, 0x01, I32, 0x01, I32]),               // type 0: (i32) -> i32
    ...section(3, [0x01, 0x00]),                                    // function 0 has type 0
    ...section(5, [0x01, 0x00, ...uleb(pages)]),                    // one memory, `pages` pages, no maximum
    ...section(7, [0x02, ...str('sum'), 0x00, 0x00, ...str('memory'), 0x02, 0x00]),
    ...section(10, [0x01, ...fn]),
  ]);
}

/**
 * GB/s of streaming reads over `bytes` (rounded up to a whole loop step): the buffer is filled first (its pages
 * mapped), read twice to warm up, then `reps` timed reads (at least `minMs` in all). With `cpuMs` (this process's
 * CPU time in ms), also GB/s per CPU second: what waiting for a core on a loaded machine does not lower.
 */
export async function measureStream(bytes, { reps = 7, minMs = 1000, cpuMs = null } = {}) {
  const n = Math.ceil(bytes / STEP) * STEP;
  const { instance } = await WebAssembly.instantiate(streamModuleBytes(Math.ceil(n / PAGE)));
  const { sum, memory } = instance.exports;
  new Uint32Array(memory.buffer, 0, n / 4).fill(1);
  const expected = (n / 4) | 0;                                     // every u32 is 1 (mod 2³²)
  for (let i = 0; i < 2; ++i) if (sum(n) !== expected) throw new Error(`stream sum ${sum(n)} ≠ ${expected}: the module reads wrongly`);
  const gbps = [], gbpsCpu = [];
  let total = 0;
  while (gbps.length < reps || total < minMs) {
    const c0 = cpuMs?.(), t0 = performance.now();
    sum(n);
    const ms = performance.now() - t0;
    total += ms;
    gbps.push(n / ms / 1e6);
    if (cpuMs) gbpsCpu.push(n / Math.max(cpuMs() - c0, 1e-3) / 1e6);
  }
  const median = (x) => [...x].sort((a, b) => a - b)[x.length >> 1];
  return { bytes: n, reads: gbps.length, gbps: median(gbps), gbpsMax: Math.max(...gbps), gbpsCpu: gbpsCpu.length ? median(gbpsCpu) : null,
    kernel: `v128.load × ${ACC} per iteration into ${ACC} i32x4 accumulators (${STEP} B), one thread` };
}
