// Edges of the async twins: a stray second argument to lab.attention (as list.map passes an index) changes
// nothing; an empty maskShape is read as the engine reads it, so the twin refuses what the synchronous call
// refuses; a split call is computed by the workers (counted); dispose() during a split call rejects it (no silent
// run on the calling thread).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { init } from './support/load.mjs';
import { rng } from './support/random.mjs';

const r = rng(77);
// 8 heads × 128 × 128 at d = 64: enough work to be cut in two (async.js's tuning).
const big = { q: r.array(8 * 128 * 64, -1, 1), k: r.array(8 * 128 * 64, -1, 1), v: r.array(8 * 128 * 64, -1, 1), heads: 8, nq: 128, nk: 128, dk: 64 };
const lab = await init({ threads: 2 });
after(() => lab.dispose());

test('lab.attention ignores a second argument (list.map passes the index)', () => {
  const want = lab.attention(big).output;
  const got = [big, big].map(lab.attention);
  for (const g of got) assert.deepEqual(g.output, want);
});

test('maskShape [] is no shape: the twin refuses a one-element mask as the synchronous call does', async () => {
  const opts = { ...big, mask: new Float32Array(1), maskShape: [] };
  let want;
  try {
    lab.attention(opts);
  } catch (e) {
    want = e;
  }
  assert.ok(want instanceof RangeError, 'the synchronous call refuses');
  await assert.rejects(lab.attentionAsync(opts), (e) => e.constructor === want.constructor && e.message === want.message);
});

test('a split call is computed by the workers: counted as their parts, nothing run again on the calling thread', async () => {
  const before = lab.threadStats();
  assert.deepEqual((await lab.attentionAsync(big)).output, lab.attention(big).output);
  const after = lab.threadStats();
  assert.equal(after.workerParts - before.workerParts, 2, 'one part per worker');
  assert.equal(after.reruns, before.reruns, 'a valid call runs once');
  assert.equal(after.inlineCalls, before.inlineCalls);
});

test('dispose() while a split call runs rejects it', async () => {
  const own = await init({ threads: 2 });
  const call = own.attentionAsync(big);
  own.dispose();
  await assert.rejects(call, /disposed/);
});
