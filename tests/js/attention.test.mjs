// lab.attention against the float64 reference with derived bounds (support/reference.mjs), both backends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';
import { rng, randomMask } from './support/random.mjs';
import { attentionRef, assertWithin, softmaxRows, u } from './support/reference.mjs';

const labs = await loadLabs();

const reference = (c) => attentionRef({ ...c, scale: c.scale === undefined ? undefined : Math.fround(c.scale) });

// Runs one case through the engine and checks everything it returned (against `ref`, the case's reference: the
// same for every set of returned matrices).
function check(lab, c, label, ref = reference(c)) {
  const got = lab.attention(c);
  assertWithin(got.output, ref.out, `${label} output`);
  assert.equal('scores' in got, !!c.returnScores);
  assert.equal('weights' in got, !!c.returnWeights);
  assert.equal('rawScores' in got, !!c.returnRawScores);
  if (c.returnScores) assertWithin(got.scores, ref.scores, `${label} scores`);
  if (c.returnWeights) assertWithin(got.weights, ref.weights, `${label} weights`);
  if (c.returnRawScores) assertWithin(got.rawScores, ref.raw, `${label} rawScores`);
  return got;
}

function randomCase(r, { nq, nk, dk, dv }) {
  const spread = r.pick([1, 1, 3]);
  const c = { q: r.array(nq * dk, -spread, spread), k: r.array(nk * dk, -spread, spread), v: r.array(nk * dv), nq, nk, dk, dv };
  if (r.bool()) c.causal = true;
  if (r.bool(0.3)) c.mask = randomMask(r, nq, nk, r.int(0, 1));
  if (r.bool(0.3)) c.scale = r.pick([0.05, 0.5, 1, 2.5]);
  if (r.bool()) c.returnScores = true;
  if (r.bool()) c.returnWeights = true;
  if (r.bool(0.3)) c.returnRawScores = true;
  return c;
}

// The larger cases and their float64 references (1024² scores: most of this file's reference work), made once for
// both backends.
let large;
function largeCases() {
  const r = rng(11);
  large ??= [
    { nq: 1024, nk: 1024, dk: 64, dv: 64, causal: true },
    { nq: 1, nk: 1024, dk: 32, dv: 16 },
    { nq: 300, nk: 1000, dk: 8, dv: 3 },
    { nq: 1000, nk: 3, dk: 1, dv: 1 },
  ].map((shape) => {
    const c = { q: r.array(shape.nq * shape.dk), k: r.array(shape.nk * shape.dk), v: r.array(shape.nk * shape.dv), ...shape };
    return { shape, c, ref: reference(c) };
  });
  return large;
}

for (const { name, lab } of labs) {
  describe(`attention (${name})`, () => {
    test('random shapes 1…70 (nq ≠ nk), causal or not, masks, scales, any set of returned matrices', () => {
      const r = rng(10);
      for (let i = 0; i < 150; ++i) {
        const c = randomCase(r, { nq: r.int(1, 70), nk: r.int(1, 70), dk: r.int(1, 70), dv: r.int(1, 70) });
        check(lab, c, `case ${i} (nq=${c.nq} nk=${c.nk} dk=${c.dk} dv=${c.dv} causal=${!!c.causal} mask=${!!c.mask})`);
      }
    });

    test('larger shapes up to 1024, streaming and materialized', () => {
      for (const { shape, c, ref } of largeCases()) {
        check(lab, c, `streaming ${JSON.stringify(shape)}`, ref);
        check(lab, { ...c, returnWeights: true }, `materialized ${JSON.stringify(shape)}`, ref);
      }
    });

    test('large logits (|q·k|·scale in the hundreds) stay finite and exact to the bound', () => {
      const r = rng(12);
      const c = { q: r.array(16 * 8, -30, 30), k: r.array(40 * 8, -30, 30), v: r.array(40 * 5), nq: 16, nk: 40, dk: 8, dv: 5, returnWeights: true };
      check(lab, c, 'large logits');
      check(lab, { ...c, returnWeights: false }, 'large logits, streaming');
    });

    test('causal is bottom-right aligned: with nq > nk the first nq − nk queries see nothing → zero rows', () => {
      const r = rng(13);
      const [nq, nk, dk, dv] = [6, 4, 3, 2];
      const c = { q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv, 1, 2), nq, nk, dk, dv, causal: true, returnWeights: true };
      for (const got of [check(lab, c, 'nq > nk'), check(lab, { ...c, returnWeights: false }, 'nq > nk streaming')]) {
        assert.deepEqual(Array.from(got.output.slice(0, (nq - nk) * dv)), [0, 0, 0, 0]);
        assert.ok(got.output.slice((nq - nk) * dv).every((x) => x >= 1)); // convex combinations of v ∈ [1, 2]
      }
      // nq < nk: query i sees keys j ≤ i + nk − nq, so the last query sees every key.
      const w = lab.attention({ ...c, q: r.array(2 * dk), nq: 2, returnWeights: true }).weights;
      assert.deepEqual(Array.from(w.slice(0, 4), (x) => x > 0), [true, true, true, false]);
      assert.ok(w.slice(4).every((x) => x > 0));
    });

    test('a fully masked row gives zero weights and a zero output row (both paths)', () => {
      const r = rng(14);
      const [nq, nk, dk, dv] = [3, 5, 4, 3];
      const mask = new Float32Array(nq * nk);
      mask.fill(-Infinity, nk, 2 * nk);
      const c = { q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv), nq, nk, dk, dv, mask };
      const streamed = check(lab, c, 'masked row streaming');
      const full = check(lab, { ...c, returnWeights: true, returnScores: true }, 'masked row');
      for (const got of [streamed, full]) assert.deepEqual(Array.from(got.output.slice(dv, 2 * dv)), [0, 0, 0]);
      assert.deepEqual(Array.from(full.weights.slice(nk, 2 * nk)), [0, 0, 0, 0, 0]);
      assert.ok(full.scores.slice(nk, 2 * nk).every((s) => s === -Infinity));
    });

    test('streaming and materialized agree within their bounds', () => {
      const r = rng(15);
      for (let i = 0; i < 20; ++i) {
        const c = randomCase(r, { nq: r.int(1, 40), nk: r.int(60, 200), dk: r.int(1, 16), dv: r.int(1, 16) });
        delete c.returnScores, delete c.returnRawScores;
        const ref = reference(c);
        const a = lab.attention({ ...c, returnWeights: false }).output;
        const b = lab.attention({ ...c, returnWeights: true }).output;
        for (let j = 0; j < a.length; ++j) assert.ok(Math.abs(a[j] - b[j]) <= 2 * ref.out.bound[j], `case ${i} [${j}]`);
      }
    });

    test('sizes left out are inferred from the lengths', () => {
      const r = rng(16);
      const [nq, nk, dk, dv] = [3, 5, 4, 2];
      const c = { q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv) };
      const want = lab.attention({ ...c, nq, nk, dk, dv }).output;
      for (const sizes of [{ dk }, { nq }, { nk }, { nq, nk }, { dk, dv }])
        assert.deepEqual(lab.attention({ ...c, ...sizes }).output, want, JSON.stringify(sizes));
    });

    test('scores = scale · rawScores + mask, and weights are softmax rows of scores', () => {
      const r = rng(17);
      const [nq, nk, dk, dv] = [4, 6, 5, 3];
      const mask = randomMask(r, nq, nk);
      const got = lab.attention({ q: r.array(nq * dk), k: r.array(nk * dk), v: r.array(nk * dv), nq, nk, dk, dv, mask, scale: 0.75,
        returnScores: true, returnRawScores: true, returnWeights: true });
      for (let i = 0; i < nq * nk; ++i) {
        const exact = got.rawScores[i] * Math.fround(0.75) + mask[i];
        if (exact === -Infinity) assert.equal(got.scores[i], -Infinity);
        else assert.ok(Math.abs(got.scores[i] - exact) <= u * Math.abs(got.rawScores[i] * 0.75) + u * Math.abs(exact) * (1 + u), `scores[${i}]`); // two roundings
      }
      assertWithin(got.weights, softmaxRows(got.scores, null, nk), 'weights of the returned scores');
    });
  });
}
