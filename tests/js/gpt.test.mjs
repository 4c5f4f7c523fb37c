// lab.createGPT / lab.loadGPT and every GPT method, on both backends: training memorizes a string and generate
// gives it back, forward's shapes and attention maps, seeded sampling, the state dict, safetensors round trips,
// dispose, and every error path (the model unchanged and still usable after each).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadLabs } from './support/load.mjs';

const labs = await loadLabs();
const TEXT = 'attention is a soft dictionary lookup. ';
const ids = Int32Array.from(TEXT, (c) => c.charCodeAt(0));
const CONFIG = { vocabSize: 128, context: ids.length - 1, dModel: 32, heads: 4, layers: 2, seed: 1 };
const decode = (t) => String.fromCharCode(...t);
const snapshot = (model) => JSON.stringify(Object.entries(model.getWeights()).map(([k, v]) => [k, Array.from(v)]));

for (const { name, lab } of labs) {
  describe(`GPT (${name})`, () => {
    test('createGPT: the config with defaults filled in, parameter count, state-dict shapes', () => {
      const model = lab.createGPT({ vocabSize: 10, context: 8, dModel: 8, heads: 4, kvHeads: 2, layers: 2 });
      assert.deepEqual({ ...model.config }, { vocabSize: 10, context: 8, dModel: 8, heads: 4, kvHeads: 2, layers: 2, mlp: true, position: 'learned', tied: true, bias: true, seed: 0 });
      assert.ok(Object.isFrozen(model.config));
      const shapes = model.shapes;
      assert.deepEqual(shapes['transformer.wte.weight'], [10, 8]);
      assert.deepEqual(shapes['transformer.wpe.weight'], [8, 8]);
      assert.deepEqual(shapes['transformer.h.1.attn.c_attn.weight'], [16, 8]); // (4 + 2·2)·2 rows
      assert.deepEqual(shapes['transformer.h.0.mlp.c_fc.weight'], [32, 8]);
      assert.deepEqual(shapes['transformer.h.0.mlp.c_proj.weight'], [8, 32]);
      assert.deepEqual(shapes['transformer.ln_f.bias'], [8]);
      assert.deepEqual(shapes['lm_head.weight'], [10, 8]);
      const counted = Object.entries(shapes).filter(([k]) => k !== 'lm_head.weight').reduce((s, [, sh]) => s + sh.reduce((a, b) => a * b, 1), 0);
      assert.equal(model.parameterCount, counted);
      assert.equal(model.steps, 0);
      assert.ok(model.memoryBytes >= 16 * counted);
      model.dispose();
    });

    test('trainStep memorizes a string; generate reproduces it greedily (rotary positions)', () => {
      const model = lab.createGPT({ ...CONFIG, position: 'rope' });
      const x = ids.subarray(0, ids.length - 1), y = ids.subarray(1);
      const first = model.trainStep(x, y, { lr: 3e-3 });
      assert.ok(Math.abs(first - Math.log(128)) < 0.1, `initial loss ${first} ≈ ln 128`);
      let loss = first;
      for (let s = 1; s < 300 && loss > 0.02; ++s) loss = model.trainStep(x, y, { lr: 3e-3 });
      assert.ok(loss < 0.02, `loss after training: ${loss}`);
      assert.ok(model.steps <= 300 && model.steps > 10);
      const out = model.generate(ids.subarray(0, 1), { maxTokens: ids.length - 1, temperature: 0 });
      assert.ok(out instanceof Int32Array);
      assert.equal(decode([ids[0], ...out]), TEXT);
      model.dispose();
    });

    test('forward: logits [batch, t, vocab], causal attention rows summing to 1, batch from tokens.length', () => {
      const model = lab.createGPT({ vocabSize: 11, context: 6, dModel: 8, heads: 2, layers: 3, seed: 4 });
      const tokens = Int32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
      const { logits, attention } = model.forward(tokens, { batch: 2, returnAttention: true });
      assert.equal(logits.length, 2 * 4 * 11);
      assert.equal(attention.length, 3);
      for (const layer of attention) {
        assert.equal(layer.length, 2 * 2 * 4 * 4);
        for (let row = 0; row < 2 * 2 * 4; ++row) {
          const i = row % 4;
          let sum = 0;
          for (let j = 0; j < 4; ++j) {
            const w = layer[row * 4 + j];
            if (j > i) assert.equal(w, 0);
            sum += w;
          }
          assert.ok(Math.abs(sum - 1) < 1e-5);
        }
      }
      // Sequence by sequence gives the same logits as the batch.
      const one = model.forward(tokens.subarray(4), {}).logits;
      for (let k = 0; k < one.length; ++k) assert.ok(Math.abs(one[k] - logits[44 + k]) <= 1e-5 * (1 + Math.abs(one[k])));
      assert.equal(model.forward(tokens.subarray(0, 3)).attention, undefined);
      model.dispose();
    });

    test('generate: seeded sampling repeats, topK 1 is greedy, long prompts keep their last context tokens', () => {
      for (const position of ['learned', 'rope']) {
      const model = lab.createGPT({ vocabSize: 20, context: 8, dModel: 16, heads: 2, layers: 1, seed: 9, position });
      const prompt = Int32Array.from([3, 1, 4]);
      const a = model.generate(prompt, { maxTokens: 12, temperature: 1.2, seed: 42 });
      const b = model.generate(prompt, { maxTokens: 12, temperature: 1.2, seed: 42 });
      assert.deepEqual(a, b);
      const greedy = model.generate(prompt, { maxTokens: 12, temperature: 0 });
      assert.deepEqual(model.generate(prompt, { maxTokens: 12, temperature: 2, topK: 1, seed: 5 }), greedy);
      for (const t of a) assert.ok(t >= 0 && t < 20);
      const long = Int32Array.from([7, 7, 7, 3, 1, 4, 1, 5, 9, 2, 6]);
      assert.deepEqual(model.generate(long, { maxTokens: 5, temperature: 0 }), model.generate(long.subarray(3), { maxTokens: 5, temperature: 0 }));
      assert.equal(model.generate(prompt, { maxTokens: 0 }).length, 0);
      // Greedy decoding with the cache is greedy decoding by full forwards (margins checked: no near-ties).
      const seq = Array.from(prompt);
      for (const t of greedy) {
        const { logits } = model.forward(Int32Array.from(seq.slice(-8)));
        const last = Array.from(logits.subarray(logits.length - 20));
        const best = last.indexOf(Math.max(...last));
        const margin = Math.max(...last) - Math.max(...last.filter((_, i) => i !== best));
        if (margin > 1e-4) assert.equal(t, best, `${position}: token ${seq.length}`);
        seq.push(t);
      }
      model.dispose();
      }
    });

    test('getWeights / setWeights round trip; toSafetensors → loadGPT is bit for bit', () => {
      const model = lab.createGPT({ ...CONFIG, seed: 3, tied: false, kvHeads: 2 });
      model.trainStep(ids.subarray(0, CONFIG.context), ids.subarray(1), { lr: 1e-2 });
      const w = model.getWeights();
      assert.ok(w['lm_head.weight'] instanceof Float32Array);
      const other = lab.createGPT({ ...CONFIG, seed: 8, tied: false, kvHeads: 2 });
      assert.notEqual(snapshot(other), snapshot(model));
      other.setWeights(w);
      assert.equal(snapshot(other), snapshot(model));
      const bytes = model.toSafetensors();
      assert.ok(bytes instanceof Uint8Array);
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true)))));
      assert.equal(header.__metadata__.n_head, '4');
      assert.deepEqual(header['transformer.h.0.attn.c_attn.weight'].shape, [64, 32]);
      const loaded = lab.loadGPT(bytes);
      assert.deepEqual({ ...loaded.config }, { ...model.config });
      assert.equal(snapshot(loaded), snapshot(model));
      assert.deepEqual(loaded.toSafetensors(), bytes);
      assert.deepEqual(lab.loadGPT(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)).toSafetensors(), bytes);
      // The loaded model computes what the original does.
      assert.deepEqual(loaded.forward(ids.subarray(0, 10)).logits, model.forward(ids.subarray(0, 10)).logits);
      for (const m of [model, other, loaded]) m.dispose();
    });

    test('errors: bad configs, tokens, options and weights name the argument; the model is unchanged and usable', () => {
      const bad = (config, Cls, arg) => assert.throws(() => lab.createGPT(config), (e) => e instanceof Cls && e.message.startsWith('createGPT: ') && e.message.includes(arg), JSON.stringify(config));
      const base = { vocabSize: 10, context: 8, dModel: 8, heads: 2, layers: 1 };
      bad({ ...base, vocabSize: 0 }, RangeError, 'vocabSize');
      bad({ ...base, dModel: 6, heads: 4 }, RangeError, 'heads');
      bad({ ...base, kvHeads: 3 }, RangeError, 'kvHeads');
      bad({ ...base, context: 2 ** 28 }, RangeError, 'context');
      bad({ ...base, layers: 1.5 }, RangeError, 'layers');
      bad({ ...base, heads: '2' }, TypeError, 'heads');
      bad({ ...base, position: 'sinusoidal' }, RangeError, 'position');
      bad({ ...base, position: 1 }, TypeError, 'position');
      bad({ ...base, mlp: 'no' }, TypeError, 'mlp');
      bad({ ...base, seed: -1 }, RangeError, 'seed');
      bad({ ...base, dropout: 0.1 }, TypeError, 'dropout');
      bad({ vocabSize: 10, context: 8, dModel: 8, layers: 1 }, TypeError, 'heads');
      assert.throws(() => lab.createGPT(null), TypeError);

      const model = lab.createGPT({ ...base, seed: 2 });
      const x = Int32Array.from([1, 2, 3, 4, 5, 6, 7, 8]), y = Int32Array.from([2, 3, 4, 5, 6, 7, 8, 9]);
      const before = snapshot(model);
      const fails = (fn, Cls, text) => {
        assert.throws(fn, (e) => e instanceof Cls && e.message.includes(text), text);
        assert.equal(snapshot(model), before);
        assert.equal(model.steps, 0);
      };
      fails(() => model.trainStep(Int32Array.from([1, 2, 3, 4, 5, 6, 7, 10]), y), RangeError, 'tokens[7] = 10 is outside the vocabulary 0…9');
      fails(() => model.trainStep(x, Int32Array.from([2, 3, 4, 5, 6, 7, 8, -2])), RangeError, 'targets[7] = -2');
      fails(() => model.trainStep(x, y.subarray(1)), RangeError, 'targets must have tokens.length = 8');
      fails(() => model.trainStep(x.subarray(1), y.subarray(1)), RangeError, 'tokens.length must be a positive multiple');
      fails(() => model.trainStep(x, y, { lr: NaN }), RangeError, 'lr must be finite');
      fails(() => model.trainStep(x, y, { lr: Infinity }), RangeError, 'lr');
      fails(() => model.trainStep(x, y, { beta2: 1 }), RangeError, 'beta2');
      fails(() => model.trainStep(x, y, { gradClip: -1 }), RangeError, 'gradClip');
      fails(() => model.trainStep(x, y, { lr: '0.1' }), TypeError, 'lr must be a number');
      fails(() => model.trainStep(x, y, { learningRate: 0.1 }), TypeError, 'learningRate');
      fails(() => model.trainStep([1, 2], y), TypeError, 'tokens must be an Int32Array');
      fails(() => model.forward(x, { batch: 3 }), RangeError, 'multiple of batch = 3');
      fails(() => model.forward(Int32Array.from({ length: 9 }, () => 1)), RangeError, 'context = 8');
      fails(() => model.generate(x), TypeError, 'maxTokens');
      fails(() => model.generate(Int32Array.from([]), { maxTokens: 2 }), RangeError, 'prompt must hold at least one token');
      fails(() => model.generate(x, { maxTokens: 2, temperature: -1 }), RangeError, 'temperature');
      fails(() => model.generate(x, { maxTokens: 2, topK: 1.5 }), RangeError, 'topK');
      fails(() => model.generate(x, { maxTokens: 2, seed: 2 ** 60 }), RangeError, 'seed');
      fails(() => model.setWeights({ 'transformer.wte.weight': new Float32Array(79) }), RangeError, 'transformer.wte.weight must have [10, 8] = 80 elements, got 79');
      fails(() => model.setWeights({ 'transformer.h.9.ln_1.weight': new Float32Array(8) }), RangeError, 'unknown weight');
      fails(() => model.setWeights({ 'transformer.ln_f.weight': new Float32Array(8).fill(NaN) }), RangeError, 'transformer.ln_f.weight[0] is NaN');
      fails(() => model.setWeights({ 'transformer.ln_f.weight': [1, 2] }), TypeError, 'Float32Array');
      fails(() => lab.loadGPT(new Uint8Array(5)), RangeError, 'not a usable safetensors file');
      fails(() => lab.loadGPT('file.safetensors'), TypeError, 'bytes must be a Uint8Array');
      // Still usable.
      const loss = model.trainStep(x, y);
      assert.ok(Number.isFinite(loss));
      assert.equal(model.steps, 1);
      model.dispose();
    });

    test('a NaN loss stops the step with an Error; weights and step count intact', () => {
      const model = lab.createGPT({ vocabSize: 8, context: 4, dModel: 8, heads: 2, layers: 1, seed: 1 });
      const x = Int32Array.from([1, 2, 3, 4]), y = Int32Array.from([2, 3, 4, 5]);
      model.trainStep(x, y);
      model.setWeights({ 'transformer.ln_f.weight': new Float32Array(8).fill(3e38) });
      const before = snapshot(model);
      assert.throws(() => model.trainStep(x, y), (e) => e.constructor === Error && /the loss is NaN.*weights are unchanged/.test(e.message));
      assert.equal(snapshot(model), before);
      assert.equal(model.steps, 1);
      model.setWeights({ 'transformer.ln_f.weight': new Float32Array(8).fill(1) });
      model.trainStep(x, y);
      assert.equal(model.steps, 2);
      model.dispose();
    });

    test('dispose: idempotent; every method afterwards throws an Error', () => {
      const model = lab.createGPT({ vocabSize: 8, context: 4, dModel: 8, heads: 2, layers: 1 });
      model.dispose();
      model.dispose();
      for (const call of [() => model.trainStep(new Int32Array(4), new Int32Array(4)), () => model.forward(new Int32Array(2)),
        () => model.generate(new Int32Array(1), { maxTokens: 1 }), () => model.getWeights(), () => model.setWeights({}),
        () => model.toSafetensors(), () => model.steps])
        assert.throws(call, (e) => e.constructor === Error && e.message.includes('disposed'));
      assert.equal(model.config.vocabSize, 8); // the config stays readable
    });
  });
}
