// attnlab against onnxruntime-web's ONNX `Attention` (opset 23, and 24 for nonpad_kv_seqlen) on every option
// combination ORT 1.30's wasm build runs: multi-head, GQA with 3-D (packed 'bshd') inputs, is_causal (top-left
// without a cache), softcap, boolean and additive masks, past/present keys and values (a decode step through
// kvCache, causal bottom-right over the cache), and per-item key lengths. The models are encoded by hand
// (bench/lib/onnx.mjs). Both compute in float32 by different algorithms: agreement to 2e-6·(1 + |x|) checks the
// semantics (a wrong alignment or mask is off by ~0.1); accuracy is checked against float64 elsewhere.
// (ORT 1.30's CPU kernel refuses masks broadcast over queries, [batch, 1, 1, nk], and masks shorter than nk.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { DataType, model, node, valueInfo } from '../../bench/lib/onnx.mjs';
import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';

const ort = await import('onnxruntime-web');
ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.wasm.wasmPaths = new URL('../../node_modules/onnxruntime-web/dist/', import.meta.url).pathname;
ort.env.logLevel = 'error';
const labs = await loadLabs();
const F = DataType.FLOAT;

/** Runs one ONNX Attention node. inputs: { q, k, v, mask?, pastK?, pastV?, nonpad? } each { data, dims, type? }. */
async function ortAttention(inputs, attrs, outputs, opset = 23) {
  const order = [['q', 'q'], ['k', 'k'], ['v', 'v'], ['mask', 'mask'], ['pastK', 'past_key'], ['pastV', 'past_value'], ['nonpad', 'nonpad']];
  const last = Math.max(...order.map(([key], i) => (inputs[key] ? i : -1)));
  const nodeInputs = order.slice(0, last + 1).map(([key, name]) => (inputs[key] ? name : ''));
  const present = !!inputs.pastK;
  const outs = present ? ['o', 'present_key', 'present_value'] : ['o'];
  const type = (t) => (t === 'bool' ? DataType.BOOL : t === 'int64' ? DataType.INT64 : F);
  const bytes = model({
    nodes: [node('Attention', nodeInputs, outs, attrs)],
    inputs: order.filter(([key]) => inputs[key]).map(([key, name]) => valueInfo(name, type(inputs[key].type), inputs[key].dims)),
    outputs: outs.map((o) => valueInfo(o, F, outputs[o])),
    opsets: { '': opset },
  });
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = {};
  for (const [key, name] of order) if (inputs[key]) feeds[name] = new ort.Tensor(inputs[key].type ?? 'float32', inputs[key].data, inputs[key].dims);
  const result = await session.run(feeds);
  const out = Object.fromEntries(outs.map((o) => [o, result[o].data]));
  await session.release();
  return out;
}

function assertClose(got, want, label) {
  assert.equal(got.length, want.length, `${label}: length`);
  for (let i = 0; i < got.length; ++i)
    if (!(Math.abs(got[i] - want[i]) <= 2e-6 * (1 + Math.abs(want[i])))) assert.fail(`${label}[${i}]: attnlab ${got[i]}, onnxruntime ${want[i]}`);
}

for (const { name, lab } of labs) {
  describe(`attnlab = onnxruntime-web Attention (${name})`, () => {
    const r = rng(90);

    test('multi-head, 4-D inputs, default scale; and is_causal (top-left without a cache) for nq < nk and nq > nk', async () => {
      for (const [nq, nk, causal] of [[4, 6, false], [3, 7, true], [6, 4, true]]) {
        const [B, H, d] = [2, 3, 8];
        const q = r.array(B * H * nq * d), k = r.array(B * H * nk * d), v = r.array(B * H * nk * d);
        const want = await ortAttention({ q: { data: q, dims: [B, H, nq, d] }, k: { data: k, dims: [B, H, nk, d] }, v: { data: v, dims: [B, H, nk, d] } },
          { is_causal: causal ? 1 : 0 }, { o: [B, H, nq, d] });
        const got = lab.attention({ q, k, v, batch: B, heads: H, nq, nk, dk: d, dv: d, causal: causal ? 'top-left' : false });
        assertClose(got.output, want.o, `nq ${nq} nk ${nk} causal ${causal}`);
      }
    });

    test('softcap and scale', async () => {
      const [B, H, nq, nk, d] = [1, 2, 5, 9, 16];
      const q = r.array(B * H * nq * d, -3, 3), k = r.array(B * H * nk * d, -3, 3), v = r.array(B * H * nk * d);
      const want = await ortAttention({ q: { data: q, dims: [B, H, nq, d] }, k: { data: k, dims: [B, H, nk, d] }, v: { data: v, dims: [B, H, nk, d] } },
        { softcap: { float: 2.5 }, scale: { float: 0.75 } }, { o: [B, H, nq, d] });
      assertClose(lab.attention({ q, k, v, batch: B, heads: H, dk: d, softcap: 2.5, scale: 0.75 }).output, want.o, 'softcap');
    });

    test('boolean masks [batch, 1, nq, nk] and [nq, nk], an additive mask [1, heads, nq, nk] with -Infinity', async () => {
      const [B, H, nq, nk, d] = [2, 2, 3, 5, 4];
      const q = r.array(B * H * nq * d), k = r.array(B * H * nk * d), v = r.array(B * H * nk * d);
      const base = { q: { data: q, dims: [B, H, nq, d] }, k: { data: k, dims: [B, H, nk, d] }, v: { data: v, dims: [B, H, nk, d] } };
      // the first row sees no key at all: a row of zeros in both
      const keep = (n) => Uint8Array.from({ length: n }, (_, t) => (t < nk ? 0 : r.bool(0.7) ? 1 : 0));
      for (const dims of [[B, 1, nq, nk], [nq, nk]]) {
        const mask = keep(dims.reduce((a, b) => a * b, 1));
        const want = await ortAttention({ ...base, mask: { data: mask, dims, type: 'bool' } }, {}, { o: [B, H, nq, d] });
        assertClose(lab.attention({ q, k, v, batch: B, heads: H, dk: d, mask, maskShape: dims }).output, want.o, `bool ${dims}`);
      }
      const add = Float32Array.from({ length: H * nq * nk }, (_, t) => (t < nk || r.bool(0.3) ? -Infinity : r.next() * 2 - 1));
      const want = await ortAttention({ ...base, mask: { data: add, dims: [1, H, nq, nk] } }, {}, { o: [B, H, nq, d] });
      assertClose(lab.attention({ q, k, v, batch: B, heads: H, dk: d, mask: add, maskShape: [1, H, nq, nk] }).output, want.o, 'additive');
    });

    test('GQA with 3-D inputs (q_num_heads 8 over kv_num_heads 2) = layout bshd', async () => {
      const [B, H, G, nq, nk, d] = [2, 8, 2, 3, 7, 4];
      const q = r.array(B * nq * H * d), k = r.array(B * nk * G * d), v = r.array(B * nk * G * d);
      const want = await ortAttention({ q: { data: q, dims: [B, nq, H * d] }, k: { data: k, dims: [B, nk, G * d] }, v: { data: v, dims: [B, nk, G * d] } },
        { q_num_heads: H, kv_num_heads: G, is_causal: 1 }, { o: [B, nq, H * d] });
      assertClose(lab.attention({ q, k, v, batch: B, heads: H, kvHeads: G, dk: d, layout: 'bshd', causal: 'top-left' }).output, want.o, 'gqa');
    });

    test('past/present: a decode step through kvCache equals ORT with past_key/past_value (causal, GQA, softcap)', async () => {
      const [B, H, G, past, t, d] = [1, 8, 2, 37, 2, 16];
      const pk = r.array(B * G * past * d), pv = r.array(B * G * past * d);
      const q = r.array(B * H * t * d), k = r.array(B * G * t * d), v = r.array(B * G * t * d);
      const want = await ortAttention({ q: { data: q, dims: [B, H, t, d] }, k: { data: k, dims: [B, G, t, d] }, v: { data: v, dims: [B, G, t, d] },
        pastK: { data: pk, dims: [B, G, past, d] }, pastV: { data: pv, dims: [B, G, past, d] } },
      { is_causal: 1, softcap: { float: 4 } }, { o: [B, H, t, d], present_key: [B, G, past + t, d], present_value: [B, G, past + t, d] });
      const cache = lab.kvCache({ batch: B, kvHeads: G, dk: d, dv: d, capacity: 64 });
      cache.append(pk, pv).append(k, v);
      assertClose(lab.attention({ q, cache, heads: H, causal: true, softcap: 4 }).output, want.o, 'decode');
      assert.deepEqual(cache.keys(), want.present_key);
      assert.deepEqual(cache.values(), want.present_value);
      cache.dispose();
    });

    test('nonpad_kv_seqlen (opset 24) = keyLengths, with causal bottom-right per item', async () => {
      const [B, H, nq, nk, d] = [2, 2, 3, 8, 4];
      const q = r.array(B * H * nq * d), k = r.array(B * H * nk * d), v = r.array(B * H * nk * d);
      const lengths = [8, 5];
      for (const causal of [false, true]) {
        const want = await ortAttention({ q: { data: q, dims: [B, H, nq, d] }, k: { data: k, dims: [B, H, nk, d] }, v: { data: v, dims: [B, H, nk, d] },
          nonpad: { data: BigInt64Array.from(lengths.map(BigInt)), dims: [B], type: 'int64' } }, { is_causal: causal ? 1 : 0 }, { o: [B, H, nq, d] }, 24);
        assertClose(lab.attention({ q, k, v, batch: B, heads: H, dk: d, keyLengths: lengths, causal }).output, want.o, `nonpad causal ${causal}`);
      }
    });
  });
}
