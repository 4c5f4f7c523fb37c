// What both labs' workers need to time the engine: seeded inputs (the same numbers on every run and machine)
// and the median of the timed batches.
import { mulberry32 } from '../text/random';

/** `count` values uniform in [−a, a), from a seeded generator. */
export function uniform(seed: number, count: number, a = 1): Float32Array {
  const rand = mulberry32(seed >>> 0);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = a * (2 * rand() - 1);
  return out;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}
