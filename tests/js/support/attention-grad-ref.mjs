// Float64 reference of the whole attention operator's gradients (lab.attentionBackward), in bounded arithmetic: each
// value comes with a first-order bound on how far a float32 evaluation of the same formula, in any summation order,
// can be from it (tests/native/bounded.h and attention_full_grad_reference.h derive the same, term by term):
//   s0 = Σ (qᵢ·scale)·kⱼ;  s1 = c·tanh(s0/c), t = s1/c;  s2 = s1 − slope·|i' − j|;  s = s2 + mask
//   P = exp(s − lse),  dP = dOᵢ·vⱼ,  D = dOᵢ·oᵢ,  dS = P·(dP − D)·(1 − t²)   (1 without softcap)
//   dq = Σⱼ (scale·dS)·kⱼ,  dk = Σ_{heads of its group, i} (scale·dS)·qᵢ,  dv = Σ_{heads, i} P·dOᵢ
// Inputs (q, k, v, output, lse, dOutput) are the float32 arrays given to the engine, exact as inputs.
import { at, fullMaskShape, sees } from './attention-full-ref.mjs';
import { gamma, u } from './reference.mjs';

const tiny = 2 ** -149, flush = 2 ** -126, expRel = 2 * u, tanhRel = 4 * u;

const B = (v, e = 0) => ({ v, e: Number.isNaN(e) ? Infinity : e });
const add = (a, b) => B(a.v + b.v, a.e + b.e + u * Math.abs(a.v + b.v) + tiny);
const sub = (a, b) => B(a.v - b.v, a.e + b.e + u * Math.abs(a.v - b.v) + tiny);
const mul = (a, b) => B(a.v * b.v, Math.abs(a.v) * b.e + Math.abs(b.v) * a.e + a.e * b.e + u * Math.abs(a.v * b.v) + tiny);
const div = (a, b) => {
  const v = a.v / b.v, lo = Math.abs(b.v) - b.e;
  return B(v, lo > 0 ? (a.e + Math.abs(v) * b.e) / lo + u * Math.abs(v) + tiny : Infinity);
};
const exp = (a) => {
  const v = Math.exp(a.v), up = Math.expm1(a.e);
  // e^(v + e) − e^v, written so that a term far below range (v ~ −1e9, e ~ 60: −1e9 padding masks) gives 0, not 0·∞.
  const grow = Number.isFinite(up) ? v * up : Math.exp(a.v + a.e) - v;
  return B(v, grow + Math.exp(a.v + a.e) * expRel + flush);
};
// Σ a[i]·b[i] in any order.
function dot(a, b) {
  let v = 0, e = 0, abs = 0;
  for (let i = 0; i < a.length; ++i) {
    v += a[i].v * b[i].v;
    abs += Math.abs(a[i].v * b[i].v);
    e += Math.abs(a[i].v) * b[i].e + Math.abs(b[i].v) * a[i].e + a[i].e * b[i].e;
  }
  return B(v, e + gamma(a.length + 1) * (abs + e) + 2 * a.length * tiny);
}

/**
 * c: lab.attentionBackward's options (q, k, v, output, lse, dOutput, batch, heads, kvHeads, nq, nk, dk, dv, layout,
 * causal, window, scale — the float32 the engine uses —, softcap, mask, maskShape, keyLengths, alibiSlopes).
 * Returns { dq, dk, dv }, each { value, bound } shaped as q, k, v.
 */
export function attentionGradRef(c0) {
  const c = { batch: 1, heads: 1, layout: 'bhsd', causal: false, ...c0 };
  c.kvHeads ??= c.heads;
  if (c.causal === true) c.causal = 'bottom-right';
  c.maskShape4 = fullMaskShape(c);
  const { batch, heads: H, kvHeads: G, nq, nk, dk, dv, layout } = c;
  const scale = B(c.scale ?? Math.fround(1 / Math.sqrt(dk)));
  const m = c.maskShape4;
  const maskAt = (b, h, i, j) =>
    (((m[0] === 1 ? 0 : b) * m[1] + (m[1] === 1 ? 0 : h)) * m[2] + (m[2] === 1 ? 0 : i)) * m[3] + (m[3] === 1 ? 0 : j);
  const out = (n) => ({ value: new Float64Array(n), bound: new Float64Array(n) });
  const r = { dq: out(c.q.length), dk: out(c.k.length), dv: out(c.v.length) };
  const put = (t, idx, x) => ((t.value[idx] = x.v), (t.bound[idx] = x.e));
  const group = H / G;
  for (let b = 0; b < batch; ++b)
    for (let g = 0; g < G; ++g) {
      const P = new Map(), dS = new Map(); // key (hh·nq + i)·nk + j → B, visible entries only
      for (let hh = 0; hh < group; ++hh) {
        const h = g * group + hh;
        for (let i = 0; i < nq; ++i) {
          const lse = B(c.lse[(b * H + h) * nq + i]);
          if (lse.v === -Infinity) continue;
          const qs = [], dOi = [], oi = [];
          for (let d = 0; d < dk; ++d) qs.push(mul(B(c.q[at(layout, b, h, i, d, H, nq, dk)]), scale));
          for (let d = 0; d < dv; ++d) dOi.push(B(c.dOutput[at(layout, b, h, i, d, H, nq, dv)])), oi.push(B(c.output[at(layout, b, h, i, d, H, nq, dv)]));
          const D = dot(dOi, oi);
          for (let j = 0; j < nk; ++j) {
            if (!sees(c, b, i, j)) continue;
            let addend = 0;
            if (c.mask instanceof Uint8Array) {
              if (c.mask[maskAt(b, h, i, j)] === 0) continue;
            } else if (c.mask) {
              addend = c.mask[maskAt(b, h, i, j)];
              if (addend === -Infinity) continue;
            }
            const kj = [], vj = [];
            for (let d = 0; d < dk; ++d) kj.push(B(c.k[at(layout, b, g, j, d, G, nk, dk)]));
            for (let d = 0; d < dv; ++d) vj.push(B(c.v[at(layout, b, g, j, d, G, nk, dv)]));
            let s = dot(qs, kj), factor = null;
            if (c.softcap > 0) {
              const cap = Math.fround(c.softcap), s1 = cap * Math.tanh(s.v / cap);
              s = B(s1, s.e + 2 * u * Math.abs(s.v) + (tanhRel + u) * Math.abs(s1) + tiny);
              const t = div(s, B(cap));
              factor = sub(B(1), mul(t, t));
            }
            if (c.alibiSlopes) {
              const len = c.keyLengths ? c.keyLengths[b] : nk;
              const diag = c.causal === 'top-left' ? i : i + len - nq;
              const bias = c.alibiSlopes[h] * Math.abs(diag - j);
              s = sub(s, B(bias, u * Math.abs(bias)));
            }
            if (c.mask && !(c.mask instanceof Uint8Array)) s = add(s, B(addend));
            const p = exp(sub(s, lse));
            const ds = mul(p, sub(dot(dOi, vj), D));
            const key = (hh * nq + i) * nk + j;
            P.set(key, p);
            dS.set(key, factor ? mul(ds, factor) : ds);
          }
        }
      }
      const zero = B(0);
      for (let hh = 0; hh < group; ++hh) {
        const h = g * group + hh;
        for (let i = 0; i < nq; ++i)
          for (let d = 0; d < dk; ++d) {
            const x = [], y = [];
            for (let j = 0; j < nk; ++j) x.push(mul(scale, dS.get((hh * nq + i) * nk + j) ?? zero)), y.push(B(c.k[at(layout, b, g, j, d, G, nk, dk)]));
            put(r.dq, at(layout, b, h, i, d, H, nq, dk), dot(x, y));
          }
      }
      for (let j = 0; j < nk; ++j) {
        for (let d = 0; d < dk; ++d) {
          const x = [], y = [];
          for (let hh = 0; hh < group; ++hh)
            for (let i = 0; i < nq; ++i)
              x.push(mul(scale, dS.get((hh * nq + i) * nk + j) ?? zero)), y.push(B(c.q[at(layout, b, g * group + hh, i, d, H, nq, dk)]));
          put(r.dk, at(layout, b, g, j, d, G, nk, dk), dot(x, y));
        }
        for (let d = 0; d < dv; ++d) {
          const x = [], y = [];
          for (let hh = 0; hh < group; ++hh)
            for (let i = 0; i < nq; ++i) x.push(P.get((hh * nq + i) * nk + j) ?? zero), y.push(B(c.dOutput[at(layout, b, g * group + hh, i, d, H, nq, dv)]));
          put(r.dv, at(layout, b, g, j, d, G, nk, dv), dot(x, y));
        }
      }
    }
  return r;
}
