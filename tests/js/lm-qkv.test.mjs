// model.forward(ids, { qkv: true }): every layer's queries, keys and values as the engine's attention read them
// (after the projections' biases and, for the Llama family, RoPE) and the scale its scores used. Checked three ways
// on random-weight checkpoints (tests/lm/checkpoints.py) on both backends:
//   * against the float64 reference's q, k and v, within bounds the script derives from float32 rounding the same
//     way as the logits' (Σ |adjoint|·local error over every operation before them): GPT-2 (heads of 5), a Llama
//     with grouped-query heads (4 over 2, BF16) and Qwen2 (6 over 2, q/k/v biases, F16);
//   * against the engine's own attention weights: softmax(q_h·k_gᵀ·scale + causal mask), computed here in float64
//     from the returned float32 q and k, equals attention[layer][head] within the bound derived below (g the K/V
//     head of h's group);
//   * on 2 and 3 workers (each shard holds whole K/V heads with their query heads, or none): the gathered q, k, v
//     within the reference's bounds and, in the first layer, equal to one thread's bit for bit.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { init, loadLabs } from './support/load.mjs';
import { files, reference, writeCheckpoints } from './support/lm-fixtures.mjs';

const CASES = ['gpt2-f32', 'llama-tied-bf16', 'qwen2-f16'];
const { dir, cleanup } = writeCheckpoints(CASES);
after(cleanup);
const labs = await loadLabs({ gpt: true });

const U = 2 ** -24, TINY = 2 ** -149, FLUSH = 2 ** -126, EXP_ERR = 2 * U;
const gamma = (n) => (n * U) / (1 - n * U);

// The reference's q, k, v of layer l for the first n of its rows: q [n, H, dh], k and v [n, G, dh] (a prefix's rows
// are the longer sequence's first rows, with the same bounds: the mask is causal).
function refLayer(ref, l, n) {
  const N = ref.attention_tokens, H = ref.heads, G = ref.kv_heads, dh = ref.head_dim;
  const at = l * N * (H + 2 * G) * dh;
  const part = (from, width) => ({
    value: ref.qkv.subarray(at + from, at + from + n * width), bound: ref.qkvBound.subarray(at + from, at + from + n * width),
  });
  return { q: part(0, H * dh), k: part(N * H * dh, G * dh), v: part(N * (H + G) * dh, G * dh) };
}

function checkAgainstReference(qkv, ref, n, label) {
  assert.equal(qkv.length, ref.layers, label);
  let worst = 0;
  for (let l = 0; l < ref.layers; ++l) {
    const want = refLayer(ref, l, n);
    for (const t of ['q', 'k', 'v']) {
      const got = qkv[l][t], { value, bound } = want[t];
      assert.ok(got instanceof Float32Array, `${label}: qkv[${l}].${t} is a Float32Array`);
      assert.equal(got.length, value.length, `${label}: qkv[${l}].${t}.length`);
      for (let i = 0; i < got.length; ++i) {
        assert.ok(Math.abs(got[i] - value[i]) <= bound[i], `${label}: qkv[${l}].${t}[${i}] = ${got[i]}, reference ${value[i]} ± ${bound[i]}`);
        worst = Math.max(worst, Math.abs(got[i] - value[i]) / bound[i]);
      }
    }
  }
  return worst;
}

// softmax(q_h·k_gᵀ·scale + causal mask) in float64 from the engine's float32 q and k, against the engine's weights.
// The engine's rounding, with q and k exact inputs (as in tests/lm/checkpoints.py and tests/native/reference.h):
//   scores: q·scale rounds, then a dot product of dh terms: |δs_j| ≤ γ(dh + 1)·scale·Σ|q||k_j| + 3u·|s_j| + dh·TINY
//     (the last product and the mask's add round once each);
//   a perturbation δs of the scores moves p_i by p_i·(δs_i − Σ_j p_j·δs_j): at most p_i·(|δs_i| + Σ_j p_j·|δs_j|);
//   the softmax's own rounding, relative to p_i: exp within EXP_ERR, z = s − max rounded (2u·|z|), the sum's γ(n)
//     with each term's errors, 1/sum and the product (2u), the streaming kernel's rescales of partial sums
//     (6u per 64 keys, in the sum and in the term);
//   second-order terms: below 0.1 % of the bound (every relative term is < 1e-5), covered by the factor 1.001;
//   results below float32's normal range may flush to 0: FLUSH.
function checkSelfConsistency(qkv, attention, config, n, label) {
  const { heads: H, kvHeads: G, headDim: dh, slidingWindow } = config;
  assert.equal(slidingWindow, 0, 'this check masks causally only');
  let worst = 0;
  for (let l = 0; l < qkv.length; ++l) {
    const { q, k, scale } = qkv[l];
    for (let h = 0; h < H; ++h) {
      const g = Math.floor((h * G) / H);  // the group's K/V head (transformers' repeat_kv)
      const w = attention[l][h];
      for (let i = 0; i < n; ++i) {
        const s = new Float64Array(i + 1), ds = new Float64Array(i + 1);
        for (let j = 0; j <= i; ++j) {
          let dot = 0, abs = 0;
          for (let e = 0; e < dh; ++e) {
            const a = q[(i * H + h) * dh + e], b = k[(j * G + g) * dh + e];
            dot += a * b, abs += Math.abs(a * b);
          }
          s[j] = dot * scale;
          ds[j] = gamma(dh + 1) * scale * abs + 3 * U * Math.abs(s[j]) + dh * TINY;
        }
        const max = Math.max(...s);
        const p = Array.from(s, (x) => Math.exp(x - max)), sum = p.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= i; ++j) p[j] /= sum;
        const extra = Math.ceil((i + 1) / 64) * 6 * U;
        let spread = 0, sumErr = 0;
        for (let j = 0; j <= i; ++j) {
          spread += p[j] * ds[j];
          sumErr += p[j] * (2 * U * Math.abs(s[j] - max) + EXP_ERR);
        }
        sumErr += gamma(i + 1) + extra;
        for (let j = 0; j < n; ++j) {
          const got = w[i * n + j];
          if (j > i) {
            assert.equal(got, 0, `${label}: attention[${l}][${h}][${i}][${j}] past the diagonal`);
            continue;
          }
          const rel = 2 * U * Math.abs(s[j] - max) + EXP_ERR + sumErr + 2 * U + extra;
          const bound = 1.001 * p[j] * (ds[j] + spread + rel) + FLUSH;
          assert.ok(Math.abs(got - p[j]) <= bound, `${label}: attention[${l}][${h}][${i}][${j}] = ${got}, softmax of the returned q·k ${p[j]} ± ${bound}`);
          worst = Math.max(worst, Math.abs(got - p[j]) / bound);
        }
      }
    }
  }
  return worst;
}

test('qkv: the reference\'s q, k and v (after biases and RoPE) for GPT-2, a Llama with GQA and Qwen2, on both backends', async () => {
  for (const { name: backend, lab } of labs) {
    for (const name of CASES) {
      const ref = reference(dir, name), label = `${backend} ${name}`;
      const model = await lab.loadModel(await files(dir, name));
      try {
        const { heads: H, kvHeads: G, headDim: dh, layers: L, attentionScales } = model.config;
        assert.deepEqual([H, G, dh, L], [ref.heads, ref.kv_heads, ref.head_dim, ref.layers], label);
        // Every layer's scale is 1/√headDim rounded to float32 (no case scales by the layer's index).
        assert.deepEqual(attentionScales, Array(L).fill(Math.fround(1 / Math.sqrt(dh))), label);
        // Prefixes below, at and above the SIMD width, and the reference's whole sequence.
        for (const n of [1, 3, 4, 5, ref.attention_tokens]) {
          const ids = Int32Array.from(ref.ids.slice(0, n));
          const plain = model.forward(ids, { attention: true });
          assert.equal('qkv' in plain, false, `${label}: no qkv unless asked`);
          const r = model.forward(ids, { attention: true, qkv: true });
          // Asking for qkv changes nothing else, bit for bit.
          assert.deepEqual(r.logits, plain.logits, `${label} n=${n}: logits`);
          assert.deepEqual(r.attention, plain.attention, `${label} n=${n}: attention`);
          assert.equal(r.qkv.length, L);
          r.qkv.forEach((e, l) => {
            assert.deepEqual(Object.keys(e), ['q', 'k', 'v', 'scale']);
            assert.deepEqual([e.q.length, e.k.length, e.v.length], [n * H * dh, n * G * dh, n * G * dh], `${label}: layer ${l}'s shapes`);
            assert.equal(e.scale, attentionScales[l]);
          });
          checkAgainstReference(r.qkv, ref, n, `${label} n=${n}`);
          checkSelfConsistency(r.qkv, r.attention, model.config, n, `${label} n=${n}`);
        }
        // qkv alone, without the attention weights.
        const alone = model.forward(ref.ids.slice(0, 3), { qkv: true });
        assert.equal('attention' in alone, false);
        checkAgainstReference(alone.qkv, ref, 3, `${label} (qkv alone)`);
        // forwardAsync on the calling thread: the same.
        const asy = await model.forwardAsync(ref.ids.slice(0, 5), { qkv: true });
        assert.deepEqual(asy.qkv, model.forward(ref.ids.slice(0, 5), { qkv: true }).qkv);
      } finally {
        model.dispose();
      }
    }
    assert.equal(lab.liveModels, 0);
  }
});

test('qkv must be a boolean: a TypeError naming it, and the model keeps working', async () => {
  const { lab } = labs[0];
  const model = await lab.loadModel(await files(dir, 'qwen2-f16'));
  for (const bad of [1, 'yes', null, {}])
    assert.throws(() => model.forward([3, 4], { qkv: bad }), { name: 'TypeError', message: new RegExp(`^Model\\.forward: qkv must be a boolean, got `) });
  await assert.rejects(model.forwardAsync([3, 4], { qkv: 1 }), { name: 'TypeError', message: /^Model\.forward: qkv must be a boolean, got 1$/ });
  assert.equal(model.forward([3, 4], { qkv: false }).qkv, undefined);
  assert.equal(model.forward([3, 4], { qkv: true }).qkv.length, model.config.layers);
  model.dispose();
});

test('on workers: every head gathered; layer 0 bit for bit one thread\'s, every layer within the reference\'s bounds', async () => {
  const lab = await init({ gpt: true, threads: 3 });
  try {
    // On 2 workers each holds heads (whole K/V heads with their query heads), so the gather takes from both; on 3,
    // llama-tied-bf16's 2 K/V heads leave the first worker without any.
    for (const [name, threads] of [...CASES.map((c) => [c, 2]), ['llama-tied-bf16', 3]]) {
      const ref = reference(dir, name), label = `${name} on ${threads} workers`, n = ref.attention_tokens;
      const source = await files(dir, name);
      const one = await lab.loadModel(source, { threads: 1 }), two = await lab.loadModel(source, { threads });
      try {
        const holding = two.split.ranks.filter((r) => r.heads[1] > r.heads[0]).length;
        assert.equal(holding, 2, `${label}: workers holding heads`);
        const a = one.forward(ref.ids.slice(0, n), { attention: true, qkv: true });
        const b = await two.forwardAsync(ref.ids.slice(0, n), { attention: true, qkv: true });
        assert.equal('qkv' in (await two.forwardAsync(ref.ids.slice(0, n))), false);
        checkAgainstReference(b.qkv, ref, n, label);
        checkSelfConsistency(b.qkv, b.attention, two.config, n, label);
        // Layer 0 reads the same residual stream on every worker (the shards' embedding rows added to zeros), and a
        // head's projections are the same dot products on one thread or a shard: equal bit for bit. Later layers
        // read a stream summed from the shards' partial output projections, in another order than one thread's.
        for (const t of ['q', 'k', 'v']) assert.deepEqual(b.qkv[0][t], a.qkv[0][t], `${label}: layer 0's ${t}`);
        b.qkv.forEach((e, l) => assert.equal(e.scale, a.qkv[l].scale));
      } finally {
        one.dispose();
        two.dispose();
      }
    }
  } finally {
    lab.dispose();
  }
});
