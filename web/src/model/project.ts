// Q = X·W_Q, K = X·W_K, V = X·W_V by the engine: one single-head multiHeadAttention call with W_O = I
// returns the head's projections (the same trick as the attention pipeline).
import type { Engine } from '../engine';

export function project(engine: Engine, x: Float32Array, n: number, d: number, wq: Float32Array, wk: Float32Array, wv: Float32Array): { q: Float32Array; k: Float32Array; v: Float32Array } {
  const wo = new Float32Array(d * d);
  for (let i = 0; i < d; i++) wo[i * d + i] = 1;
  const r = engine.multiHeadAttention({ x, n, dModel: d, heads: 1, kvHeads: 1, dk: d, dv: d, wq, wk, wv, wo, returnIntermediates: true });
  const h = r.heads?.[0];
  if (!h) throw new Error('multiHeadAttention returned no intermediates');
  return { q: h.q, k: h.k, v: h.v };
}
