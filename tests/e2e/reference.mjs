// Float64 reference for the e2e checks: the page's own X and W tables go in, weights and outputs come out,
// with a bound on how far a float32 computation may stray from them.

export const U = 2 ** -24; // unit roundoff of float32

/** C = A·B for plain arrays of rows. */
export function matmul(A, B) {
  const n = A.length, m = B.length, p = B[0]?.length ?? 0;
  return A.map((row) => Array.from({ length: p }, (_, j) => {
    let s = 0;
    for (let t = 0; t < m; t++) s += row[t] * B[t][j];
    return s;
  }));
}

const abs = (M) => M.map((r) => r.map(Math.abs));
const transpose = (M) => M[0].map((_, j) => M.map((r) => r[j]));

/**
 * Single-head attention in float64: weights, output, and per-row bounds on the float32 error of the logits.
 *
 * Error model (standard dot-product bound, Higham §3.1): a float32 dot product of length d is off by at most
 * γ_d·Σ|aᵢbᵢ| with γ_d = d·u/(1−d·u). So |δQ| ≤ γ_dm·|X||W_Q| (same for K, V); a score sᵢⱼ = Σ_t QᵢₜKⱼₜ then
 * carries |δQ||K|ᵀ + |Q||δK|ᵀ + γ_dk·|Q||K|ᵀ, times the scale (one more rounding). For softmax, a logit
 * perturbation δ moves weight wⱼ by at most wⱼ·(|δⱼ| + Σₗ wₗ|δₗ|) ≤ 2·wⱼ·max|δ|, and computing exp, the row sum
 * (n terms) and the division adds a relative (n + 8)·u, allowing a few ulps for the engine's exp polynomial.
 */
export function attentionReference({ X, Wq, Wk, Wv, scale, causal }) {
  const n = X.length, dm = X[0].length, dk = Wq[0].length;
  const g = (d) => (d * U) / (1 - d * U);
  const Q = matmul(X, Wq), K = matmul(X, Wk), V = matmul(X, Wv);
  const dQ = matmul(abs(X), abs(Wq)).map((r) => r.map((v) => v * g(dm)));
  const dK = matmul(abs(X), abs(Wk)).map((r) => r.map((v) => v * g(dm)));
  const raw = matmul(Q, transpose(K));
  const absQK = matmul(abs(Q), transpose(abs(K)));
  const e1 = matmul(dQ, transpose(abs(K)));
  const e2 = matmul(abs(Q), transpose(dK));
  const weights = [], rowErr = [];
  for (let i = 0; i < n; i++) {
    const logits = raw[i].map((s, j) => (causal && j > i ? -Infinity : s * scale));
    let maxErr = 0;
    for (let j = 0; j < n; j++) {
      if (causal && j > i) continue;
      const err = Math.abs(scale) * (e1[i][j] + e2[i][j] + g(dk) * absQK[i][j]) + U * Math.abs(raw[i][j] * scale);
      maxErr = Math.max(maxErr, err);
    }
    const m = Math.max(...logits);
    const ex = logits.map((s) => (s === -Infinity ? 0 : Math.exp(s - m)));
    const sum = ex.reduce((a, b) => a + b, 0);
    weights.push(ex.map((e) => e / sum));
    rowErr.push(maxErr);
  }
  const output = matmul(weights, V);
  return { Q, K, V, raw, weights, output, rowErr };
}

/** Allowed |float32 − float64| for weight (i, j); `safety` absorbs what the bound leaves out (exp polynomial). */
export function weightTolerance(ref, i, j, n, safety = 2) {
  const w = ref.weights[i][j];
  return safety * (w * (2 * ref.rowErr[i] + (n + 8) * U)) + 1e-30;
}

/** Allowed |Σⱼ wᵢⱼ − 1| for a row of n float32 weights: rounding of the n-term sum and of each division. */
export function rowSumTolerance(n) {
  return (2 * n + 16) * U;
}

/** Allowed error of output (i, k) = Σⱼ wᵢⱼVⱼₖ given the weight tolerances, the error of V and the n-term sum. */
export function outputTolerance(ref, X, Wv, i, k, safety = 2) {
  const n = ref.weights.length, dm = X[0].length;
  const g = (d) => (d * U) / (1 - d * U);
  let t = 0;
  for (let j = 0; j < n; j++) {
    let absV = 0;
    for (let s = 0; s < dm; s++) absV += Math.abs(X[j][s] * Wv[s][k]);
    const v = Math.abs(ref.V[j][k]);
    t += weightTolerance(ref, i, j, n, 1) * v + ref.weights[i][j] * g(dm) * absV + g(n) * ref.weights[i][j] * v;
  }
  return safety * t + 1e-30;
}
