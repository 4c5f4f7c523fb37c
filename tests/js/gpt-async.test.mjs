// GPT.trainStepAsync: trainStep with the batch's sequences split across init({ threads: 2 })'s workers, on both
// backends. Against trainStep on an identical model: the same loss (to a float's last bit), the same update (to
// the float32 bound of a gradient summed in another order), bit for bit when one worker gets the whole batch;
// ignored targets weighted as the engine's loss weights them; the same errors; the model unchanged by any failure;
// steps on one model serialized; dispose of the model or the lab during a step.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { assertSameFirstStep, ulp } from './support/gpt-step.mjs';

import { backends, init } from './support/load.mjs';

const CONFIG = { vocabSize: 29, context: 8, dModel: 16, heads: 2, kvHeads: 1, layers: 2, seed: 3 };
// The other paths of the model: rotary positions, a separate lm_head, no biases, no MLP.
const OTHER = { ...CONFIG, position: 'rope', tied: false, bias: false, mlp: false, seed: 4 };
const B = 5; // sequences per batch: parts of 2 and 3 on two workers

function batch(seed, sequences = B) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) % CONFIG.vocabSize;
  const tokens = Int32Array.from({ length: sequences * CONFIG.context }, next);
  const targets = Int32Array.from({ length: sequences * CONFIG.context }, next);
  return { tokens, targets };
}
const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const sameWeights = (a, b) => Object.keys(a).every((k) => bits(a[k]).equals(bits(b[k])));

for (const { name, simd } of backends) {
  describe(`GPT.trainStepAsync (${name})`, async () => {
    const [one, two] = await Promise.all([init({ gpt: true, simd, threads: 1 }), init({ gpt: true, simd, threads: 2 })]);
    after(() => two.dispose());

    for (const config of [CONFIG, OTHER]) test(`one step: the loss to the last bit, the update within the bound of a reordered float32 sum (${config.position}, tied ${config.tied})`, async () => {
      // β₁ = β₂ = 0, eps = 1: the step moves each weight by lr·g/(|g| + 1), which shows the gradient itself
      // (Adam's usual steps are nearly sign(g)·lr and would hide a gradient off by a factor).
      const opts = { lr: 0.05, beta1: 0, beta2: 0, eps: 1, weightDecay: 0 };
      const { tokens, targets } = batch(1);
      targets.fill(-1, 0, 12); // the first part counts 4 targets, the second 24: a part weighted by its own
      targets[30] = -1;        // count instead of the batch's would be off by far more than the bound
      const a = two.createGPT(config), b = two.createGPT(config);
      const w0 = a.getWeights();
      const want = a.trainStep(tokens, targets, opts);
      const stats = two.threadStats();
      const got = await b.trainStepAsync(tokens, targets, opts);
      // Both halves of the batch were computed by the workers; nothing ran on this thread instead.
      assert.deepEqual(two.threadStats(), { ...stats, workerParts: stats.workerParts + 2 });
      // The per-token losses are the same floats, summed in double in two groupings: the means differ by far
      // less than half an ulp of the float result, so they round to the same float or (at a rounding boundary)
      // neighbours.
      assert.ok(Math.abs(got - want) <= ulp(want), `loss ${got} vs ${want}`);
      assert.equal(b.steps, 1);
      // The weights: within the bound of a reordered float32 sum (support/gpt-step.mjs).
      assertSameFirstStep(w0, a.getWeights(), b.getWeights());
      a.dispose(), b.dispose();
    });

    test('several AdamW steps (weight decay, clipping): losses and weights stay together', async () => {
      const opts = { lr: 3e-3, weightDecay: 0.1, gradClip: 0.5 };
      const a = two.createGPT(CONFIG), b = two.createGPT(CONFIG);
      const w0 = a.getWeights();
      for (let s = 0; s < 5; ++s) {
        const { tokens, targets } = batch(10 + s);
        targets.fill(-1, 8 * s, 8 * s + 5);
        const want = a.trainStep(tokens, targets, opts), got = await b.trainStepAsync(tokens, targets, opts);
        // Step 1 as above; later steps start from weights a few ulps apart (next check), moving the loss by
        // ~‖∇L‖·‖Δw‖ ≪ 1e-5 of it.
        assert.ok(Math.abs(got - want) <= (s === 0 ? ulp(want) : 1e-5 * want), `step ${s}: loss ${got} vs ${want}`);
      }
      assert.equal(b.steps, 5);
      // Adam moves each weight by about lr per step whatever the gradient's size, so gradients that agree to
      // 2⁻¹³ of their tensor's largest agree in direction except where they are that close to 0, where the two
      // runs may step apart by up to 2·lr. Such entries are a small minority: the distance between the runs stays
      // a small fraction of the distance travelled (1/10 allows a tenth of the entries to go opposite ways on
      // every step).
      const wa = a.getWeights(), wb = b.getWeights();
      for (const key of Object.keys(w0)) {
        let apart = 0, travelled = 0;
        for (let i = 0; i < w0[key].length; ++i) {
          apart += (wa[key][i] - wb[key][i]) ** 2;
          travelled += (wa[key][i] - w0[key][i]) ** 2;
        }
        assert.ok(Math.sqrt(apart) <= 0.1 * Math.sqrt(travelled), `${key}: ${Math.sqrt(apart)} apart after travelling ${Math.sqrt(travelled)}`);
      }
      a.dispose(), b.dispose();
    });

    test('a batch smaller than the workers, and a part with nothing to learn: bit for bit, state and all', async () => {
      const opts = { lr: 1e-2, gradClip: 0.3 };
      const a = two.createGPT(CONFIG), b = two.createGPT(CONFIG);
      for (let s = 0; s < 3; ++s) {
        // One sequence (one worker gets it all), then 3 whose last two are all ignored (the second part is not
        // sent): either way one part is the whole gradient, computed as trainStep computes it.
        const { tokens, targets } = batch(20 + s, s === 1 ? 3 : 1);
        if (s === 1) targets.fill(-1, CONFIG.context);
        const want = a.trainStep(tokens, targets, opts), got = await b.trainStepAsync(tokens, targets, opts);
        assert.equal(got, want);
      }
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      assert.equal(b.steps, a.steps);
      assert.ok(bits(b.toSafetensors()).equals(bits(a.toSafetensors())));
      const prompt = Int32Array.from([1, 2, 3]);
      assert.deepEqual(b.generate(prompt, { maxTokens: 6, seed: 4 }), a.generate(prompt, { maxTokens: 6, seed: 4 }));
      // The moments too: one more step of each is still the same.
      const { tokens, targets } = batch(30, 1);
      assert.equal(await b.trainStepAsync(tokens, targets, opts), a.trainStep(tokens, targets, opts));
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      a.dispose(), b.dispose();
    });

    test('a model from loadGPT trains on the workers too', async () => {
      const a = one.createGPT(OTHER);
      a.trainStep(...Object.values(batch(80)));
      const bytes = a.toSafetensors(), b = two.loadGPT(bytes), c = two.loadGPT(bytes);
      const { tokens, targets } = batch(81, 1);
      assert.equal(await b.trainStepAsync(tokens, targets), c.trainStep(tokens, targets));
      assert.ok(sameWeights(b.getWeights(), c.getWeights()));
      a.dispose(), b.dispose(), c.dispose();
    });

    test('threads: 1 runs trainStep itself', async () => {
      const a = one.createGPT(CONFIG), b = one.createGPT(CONFIG);
      const { tokens, targets } = batch(40);
      const stats = one.threadStats();
      assert.equal(await b.trainStepAsync(tokens, targets, { lr: 1e-2 }), a.trainStep(tokens, targets, { lr: 1e-2 }));
      assert.deepEqual(one.threadStats(), { ...stats, inlineCalls: stats.inlineCalls + 1 });
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      a.dispose(), b.dispose();
    });

    test('errors: the class and message of trainStep, nothing changed', async () => {
      for (const lab of [one, two]) {
        const model = lab.createGPT(CONFIG), kept = model.getWeights();
        const { tokens, targets } = batch(50);
        const bad = [
          [new Float32Array(16), targets], [tokens, new Int32Array(3)], [tokens, targets, { lr: -1 }],
          [tokens, targets, { beta2: 1 }], [tokens, targets, { momentum: 0.9 }], [tokens, targets, { lr: '1' }],
          [tokens.subarray(0, 12), targets.subarray(0, 12)], [Int32Array.from(tokens, (t, i) => (i === 17 ? 29 : t)), targets],
          [tokens, new Int32Array(tokens.length).fill(-1)], [tokens, Int32Array.from(targets, (t, i) => (i === 3 ? -2 : t))],
        ];
        for (const args of bad) {
          let want;
          try {
            model.trainStep(...args);
          } catch (e) {
            want = e;
          }
          assert.ok(want, `trainStep(${args.length}) throws`);
          await assert.rejects(model.trainStepAsync(...args), (e) => e.constructor === want.constructor && e.message === want.message);
        }
        // Logits that overflow (a huge final norm times the embedding): the engine's numerical error for the
        // loss, from the parts' sums as from one call.
        const huge = { 'transformer.ln_f.weight': new Float32Array(CONFIG.dModel).fill(1e38), 'transformer.wte.weight': new Float32Array(CONFIG.vocabSize * CONFIG.dModel).fill(100) };
        model.setWeights(huge);
        const diverged = model.getWeights();
        assert.throws(() => model.trainStep(tokens, targets), /^Error: GPT\.trainStep: the loss is/);
        await assert.rejects(model.trainStepAsync(tokens, targets), (e) => e.constructor === Error && /^GPT\.trainStep: the loss is/.test(e.message));
        assert.ok(sameWeights(model.getWeights(), diverged));
        assert.equal(model.steps, 0);
        model.setWeights(kept);
        model.dispose();
        await assert.rejects(model.trainStepAsync(tokens, targets), /^Error: GPT\.trainStep: this model was disposed$/);
      }
    });

    test('an error in a worker (no memory for its part\'s activations): rejected, nothing changed, the lab still works', async () => {
      // 1024 sequences of 16 tokens over a 65 536-token vocabulary: each half's logits alone need 2 GiB, more than
      // wasm32 has, so each worker's allocation fails at once (the message names the part's size: 512 × 16 tokens).
      // (Short sequences: the step after, one sequence per worker, is then a small one.)
      const model = two.createGPT({ vocabSize: 65536, context: 16, dModel: 8, heads: 1, layers: 1 }), w0 = model.getWeights();
      const tokens = Int32Array.from({ length: 1024 * 16 }, (_, i) => i % 29), targets = tokens.map((t) => t + 1);
      await assert.rejects(model.trainStepAsync(tokens, targets), /^Error: GPT\.trainStep: out of memory allocating scratch for the model's activations \(512 × 16 tokens\)$/);
      assert.ok(sameWeights(model.getWeights(), w0));
      assert.equal(model.steps, 0);
      assert.equal(typeof (await model.trainStepAsync(tokens.subarray(0, 32), targets.subarray(0, 32))), 'number');
      assert.equal(model.steps, 1);
      model.dispose();
    });

    test('steps on one model run in call order; meanwhile trainStep and setWeights are refused, reads work', async () => {
      const a = two.createGPT(CONFIG), b = two.createGPT(CONFIG);
      const batches = [batch(60), batch(61), batch(62)];
      for (const { tokens, targets } of batches) await a.trainStepAsync(tokens, targets);
      const w0 = b.getWeights();
      const pending = batches.map(({ tokens, targets }) => b.trainStepAsync(tokens, targets));
      for (const { tokens } of batches) tokens.fill(0); // the batch was taken at the call
      assert.throws(() => b.trainStep(batches[0].tokens, batches[0].targets), /^Error: GPT\.trainStep: a trainStepAsync is still running on this model; await it first$/);
      assert.throws(() => b.setWeights(w0), /^Error: GPT\.setWeights: a trainStepAsync is still running/);
      assert.ok(sameWeights(b.getWeights(), w0)); // nothing applied before the parts are back
      const losses = await Promise.all(pending);
      assert.equal(losses.length, 3);
      assert.ok(sameWeights(a.getWeights(), b.getWeights()));
      assert.equal(b.steps, 3);
      b.trainStep(batches[0].tokens, batches[0].targets); // free again
      a.dispose(), b.dispose();
    });

    test('dispose of the model or of the lab during a step: rejected, nothing applied', async () => {
      const { tokens, targets } = batch(70);
      const model = two.createGPT(CONFIG);
      const step = model.trainStepAsync(tokens, targets);
      model.dispose();
      await assert.rejects(step, /^Error: GPT\.trainStep: this model was disposed during trainStepAsync; the step was not applied$/);
      const lab = await init({ gpt: true, simd, threads: 2 });
      const kept = lab.createGPT(CONFIG), w0 = kept.getWeights();
      const running = kept.trainStepAsync(tokens, targets);
      lab.dispose();
      await assert.rejects(running, /this lab was disposed/);
      assert.ok(sameWeights(kept.getWeights(), w0));
      assert.equal(kept.steps, 0);
      await assert.rejects(kept.trainStepAsync(tokens, targets), /^Error: attnlab: this lab was disposed; its async calls need a new init\(\)$/);
      assert.equal(typeof kept.trainStep(tokens, targets), 'number'); // the synchronous step still works
      kept.dispose();
    });
  });
}
