// Float64 reference of the whole attention operator (batch, heads, GQA, layouts, causal alignments, windows,
// softcap, additive/boolean masks broadcast by NumPy's rules, key lengths, ALiBi, lse) with derived error bounds,
// written from the definitions independently of the engine. The bounds follow support/reference.mjs; the terms
// this operator adds (tests/native/attention_reference.h derives the same):
//   raw = q·k over dk:            γ(dk + 1)·Σ|qk| — either order the engine may use (q·scale first or not)
//   s0 = raw·scale:               scale·δraw + (ρ + u)|s0|    (ρ = 2u for the default 1/√dk, computed in float32)
//   s1 = softcap·tanh(s0/softcap): + 2u|s0| (the multiplier scale/softcap, the product) + (T + u)|s1|, T = 2 ulp
//   s2 = s1 − slope·|i' − j|:     + 2u|bias| + u|s2|
//   s = s2 + mask:                + u|s|
//   lse = m + log Σ exp(s − m):    Σ pⱼ·δsⱼ + the sum's relative error + 2u·(|m| + 2|log Σ| + |lse|)
import { E, gamma, softmaxRows, u } from './reference.mjs';

const T = 4 * u;
const TILE = 64;

/** Index of element (b, h, s, d) of a [batch, heads, seq, dim] tensor in `layout`. */
export function at(layout, b, h, s, d, heads, seq, dim) {
  return layout === 'bshd' ? ((b * seq + s) * heads + h) * dim + d : ((b * heads + h) * seq + s) * dim + d;
}

function alignTopLeft(causal) {
  return causal === 'top-left';
}

/** Whether query i of item b sees key j, from the definitions. */
export function sees(c, b, i, j) {
  const len = c.keyLengths ? c.keyLengths[b] : c.nk;
  if (j >= len) return false;
  const mk = c.maskShape4[3];
  if (c.mask && mk > 1 && j >= mk) return false;
  const d = alignTopLeft(c.causal) ? i : i + len - c.nq;
  if (c.causal && j > d) return false;
  const [left, right] = c.window ?? [-1, -1];
  if (left !== -1 && left !== Infinity && j < d - left) return false;
  if (right !== -1 && right !== Infinity && j > d + right) return false;
  return true;
}

/** Right-aligned [batch, heads, nq, nk] shape of the case's mask. */
export function fullMaskShape(c) {
  const given = c.maskShape ?? [c.nq, c.nk];
  return [...Array(4 - given.length).fill(1), ...given];
}

function maskAt(c, m, b, h, i, j) {
  const coord = [m[0] === 1 ? 0 : b, m[1] === 1 ? 0 : h, m[2] === 1 ? 0 : i, m[3] === 1 ? 0 : j];
  return ((coord[0] * m[1] + coord[1]) * m[2] + coord[2]) * m[3] + coord[3];
}

/**
 * c: { q, k, v, batch, heads, kvHeads, nq, nk, dk, dv, layout, causal, window, scale (the float32 the engine gets,
 * or undefined for 1/√dk), softcap, mask (Float32Array additive or Uint8Array boolean), maskShape, keyLengths,
 * alibiSlopes }. Returns { out (in the layout), raw, scores, weights ([batch, heads, nq, nk]), lse ([batch, heads, nq]) },
 * each { value, bound }.
 */
export function attentionFullRef(c0) {
  const c = { batch: 1, heads: 1, layout: 'bhsd', causal: false, ...c0 };
  c.kvHeads ??= c.heads;
  if (c.causal === true) c.causal = 'bottom-right';
  c.maskShape4 = fullMaskShape(c);
  const { batch: B, heads: H, kvHeads: G, nq, nk, dk, dv, layout } = c;
  const sc = c.scale === undefined ? 1 / Math.sqrt(dk) : c.scale;
  const rho = c.scale === undefined ? 2 * u : 0;
  const boolean = c.mask instanceof Uint8Array;
  const nn = nq * nk;
  const mk = (n) => ({ value: new Float64Array(n), bound: new Float64Array(n) });
  const r = { out: mk(B * H * nq * dv), raw: mk(B * H * nn), scores: mk(B * H * nn), weights: mk(B * H * nn), lse: mk(B * H * nq) };
  const tiles = Math.ceil(nk / TILE);
  for (let b = 0; b < B; ++b)
    for (let h = 0; h < H; ++h) {
      const g = Math.floor((h * G) / H), base = (b * H + h) * nn;
      const sv = new Float64Array(nn), sb = new Float64Array(nn);
      for (let i = 0; i < nq; ++i)
        for (let j = 0; j < nk; ++j) {
          let s = 0, sa = 0;
          for (let d = 0; d < dk; ++d) {
            const x = c.q[at(layout, b, h, i, d, H, nq, dk)] * c.k[at(layout, b, g, j, d, G, nk, dk)];
            s += x;
            sa += Math.abs(x);
          }
          const t = i * nk + j;
          r.raw.value[base + t] = s;
          r.raw.bound[base + t] = gamma(dk) * sa;
          let hidden = !sees(c, b, i, j), add = 0;
          if (!hidden && c.mask) {
            const m = c.mask[maskAt(c, c.maskShape4, b, h, i, j)];
            if (boolean) hidden = m === 0;
            else add = m, hidden = m === -Infinity;
          }
          if (hidden) {
            sv[t] = -Infinity;
            continue;
          }
          const s0 = s * sc;
          let err = gamma(dk + 1) * sa * sc + (rho + u) * Math.abs(s0), s1 = s0;
          if (c.softcap !== undefined) {
            s1 = c.softcap * Math.tanh(s0 / c.softcap);
            err += 2 * u * Math.abs(s0) + (T + u) * Math.abs(s1);
          }
          let s2 = s1;
          if (c.alibiSlopes) {
            const len = c.keyLengths ? c.keyLengths[b] : nk;
            const diag = alignTopLeft(c.causal) ? i : i + len - nq;
            const bias = -c.alibiSlopes[h] * Math.abs(diag - j);
            s2 = s1 + bias;
            err += 2 * u * Math.abs(bias) + u * Math.abs(s2);
          }
          sv[t] = s2 + add;
          sb[t] = err + u * Math.abs(sv[t]);
        }
      r.scores.value.set(sv, base);
      r.scores.bound.set(sb, base);
      const extra = (row) => {
        let hi = -Infinity, lo = Infinity;
        for (let j = 0; j < nk; ++j) {
          const s = sv[row * nk + j];
          if (s !== -Infinity) (hi = Math.max(hi, s)), (lo = Math.min(lo, s));
        }
        return tiles * (E + 2 * u) + (hi === -Infinity ? 0 : 2 * u * (hi - lo));
      };
      const w = softmaxRows(sv, sb, nk, { extra });
      r.weights.value.set(w.value, base);
      r.weights.bound.set(w.bound, base);
      for (let i = 0; i < nq; ++i) {
        const li = (b * H + h) * nq + i;
        let m = -Infinity;
        for (let j = 0; j < nk; ++j) m = Math.max(m, sv[i * nk + j]);
        if (m === -Infinity) {
          r.lse.value[li] = -Infinity;
        } else {
          let sum = 0, spread = 0, expErr = 0, seen = 0;
          for (let j = 0; j < nk; ++j) if (sv[i * nk + j] !== -Infinity) (sum += Math.exp(sv[i * nk + j] - m)), ++seen;
          for (let j = 0; j < nk; ++j) {
            const s = sv[i * nk + j];
            if (s === -Infinity) continue;
            const p = Math.exp(s - m) / sum;
            spread += p * sb[i * nk + j];
            expErr += p * (2 * u * Math.abs(s - m) + E);
          }
          const value = m + Math.log(sum);
          r.lse.value[li] = value;
          r.lse.bound[li] = spread + expErr + gamma(seen) + extra(i) + 2 * u * (Math.abs(m) + 2 * Math.abs(Math.log(sum)) + Math.abs(value));
        }
        for (let cc = 0; cc < dv; ++cc) {
          let o = 0, err = 0;
          for (let j = 0; j < nk; ++j) {
            const wv = w.value[i * nk + j], x = c.v[at(layout, b, g, j, cc, G, nk, dv)];
            o += wv * x;
            err += w.bound[i * nk + j] * Math.abs(x) + wv * gamma(nk + 2) * Math.abs(x);
          }
          const oi = at(layout, b, h, i, cc, H, nq, dv);
          r.out.value[oi] = o;
          r.out.bound[oi] = err;
        }
      }
    }
  return r;
}
