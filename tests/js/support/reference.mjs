// Float64 references for the package's ops, each with a bound on the float32 engine's error, so the tests
// assert |engine − reference| ≤ bound element by element. The bounds are derived, never tuned:
//
// u = 2⁻²⁴ is float32's unit roundoff, γ(n) = n·u / (1 − n·u).
// * A dot-product / matrix-product entry over k terms, in any summation order: |err| ≤ γ(k)·Σ|aᵢbᵢ|.
//   Inputs that already carry absolute errors da, db add Σ(daᵢ|bᵢ| + |aᵢ|dbᵢ + daᵢdbᵢ).
// * softmax row, z = (x − max)·μ with μ = 1/T: the engine rounds x − max and the product (2u) and μ itself
//   (u_μ = u, or 0 when μ = 1), so |Δzⱼ| ≤ (2u + u_μ)(|zⱼ| + μ(dxⱼ + dmax)) + μ·dxⱼ — a shift common to the
//   whole row cancels in softmax, so only each logit's own error dxⱼ enters directly. exp has relative
//   error ≤ E = 2u (within 1 ulp in both builds; the core's tests/native/exp_test.cpp enforces it), giving
//   ηⱼ = e^|Δzⱼ|·(1 + E) − 1. The sum is then off by Σⱼpⱼηⱼ + γ(n) relative, 1/sum and the product round
//   twice more (2u):
//       |p̃ᵢ − pᵢ| ≤ pᵢ·(r + r²) + 2⁻¹²⁶,   r = ηᵢ + Σⱼpⱼηⱼ + γ(n) + 2u + extra
//   where r² covers products of two of those relative errors and 2⁻¹²⁶ the terms below e^−87.34 that the
//   vector exp flushes to 0 (the sum is ≥ 1: its largest term is e⁰).
// * log-softmax zᵢ − log S: |err| ≤ |Δzᵢ| + Σⱼpⱼηⱼ + γ(n) + n·2⁻¹²⁶ + 2u·|log S| (log within 1 ulp) + u·|result|.
// * attention scores: raw = q·k over dk as above; s = raw·scale + mask rounds the product and the sum (u each);
//   the default scale 1/√dk is itself rounded twice (ρ = 2u; the reference uses the exact 1/√dk), a given
//   scale is the float32 the engine receives (ρ = 0): |Δs| ≤ scale·|Δraw| + (ρ + u)|raw·scale| + u|s|.
//   The streaming path (no score matrix) rescales a row's running sum and output once per later key tile
//   (64 keys) by exp(m_old − m_new) — one exp and one multiply, ≤ E + 2u per tile — and takes exponents
//   against running maxima, which adds 2u·(max − min of the row's visible scores). That is `extra` on every
//   row; it is also a valid (looser) bound for the materialized path, so the tests need not know which ran.
//   Output Σⱼp̃ⱼṽⱼ: Σⱼ(bound(pⱼ)·|vⱼ| + pⱼ·(γ(nk + 2)|vⱼ| + dvⱼ) + bound(pⱼ)·dvⱼ) (sum, then normalization).
// * multi-head: the projections are products over dModel; each head is attention with those input errors;
//   the output is a product over heads·dv with the concatenated heads' errors.
// The float64 reference's own rounding (~1e-16 relative) is far below every nonzero bound.

export const u = 2 ** -24;
export const gamma = (n) => (n * u) / (1 - n * u);
export const E = 2 * u;
const FLUSH = 2 ** -126;
const TILE = 64;

const zeros = (n) => new Float64Array(n);

/**
 * Row-wise softmax of x (values may be -Infinity) carrying absolute errors dx, multiplier mul = 1/T.
 * mulRounded: the engine's μ is a rounded 1/T (softmax with a temperature). extra(row): added relative error.
 */
export function softmaxRows(x, dx, cols, { mul = 1, mulRounded = false, log = false, extra = () => 0 } = {}) {
  const n = x.length, value = zeros(n), bound = zeros(n);
  const zRound = 2 * u + (mulRounded ? u : 0);
  for (let r = 0; r * cols < n; ++r) {
    const o = r * cols;
    let m = -Infinity, dmax = 0;
    for (let j = 0; j < cols; ++j) m = Math.max(m, x[o + j]);
    if (m === -Infinity) {
      value.fill(log ? -Infinity : 0, o, o + cols); // exact: all-masked row
      continue;
    }
    for (let j = 0; j < cols; ++j) if (x[o + j] !== -Infinity) dmax = Math.max(dmax, dx ? dx[o + j] : 0);
    let sum = 0;
    for (let j = 0; j < cols; ++j) sum += Math.exp((x[o + j] - m) * mul);
    const eta = zeros(cols), dz = zeros(cols);
    let meanEta = 0;
    for (let j = 0; j < cols; ++j) {
      if (x[o + j] === -Infinity) continue;
      const z = (x[o + j] - m) * mul, d = dx ? dx[o + j] : 0;
      dz[j] = zRound * (Math.abs(z) + mul * (d + dmax)) + mul * d;
      eta[j] = Math.exp(dz[j]) * (1 + E) - 1;
      // A term that stays below float64's range even raised by its error (logits ~1e30 under the max: −1e30
      // padding masks) adds nothing; its η may be infinite, and 0·∞ would make every bound NaN.
      if (Math.exp(z + dz[j]) > 0) meanEta += (Math.exp(z) / sum) * eta[j];
    }
    const sumRel = meanEta + gamma(cols) + extra(r);
    for (let j = 0; j < cols; ++j) {
      const at = o + j;
      if (x[at] === -Infinity) {
        value[at] = log ? -Infinity : 0; // exact in the engine
        continue;
      }
      const z = (x[at] - m) * mul;
      if (log) {
        const logSum = Math.log(sum);
        value[at] = z - logSum;
        bound[at] = dz[j] + sumRel + cols * FLUSH + 2 * u * logSum + u * Math.abs(value[at]);
      } else {
        const p = Math.exp(z) / sum;
        const rel = eta[j] + sumRel + 2 * u;
        value[at] = p;
        // (such a term is 0 in float32 too: its exponent is far below the exp's flush to zero)
        bound[at] = Math.exp(z + dz[j]) > 0 ? p * (rel + rel * rel) + FLUSH : FLUSH;
      }
    }
  }
  return { value, bound };
}

/** C[m×n] = A[m×k]·B[k×n] with errors dA, dB (null = exact float32 inputs). */
export function matmul(a, da, b, db, m, k, n) {
  const value = zeros(m * n), bound = zeros(m * n);
  for (let i = 0; i < m; ++i)
    for (let j = 0; j < n; ++j) {
      let s = 0, sa = 0, prop = 0;
      for (let p = 0; p < k; ++p) {
        const x = a[i * k + p], y = b[p * n + j];
        s += x * y;
        sa += Math.abs(x * y);
        if (da || db) {
          const ex = da ? da[i * k + p] : 0, ey = db ? db[p * n + j] : 0;
          prop += ex * Math.abs(y) + Math.abs(x) * ey + ex * ey;
        }
      }
      value[i * n + j] = s;
      bound[i * n + j] = gamma(k) * sa + prop;
    }
  return { value, bound };
}

/**
 * Attention reference. q/k/v with absolute errors dq/dk/dv (null when exact inputs). scale: undefined = the
 * default 1/√dk, else the float32 scale the engine receives. mask: Float32Array [nq×nk] or undefined.
 */
export function attentionRef({ q, k, v, dq = null, dkErr = null, dvErr = null, nq, nk, dk, dv, causal = false, scale, mask }) {
  const sc = scale === undefined ? 1 / Math.sqrt(dk) : scale;
  const rho = scale === undefined ? 2 * u : 0;
  const kt = zeros(dk * nk), dkt = dkErr ? zeros(dk * nk) : null;
  for (let j = 0; j < nk; ++j)
    for (let d = 0; d < dk; ++d) {
      kt[d * nk + j] = k[j * dk + d];
      if (dkt) dkt[d * nk + j] = dkErr[j * dk + d];
    }
  const raw = matmul(q, dq, kt, dkt, nq, dk, nk);
  const scores = { value: zeros(nq * nk), bound: zeros(nq * nk) };
  for (let i = 0; i < nq; ++i)
    for (let j = 0; j < nk; ++j) {
      const at = i * nk + j;
      const hidden = causal && j > i + nk - nq; // bottom-right aligned
      const add = mask ? mask[at] : 0;
      const s = hidden || add === -Infinity ? -Infinity : raw.value[at] * sc + add;
      scores.value[at] = s;
      scores.bound[at] = s === -Infinity ? 0 : raw.bound[at] * sc + (rho + u) * Math.abs(raw.value[at] * sc) + u * Math.abs(s);
    }
  const tiles = Math.ceil(nk / TILE);
  const extra = (row) => {
    let hi = -Infinity, lo = Infinity;
    for (let j = 0; j < nk; ++j) {
      const s = scores.value[row * nk + j];
      if (s !== -Infinity) (hi = Math.max(hi, s)), (lo = Math.min(lo, s));
    }
    return tiles * (E + 2 * u) + (hi === -Infinity ? 0 : 2 * u * (hi - lo));
  };
  const weights = softmaxRows(scores.value, scores.bound, nk, { extra });
  const out = { value: zeros(nq * dv), bound: zeros(nq * dv) };
  for (let i = 0; i < nq; ++i)
    for (let c = 0; c < dv; ++c) {
      let o = 0, err = 0;
      for (let j = 0; j < nk; ++j) {
        const w = weights.value[i * nk + j], wb = weights.bound[i * nk + j], x = v[j * dv + c];
        const ex = dvErr ? dvErr[j * dv + c] : 0;
        o += w * x;
        err += wb * Math.abs(x) + w * (gamma(nk + 2) * Math.abs(x) + ex) + wb * ex;
      }
      out.value[i * dv + c] = o;
      out.bound[i * dv + c] = err;
    }
  return { raw, scores, weights, out };
}

// Column block h (width w) of a row-major [rows × cols] array.
function block(src, rows, cols, h, w) {
  const out = zeros(rows * w);
  for (let r = 0; r < rows; ++r) for (let c = 0; c < w; ++c) out[r * w + c] = src[r * cols + h * w + c];
  return out;
}

/** Multi-head attention reference; query head h reads key/value head h / (heads / kvHeads). */
export function multiHeadRef({ x, n, dModel, heads, kvHeads = heads, dk, dv, wq, wk, wv, wo, causal = false, scale, mask }) {
  const q = matmul(x, null, wq, null, n, dModel, heads * dk);
  const k = matmul(x, null, wk, null, n, dModel, kvHeads * dk);
  const v = matmul(x, null, wv, null, n, dModel, kvHeads * dv);
  const concat = { value: zeros(n * heads * dv), bound: zeros(n * heads * dv) };
  const perHead = [];
  for (let h = 0; h < heads; ++h) {
    const g = Math.floor(h / (heads / kvHeads));
    const head = attentionRef({
      q: block(q.value, n, heads * dk, h, dk), dq: block(q.bound, n, heads * dk, h, dk),
      k: block(k.value, n, kvHeads * dk, g, dk), dkErr: block(k.bound, n, kvHeads * dk, g, dk),
      v: block(v.value, n, kvHeads * dv, g, dv), dvErr: block(v.bound, n, kvHeads * dv, g, dv),
      nq: n, nk: n, dk, dv, causal, scale, mask,
    });
    for (let r = 0; r < n; ++r)
      for (let c = 0; c < dv; ++c) {
        concat.value[r * heads * dv + h * dv + c] = head.out.value[r * dv + c];
        concat.bound[r * heads * dv + h * dv + c] = head.out.bound[r * dv + c];
      }
    perHead.push({
      q: { value: block(q.value, n, heads * dk, h, dk), bound: block(q.bound, n, heads * dk, h, dk) },
      k: { value: block(k.value, n, kvHeads * dk, g, dk), bound: block(k.bound, n, kvHeads * dk, g, dk) },
      v: { value: block(v.value, n, kvHeads * dv, g, dv), bound: block(v.bound, n, kvHeads * dv, g, dv) },
      scores: head.scores, weights: head.weights, output: head.out,
    });
  }
  const out = matmul(concat.value, concat.bound, wo, null, n, heads * dv, dModel);
  return { out, q, k, v, concat, heads: perHead };
}

/**
 * Throws (with the worst element) unless every |got − ref| ≤ bound; ±Infinity must match exactly.
 * Returns the largest error / bound ratio seen, for reporting how tight the bounds are.
 */
export function assertWithin(got, ref, label) {
  if (got.length !== ref.value.length) throw new Error(`${label}: length ${got.length}, expected ${ref.value.length}`);
  let worst = 0;
  for (let i = 0; i < got.length; ++i) {
    const want = ref.value[i];
    if (!Number.isFinite(want) || !Number.isFinite(got[i])) {
      if (got[i] !== want) throw new Error(`${label}[${i}] = ${got[i]}, expected exactly ${want}`);
      continue;
    }
    const err = Math.abs(got[i] - want);
    if (err > ref.bound[i])
      throw new Error(`${label}[${i}] = ${got[i]}, reference ${want}: error ${err.toExponential(3)} exceeds the bound ${ref.bound[i].toExponential(3)}`);
    if (err > 0) worst = Math.max(worst, err / ref.bound[i]);
  }
  return worst;
}
