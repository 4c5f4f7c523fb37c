// The plain-JavaScript baseline: what a careful JS programmer would write without wasm. The speed lab's worker
// (bench-worker.ts) times it in the browser and `npm run bench` in Node (bench/adapters/plainjs.mjs): one file, so
// both time the same code. Plain JavaScript with its types beside it (plainjs.d.mts), so Node runs it as it is.
// Float32Array storage, float64 arithmetic (JS numbers), register blocks of 4 queries × 4 keys (Q·Kᵀ) and
// 4 rows × 4 value columns (P·V) so every load feeds 2 multiply-adds, key tiles of 64 with online softmax (no n×n matrix), and causal blocks stop
// at the diagonal instead of computing masked scores.

const TILE = 64;

/** Scaled dot-product attention into out [nq × dv] (a new Float32Array unless one is passed); returns out. */
export function attention(q, k, v, nq, nk, dk, dv, causal, scale, out = new Float32Array(nq * dv)) {
  const s = new Float64Array(4 * TILE);          // scores, then probabilities, of the 4 rows × tile
  const acc = new Float64Array(4 * dv);          // un-normalized outputs of the 4 rows
  const m = new Float64Array(4), l = new Float64Array(4);
  const shift = nk - nq;                          // bottom-right aligned causal mask: key j visible to row i iff j ≤ i + shift
  for (let i0 = 0; i0 < nq; i0 += 4) {
    const rows = Math.min(4, nq - i0);
    // Rows past the end reuse the last row's query (their results are not stored).
    const q0 = i0 * dk, q1 = Math.min(i0 + 1, nq - 1) * dk, q2 = Math.min(i0 + 2, nq - 1) * dk, q3 = Math.min(i0 + 3, nq - 1) * dk;
    const jEnd = causal ? Math.min(nk, i0 + rows + shift) : nk;
    m.fill(-Infinity); l.fill(0); acc.fill(0);
    for (let j0 = 0; j0 < jEnd; j0 += TILE) {
      const width = Math.min(TILE, jEnd - j0);
      // S = scale · Q_block · K_tileᵀ, 4 queries × 4 keys per step (8 loads feed 16 multiply-adds).
      let jj = 0;
      for (; jj + 4 <= width; jj += 4) {
        const ka = (j0 + jj) * dk, kb = ka + dk, kc = kb + dk, kd = kc + dk;
        let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        let s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
        for (let t = 0; t < dk; ++t) {
          const x0 = q[q0 + t], x1 = q[q1 + t], x2 = q[q2 + t], x3 = q[q3 + t];
          const y0 = k[ka + t], y1 = k[kb + t], y2 = k[kc + t], y3 = k[kd + t];
          s00 += x0 * y0; s01 += x0 * y1; s02 += x0 * y2; s03 += x0 * y3;
          s10 += x1 * y0; s11 += x1 * y1; s12 += x1 * y2; s13 += x1 * y3;
          s20 += x2 * y0; s21 += x2 * y1; s22 += x2 * y2; s23 += x2 * y3;
          s30 += x3 * y0; s31 += x3 * y1; s32 += x3 * y2; s33 += x3 * y3;
        }
        s[jj] = s00 * scale; s[jj + 1] = s01 * scale; s[jj + 2] = s02 * scale; s[jj + 3] = s03 * scale;
        s[TILE + jj] = s10 * scale; s[TILE + jj + 1] = s11 * scale; s[TILE + jj + 2] = s12 * scale; s[TILE + jj + 3] = s13 * scale;
        s[2 * TILE + jj] = s20 * scale; s[2 * TILE + jj + 1] = s21 * scale; s[2 * TILE + jj + 2] = s22 * scale; s[2 * TILE + jj + 3] = s23 * scale;
        s[3 * TILE + jj] = s30 * scale; s[3 * TILE + jj + 1] = s31 * scale; s[3 * TILE + jj + 2] = s32 * scale; s[3 * TILE + jj + 3] = s33 * scale;
      }
      for (; jj < width; ++jj) {
        const kb = (j0 + jj) * dk;
        let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (let t = 0; t < dk; ++t) {
          const kv = k[kb + t];
          s0 += q[q0 + t] * kv; s1 += q[q1 + t] * kv; s2 += q[q2 + t] * kv; s3 += q[q3 + t] * kv;
        }
        s[jj] = s0 * scale; s[TILE + jj] = s1 * scale; s[2 * TILE + jj] = s2 * scale; s[3 * TILE + jj] = s3 * scale;
      }
      // Causal: only the tile that crosses the diagonal has masked entries.
      if (causal && j0 + width - 1 > i0 + shift) {
        for (let r = 0; r < 4; ++r) {
          const limit = i0 + r + shift;
          for (let jj = Math.max(0, limit + 1 - j0); jj < width; ++jj) s[r * TILE + jj] = -Infinity;
        }
      }
      // Online softmax: new running max, rescale what was accumulated, exponentiate the tile.
      for (let r = 0; r < 4; ++r) {
        const sb = r * TILE;
        let tmax = -Infinity;
        for (let jj = 0; jj < width; ++jj) if (s[sb + jj] > tmax) tmax = s[sb + jj];
        if (tmax === -Infinity) { for (let jj = 0; jj < width; ++jj) s[sb + jj] = 0; continue; }
        const mNew = Math.max(m[r], tmax);
        if (mNew !== m[r]) {
          const corr = Math.exp(m[r] - mNew);
          l[r] *= corr;
          const ab = r * dv;
          for (let t = 0; t < dv; ++t) acc[ab + t] *= corr;
          m[r] = mNew;
        }
        let sum = 0;
        for (let jj = 0; jj < width; ++jj) { const p = Math.exp(s[sb + jj] - mNew); s[sb + jj] = p; sum += p; }
        l[r] += sum;
      }
      // acc += P · V_tile, 4 rows × 4 value columns held in locals across the tile (8 loads feed 16 multiply-adds).
      let t = 0;
      for (; t + 4 <= dv; t += 4) {
        let a00 = acc[t], a01 = acc[t + 1], a02 = acc[t + 2], a03 = acc[t + 3];
        let a10 = acc[dv + t], a11 = acc[dv + t + 1], a12 = acc[dv + t + 2], a13 = acc[dv + t + 3];
        let a20 = acc[2 * dv + t], a21 = acc[2 * dv + t + 1], a22 = acc[2 * dv + t + 2], a23 = acc[2 * dv + t + 3];
        let a30 = acc[3 * dv + t], a31 = acc[3 * dv + t + 1], a32 = acc[3 * dv + t + 2], a33 = acc[3 * dv + t + 3];
        for (let jj = 0, vb = j0 * dv + t; jj < width; ++jj, vb += dv) {
          const p0 = s[jj], p1 = s[TILE + jj], p2 = s[2 * TILE + jj], p3 = s[3 * TILE + jj];
          const v0 = v[vb], v1 = v[vb + 1], v2 = v[vb + 2], v3 = v[vb + 3];
          a00 += p0 * v0; a01 += p0 * v1; a02 += p0 * v2; a03 += p0 * v3;
          a10 += p1 * v0; a11 += p1 * v1; a12 += p1 * v2; a13 += p1 * v3;
          a20 += p2 * v0; a21 += p2 * v1; a22 += p2 * v2; a23 += p2 * v3;
          a30 += p3 * v0; a31 += p3 * v1; a32 += p3 * v2; a33 += p3 * v3;
        }
        acc[t] = a00; acc[t + 1] = a01; acc[t + 2] = a02; acc[t + 3] = a03;
        acc[dv + t] = a10; acc[dv + t + 1] = a11; acc[dv + t + 2] = a12; acc[dv + t + 3] = a13;
        acc[2 * dv + t] = a20; acc[2 * dv + t + 1] = a21; acc[2 * dv + t + 2] = a22; acc[2 * dv + t + 3] = a23;
        acc[3 * dv + t] = a30; acc[3 * dv + t + 1] = a31; acc[3 * dv + t + 2] = a32; acc[3 * dv + t + 3] = a33;
      }
      for (; t < dv; ++t) {
        let a0 = acc[t], a1 = acc[dv + t], a2 = acc[2 * dv + t], a3 = acc[3 * dv + t];
        for (let jj = 0; jj < width; ++jj) {
          const vv = v[(j0 + jj) * dv + t];
          a0 += s[jj] * vv; a1 += s[TILE + jj] * vv; a2 += s[2 * TILE + jj] * vv; a3 += s[3 * TILE + jj] * vv;
        }
        acc[t] = a0; acc[dv + t] = a1; acc[2 * dv + t] = a2; acc[3 * dv + t] = a3;
      }
    }
    for (let r = 0; r < rows; ++r) {
      const inv = l[r] > 0 ? 1 / l[r] : 0;
      const ob = (i0 + r) * dv, ab = r * dv;
      for (let t = 0; t < dv; ++t) out[ob + t] = acc[ab + t] * inv;
    }
  }
  return out;
}

/** Row softmax of x [rows × cols] into out (a new Float32Array unless one is passed); returns out.
 *  Three passes: max, exp + sum, scale. */
export function softmax(x, cols, out = new Float32Array(x.length)) {
  for (let base = 0; base < x.length; base += cols) {
    const end = base + cols;
    let max = -Infinity;
    for (let j = base; j < end; ++j) if (x[j] > max) max = x[j];
    if (max === -Infinity) { out.fill(0, base, end); continue; } // all −inf: a row of zeros
    let sum = 0;
    for (let j = base; j < end; ++j) { const e = Math.exp(x[j] - max); out[j] = e; sum += e; }
    const inv = 1 / sum;
    for (let j = base; j < end; ++j) out[j] *= inv;
  }
  return out;
}
