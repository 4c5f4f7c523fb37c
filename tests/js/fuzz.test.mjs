// The JS layer's fuzzer (tests/js/fuzz/): a bounded, deterministic pass over every operator — sync, async on 2–3
// workers and the float64 reference, valid calls and calls with one thing wrong, disposing during calls — which
// must find nothing outside the list of known open defects; each known defect's reproducer, which must still fail
// as listed (an entry whose defect gets fixed fails here until it is taken off KNOWN_OPEN); and the reproducers of
// defects the fuzzer found that are fixed, which must pass. `npm run fuzz:js -- --cases N --seed S` runs longer.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { attentionFullRef } from './support/attention-full-ref.mjs';
import { rng } from './support/random.mjs';
import { encode } from './fuzz/json.mjs';
import { KNOWN_OPEN } from './fuzz/known.mjs';
import { fuzz, makeEnv, runOne } from './fuzz/run.mjs';

// About 7 s of CPU; every failure prints its seed, index and case. Of seeds 1–24, 19 is one whose 400 cases met
// every defect the fuzzer found (the open one and those fixed below) on the builds before their fixes: the pass is
// a net that has caught.
const SEED = 19, CASES = 400;

const env = makeEnv();
after(() => env.close());

test(`a bounded pass: ${CASES} cases from seed ${SEED}, nothing outside the known list`, async () => {
  const lines = [];
  const s = await fuzz({ seed: SEED, cases: CASES, env, log: (line) => lines.push(line) });
  assert.equal(s.cases, CASES);
  for (const op of ['attention', 'attentionBackward', 'kvCache', 'softmax', 'softmaxBackward', 'matmul', 'rope', 'multiHeadAttention', 'gpt', 'dispose'])
    assert.ok(s.perOp[op]?.cases > 0, `the pass drew no ${op} case`);
  // The async twins really ran on the workers (the lowered tuning cuts small calls), each operator's in parts.
  for (const op of ['attention', 'attentionBackward', 'softmax', 'softmaxBackward', 'matmul', 'rope', 'multiHeadAttention', 'gpt'])
    assert.ok(s.async[op]?.sent > 0, `no valid ${op} call was sent to the workers`);
  for (const op of ['attention', 'attentionBackward', 'softmax', 'softmaxBackward', 'matmul'])
    assert.ok(s.async[op].parts > s.async[op].sent, `no ${op} call was cut into several parts`);
  assert.equal(s.unexpected.length, 0, `${s.unexpected.length} failures:\n${lines.join('\n')}`);
});

// A reproducer runs on labs of its own: a defect of memory growth shows only on a lab that has not grown yet.
async function failuresOf(c) {
  const own = makeEnv();
  try {
    return await runOne(own, { seed: 'fixed', ...c });
  } finally {
    own.close();
  }
}

describe('known open defects (KNOWN_OPEN in tests/js/fuzz/known.mjs): each reproducer still fails as listed', () => {
  for (const k of KNOWN_OPEN)
    test(k.id, async () => {
      const failures = await failuresOf(k.repro);
      assert.ok(failures.some((f) => f.known === k.id),
        `${k.id} no longer fails (${failures.map((f) => `${f.check}: ${f.detail}`).join('; ') || 'no failure'}): ` +
        'if it is fixed, take it off KNOWN_OPEN so that the fuzzer checks it again');
      const other = failures.filter((f) => f.known !== k.id);
      assert.deepEqual(other, [], `the reproducer of ${k.id} fails otherwise too`);
    });
});

// Inputs whose products round (as known.mjs draws them).
const rows = (x) => Float32Array.from({ length: x }, (_, i) => Math.sin(1.3 * i + 0.5));

describe('defects the fuzzer found, fixed: their reproducers pass', () => {
  test('ropeAsync with an out backed by a SharedArrayBuffer resolves (it wrote into out, then rejected: "Found invalid object in transferList")', async () => {
    assert.deepEqual(await failuresOf({ op: 'rope', backend: 'scalar', threads: 2,
      args: { x: rows(32), opts: { dk: 8, out: new Float32Array(new SharedArrayBuffer(128)) } } }), []);
  });

  test('matmulAsync equals matmul when its cut would leave a last part of 1–3 rows (transposeB; the rows took the engine\'s few-row path)', async () => {
    for (const m of [65, 66, 67])
      assert.deepEqual(await failuresOf({ op: 'matmul', backend: 'simd', threads: 2,
        args: { a: rows(m * 16), b: rows(8 * 16), opts: { m, k: 16, n: 8, transposeB: true } } }), [], `m ${m}`);
  });

  test('a call refused for its sizes allocates nothing (an nq far beyond q grew wasm memory for good)', async () => {
    const good = { q: rows(12), k: rows(20), v: rows(20), nq: 3, nk: 5, dk: 4, dv: 4 };
    assert.deepEqual(await failuresOf({ op: 'attention', backend: 'scalar', threads: 2, args: { opts: good },
      bad: { name: 'huge nq, tiny q', args: { opts: { ...good, nq: 599186 } }, cls: 'RangeError', names: ['q', 'nq'], tag: 'huge' } }), []);
  });

  test('kvCache.append refuses rope: { rotaryDim: 0 }, as lab.rope does', async () => {
    const args = { create: { dk: 4, dv: 2, capacity: 4 }, appends: [], call: { kind: 'append', k: rows(4), v: rows(2), opts: {} } };
    const bad = { ...args, call: { ...args.call, opts: { rope: { rotaryDim: 0 } } } };
    assert.deepEqual(await failuresOf({ op: 'kvCache', backend: 'scalar', threads: 2, args,
      bad: { name: 'rope.rotaryDim 0', args: bad, cls: 'RangeError', names: ['rotaryDim'], tag: 'rotaryDim0' } }), []);
  });

  test('sizes past 2^31 are named by the sizes given (the message named a buffer: "out is too large: a x b elements")', async () => {
    const good = { q: rows(8), k: rows(8), v: rows(8), nq: 2, nk: 2, dk: 4, dv: 4 };
    assert.deepEqual(await failuresOf({ op: 'attention', backend: 'simd', threads: 2, args: { opts: good },
      bad: { name: 'nq·dv past 2^31', args: { opts: { ...good, nq: 2 ** 20, dv: 2 ** 12 } }, cls: 'RangeError', names: ['q', 'v', 'nq', 'dv'], tag: 'past2^31' } }), []);
  });

  test('attentionBackward refuses a wrong lse on a row whatever the mask holds on other rows (−1e9 padding)', async () => {
    const r = rng(29);
    const [batch, heads, kvHeads, nq, nk, dk, dv] = [2, 2, 1, 5, 6, 4, 3];
    const c = { q: r.array(batch * heads * nq * dk), k: r.array(batch * kvHeads * nk * dk), v: r.array(batch * kvHeads * nk * dv), batch, heads, kvHeads, nq, nk, dk, dv };
    // Item 0: its last two keys padded; item 1: its last key, and all of query row 2.
    c.mask = Float32Array.from({ length: batch * nq * nk }, (_, t) => {
      const b = Math.floor(t / (nq * nk)), i = Math.floor(t / nk) % nq, j = t % nk;
      return (b === 0 ? j >= 4 : j === 5 || i === 2) ? -1e9 : 0;
    });
    c.maskShape = [batch, 1, nq, nk];
    const ref = attentionFullRef(c);
    c.output = Float32Array.from(ref.out.value), c.lse = Float32Array.from(ref.lse.value), c.dOutput = r.array(c.output.length);
    const lse = c.lse.slice();
    lse[8] += 1;  // item 0, head 1, query 3: sees keys 0…3
    const failures = await failuresOf({ op: 'attentionBackward', backend: 'simd', threads: 2, args: { opts: c },
      bad: { name: 'lse shifted on one row', args: { opts: { ...c, lse } }, cls: 'RangeError', names: ['lse'], tag: 'lse' } });
    assert.deepEqual(failures, [], encode(c, false));
  });

  test('GPT.trainStep with every target ignored names targets', async () => {
    const config = { vocabSize: 7, context: 3, dModel: 4, heads: 2, layers: 1, seed: 5 };
    const call = { kind: 'trainStep', tokens: Int32Array.of(1, 2, 3, 4, 5, 6), targets: Int32Array.of(2, 3, 4, -1, 6, 0), opts: { lr: 0.05, beta1: 0, beta2: 0, eps: 1, weightDecay: 0 } };
    const failures = await failuresOf({ op: 'gpt', backend: 'scalar', threads: 2, args: { config, call },
      bad: { name: 'no target counted', args: { config, call: { ...call, targets: new Int32Array(6).fill(-1) } }, cls: 'RangeError', names: ['targets'] } });
    assert.deepEqual(failures, []);
  });
});
