// q·k term by term: the products qₜ·kₜ (the engine's diag(q)·k) and, for a wide head, the few that matter most.
import type { Engine } from '../../engine';
import { fmt } from '../../ui/format';

/** The d products q[t]·k[t], from one engine matrix product diag(q)·k. */
export function dotTerms(engine: Engine, q: Float32Array, k: Float32Array): Float32Array {
  const d = q.length;
  const diag = new Float32Array(d * d);
  for (let t = 0; t < d; t++) diag[t * d + t] = q[t];
  return engine.matmul(diag, k, { m: d, k: d, n: 1 });
}

/**
 * The terms as text: all of them up to `max`; past that the `top` largest in size (with their t), then “the other
 * m terms” and their sum, so the sum can still be followed. The page adds the rest in float64 (display only).
 */
export function termsText(terms: ArrayLike<number>, max = 8, top = 4): string {
  const a = Array.from(terms);
  if (a.length <= max) return a.map((t) => fmt(t, 4)).join(' + ');
  const order = a.map((v, t) => ({ v, t })).sort((x, y) => Math.abs(y.v) - Math.abs(x.v));
  const big = order.slice(0, top);
  const rest = order.slice(top).reduce((s, x) => s + x.v, 0);
  return `${big.map((x) => `${fmt(x.v, 4)} (t = ${x.t + 1})`).join(' + ')} + the other ${a.length - top} terms, ${fmt(rest, 4)} in all`;
}
