// lab.attentionBackward on both backends: every option of the forward against the bounded float64 reference of the
// gradient (support/attention-grad-ref.mjs), random combinations and each option family; GQA sums; rows that see
// nothing; `out` buffers; consistency with the gradient of a loss computed by finite differences of lab.attention;
// and every error path (the message names the argument, nothing is written, the lab keeps working).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { caseLabel, randomAttentionCase } from './support/attention-cases.mjs';
import { attentionGradRef } from './support/attention-grad-ref.mjs';
import { loadLabs } from './support/load.mjs';
import { rng } from './support/random.mjs';
import { assertWithin } from './support/reference.mjs';

const labs = await loadLabs();

// The forward (with lse), a random dOutput, the backward, and the reference on exactly those inputs.
function run(lab, c, seed = 1) {
  const { output, lse } = lab.attention({ ...c, returnLse: true });
  const dOutput = rng(seed).array(output.length);
  const grads = lab.attentionBackward({ ...c, output, lse, dOutput });
  const scale = c.scale === undefined ? undefined : Math.fround(c.scale);
  const ref = attentionGradRef({ ...c, scale, output, lse, dOutput });
  return { grads, ref, output, lse, dOutput };
}

function check(lab, c, label, seed) {
  const { grads, ref } = run(lab, c, seed);
  for (const name of ['dq', 'dk', 'dv']) assertWithin(grads[name], ref[name], `${label} ${name}`);
  return grads;
}

for (const { name, lab } of labs) {
  describe(`attentionBackward (${name})`, () => {
    test('random combinations of every option against the float64 reference', () => {
      const r = rng(2026);
      for (let n = 0; n < 40; ++n) {
        const c = randomAttentionCase(r, n % 8 === 0 ? { maxNq: 40, maxNk: 150, maxD: 12 } : { maxNq: 10, maxD: 12 });
        check(lab, c, `case ${n} ${caseLabel(c)}`, n + 1);
      }
    });

    test('each option family: layouts with GQA/MQA, causal alignments and windows, softcap, masks, keyLengths, ALiBi', () => {
      const r = rng(7);
      const base = () => ({ batch: 2, heads: 4, kvHeads: 2, nq: 33, nk: 70, dk: 5, dv: 3 });
      const tensors = (c) => ({ ...c, q: r.array(c.batch * c.heads * c.nq * c.dk, -2, 2), k: r.array(c.batch * c.kvHeads * c.nk * c.dk, -2, 2), v: r.array(c.batch * c.kvHeads * c.nk * c.dv) });
      const cases = [
        { layout: 'bshd', kvHeads: 1 }, { kvHeads: 4 }, { causal: 'top-left', window: [4, 1] }, { causal: true, window: [Infinity, 0] },
        { softcap: 0.7, scale: 2 }, { mask: Float32Array.from({ length: 70 }, (_, j) => (j % 5 ? -0.5 : -Infinity)), maskShape: [1, 1, 1, 70] },
        { mask: Uint8Array.from({ length: 2 * 33 * 70 }, (_, i) => (i % 3 ? 1 : 0)), maskShape: [2, 1, 33, 70] },
        { keyLengths: [0, 41], causal: true }, { alibiSlopes: Float32Array.of(0.5, 0.25, 0.125, 0.0625) },
      ];
      cases.forEach((extra, n) => {
        const c = tensors({ ...base(), ...extra });
        check(lab, c, `family ${n} ${caseLabel(c)}`, 100 + n);
      });
    });

    test('a shared K/V head gets the sum of its query heads\u2019 gradients; rows that see nothing get dq = 0', () => {
      const r = rng(11);
      const nq = 5, nk = 6, dk = 4, dv = 3;
      const q = r.array(2 * nq * dk), k = r.array(nk * dk), v = r.array(nk * dv);
      // MQA over two heads = the sum of two single-head calls
      const both = run(lab, { q, k, v, heads: 2, kvHeads: 1, nq, nk, dk, dv, causal: true }, 5);
      const half = (x, h, per) => x.slice(h * per, (h + 1) * per);
      let dkSum = new Float64Array(nk * dk), dvSum = new Float64Array(nk * dv);
      for (let h = 0; h < 2; ++h) {
        const g = lab.attentionBackward({ q: half(q, h, nq * dk), k, v, dk, causal: true, output: half(both.output, h, nq * dv),
          lse: half(both.lse, h, nq), dOutput: half(both.dOutput, h, nq * dv) });
        assert.deepEqual(g.dq, half(both.grads.dq, h, nq * dk));
        g.dk.forEach((x, i) => (dkSum[i] += x));
        g.dv.forEach((x, i) => (dvSum[i] += x));
      }
      // The per-head sums (added exactly in float64) are another summation order of the same terms: within the
      // reference's bound, which holds for any order, as the shared call's own result is.
      assertWithin(both.grads.dk, both.ref.dk, 'MQA dk');
      assertWithin(dkSum, both.ref.dk, 'dk summed over the heads');
      assertWithin(dvSum, both.ref.dv, 'dv summed over the heads');
      // keyLengths 0: the item sees nothing, lse −Infinity, zero gradients
      const c = { q: r.array(2 * nq * dk), k: r.array(2 * nk * dk), v: r.array(2 * nk * dv), batch: 2, nq, nk, dk, dv, keyLengths: [0, nk] };
      const { grads, lse } = run(lab, c, 6);
      assert.ok(lse.slice(0, nq).every((x) => x === -Infinity));
      assert.ok(grads.dq.slice(0, nq * dk).every((x) => x === 0));
      assert.ok(grads.dk.slice(0, nk * dk).every((x) => x === 0) && grads.dv.slice(0, nk * dv).every((x) => x === 0));
    });

    test('the gradient of a loss through attention matches finite differences of lab.attention', () => {
      // L = Σ dOutput∘output; float32 central differences with h = 2⁻⁶ on a few entries: the forward's rounding
      // (~1e-7·Σ|dO·o| ≈ 1e-6) over 2h gives ~4e-5, the truncation h²/6·|L‴| ≲ 1e-4 here.
      const r = rng(21);
      const c = { q: r.array(2 * 2 * 4 * 3), k: r.array(2 * 1 * 6 * 3), v: r.array(2 * 1 * 6 * 2), batch: 2, heads: 2, kvHeads: 1, nq: 4, dk: 3,
        layout: 'bshd', causal: 'top-left', softcap: 1.5, alibiSlopes: Float32Array.of(0.3, 0.1) };
      const { grads, dOutput } = run(lab, c, 22);
      const loss = (over) => lab.attention({ ...c, ...over }).output.reduce((s, o, i) => s + o * dOutput[i], 0);
      for (const [tensorName, grad] of [['q', grads.dq], ['k', grads.dk], ['v', grads.dv]])
        for (const i of [0, 5, c[tensorName].length - 1]) {
          const h = 2 ** -6, x = Float32Array.from(c[tensorName]);
          x[i] += h;
          const up = loss({ [tensorName]: x });
          x[i] -= 2 * h;
          const down = loss({ [tensorName]: x });
          const fd = (up - down) / (2 * h);
          assert.ok(Math.abs(fd - grad[i]) <= 2e-4 + 1e-3 * Math.abs(grad[i]), `d${tensorName}[${i}]: ${grad[i]} vs finite differences ${fd}`);
        }
    });

    test('out buffers receive the gradients and are returned; untouched when the call throws', () => {
      const r = rng(31);
      const c = { q: r.array(8), k: r.array(12), v: r.array(6), dk: 4 };
      const { output, lse } = lab.attention({ ...c, returnLse: true });
      const dOutput = r.array(output.length);
      const fresh = lab.attentionBackward({ ...c, output, lse, dOutput });
      const out = { dq: new Float32Array(8), dv: new Float32Array(6) };
      const got = lab.attentionBackward({ ...c, output, lse, dOutput, out });
      assert.equal(got.dq, out.dq);
      assert.equal(got.dv, out.dv);
      assert.deepEqual(got.dq, fresh.dq);
      assert.deepEqual(got.dk, fresh.dk);
      assert.deepEqual(got.dv, fresh.dv);
      const keep = { dq: new Float32Array(8).fill(7), dk: new Float32Array(12).fill(7), dv: new Float32Array(6).fill(7) };
      assert.throws(() => lab.attentionBackward({ ...c, output, lse: Float32Array.of(lse[0] + 1, lse[1]), dOutput, out: keep }), RangeError);
      for (const b of Object.values(keep)) assert.ok(b.every((x) => x === 7));
    });

    test("a wrong lse is refused on a row whatever the mask holds on other rows (−1e9 padding)", () => {
      // Models pad with a large finite negative mask value, not −Infinity: a padding row's lse is then about −1e9,
      // where float32 cannot resolve it, but every other row's lse must still be checked as closely as without it.
      const r = rng(51);
      const [batch, heads, kvHeads, nq, nk, dk, dv] = [2, 2, 1, 5, 6, 4, 3];
      const c = { q: r.array(batch * heads * nq * dk), k: r.array(batch * kvHeads * nk * dk), v: r.array(batch * kvHeads * nk * dv),
        batch, heads, kvHeads, nq, nk, dk, dv, scale: 0.5, maskShape: [batch, 1, nq, nk] };
      for (const pad of [-1e4, -1e6, -1e9, -1e30]) {
        // Item 0: its last two keys padded on every row; item 1: its last key, and all of query row 2.
        const mask = Float32Array.from({ length: batch * nq * nk }, (_, t) => {
          const b = Math.floor(t / (nq * nk)), i = Math.floor(t / nk) % nq, j = t % nk;
          return (b === 0 ? j >= 4 : j === 5 || i === 2) ? pad : 0;
        });
        const { output, lse } = lab.attention({ ...c, mask, returnLse: true });
        const dOutput = r.array(output.length);
        lab.attentionBackward({ ...c, mask, output, lse, dOutput }); // its own lse is accepted
        // Rows that see unpadded keys, in both items: ±1 makes their weights sum to e^∓1.
        for (const row of [1, 8, 11, 19])
          for (const shift of [1, -1]) {
            const wrong = lse.slice();
            wrong[row] += shift;
            assert.throws(() => lab.attentionBackward({ ...c, mask, output, lse: wrong, dOutput }),
              (e) => e instanceof RangeError && e.message.startsWith(`attentionBackward: lse[${row}] = `), `padding ${pad}, lse[${row}] ${shift > 0 ? '+' : '−'} 1`);
          }
      }
    });

    test('errors name the argument, write nothing, and the lab keeps working', () => {
      const r = rng(41);
      const c = { q: r.array(2 * 3 * 4), k: r.array(5 * 4), v: r.array(5 * 2), heads: 2, kvHeads: 1, nq: 3, nk: 5, dk: 4, dv: 2, causal: true };
      const { output, lse } = lab.attention({ ...c, returnLse: true });
      const dOutput = r.array(output.length);
      const ok = { ...c, output, lse, dOutput };
      const good = lab.attentionBackward(ok);
      const cases = [
        [{ ...ok, cache: lab.kvCache({ dk: 4, dv: 2, capacity: 8 }) }, TypeError, /cache is not an option of the backward pass: it takes explicit k and v/],
        [{ ...ok, returnLse: true }, TypeError, /unknown option "returnLse"/],
        [{ ...ok, output: undefined }, TypeError, /output must be a Float32Array/],
        [{ ...ok, lse: [1, 2] }, TypeError, /lse must be a Float32Array/],
        [{ ...ok, dOutput: new Float64Array(12) }, TypeError, /dOutput must be a Float32Array/],
        [{ ...ok, out: new Float32Array(24) }, TypeError, /out must be an object \{ dq\?, dk\?, dv\? \}/],
        [{ ...ok, out: { dq: [1] } }, TypeError, /out\.dq must be a Float32Array/],
        [{ ...ok, out: { dx: new Float32Array(1) } }, TypeError, /unknown option "dx"/],
        [{ ...ok, causal: 'left' }, RangeError, /causal must be/],
        [{ ...ok, output: output.subarray(1) }, RangeError, /output must have batch·heads·nq·dv = 1·2·3·2 = 12 elements, got 11/],
        [{ ...ok, dOutput: dOutput.subarray(1) }, RangeError, /dOutput must have/],
        [{ ...ok, lse: lse.subarray(1) }, RangeError, /lse must have batch·heads·nq = 1·2·3 = 6 elements, got 5/],
        [{ ...ok, out: { dk: new Float32Array(3) } }, RangeError, /out\.dk must have batch·kvHeads·nk·dk = 1·1·5·4 = 20 elements, got 3/],
        [{ ...ok, lse: lse.map((x, i) => (i === 2 ? x + 1 : x)) }, RangeError, /lse\[2\] = .* does not match q and k/],
        [{ ...ok, lse: lse.map((x, i) => (i === 4 ? -Infinity : x)) }, RangeError, /lse\[4\] is -Infinity but query 1 of head 1 of item 0 sees keys/],
        [{ ...ok, causal: false }, RangeError, /does not match q and k/],
        [{ ...ok, dOutput: dOutput.map((x, i) => (i === 3 ? NaN : x)) }, RangeError, /dOutput/],
        [{ ...ok, dOutput: new Float32Array(12).fill(3e38) }, RangeError, /the gradient .* overflowed float32/],
        [{ ...ok, kvHeads: 3 }, RangeError, /kvHeads must divide heads = 2, got 3/],
        [{ ...ok, softcap: 0 }, RangeError, /softcap/],
        [{ ...ok, window: [1.5, 0] }, RangeError, /window/],
        [{ ...ok, mask: new Float32Array(7) }, RangeError, /mask must have/],
        [{ ...ok, keyLengths: [9] }, RangeError, /keyLengths\[0\] = 9 exceeds nk = 5/],
        [{ ...ok, alibiSlopes: new Float32Array(3) }, RangeError, /alibiSlopes must have heads = 2 entries, got 3/],
        [{ ...ok, q: c.q.subarray(1), nq: 3 }, RangeError, /q must have/],
      ];
      for (const [opts, type, message] of cases) {
        const out = { dq: new Float32Array(24).fill(9), dk: new Float32Array(20).fill(9), dv: new Float32Array(10).fill(9) };
        const withOut = opts.out === undefined ? { ...opts, out } : opts;
        assert.throws(() => lab.attentionBackward(withOut), (e) => e instanceof type && message.test(e.message) && e.message.startsWith('attentionBackward: '),
          `${caseLabel(opts)} should throw ${type.name} ${message}`);
        if (opts.out === undefined) for (const b of Object.values(out)) assert.ok(b.every((x) => x === 9), `${message}: an out buffer was written`);
        const again = lab.attentionBackward(ok);
        assert.deepEqual(again, good);
      }
    });
  });
}
