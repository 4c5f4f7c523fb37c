// Float64 reference of lab.softmaxBackward from the same float32 y and dy, with a bound derived from its float32
// evaluation (u = 2⁻²⁴; a sum of n terms in any order is within γ(n)·Σ|terms|; exp within E = 2u). The engine
// computes (μ·y)·(dy − s) and μ·(dy − s·e^y): a product that lands among float32's subnormals is off by up to
// 2⁻¹⁵⁰ (not u relative), and the next product scales that error; the vector exp flushes e^y below 2⁻¹²⁶ to 0.
import { E, gamma, u } from './reference.mjs';

const TINY = 2 ** -150, FLUSH = 2 ** -126;

/** dx and its bound, row by row. mul = fl(1/T) carries one rounding unless T = 1. */
export function softmaxBackwardRef(y, dy, cols, temperature = 1, log = false) {
  const mul = Math.fround(1 / Math.fround(temperature)), uMul = temperature === 1 ? 0 : u;
  const value = new Float64Array(y.length), bound = new Float64Array(y.length);
  for (let o = 0; o < y.length; o += cols) {
    let s = 0, sAbs = 0, allMasked = true;
    for (let j = 0; j < cols; ++j) {
      const t = log ? dy[o + j] : y[o + j] * dy[o + j];
      s += t, sAbs += Math.abs(t);
      if (y[o + j] !== -Infinity) allMasked = false;
    }
    if (log && allMasked) continue; // exactly 0
    const ds = gamma(cols) * sAbs;
    for (let j = 0; j < cols; ++j) {
      const i = o + j;
      if (log) {
        const e = y[i] === -Infinity ? 0 : Math.exp(y[i]);
        const v = mul * (dy[i] - s * e);
        value[i] = v;
        bound[i] = mul * (ds * e + Math.abs(s) * e * (E + u) + u * Math.abs(dy[i] - s * e) + (Math.abs(s) * FLUSH + TINY) * (1 + u)) +
          (u + uMul) * Math.abs(v) + 1e-45;
      } else {
        const v = mul * y[i] * (dy[i] - s);
        value[i] = v;
        bound[i] = mul * y[i] * (ds + u * Math.abs(dy[i] - s)) + (uMul ? TINY * (Math.abs(dy[i] - s) + ds) * (1 + 2 * u) : 0) +
          (2 * u + uMul) * Math.abs(v) + 1e-45;
      }
    }
  }
  return { value, bound };
}
