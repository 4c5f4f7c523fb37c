// The whole-operator cells of the bench: a decode step against a KV cache, a batched causal prefill, and batch ×
// heads in one call against the same heads one call each. Inputs are 'bhsd' float32 files shared by the workers;
// references are float64, row by row.
import path from 'node:path';
import { normals, writeF32 } from './data.mjs';

export const OPERATOR = {
  // one query token per head, 8 query heads over 2 KV heads, 4096 cached keys (and the new token's)
  decode: { heads: 8, kvHeads: 2, d: 64, past: 4096 },
  prefill: { batch: 4, heads: 8, n: 512, d: 64, causal: true },
  batchHeads: { batch: 2, heads: 4, n: 1024, d: 64 },
};

/**
 * float64 attention rows of 'bhsd' tensors: row r of the output [batch, heads, nq, d] is (b, h, i); query head h
 * reads K/V head ⌊h·kvHeads/heads⌋; causal is bottom-right (query i sees keys j ≤ i + nk − nq).
 */
export function headRowsReference(q, k, v, { heads, kvHeads = heads, nq, nk, d, causal = false }, rows) {
  const out = new Float64Array(rows.length * d);
  const s = new Float64Array(nk);
  const scale = 1 / Math.sqrt(d);
  rows.forEach((row, ri) => {
    const i = row % nq, h = Math.floor(row / nq) % heads, b = Math.floor(row / (nq * heads));
    const g = Math.floor((h * kvHeads) / heads);
    const qo = row * d, ko = (b * kvHeads + g) * nk * d;
    const last = causal ? Math.min(nk - 1, i + nk - nq) : nk - 1;
    let max = -Infinity;
    for (let j = 0; j <= last; ++j) {
      let dot = 0;
      for (let t = 0; t < d; ++t) dot += q[qo + t] * k[ko + j * d + t];
      s[j] = dot * scale;
      max = Math.max(max, s[j]);
    }
    let sum = 0;
    for (let j = 0; j <= last; ++j) sum += (s[j] = Math.exp(s[j] - max));
    for (let j = 0; j <= last; ++j) for (let t = 0; t < d; ++t) out[ri * d + t] += (s[j] / sum) * v[ko + j * d + t];
  });
  return out;
}

/** Writes each cell's inputs under `dir`; returns { cell: { files, data, shape } }. */
export function operatorInputs(dir) {
  const write = (name, arr) => {
    const file = path.join(dir, `op-${name}.f32`);
    writeF32(file, arr);
    return file;
  };
  const { decode: dc, prefill: pf, batchHeads: bh } = OPERATOR;
  const decode = {
    shape: dc,
    data: {
      pastK: normals('op/decode/pastK', dc.kvHeads * dc.past * dc.d), pastV: normals('op/decode/pastV', dc.kvHeads * dc.past * dc.d),
      q: normals('op/decode/q', dc.heads * dc.d), k: normals('op/decode/k', dc.kvHeads * dc.d), v: normals('op/decode/v', dc.kvHeads * dc.d),
    },
  };
  const prefill = {
    shape: pf,
    data: Object.fromEntries(['q', 'k', 'v'].map((t) => [t, normals(`op/prefill/${t}`, pf.batch * pf.heads * pf.n * pf.d)])),
  };
  const batchHeads = {
    shape: bh,
    data: Object.fromEntries(['q', 'k', 'v'].map((t) => [t, normals(`op/batchHeads/${t}`, bh.batch * bh.heads * bh.n * bh.d)])),
  };
  for (const [name, cell] of Object.entries({ decode, prefill, batchHeads }))
    cell.files = Object.fromEntries(Object.entries(cell.data).map(([t, arr]) => [t, write(`${name}-${t}`, arr)]));
  return { decode, prefill, batchHeads };
}

/** The decode step's reference: K/V = past then the new token, every query head's one row. */
export function decodeReference({ data, shape }) {
  const { heads, kvHeads, d, past } = shape, nk = past + 1;
  const k = new Float32Array(kvHeads * nk * d), v = new Float32Array(kvHeads * nk * d);
  for (let g = 0; g < kvHeads; ++g) {
    k.set(data.pastK.subarray(g * past * d, (g + 1) * past * d), g * nk * d);
    k.set(data.k.subarray(g * d, (g + 1) * d), (g * nk + past) * d);
    v.set(data.pastV.subarray(g * past * d, (g + 1) * past * d), g * nk * d);
    v.set(data.v.subarray(g * d, (g + 1) * d), (g * nk + past) * d);
  }
  const rows = Int32Array.from({ length: heads }, (_, i) => i);
  return { rows, ref: headRowsReference(data.q, k, v, { heads, kvHeads, nq: 1, nk, d, causal: true }, rows) };
}
