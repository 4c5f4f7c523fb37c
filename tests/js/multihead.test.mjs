// lab.multiHeadAttention (incl. grouped- and multi-query attention) against the float64 reference, both backends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';
import { rng, randomMask } from './support/random.mjs';
import { multiHeadRef, attentionRef, assertWithin } from './support/reference.mjs';

const labs = await loadLabs();

function randomCase(r, { n, dModel, heads, kvHeads, dk, dv }) {
  const hk = dk ?? dModel / heads, hv = dv ?? dModel / heads;
  const c = {
    x: r.array(n * dModel), n, dModel, heads, kvHeads,
    wq: r.array(dModel * heads * hk), wk: r.array(dModel * kvHeads * hk),
    wv: r.array(dModel * kvHeads * hv), wo: r.array(heads * hv * dModel),
  };
  if (dk !== undefined) c.dk = dk;
  if (dv !== undefined) c.dv = dv;
  if (r.bool()) c.causal = true;
  if (r.bool(0.3)) c.mask = randomMask(r, n, n, r.int(0, 1));
  if (r.bool(0.3)) c.scale = r.pick([0.1, 0.5, 2]);
  return c;
}

function check(lab, c, label, intermediates = true) {
  const hk = c.dk ?? c.dModel / c.heads, hv = c.dv ?? c.dModel / c.heads;
  const ref = multiHeadRef({ ...c, dk: hk, dv: hv, scale: c.scale === undefined ? undefined : Math.fround(c.scale) });
  const got = lab.multiHeadAttention({ ...c, returnIntermediates: intermediates });
  assertWithin(got.output, ref.out, `${label} output`);
  if (!intermediates) {
    assert.deepEqual(Object.keys(got), ['output']);
    return got;
  }
  assertWithin(got.q, ref.q, `${label} q`);
  assertWithin(got.k, ref.k, `${label} k`);
  assertWithin(got.v, ref.v, `${label} v`);
  assertWithin(got.concat, ref.concat, `${label} concat`);
  assert.equal(got.heads.length, c.heads);
  got.heads.forEach((h, i) => {
    for (const key of ['q', 'k', 'v', 'scores', 'weights', 'output']) assertWithin(h[key], ref.heads[i][key], `${label} heads[${i}].${key}`);
  });
  return got;
}

for (const { name, lab } of labs) {
  describe(`multiHeadAttention (${name})`, () => {
    test('random shapes: n 1…40, heads 1…8, GQA and MQA, explicit or default dk/dv, causal, masks', () => {
      const r = rng(20);
      for (let i = 0; i < 60; ++i) {
        const heads = r.pick([1, 2, 3, 4, 6, 8]);
        const kvHeads = r.pick([...Array(heads).keys()].map((k) => k + 1).filter((k) => heads % k === 0));
        const explicit = r.bool();
        const shape = explicit
          ? { n: r.int(1, 40), dModel: r.int(1, 24), heads, kvHeads, dk: r.int(1, 12), dv: r.int(1, 12) }
          : { n: r.int(1, 40), dModel: heads * r.int(1, 6), heads, kvHeads };
        const c = randomCase(r, shape);
        check(lab, c, `case ${i} ${JSON.stringify(shape)}`, r.bool(0.7));
      }
    });

    test('a larger layer: n 256, dModel 128, 8 heads over 2 K/V heads, causal', () => {
      const r = rng(21);
      const c = { ...randomCase(r, { n: 256, dModel: 128, heads: 8, kvHeads: 2 }), causal: true, mask: undefined, scale: undefined };
      check(lab, c, 'n=256', false);
    });

    test('grouped-query heads share K/V exactly; each head is plain attention over its slices', () => {
      const r = rng(22);
      const c = randomCase(r, { n: 7, dModel: 12, heads: 6, kvHeads: 2 });
      const got = check(lab, c, 'gqa');
      // heads 0–2 read K/V head 0, heads 3–5 read K/V head 1
      for (const [a, b] of [[0, 1], [0, 2], [3, 4], [3, 5]]) {
        assert.deepEqual(got.heads[a].k, got.heads[b].k);
        assert.deepEqual(got.heads[a].v, got.heads[b].v);
      }
      assert.notDeepEqual(got.heads[0].k, got.heads[3].k);
      got.heads.forEach((h, i) => {
        const single = lab.attention({ q: h.q, k: h.k, v: h.v, nq: 7, nk: 7, dk: 2, causal: c.causal, mask: c.mask,
          scale: c.scale, returnWeights: true });
        // Same float32 inputs to both: the single call's own bound covers the difference to the same reference.
        const ref = attentionRef({ q: h.q, k: h.k, v: h.v, nq: 7, nk: 7, dk: 2, dv: 2, causal: c.causal, mask: c.mask,
          scale: c.scale === undefined ? undefined : Math.fround(c.scale) });
        assertWithin(single.weights, ref.weights, `head ${i} weights via attention()`);
        assertWithin(h.weights, ref.weights, `head ${i} weights via multiHeadAttention()`);
        assertWithin(h.output, ref.out, `head ${i} output via multiHeadAttention()`);
      });
    });

    test('sizes left out are inferred: n from x.length, dModel from n, dk = dv = dModel / heads', () => {
      const r = rng(23);
      const c = randomCase(r, { n: 5, dModel: 8, heads: 2, kvHeads: 1 });
      const want = lab.multiHeadAttention(c).output;
      const { n, dModel, ...rest } = c;
      assert.deepEqual(lab.multiHeadAttention({ ...rest, dModel }).output, want);
      assert.deepEqual(lab.multiHeadAttention({ ...rest, n }).output, want);
      assert.deepEqual(lab.multiHeadAttention({ ...c, kvHeads: undefined, wk: r.array(8 * 8), wv: r.array(8 * 8) }).output.length, 40);
    });
  });
}
