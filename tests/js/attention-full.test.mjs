// lab.attention over whole tensors, every option, against the float64 reference (support/attention-full-ref.mjs),
// both backends: batch × heads, GQA/MQA, 'bhsd'/'bshd', causal alignments, windows, softcap, additive and boolean
// masks broadcast by maskShape, keyLengths, alibiSlopes, returnLse; plus size inference and the identities that
// pin the batching down exactly (a batched call equals its single-head calls bit for bit).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { caseLabel, randomAttentionCase } from './support/attention-cases.mjs';
import { at, attentionFullRef } from './support/attention-full-ref.mjs';
import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { assertWithin } from './support/reference.mjs';

const labs = await loadLabs();

function check(lab, c, label) {
  const ref = attentionFullRef({ ...c, scale: c.scale === undefined ? undefined : Math.fround(c.scale) });
  const got = lab.attention(c);
  assertWithin(got.output, ref.out, `${label} output`);
  if (c.returnScores) assertWithin(got.scores, ref.scores, `${label} scores`);
  if (c.returnWeights) assertWithin(got.weights, ref.weights, `${label} weights`);
  if (c.returnRawScores) assertWithin(got.rawScores, ref.raw, `${label} rawScores`);
  if (c.returnLse) assertWithin(got.lse, ref.lse, `${label} lse`);
  assert.equal('lse' in got, !!c.returnLse);
  return got;
}

// Every option drawn independently (support/attention-cases.mjs), and the forward's own: which matrices to return.
function randomCase(r, sizes) {
  const c = randomAttentionCase(r, sizes);
  for (const flag of ['returnScores', 'returnWeights', 'returnRawScores', 'returnLse']) if (r.bool(0.3)) c[flag] = true;
  return c;
}

for (const { name, lab } of labs) {
  describe(`attention, whole operator (${name})`, () => {
    test('120 random combinations of every option, streaming and materialized', () => {
      const r = rng(60);
      for (let i = 0; i < 120; ++i) {
        const c = randomCase(r, i % 6 === 0 ? { maxNq: 40, maxNk: 200 } : undefined);
        check(lab, c, `case ${i} ${caseLabel(c)}`);
        if (!c.returnLse) check(lab, { ...c, returnLse: true, returnWeights: true }, `case ${i} materialized`);
      }
    });

    test('sizes around 4, 32 and 128: batch 2, 4 heads over 2 KV heads, both layouts', () => {
      const r = rng(61);
      for (const nq of [1, 4, 5, 31, 33]) for (const nk of [3, 32, 127, 129]) {
        const [batch, heads, kvHeads, dk, dv] = [2, 4, 2, 8, 5];
        const layout = (nq + nk) % 2 ? 'bshd' : 'bhsd';
        const c = { q: r.array(batch * heads * nq * dk), k: r.array(batch * kvHeads * nk * dk), v: r.array(batch * kvHeads * nk * dv),
          batch, heads, kvHeads, nq, nk, dk, dv, layout, causal: r.pick([true, 'top-left']), window: [16, 2], softcap: 5, returnLse: true };
        check(lab, c, `nq=${nq} nk=${nk} ${layout}`);
      }
    });

    test('a batched GQA call equals its single-head calls bit for bit (bhsd and bshd)', () => {
      const r = rng(62);
      const [batch, heads, kvHeads, nq, nk, dk, dv] = [2, 6, 2, 9, 70, 8, 4];
      for (const layout of ['bhsd', 'bshd']) {
        const q = r.array(batch * heads * nq * dk), k = r.array(batch * kvHeads * nk * dk), v = r.array(batch * kvHeads * nk * dv);
        const keep = Uint8Array.from({ length: batch * nk }, (_, t) => (t % 5 === 2 ? 0 : 1));
        const opts = { causal: true, window: [30, 0], softcap: 8, keyLengths: [70, 51], alibiSlopes: new Float32Array([0.5, 0.25, 0.2, 0.1, 0.05, 0.01]) };
        const all = lab.attention({ q, k, v, batch, heads, kvHeads, nq, nk, dk, dv, layout, mask: keep, maskShape: [batch, 1, 1, nk], ...opts, returnLse: true });
        for (let b = 0; b < batch; ++b) for (let h = 0; h < heads; ++h) {
          const g = Math.floor((h * kvHeads) / heads);
          const one = (src, hh, H, n, d) => Float32Array.from({ length: n * d }, (_, t) => src[at(layout, b, hh, Math.floor(t / d), t % d, H, n, d)]);
          const got = lab.attention({ q: one(q, h, heads, nq, dk), k: one(k, g, kvHeads, nk, dk), v: one(v, g, kvHeads, nk, dv), nq, nk, dk, dv,
            mask: keep.subarray(b * nk, (b + 1) * nk), maskShape: [1, nk], ...opts, keyLengths: [opts.keyLengths[b]],
            alibiSlopes: opts.alibiSlopes.subarray(h, h + 1), returnLse: true });
          const want = Float32Array.from({ length: nq * dv }, (_, t) => all.output[at(layout, b, h, Math.floor(t / dv), t % dv, heads, nq, dv)]);
          assert.deepEqual(got.output, want, `${layout} item ${b} head ${h}`);
          assert.deepEqual(got.lse, all.lse.subarray((b * heads + h) * nq, (b * heads + h + 1) * nq), `${layout} lse ${b} ${h}`);
        }
      }
    });

    test('MQA (kvHeads: 1) and causal alignments on nq ≠ nk, exactly the keys each rule names', () => {
      const r = rng(63);
      const [heads, nq, nk, dk, dv] = [3, 4, 7, 3, 2];
      const c = { q: r.array(heads * nq * dk), k: r.array(nk * dk), v: r.array(nk * dv), heads, kvHeads: 1, nq, nk, dk, dv, returnWeights: true };
      for (const [causal, seen] of [['top-left', (i, j) => j <= i], [true, (i, j) => j <= i + nk - nq], ['bottom-right', (i, j) => j <= i + nk - nq]]) {
        const w = check(lab, { ...c, causal }, `causal ${causal}`).weights;
        for (let h = 0; h < heads; ++h) for (let i = 0; i < nq; ++i) for (let j = 0; j < nk; ++j)
          assert.equal(w[(h * nq + i) * nk + j] > 0, seen(i, j), `${causal} h${h} [${i}, ${j}]`);
      }
    });

    test('window [left, right] around the diagonal; -1 and Infinity are unlimited', () => {
      const r = rng(64);
      const [nq, nk, dk, dv] = [5, 9, 4, 3];
      const c = { q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv), nq, nk, dk, dv, returnWeights: true };
      const w = check(lab, { ...c, window: [1, 2] }, 'window').weights;
      for (let i = 0; i < nq; ++i) for (let j = 0; j < nk; ++j) {
        const d = i + nk - nq;
        assert.equal(w[i * nk + j] > 0, j >= d - 1 && j <= d + 2, `[${i}, ${j}]`);
      }
      const unlimited = lab.attention({ ...c, window: [-1, Infinity] });
      assert.deepEqual(unlimited.output, lab.attention(c).output);
    });

    test('keyLengths: item b sees its first keyLengths[b] keys, and its own diagonal; a row that sees nothing is zeros with lse -Infinity', () => {
      const r = rng(65);
      const [batch, nq, nk, dk, dv] = [3, 3, 6, 4, 2];
      const c = { q: r.array(batch * nq * dk), k: r.array(batch * nk * dk), v: r.array(batch * nk * dv), batch, nq, nk, dk, dv,
        keyLengths: new Int32Array([6, 2, 0]), causal: true, returnWeights: true, returnLse: true };
      const got = check(lab, c, 'keyLengths');
      // item 1 holds 2 keys: query i sees j ≤ i + 2 − 3, so query 0 sees nothing
      assert.deepEqual(Array.from(got.weights.slice((nq + 0) * nk, (nq + 1) * nk)), [0, 0, 0, 0, 0, 0]);
      assert.equal(got.lse[nq], -Infinity);
      assert.deepEqual(Array.from(got.output.slice(2 * nq * dv)), new Array(nq * dv).fill(0)); // item 2: no keys at all
      for (const x of got.output) assert.ok(!Number.isNaN(x));
    });

    test('a boolean mask equals its additive 0/-Infinity form; a broadcast mask its expanded form', () => {
      const r = rng(66);
      const [batch, heads, nq, nk, dk, dv] = [2, 3, 5, 140, 8, 8];
      const c = { q: r.array(batch * heads * nq * dk), k: r.array(batch * heads * nk * dk), v: r.array(batch * heads * nk * dv), batch, heads, nq, nk, dk, dv };
      const keep = Uint8Array.from({ length: batch * nk }, () => (r.bool(0.8) ? 1 : 0));
      const boolean = lab.attention({ ...c, mask: keep, maskShape: [batch, 1, 1, nk] }).output;
      const additive = lab.attention({ ...c, mask: Float32Array.from(keep, (x) => (x ? 0 : -Infinity)), maskShape: [batch, 1, 1, nk] }).output;
      const expanded = new Uint8Array(batch * heads * nq * nk);
      for (let b = 0; b < batch; ++b) for (let h = 0; h < heads; ++h) for (let i = 0; i < nq; ++i)
        expanded.set(keep.subarray(b * nk, (b + 1) * nk), ((b * heads + h) * nq + i) * nk);
      assert.deepEqual(additive, boolean);
      assert.deepEqual(lab.attention({ ...c, mask: expanded, maskShape: [batch, heads, nq, nk] }).output, boolean);
    });

    test('sizes are inferred with batch, heads and layouts; the default maskShape is [nq, nk]', () => {
      const r = rng(67);
      const [batch, heads, kvHeads, nq, nk, dk, dv] = [2, 4, 2, 3, 5, 6, 7];
      const c = { q: r.array(batch * heads * nq * dk), k: r.array(batch * kvHeads * nk * dk), v: r.array(batch * kvHeads * nk * dv), batch, heads, kvHeads,
        layout: 'bshd', mask: r.array(nq * nk) };
      const want = lab.attention({ ...c, nq, nk, dk, dv }).output;
      for (const sizes of [{ dk }, { nq }, { nk }, { nq, dv }, { dk, nk }])
        assert.deepEqual(lab.attention({ ...c, ...sizes }).output, want, JSON.stringify(sizes));
      assert.deepEqual(lab.attention({ ...c, dk, maskShape: [nq, nk] }).output, want);
    });
  });
}
