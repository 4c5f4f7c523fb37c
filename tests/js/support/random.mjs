// Seeded randomness so every failure reproduces: mulberry32, a tiny 32-bit generator.
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    bool: (p = 0.5) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    // (a plain loop: the same floats as Float32Array.from with a map function, five times faster on the large
    // arrays of the memory tests)
    array: (n, lo = -1, hi = 1) => {
      const out = new Float32Array(n);
      for (let i = 0; i < n; ++i) out[i] = lo + (hi - lo) * next();
      return out;
    },
  };
}

// An additive mask: mostly 0, some finite biases, some -Infinity; `fullRows` rows entirely -Infinity.
export function randomMask(r, rows, cols, fullRows = 0) {
  const m = Float32Array.from({ length: rows * cols }, () => {
    const t = r.next();
    return t < 0.6 ? 0 : t < 0.8 ? -3 + 6 * r.next() : -Infinity;
  });
  for (let k = 0; k < fullRows; ++k) {
    const row = r.int(0, rows - 1);
    m.fill(-Infinity, row * cols, (row + 1) * cols);
  }
  return m;
}
