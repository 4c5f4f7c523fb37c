// Real checkpoints on the lab's workers (loadModel with init({ threads })): every family's random-weight checkpoint
// (tests/lm/checkpoints.py) cut across 2 and 3 workers — each holding a slice of every weight matrix — gives logits
// and attention weights within the float64 reference's bounds (those bounds hold for any summation order, and
// cutting the model only reorders sums), greedy tokens equal to the reference's 32 (and so to one thread's), sampled
// tokens equal to one thread's for the same seed; through shared memory and through messages alike. The work runs
// on the workers (each counts the phases its engine ran; the calling thread's module does not grow), errors are one
// thread's errors, and dispose, abort and a worker that dies leave nothing behind.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { init } from './support/load.mjs';
import { checkLogits, files, reference, writeCheckpoints } from './support/lm-fixtures.mjs';

const CASES = ['gpt2-f32', 'gpt2-f16', 'llama-tied-bf16', 'llama-untied-sharded', 'qwen2-f16', 'mistral-window'];
const { dir, cleanup } = writeCheckpoints(CASES);
after(cleanup);
const lab = await init({ gpt: true, threads: 3 });
after(() => lab.dispose());

// A tokenizer.json of `n` one-character tokens (code points from "0" on) and no merges.
const letters = (n) => JSON.stringify({ model: { type: 'BPE', vocab: Object.fromEntries(Array.from({ length: n }, (_, i) => [String.fromCodePoint(48 + i), i])), merges: [] } });
const argmax = (x, from, n) => {
  let best = 0;
  for (let j = 1; j < n; ++j) if (x[from + j] > x[from + best]) best = j;
  return best;
};

// The model on `threads` workers against the reference: logits, attention maps, greedy tokens.
async function checkCase(name, threads, exchange) {
  const label = `${name} on ${threads} workers (${exchange})`;
  const ref = reference(dir, name);
  const before = lab.memoryBytes;
  const model = await lab.loadModel(await files(dir, name), { threads, exchange });
  try {
    assert.equal(model.split.threads, threads);
    assert.equal(model.split.exchange, exchange);
    assert.throws(() => model.forward([3]), { name: 'Error', message: `Model.forward: this model runs on ${threads} workers (loadModel's threads): use forwardAsync(), or load it with { threads: 1 }` });
    const phases0 = (await model.workers()).map((w) => w.phases);
    const stats0 = lab.threadStats();
    for (const n of [ref.ids.length, 1, 3, 4, 5, 9].filter((k) => k <= ref.ids.length)) {
      const { logits, shape } = await model.forwardAsync(Int32Array.from(ref.ids.slice(0, n)));
      assert.deepEqual(shape, [n, ref.vocab]);
      checkLogits(logits, ref, n, `${label} n=${n}`);
    }
    const n = ref.attention_tokens;
    const { attention } = await model.forwardAsync(ref.ids.slice(0, n), { attention: true });
    assert.equal(attention.length, ref.layers);
    for (let l = 0; l < ref.layers; ++l) {
      assert.equal(attention[l].length, ref.heads);
      for (let h = 0; h < ref.heads; ++h)
        for (let i = 0; i < n * n; ++i) {
          const at = (l * ref.heads + h) * n * n + i;
          assert.ok(Math.abs(attention[l][h][i] - ref.attention[at]) <= ref.attentionBound[at], `${label}: attention[${l}][${h}][${i}]`);
        }
    }
    const { tokens } = await model.generate(ref.prompt, { maxTokens: 32, temperature: 0, stop: [] });
    assert.deepEqual(Array.from(tokens), ref.greedy, `${label}: greedy tokens`);
    const all = await model.forwardAsync([...ref.prompt, ...tokens]);
    for (let s = 0; s < 32; ++s) assert.equal(argmax(all.logits, (ref.prompt.length + s - 1) * ref.vocab, ref.vocab), tokens[s], `${label}: step ${s}`);
    // Where the work ran: every worker's engine ran every phase of every step (a forward or a token: 2·layers + 2
    // phases); the calling thread's module held none of it.
    const steps = [ref.ids.length, 1, 3, 4, 5, 9].filter((k) => k <= ref.ids.length).length + 1 + 32 + 1;
    const workers = await model.workers();
    assert.equal(workers.length, threads);
    workers.forEach((w, r) => assert.equal(w.phases - phases0[r], steps * (2 * ref.layers + 2), `${label}: phases run by worker ${r}`));
    // The lab counts each worker's step as a part a worker served; nothing ran again on the calling thread.
    const stats = lab.threadStats();
    assert.equal(stats.workerParts - stats0.workerParts, steps * threads, `${label}: parts served by workers`);
    assert.equal(stats.reruns, stats0.reruns, `${label}: parts rerun on the calling thread`);
    assert.equal(stats.inlineCalls, stats0.inlineCalls, `${label}: calls kept on the calling thread`);
    assert.equal(lab.memoryBytes, before, `${label}: the calling thread's wasm memory grew`);
  } finally {
    model.dispose();
  }
}

test('every family on 2 and 3 workers: the reference\'s logits, attention weights and greedy tokens', async () => {
  for (const name of CASES) for (const threads of [2, 3]) await checkCase(name, threads, 'shared');
  assert.equal(lab.liveModels, 0);
});

test('through messages instead of shared memory: the same results', async () => {
  for (const name of ['gpt2-f16', 'llama-tied-bf16', 'mistral-window']) await checkCase(name, 3, 'message');
  await checkCase('qwen2-f16', 2, 'message');
});

test('the split: whole K/V heads with their query heads, panels of the MLP and the vocabulary, in rank order', async () => {
  // llama-tied-bf16: 4 query heads over 2 K/V heads, MLP 44, vocab 41 (6 panels of 8 rows each): the first worker
  // holds no head.
  const model = await lab.loadModel(await files(dir, 'llama-tied-bf16'), { threads: 3 });
  assert.deepEqual(model.split, {
    threads: 3, exchange: 'shared', ranks: [
      { rank: 0, heads: [0, 0], kvHeads: [0, 0], ffn: [0, 16], vocab: [0, 16], positions: [0, 0] },
      { rank: 1, heads: [0, 2], kvHeads: [0, 1], ffn: [16, 32], vocab: [16, 32], positions: [0, 0] },
      { rank: 2, heads: [2, 4], kvHeads: [1, 2], ffn: [32, 44], vocab: [32, 41], positions: [0, 0] },
    ],
  });
  model.dispose();
  const one = await lab.loadModel(await files(dir, 'gpt2-f16'), { threads: 1 });
  assert.equal(one.split.threads, 1);
  assert.equal(one.forward([3]).shape[1], 50);  // the calling thread's model keeps its synchronous forward
  assert.deepEqual((await one.forwardAsync([3])).logits, one.forward([3]).logits);
  one.dispose();
});

test('sampling: the same tokens as one thread for the same seed (the generation config\'s defaults)', async () => {
  const ref = reference(dir, 'llama-untied-sharded');
  const source = await files(dir, 'llama-untied-sharded');
  const runs = [];
  for (const [threads, exchange] of [[1, undefined], [2, 'shared'], [3, 'shared'], [3, 'message']]) {
    const model = await lab.loadModel(source, { threads, exchange });
    runs.push(Array.from((await model.generate(ref.prompt, { maxTokens: 24, seed: 7, stop: [] })).tokens));
    const streamed = [];
    for await (const t of model.stream(ref.prompt, { maxTokens: 24, seed: 7, stop: [] })) streamed.push(t.id);
    assert.deepEqual(streamed, runs.at(-1));
    model.dispose();
  }
  for (const r of runs) assert.deepEqual(r, runs[0]);
});

test('errors: the same classes and messages as one thread; the model and the workers keep working', async () => {
  const good = await files(dir, 'gpt2-f16');
  const one = await lab.loadModel(good, { threads: 1 });
  const many = await lab.loadModel(good, { threads: 3 });
  const same = async (label, call) => {
    let want;
    try {
      await call(one);
    } catch (e) {
      want = e;
    }
    assert.ok(want, `${label}: one thread throws`);
    await assert.rejects(async () => call(many), (e) => {
      assert.equal(e.constructor, want.constructor, `${label}: class`);
      assert.equal(e.message, want.message, `${label}: message`);
      return true;
    });
  };
  const forward = (m, ...a) => (m.split.threads > 1 ? m.forwardAsync(...a) : m.forward(...a));
  await same('an id past the vocabulary', (m) => forward(m, [3, 50]));
  await same('an empty prompt', (m) => m.generate([], { maxTokens: 3 }));
  await same('maxTokens past the context', (m) => m.generate([3, 4, 5], { maxTokens: 46 }));
  await same('a bad temperature', (m) => m.generate([3], { maxTokens: 2, temperature: -1 }));
  await same('a bad topP', (m) => m.generate([3], { maxTokens: 2, topP: 0 }));
  await same('a stop id past the vocabulary', (m) => m.generate([3], { maxTokens: 2, stop: [99] }));
  const want = one.forward([3, 4, 5]).logits;
  const got = (await many.forwardAsync([3, 4, 5])).logits;
  for (let i = 0; i < want.length; ++i) assert.ok(Math.abs(got[i] - want[i]) <= 1e-4 * (1 + Math.abs(want[i])), `logits[${i}]`);
  one.dispose(), many.dispose();

  // Bad files: the engine's messages, on the workers as on this thread.
  const st = good['model.safetensors'];
  const n = Number(new DataView(st.buffer, st.byteOffset).getBigUint64(0, true));
  const badFiles = [
    ['a truncated file', { ...good, 'model.safetensors': st.subarray(0, st.length - 3) }],
    ['a file cut inside its header', { ...good, 'model.safetensors': st.subarray(0, 8 + n - 5) }],
    ['a file of 5 bytes', { ...good, 'model.safetensors': st.subarray(0, 5) }],
    ['a header of length 0', { ...good, 'model.safetensors': Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]) }],
    ['a header longer than 16 MiB', { ...good, 'model.safetensors': Uint8Array.from([0, 0, 0, 2, 0, 0, 0, 0, 1, 2, 3]) }],
    ['a file longer than its header says', { ...good, 'model.safetensors': Uint8Array.from([...st, 0, 0]) }],
    ['a config that is not JSON', { ...good, 'config.json': new TextEncoder().encode('{"n_layer": ') }],
    ['a non-finite weight', { ...good, 'model.safetensors': Uint8Array.from(st).fill(0xff, st.length - 40, st.length - 38) }],
    // The fixture's embeddings have 50 rows: the first worker's engine refuses a tokenizer with ids up to 60.
    ['a tokenizer whose vocabulary disagrees with the embeddings', { ...good, 'tokenizer.json': new TextEncoder().encode(letters(61)) }],
    ['a malformed tokenizer.json', { ...good, 'tokenizer.json': new TextEncoder().encode(letters(20).slice(0, -5)) }],
  ];
  for (const [label, bad] of badFiles) await same(label, (m) => lab.loadModel(bad, { threads: m === one ? 1 : 3 }));
  assert.equal(lab.liveModels, 0);
  assert.equal(lab.liveTokenizers, 0);

  // A tokenizer that fits: text in and out as on one thread; the tokenizer runs on this thread and goes with the model.
  const withText = { ...good, 'tokenizer.json': new TextEncoder().encode(letters(50)) };
  const said = [];
  for (const threads of [1, 3]) {
    const m = await lab.loadModel(withText, { threads });
    assert.deepEqual(Array.from(m.tokenizer.encode('0123')), [0, 1, 2, 3]);
    const r = await m.generate('0123', { maxTokens: 5, temperature: 0, stop: [] });
    assert.equal(m.tokenizer.decode([0, 1, 2, 3, ...r.tokens]), `${m.tokenizer.decode([0, 1, 2, 3])}${r.text}`);  // what they add to the prompt
    const streamed = [];
    for await (const t of m.stream('0123', { maxTokens: 5, temperature: 0, stop: [] })) streamed.push(t.text);
    assert.equal(streamed.join(''), r.text);
    said.push({ tokens: Array.from(r.tokens), text: r.text });
    // A bad stop id among stop strings is named by its index in the list as given, on the workers too.
    await assert.rejects(m.generate('0', { maxTokens: 2, stop: ['9', 4, '8', 99] }), { name: 'RangeError', message: /^Model\.generate: stop\[3\] = 99 is not a token id/ });
    m.dispose();
    assert.ok(m.tokenizer.disposed, "the model's tokenizer is freed with it");
  }
  assert.deepEqual(said[1], said[0]);

  // loadModel's own options.
  await assert.rejects(lab.loadModel(good, { threads: 4 }), { name: 'RangeError', message: 'loadModel: threads = 4 is more than the lab\'s 3 workers (init({ threads }))' });
  await assert.rejects(lab.loadModel(good, { threads: 0 }), { name: 'RangeError', message: /threads must be an integer >= 1, got 0/ });
  await assert.rejects(lab.loadModel(good, { exchange: 'pigeons' }), { name: 'TypeError', message: /exchange must be 'shared' or 'message'/ });
  const single = await init({ gpt: true });
  await assert.rejects(single.loadModel(good, { threads: 2 }), { name: 'RangeError', message: /threads = 2 needs a lab with workers: init\(\{ threads: 2 \}\)/ });
});

// Each worker's wasm memory, read through a small model loaded for the purpose.
async function workerMemory() {
  const probe = await lab.loadModel(await files(dir, 'gpt2-f16'), { threads: 3 });
  const w = (await probe.workers()).map((x) => ({ wasm: x.wasmBytes, shards: x.shards }));
  probe.dispose();
  return w;
}

test('failed loads, aborts, dispose during generation: nothing left behind on any worker', async () => {
  const good = await files(dir, 'llama-tied-bf16');
  const cycle = async () => {
    const m = await lab.loadModel(good);
    await m.generate([3, 4], { maxTokens: 8, temperature: 0 });
    m.dispose();
  };
  await cycle();
  await cycle();
  const settled = await workerMemory();
  const st = good['model.safetensors'];
  for (let i = 0; i < 5; ++i) {
    await assert.rejects(lab.loadModel({ ...good, 'model.safetensors': st.subarray(0, st.length - 3) }), /model\.safetensors is truncated/);
    const controller = new AbortController();
    await assert.rejects(lab.loadModel(new Map(Object.entries(good).map(([k, v]) => [k, new Blob([v])])), {
      signal: controller.signal, onProgress: (p) => p.file === 'model.safetensors' && controller.abort(),
    }), { name: 'AbortError' });
    // dispose() from onToken: the generation ends with this model's error at its next step.
    const m = await lab.loadModel(good);
    let seen = 0;
    await assert.rejects(m.generate([3, 4], { maxTokens: 20, temperature: 0, stop: [], onToken: () => ++seen === 2 && m.dispose() }),
      { message: 'Model.generate: this model was disposed' });
    assert.equal(seen, 2);
    await assert.rejects(m.forwardAsync([3]), { message: 'Model.forward: this model was disposed' });
    // A second generation ends the first; an abort signal ends it before its next token.
    const m2 = await lab.loadModel(good);
    const first = m2.stream([3, 4], { maxTokens: 10, temperature: 0 });
    await first.next();
    await m2.generate([3, 4], { maxTokens: 2, temperature: 0 });
    await assert.rejects(first.next(), /another generate\(\) or stream\(\) on this model started/);
    const controller2 = new AbortController();
    await assert.rejects(m2.generate([3], { maxTokens: 20, temperature: 0, stop: [], signal: controller2.signal, onToken: (t) => t.index === 1 && controller2.abort() }), { name: 'AbortError' });
    m2.dispose();
    await cycle();
  }
  assert.equal(lab.liveModels, 0);
  assert.deepEqual(await workerMemory(), settled, 'the workers\' wasm memory grew over failed loads, aborts and disposals');
});

test('a worker that dies during a generation: the call fails, the model says so after, the others are freed', async () => {
  const ref = reference(dir, 'gpt2-f32');
  const model = await lab.loadModel(await files(dir, 'gpt2-f32'), { threads: 3 });
  await assert.rejects(model.generate(ref.prompt, {
    // (after the next step was sent: most often while the workers run it)
    maxTokens: 30, temperature: 0, stop: [], onToken: (t) => t.index === 2 && setImmediate(() => model[Symbol.for('attnlab.killWorker')](1)),
  }), /attnlab: a worker failed/);
  await assert.rejects(model.forwardAsync([3]), /Model\.forward: a worker holding this model failed \(.*\); load the model again/);
  await assert.rejects(model.generate([3], { maxTokens: 2 }), /Model\.generate: a worker holding this model failed/);
  model.dispose();
  // The pool replaced the worker: models load and run on all three again.
  const again = await lab.loadModel(await files(dir, 'gpt2-f32'), { threads: 3 });
  assert.deepEqual(Array.from((await again.generate(ref.prompt, { maxTokens: 32, temperature: 0, stop: [] })).tokens), ref.greedy);
  again.dispose();
});

test('a lab on the operators\' module sends its workers the language-model module', async () => {
  const ops = await init({ threads: 2 });
  try {
    const before = ops.memoryBytes;
    const ref = reference(dir, 'qwen2-f16');
    const model = await ops.loadModel(await files(dir, 'qwen2-f16'));
    assert.equal(model.split.threads, 2);
    assert.deepEqual(Array.from((await model.generate(ref.prompt, { maxTokens: 32, temperature: 0, stop: [] })).tokens), ref.greedy);
    checkLogits((await model.forwardAsync(ref.ids)).logits, ref, ref.ids.length, 'operators lab on workers');
    model.dispose();
    assert.equal(ops.memoryBytes, before);
    // With a tokenizer: it is built in this thread's module with the models (loaded for it), not in the lab's.
    const fixture = await files(dir, 'gpt2-f16');
    const withText = await ops.loadModel({ ...fixture, 'tokenizer.json': new TextEncoder().encode(letters(50)) });
    const r = await withText.generate('0123', { maxTokens: 3, temperature: 0, stop: [] });
    assert.equal(withText.tokenizer.decode([0, 1, 2, 3, ...r.tokens]), `${withText.tokenizer.decode([0, 1, 2, 3])}${r.text}`);
    withText.dispose();
    assert.equal(ops.memoryBytes, before, "the tokenizer lives in the models' module, not in the lab's");
  } finally {
    ops.dispose();
  }
});

test('lab.dispose() disposes the models on its workers; a model on the calling thread keeps working', async () => {
  const good = await files(dir, 'gpt2-f16');
  const mine = await init({ gpt: true, threads: 2 });
  const onWorkers = await mine.loadModel({ ...good, 'tokenizer.json': new TextEncoder().encode(letters(50)) });
  const messages = await mine.loadModel(good, { exchange: 'message' });
  const here = await mine.loadModel(good, { threads: 1 });
  const before = here.forward([3, 4, 5]).logits;
  const running = onWorkers.stream([3, 4], { maxTokens: 10, temperature: 0 });
  await running.next();  // a generation in progress
  assert.equal(mine.liveModels, 3);
  mine.dispose();
  // Its workers are gone, and their models with them: disposed, no longer counted, each call a clear error.
  assert.equal(mine.liveModels, 1);
  for (const m of [onWorkers, messages]) {
    assert.equal(m.disposed, true);
    const gone = (fn) => ({ name: 'Error', message: `${fn}: this model was disposed with its lab (lab.dispose() ended the workers that held it)` });
    await assert.rejects(m.forwardAsync([3]), gone('Model.forward'));
    await assert.rejects(m.generate([3], { maxTokens: 2 }), gone('Model.generate'));
    assert.throws(() => m.stream([3], { maxTokens: 2 }), gone('Model.stream'));
    await assert.rejects(m.workers(), gone('Model.workers'));
    assert.throws(() => m.memoryBytes, gone('Model.memoryBytes'));
    m.dispose();  // idempotent
  }
  await assert.rejects(running.next(), { name: 'Error', message: 'Model.stream: this model was disposed with its lab (lab.dispose() ended the workers that held it)' });
  assert.ok(onWorkers.tokenizer.disposed, "the model's tokenizer goes with it");
  // The model on the calling thread needs no worker: it runs, and is counted until its own dispose().
  assert.deepEqual(here.forward([3, 4, 5]).logits, before);
  here.dispose();
  assert.equal(mine.liveModels, 0);
});
