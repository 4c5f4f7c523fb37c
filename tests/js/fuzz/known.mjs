// KNOWN_OPEN: the defects the fuzzer finds that are not fixed yet — the one list of expected failures. Each entry
// matches only its own failures (its operator, its check, its mutation's family), never a whole class of checks,
// and carries a small reproducer: tests/js/fuzz.test.mjs asserts that each reproducer still fails as described,
// so an entry whose defect gets fixed fails that test until it is removed from this list.
// Inputs whose products round (a matmul of small dyadic numbers would be exact in any order).
const rows = (x) => Float32Array.from({ length: x }, (_, i) => Math.sin(1.3 * i + 0.5));

// [begin, end) row spans of matmulAsync's cut (src/js/async.js: blocks of 64 rows, at most one part per worker).
function matmulParts(m, k, n, threads, tuning) {
  const parts = Math.min(threads, Math.ceil((m * k * (n + 1)) / tuning.minPartFloats)), blocks = Math.ceil(m / 64);
  const count = Math.max(1, Math.min(parts, blocks)), list = [];
  for (let i = 0; i < count; ++i) list.push([Math.min(m, Math.floor((blocks * i) / count) * 64), Math.min(m, Math.floor((blocks * (i + 1)) / count) * 64)]);
  return list;
}

export const KNOWN_OPEN = [
  {
    id: 'matmul-tail-rows',
    owner: 'src/js/async.js',
    what: 'matmulAsync differs from matmul (SIMD module) when its cut leaves a part of 1–3 rows: the engine computes a ' +
      'product of fewer than 4 rows with its own loops (gemm_blocked\u2019s decode path: one dot product per entry for a ' +
      'transposed b, and one pass over all of k instead of 256-deep blocks), not as the same rows inside a larger call',
    match: (f, c, { tuning }) => {
      if (f.op !== 'matmul' || f.check !== 'async differs from sync' || c.backend !== 'simd' || c.args.opts.m < 4) return false;
      const { m, k, n } = c.args.opts;
      return m * k * n >= tuning.inlineMatmul && matmulParts(m, k, n, c.threads, tuning).some(([a, b]) => b - a >= 1 && b - a <= 3);
    },
    repro: {
      op: 'matmul', backend: 'simd', threads: 2,
      args: { a: rows(65 * 16), b: rows(8 * 16), opts: { m: 65, k: 16, n: 8, transposeB: true } },
    },
  },
  {
    id: 'shared-out-transfer',
    owner: 'src/js/worker.js, src/js/async.js',
    what: 'ropeAsync and multiHeadAttentionAsync with an `out` backed by a SharedArrayBuffer write into it, then reject ' +
      '("Found invalid object in transferList"): the worker returns `out` itself and lists its shared buffer to transfer',
    match: (f) => ['rope', 'multiHeadAttention'].includes(f.op) && f.check === 'async rejected a valid call' && /Found invalid object in transferList/.test(f.detail),
    repro: {
      op: 'rope', backend: 'scalar', threads: 2,
      args: { x: rows(32), opts: { dk: 8, out: new Float32Array(new SharedArrayBuffer(128)) } },
    },
  },
  {
    id: 'refused-call-grows-memory',
    owner: 'src/js/* (allocation before validation)',
    what: 'a call refused for its sizes first allocates wasm memory for the outputs those sizes describe (an nq, m or ' +
      'capacity far beyond its tensors): the memory stays grown for good, and once near 2 GiB the next refused call ' +
      'says "out of memory" instead of naming the argument',
    match: (f, c) => f.check === 'memory grew' && ['huge', 'past2^31'].includes(c.bad?.tag),
    repro: {
      op: 'attention', backend: 'scalar', threads: 2,
      args: { opts: { q: rows(12), k: rows(20), v: rows(20), nq: 3, nk: 5, dk: 4, dv: 4 } },
      bad: { name: 'huge nq, tiny q', args: { opts: { q: rows(12), k: rows(20), v: rows(20), nq: 599186, nk: 5, dk: 4, dv: 4 } }, cls: 'RangeError', names: ['q', 'nq'], tag: 'huge' },
    },
  },
  {
    id: 'kv-append-rotarydim-0',
    owner: 'src/js/kv-cache.js (the engine reads rotary_dim 0 as "dk")',
    what: 'kvCache.append accepts rope: { rotaryDim: 0 } (and appends), which lab.rope refuses',
    match: (f, c) => f.op === 'kvCache' && c.bad?.tag === 'rotaryDim0' && ['accepted', 'changed the cache or model'].includes(f.check),
    repro: {
      op: 'kvCache', backend: 'scalar', threads: 2,
      args: { create: { dk: 4, dv: 2, capacity: 4 }, appends: [], call: { kind: 'append', k: rows(4), v: rows(2), opts: {} } },
      bad: { name: 'rope.rotaryDim 0', args: { create: { dk: 4, dv: 2, capacity: 4 }, appends: [], call: { kind: 'append', k: rows(4), v: rows(2), opts: { rope: { rotaryDim: 0 } } } },
        cls: 'RangeError', names: ['rotaryDim'], tag: 'rotaryDim0' },
    },
  },
  {
    id: 'past-2^31-names-a-buffer',
    owner: 'src/js/memory.js (arena)',
    what: 'sizes whose product passes 2³¹ (or 2 GiB of buffers) get "this call needs N bytes of wasm memory (output alone ' +
      'has …)" from the JS layer, or "out is too large: a x b elements do not fit in memory" from the engine, naming a ' +
      'buffer, not the sizes the caller gave',
    match: (f, c) => ['past2^31', 'huge'].includes(c.bad?.tag) && f.check === 'message does not name the argument' &&
      /this call needs \d+ bytes of wasm memory|: (out|output) is too large: \d+ x \d+ elements do not fit in memory/.test(f.detail),
    repro: {
      op: 'attention', backend: 'simd', threads: 2,
      args: { opts: { q: rows(8), k: rows(8), v: rows(8), nq: 2, nk: 2, dk: 4, dv: 4 } },
      bad: { name: 'nq·dv past 2^31', args: { opts: { q: rows(8), k: rows(8), v: rows(8), nq: 2 ** 20, nk: 2, dk: 4, dv: 2 ** 12 } }, cls: 'RangeError', names: ['q', 'v', 'nq', 'dv'], tag: 'past2^31' },
    },
  },
];

/** The known entry a failure belongs to, or undefined. */
export const knownFor = (failure, c, env) => KNOWN_OPEN.find((k) => k.match(failure, c, env));
