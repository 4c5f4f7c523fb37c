// GPT.trainStepAsync with the optimizer split across the workers: each worker keeps a replica between steps and
// owns one slice of the parameters (its summed gradient, AdamW update and moments). On 2 and 3 workers, through
// shared memory and through messages (init({ exchange: 'message' })), on a model whose parameter count is odd
// (19 575: the last slice is no multiple of 4, and every slice cuts through tensors), clipping on. Against trainStep
// on an identical model: per step within the bound of a gradient summed in another order, the same curve over 50
// steps, bit for bit where one part is the whole gradient (the slices then compute exactly trainStep's update);
// both exchanges bit for bit the same; the model's own state (read, trainStep, setWeights) and the replicas' kept
// together; a refused or failed step leaves weights and moments as they were everywhere; dispose.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { assertSameFirstStep, ulp } from './support/gpt-step.mjs';

import { init } from './support/load.mjs';

const CONFIG = { vocabSize: 41, context: 8, dModel: 27, heads: 3, layers: 2, seed: 5 };
const PARAMETERS = 19575;
const OPTS = { lr: 3e-3, weightDecay: 0.1, gradClip: 0.5 };

function batch(seed, sequences = 6) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) % CONFIG.vocabSize;
  const tokens = Int32Array.from({ length: sequences * CONFIG.context }, next);
  // targets a function of the tokens (with noise), so 50 steps have a curve to follow
  const targets = Int32Array.from(tokens, (t, i) => (i % 7 === 3 ? next() : (t * 3 + 1) % CONFIG.vocabSize));
  return { tokens, targets };
}
const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const sameWeights = (a, b) => Object.keys(a).every((k) => bits(a[k]).equals(bits(b[k])));

describe('GPT.trainStepAsync by slices', async () => {
  const one = await init({ gpt: true });
  const labs = {};
  for (const threads of [2, 3]) for (const exchange of ['shared', 'message']) labs[`${threads} workers, ${exchange === 'shared' ? 'shared memory' : 'messages'}`] = await init({ gpt: true, threads, exchange });
  after(() => Object.values(labs).forEach((lab) => lab.dispose()));

  test('the model has an odd parameter count (slices cut through tensors; the last one no multiple of 4)', () => {
    assert.equal(one.createGPT(CONFIG).parameterCount, PARAMETERS);
  });

  // Step 1 with β₁ = β₂ = 0 and eps = 1, which shows the gradient itself, then 50 AdamW steps with weight decay and
  // clipping: trainStep's run on this thread, the same for every lab below (one model, config and batches), made once.
  const FIRST = { lr: 0.05, beta1: 0, beta2: 0, eps: 1, weightDecay: 0 };
  let curve;
  const trainStepCurve = () => {
    if (!curve) {
      const a = one.createGPT(CONFIG);
      const w0 = a.getWeights(), { tokens, targets } = batch(1);
      const loss1 = a.trainStep(tokens, targets, FIRST), w1 = a.getWeights();
      const losses = Array.from({ length: 50 }, (_, s) => a.trainStep(batch(100 + s).tokens, batch(100 + s).targets, OPTS));
      a.dispose();
      curve = { w0, loss1, w1, losses };
    }
    return curve;
  };

  for (const [name, lab] of Object.entries(labs)) {
    test(`${name}: each step within the bound of a reordered float32 sum; the same curve over 50 steps`, async () => {
      const { w0, loss1: want, w1, losses } = trainStepCurve();
      const b = lab.createGPT(CONFIG);
      // Step 1: the per-token losses are the same floats summed in double in two groupings (within an ulp of the
      // float mean); the weights within the bound of a reordered float32 sum (support/gpt-step.mjs).
      const { tokens, targets } = batch(1);
      const got = await b.trainStepAsync(tokens, targets, FIRST);
      assert.ok(Math.abs(got - want) <= ulp(want), `loss ${got} vs ${want}`);
      assertSameFirstStep(w0, w1, b.getWeights());
      // Then the 50 AdamW steps. Adam moves each weight by about lr per step whatever its gradient's size, so runs
      // whose gradients agree to 2⁻¹³ part only on the few entries whose gradient is that near 0, and their losses
      // differ by about ‖∇L‖·‖Δw‖, far below the loss's own rounding: each step's loss within 4 float32 ulps of
      // trainStep's (measured: within one, at every step of all four runs). A step applied twice, skipped, or a
      // slice updated wrongly moves the loss by far more (the curve falls ~0.01 per step).
      const apart = [];
      for (let s = 0; s < 50; ++s) {
        const { tokens, targets } = batch(100 + s);
        const la = losses[s], lb = await b.trainStepAsync(tokens, targets, OPTS);
        apart.push(Math.abs(lb - la) / ulp(la));
      }
      assert.ok(losses[0] - losses[49] > 0.1, `the curve falls: ${losses[0]} → ${losses[49]}`);
      const worst = Math.max(...apart);
      assert.ok(worst <= 4, `losses apart by ${worst} ulps`);
      assert.equal(b.steps, 51);
      b.dispose();
    });

    test(`${name}: one part is the whole gradient: bit for bit with trainStep, its state kept with the model's`, async () => {
      // A batch of one sequence goes to one worker: every slice owner sums one part (a copy) and its sum of squares
      // is made of the engine's own chunk sums, so each slice's update is trainStep's, bit for bit.
      const a = one.createGPT(CONFIG), b = lab.createGPT(CONFIG);
      const step = async (s, sync) => {
        const { tokens, targets } = batch(200 + s, 1);
        const want = a.trainStep(tokens, targets, OPTS);
        const got = sync ? b.trainStep(tokens, targets, OPTS) : await b.trainStepAsync(tokens, targets, OPTS);
        assert.equal(got, want, `step ${s}`);
      };
      for (let s = 0; s < 3; ++s) await step(s, false);
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      assert.equal(b.steps, 3);
      // trainStep on this thread continues from the workers' weights and moments; the workers then from its.
      await step(3, true);
      await step(4, false);
      // setWeights on this thread: the next step starts from the weights set (moments kept).
      const w = a.getWeights();
      w['transformer.wpe.weight'] = w['transformer.wpe.weight'].map((x) => x * 0.5);
      a.setWeights(w), b.setWeights(w);
      await step(5, false);
      await step(6, false);
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      assert.ok(bits(b.toSafetensors()).equals(bits(a.toSafetensors())));
      assert.equal(b.steps, a.steps);
      a.dispose(), b.dispose();
    });

    test(`${name}: a refused step (non-finite loss) changes nothing, here or on the workers`, async () => {
      const b = lab.createGPT(CONFIG), c = lab.createGPT(CONFIG);
      const good = (s) => batch(300 + s);
      for (const m of [b, c]) await m.trainStepAsync(good(0).tokens, good(0).targets, OPTS);
      const kept = b.getWeights();
      // Logits that overflow: the engine's error for the loss, from the parts' sums, before any slice moved.
      const huge = { 'transformer.ln_f.weight': new Float32Array(CONFIG.dModel).fill(1e38), 'transformer.wte.weight': new Float32Array(CONFIG.vocabSize * CONFIG.dModel).fill(100) };
      b.setWeights(huge);
      const diverged = b.getWeights();
      await assert.rejects(b.trainStepAsync(good(1).tokens, good(1).targets, OPTS), (e) => e.constructor === Error && /^GPT\.trainStep: the loss is/.test(e.message));
      assert.ok(sameWeights(b.getWeights(), diverged));
      assert.equal(b.steps, 1);
      // Back to the weights it had: the moments and the step count are c's, so the next steps are c's bit for bit.
      b.setWeights(kept);
      for (let s = 1; s < 4; ++s) {
        const { tokens, targets } = good(s);
        assert.equal(await b.trainStepAsync(tokens, targets, OPTS), await c.trainStepAsync(tokens, targets, OPTS));
      }
      assert.ok(sameWeights(b.getWeights(), c.getWeights()));
      b.dispose(), c.dispose();
    });
  }

  test('a step that fails on the workers (no memory for a part) leaves every replica as it was', async () => {
    // 1536 sequences of 16 tokens over a 65 536-token vocabulary: each part's logits (512 or 768 sequences) need
    // 2 GiB or more, past wasm32, so the gradients round fails on every worker after the replicas were brought up to
    // date. (Short sequences: the steps around it, a sequence or two per worker, are small ones.)
    for (const lab of [labs['2 workers, shared memory'], labs['3 workers, messages']]) {
      const config = { vocabSize: 65536, context: 16, dModel: 8, heads: 1, layers: 1, seed: 2 };
      const b = lab.createGPT(config), c = lab.createGPT(config);
      const small = (s) => {
        const tokens = Int32Array.from({ length: 3 * 16 }, (_, i) => (i * 7 + s) % 29);
        return [tokens, tokens.map((t) => t + 1), OPTS];
      };
      for (const m of [b, c]) await m.trainStepAsync(...small(0));
      const w = b.getWeights();
      const tokens = Int32Array.from({ length: 1536 * 16 }, (_, i) => i % 29);
      await assert.rejects(b.trainStepAsync(tokens, tokens.map((t) => t + 1)), /^Error: GPT\.trainStep: out of memory allocating scratch/);
      assert.ok(sameWeights(b.getWeights(), w));
      assert.equal(b.steps, 1);
      for (let s = 1; s < 3; ++s) assert.equal(await b.trainStepAsync(...small(s)), await c.trainStepAsync(...small(s)));
      assert.ok(sameWeights(b.getWeights(), c.getWeights()));
      b.dispose(), c.dispose();
    }
  });

  test('shared memory and messages: the same rounds, bit for bit', async () => {
    for (const threads of [2, 3]) {
      const b = labs[`${threads} workers, shared memory`].createGPT(CONFIG), c = labs[`${threads} workers, messages`].createGPT(CONFIG);
      for (let s = 0; s < 4; ++s) {
        const { tokens, targets } = batch(400 + s);
        assert.equal(await b.trainStepAsync(tokens, targets, OPTS), await c.trainStepAsync(tokens, targets, OPTS));
      }
      assert.ok(sameWeights(b.getWeights(), c.getWeights()));
      b.dispose(), c.dispose();
    }
  });

  test('reads while a step runs see the last committed step (the model brought up to it, not to the step under way)', async () => {
    for (const lab of [labs['2 workers, shared memory'], labs['3 workers, messages']]) {
      const b = lab.createGPT(CONFIG), c = lab.createGPT(CONFIG);
      const [s1, s2] = [batch(600), batch(601)];
      await b.trainStepAsync(s1.tokens, s1.targets, OPTS);
      await c.trainStepAsync(s1.tokens, s1.targets, OPTS);
      const pending = b.trainStepAsync(s2.tokens, s2.targets, OPTS);
      const during = b.getWeights(); // b's model on this thread is behind its workers here: taken now, mid-step
      assert.equal(b.steps, 1);
      await pending;
      assert.ok(sameWeights(during, c.getWeights()));
      assert.ok(!sameWeights(b.getWeights(), during));
      assert.equal(b.steps, 2);
      b.dispose(), c.dispose();
    }
  });

  test('a worker that dies: the next step makes the training state again from the model, on the workers there are', async () => {
    // Batches of one sequence (one part: bit for bit with trainStep whatever the number of workers), so the steps
    // after a worker's death — on the workers there are then, the state made again from the model's weights and
    // moments — are trainStep's exactly. (A part that fails mid-step is the no-memory case above.)
    const lab = await init({ gpt: true, threads: 3 });
    try {
      const a = one.createGPT(CONFIG), b = lab.createGPT(CONFIG), kill = Symbol.for('attnlab.killWorker');
      const step = async (s, killing) => {
        const { tokens, targets } = batch(700 + s, 1);
        const got = b.trainStepAsync(tokens, targets, OPTS);
        if (killing !== undefined) b[kill](killing); // (before the step's first round: steps start after this turn)
        assert.equal(await got, a.trainStep(tokens, targets, OPTS), `step ${s}`);
      };
      await step(0), await step(1);
      b[kill](1); // between steps
      await step(2), await step(3);
      await step(4, 0); // as a step is called
      await step(5);
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      assert.equal(b.steps, 6);
      assert.throws(() => one.createGPT(CONFIG)[kill](0), /no training state on workers/);
      a.dispose(), b.dispose();
    } finally {
      lab.dispose();
    }
  });

  test('dispose: the model refuses further steps, the lab trains others; init checks exchange', async () => {
    const lab = labs['3 workers, shared memory'];
    const b = lab.createGPT(CONFIG);
    const { tokens, targets } = batch(500);
    await b.trainStepAsync(tokens, targets, OPTS);
    b.dispose();
    await assert.rejects(b.trainStepAsync(tokens, targets), /^Error: GPT\.trainStep: this model was disposed$/);
    const c = lab.createGPT(CONFIG), a = one.createGPT(CONFIG);
    const one1 = batch(501, 1);
    assert.equal(await c.trainStepAsync(one1.tokens, one1.targets, OPTS), a.trainStep(one1.tokens, one1.targets, OPTS));
    assert.ok(sameWeights(a.getWeights(), c.getWeights()));
    c.dispose(), a.dispose();
    await assert.rejects(init({ gpt: true, threads: 2, exchange: 'no' }), /^TypeError: init: exchange must be 'shared' or 'message', got "no"$/);
  });
});
