// Bench inputs: a fixed-seed PRNG, raw float32 files shared by every worker, and float64 references.
import fs from 'node:fs';

/** sfc32: small, fast, good enough for test data; seeded deterministically from a string. */
export function prng(seedText) {
  let h = 0x811c9dc5;
  for (const ch of seedText) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  let a = h, b = 0x9e3779b9, c = 0x243f6a88, d = 0xb7e15162;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 16; ++i) next();
  return next;
}

/** Float32Array of `count` normal(0, sigma²) values (Box–Muller), deterministic for `seedText`. */
export function normals(seedText, count, sigma = 1) {
  const rnd = prng(seedText);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const u = 1 - rnd(), w = rnd();
    const r = sigma * Math.sqrt(-2 * Math.log(u));
    out[i] = r * Math.cos(2 * Math.PI * w);
    if (i + 1 < count) out[i + 1] = r * Math.sin(2 * Math.PI * w);
  }
  return out;
}

export function writeF32(file, arr) {
  fs.writeFileSync(file, new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength));
}

/** Reads a raw little-endian float32 file into a fresh (8-byte aligned) Float32Array. */
export function readF32(file) {
  const buf = fs.readFileSync(file);
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

export function readF64(file) {
  const buf = fs.readFileSync(file);
  const out = new Float64Array(buf.byteLength / 8);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

/**
 * Rows checked against the float64 reference: every row when there are at most `full` rows, otherwise
 * `sample` rows spread evenly from the first to the last (the first and last rows of a causal attention are
 * its extremes: one visible key, all keys).
 */
export function referenceRows(rows, full = 1024, sample = 256) {
  if (rows <= full) return Int32Array.from({ length: rows }, (_, i) => i);
  const out = new Int32Array(sample);
  for (let s = 0; s < sample; ++s) out[s] = Math.round((s * (rows - 1)) / (sample - 1));
  return out;
}

/** float64 attention for the given query rows: out[r] = softmax(scale·q_r·Kᵀ masked) · V, row-major [rows.length × dv]. */
export function attentionReference(q, k, v, { nq, nk, dk, dv, causal, scale }, rows) {
  const out = new Float64Array(rows.length * dv);
  const s = new Float64Array(nk);
  for (let ri = 0; ri < rows.length; ++ri) {
    const i = rows[ri];
    const limit = causal ? Math.min(nk - 1, i + nk - nq) : nk - 1;
    let max = -Infinity;
    for (let j = 0; j <= limit; ++j) {
      let dot = 0;
      for (let t = 0; t < dk; ++t) dot += q[i * dk + t] * k[j * dk + t];
      s[j] = dot * scale;
      if (s[j] > max) max = s[j];
    }
    let sum = 0;
    for (let j = 0; j <= limit; ++j) { s[j] = Math.exp(s[j] - max); sum += s[j]; }
    const o = ri * dv;
    for (let j = 0; j <= limit; ++j) {
      const p = s[j] / sum;
      for (let t = 0; t < dv; ++t) out[o + t] += p * v[j * dv + t];
    }
  }
  return out;
}

/** float64 row softmax of the given rows of x [· × cols]. */
export function softmaxReference(x, cols, rows) {
  const out = new Float64Array(rows.length * cols);
  for (let ri = 0; ri < rows.length; ++ri) {
    const base = rows[ri] * cols;
    let max = -Infinity;
    for (let j = 0; j < cols; ++j) if (x[base + j] > max) max = x[base + j];
    let sum = 0;
    for (let j = 0; j < cols; ++j) { const e = Math.exp(x[base + j] - max); out[ri * cols + j] = e; sum += e; }
    for (let j = 0; j < cols; ++j) out[ri * cols + j] /= sum;
  }
  return out;
}

/** Max |out − ref| over the reference rows; NaN anywhere in those rows counts as Infinity. */
export function maxAbsError(out, ref, rows, width) {
  if (!out || out.length < (rows[rows.length - 1] + 1) * width) return Infinity;
  let err = 0;
  for (let ri = 0; ri < rows.length; ++ri) {
    const o = rows[ri] * width, r = ri * width;
    for (let t = 0; t < width; ++t) {
      const e = Math.abs(out[o + t] - ref[r + t]);
      if (!(e <= err)) err = Number.isNaN(e) ? Infinity : e;
    }
  }
  return err;
}

/** mulberry32: a tiny seeded generator of floats in [0, 1) (the benches' own data: batches, tensors). */
export function mulberry(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
