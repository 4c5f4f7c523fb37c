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
];

/** The known entry a failure belongs to, or undefined. */
export const knownFor = (failure, c, env) => KNOWN_OPEN.find((k) => k.match(failure, c, env));
