// Deterministic pseudo-random numbers for seeded embeddings and weights (the same seed gives the same
// page on every machine, so a shared URL reproduces exactly). Not the math under study: just inputs.

/** FNV-1a hash of a string, 32-bit. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small, fast, well-mixed 32-bit generator. Returns uniform numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal samples (Box–Muller), rounded to 2 decimals so the tables stay readable. */
export function gaussians(seed: number, count: number, std = 1): number[] {
  const rand = mulberry32(seed);
  const out: number[] = [];
  while (out.length < count) {
    const u = 1 - rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    out.push(r * Math.cos(2 * Math.PI * v), r * Math.sin(2 * Math.PI * v));
  }
  return out.slice(0, count).map((x) => Math.round(x * std * 100) / 100);
}
