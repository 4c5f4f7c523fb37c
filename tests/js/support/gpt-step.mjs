// The bound two runs of one GPT training step must meet when they sum the same gradients in different orders (on
// one thread, on workers, by parameter slices).
import assert from 'node:assert/strict';

/** One float32 ulp of x. */
export const ulp = (x) => 2 ** (Math.floor(Math.log2(Math.abs(x))) - 23);

/**
 * After one step with β₁ = β₂ = 0 and eps = 1 (the update is lr·g/(|g| + 1), which shows the gradient itself), the
 * weights `wa` and `wb` of two runs from `w0` moved by the same amounts within the bound of a reordered float32
 * sum. Each float32 gradient is within 2⁻¹⁴·(max|g| + |g|) of the exact one (tests/native/gpt_test.cpp, against
 * finite differences), so the two within 2⁻¹³ of that; x ↦ lr·x/(|x| + 1) has slope ≤ lr, and the weights after the
 * step are each rounded once more (an ulp of w between the runs).
 */
export function assertSameFirstStep(w0, wa, wb) {
  for (const key of Object.keys(w0)) {
    const da = wa[key].map((w, i) => w - w0[key][i]), db = wb[key].map((w, i) => w - w0[key][i]);
    const scale = da.reduce((m, d) => Math.max(m, Math.abs(d)), 0);
    for (let i = 0; i < da.length; ++i) {
      const tol = 2 ** -13 * (scale + Math.abs(da[i])) + 2 * ulp(wa[key][i] || 1e-30);
      assert.ok(Math.abs(db[i] - da[i]) <= tol, `${key}[${i}]: moved ${db[i]} vs ${da[i]} (tolerance ${tol})`);
    }
  }
}
