// RoPE's float64 reference with a bound on the engine's error (the derivation is in
// tests/native/rope_reference.h; u = 2⁻²⁴):
//   computed angles: |out − exact| ≤ 3u(1 + 4u)(|a·c| + |b·s|) + (η + η_ref)(|a| + |b|)
//   given tables:    |out − exact| ≤ 2u(1 + u)(|a·c| + |b·s|)
// η = (4·ln base + 5)·2⁻⁵³·θ + 16·2⁻⁵³ is the engine's table error beyond float rounding (src/core/rope.h).
// This reference takes θ = p·base^(−2i/r) and its cos/sin in float64 with Math.pow/cos/sin (each within about
// 1 ulp): its own error η_ref = (ln base + 4)·2⁻⁵³·θ + 2·2⁻⁵³ enters the bound too. A product below float32's
// normal range rounds with an absolute error up to 2⁻¹⁵⁰: + 2⁻¹⁴⁸.
import { u } from './reference.mjs';

const E53 = 2 ** -53;
export const engineEta = (theta, base) => (4 * Math.log(base) + 5) * E53 * theta + 16 * E53;
export const float64Eta = (theta, base) => (Math.log(base) + 4) * E53 * theta + 2 * E53;

/** Index of (item b, head h, token s) in x. */
export function ropeIndex({ heads, seq, dk, layout }, b, h, s) {
  return layout === 'bshd' ? ((b * seq + s) * heads + h) * dk : ((b * heads + h) * seq + s) * dk;
}

// The position of item b's token s under the options' positions / offset (or 0 … seq − 1).
export function positionOf({ positions, offset }, seq) {
  if (positions) {
    const perItem = positions.length !== seq;
    return (b, s) => positions[(perItem ? b * seq : 0) + s];
  }
  if (offset !== undefined) {
    const o = typeof offset === 'number' ? [offset] : offset;
    return (b, s) => o[o.length === 1 ? 0 : b] + s;
  }
  return (b, s) => s;
}

/**
 * The rotation of x as the options describe it, in float64, with bounds. `positionOf(b, s)` gives the position of
 * item b's token s; `cos`/`sin` are given tables or undefined. `refEta` (default float64Eta) is the error of the
 * angles of whoever computed `value`; the bound covers both it and the engine's.
 */
export function ropeReference(x, { batch = 1, heads = 1, dk, layout = 'bhsd', positionOf, base = 10000, rotaryDim = dk, interleaved = false, cos, sin, inverse = false }) {
  const seq = x.length / (batch * heads * dk), half = rotaryDim / 2;
  const value = new Float64Array(x.length), bound = new Float64Array(x.length);
  const dims = { heads, seq, dk, layout };
  for (let b = 0; b < batch; ++b)
    for (let s = 0; s < seq; ++s) {
      const p = positionOf(b, s);
      for (let h = 0; h < heads; ++h) {
        const at = ropeIndex(dims, b, h, s);
        for (let d = rotaryDim; d < dk; ++d) value[at + d] = x[at + d];
        for (let i = 0; i < half; ++i) {
          let c, sn, eta = 0, rounding = 2 * u * (1 + u);
          if (cos) {
            c = cos[p * half + i], sn = sin[p * half + i];
          } else {
            const theta = p * Math.pow(base, (-2 * i) / rotaryDim);
            c = Math.cos(theta), sn = Math.sin(theta);
            eta = engineEta(theta, base) + float64Eta(theta, base), rounding = 3 * u * (1 + 4 * u);
          }
          if (inverse) sn = -sn;
          const ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + half;
          const xa = x[at + ia], xb = x[at + ib];
          value[at + ia] = xa * c - xb * sn;
          value[at + ib] = xb * c + xa * sn;
          const e = eta * (Math.abs(xa) + Math.abs(xb)) * (1 + 4 * u) + 2 ** -148;
          bound[at + ia] = rounding * (Math.abs(xa * c) + Math.abs(xb * sn)) + e;
          bound[at + ib] = rounding * (Math.abs(xb * c) + Math.abs(xa * sn)) + e;
        }
      }
    }
  return { value, bound };
}

/** cos/sin tables [maxPosition × rotaryDim/2] computed in float64 and rounded to float32 (what ONNX models ship). */
export function ropeTables(maxPosition, rotaryDim, base = 10000) {
  const half = rotaryDim / 2, cos = new Float32Array(maxPosition * half), sin = new Float32Array(maxPosition * half);
  for (let p = 0; p < maxPosition; ++p)
    for (let i = 0; i < half; ++i) {
      const theta = p * Math.pow(base, (-2 * i) / rotaryDim);
      cos[p * half + i] = Math.cos(theta), sin[p * half + i] = Math.sin(theta);
    }
  return { cos, sin };
}
