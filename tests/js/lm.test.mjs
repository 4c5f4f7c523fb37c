// lab.loadModel on random-weight checkpoints in Hugging Face's layouts (tests/lm/checkpoints.py), on both backends:
// from a Record of Uint8Arrays, a Map of Blobs (read slice by slice) and a URL (a local server laid out as a
// repository's resolve/main/); logits and attention weights within the float64 reference's bounds (derived from
// float32 arithmetic: see the script); greedy generation with the KV cache equal to the reference for 32 steps
// (steps the reference proves decided) and to the argmax of the engine's own full forward; stream(), onToken,
// stop ids, seeds; GPT-2 with the exact GELU as well as its tanh form; a lab on the operators' module loads the
// language-model module itself.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, init, loadLabs } from './support/load.mjs';
import { checkLogits, files, reference, serve, writeCheckpoints } from './support/lm-fixtures.mjs';

const CASES = ['gpt2-f16', 'llama-untied-sharded', 'mistral-window', 'gpt2-gelu'];
const { dir, cleanup } = writeCheckpoints(CASES);
after(cleanup);
const labs = await loadLabs({ gpt: true });
const server = await serve(dir);
after(() => server.close());

const argmax = (x, from, n) => {
  let best = 0;
  for (let j = 1; j < n; ++j) if (x[from + j] > x[from + best]) best = j;
  return best;
};

async function checkCase(lab, name, source, label) {
  const ref = reference(dir, name);
  const progress = [];
  const model = await lab.loadModel(source, { onProgress: (p) => progress.push(p) });
  try {
    assert.equal(model.config.vocabSize, ref.vocab);
    assert.ok(progress.some((p) => p.file.endsWith('.safetensors') && p.loaded === p.total && p.total > 0), `${label}: progress of the weights`);
    // Logits of the whole sequence and of prefixes (below, at and above the SIMD width and the GEMM's 4 rows).
    for (const n of [ref.ids.length, 1, 3, 4, 5, 9].filter((n) => n <= ref.ids.length)) {
      const { logits, shape } = model.forward(Int32Array.from(ref.ids.slice(0, n)));
      assert.deepEqual(shape, [n, ref.vocab]);
      checkLogits(logits, ref, n, `${label} n=${n}`);
    }
    // Attention weights [layer][head] (n × n) over the first attention_tokens ids; ids as a plain array.
    const n = ref.attention_tokens;
    const { attention } = model.forward(ref.ids.slice(0, n), { attention: true });
    assert.equal(attention.length, ref.layers);
    for (let l = 0; l < ref.layers; ++l) {
      assert.equal(attention[l].length, ref.heads);
      for (let h = 0; h < ref.heads; ++h) {
        assert.equal(attention[l][h].length, n * n);
        for (let i = 0; i < n * n; ++i) {
          const at = ((l * ref.heads + h) * n * n) + i;
          assert.ok(Math.abs(attention[l][h][i] - ref.attention[at]) <= ref.attentionBound[at],
            `${label}: attention[${l}][${h}][${Math.floor(i / n)}][${i % n}] = ${attention[l][h][i]}, reference ${ref.attention[at]} ± ${ref.attentionBound[at]}`);
        }
      }
    }
    // Greedy with the cache: the reference's 32 tokens, and the argmax of the full forward.
    const seen = [];
    const { tokens, reason } = await model.generate(ref.prompt, { maxTokens: 32, temperature: 0, stop: [], onToken: (t) => seen.push(t) });
    assert.deepEqual(Array.from(tokens), ref.greedy, `${label}: greedy tokens`);
    assert.equal(reason, 'maxTokens');
    assert.deepEqual(seen.map((t) => t.id), ref.greedy);
    assert.deepEqual(seen.map((t) => t.index), ref.greedy.map((_, i) => i));
    assert.deepEqual(seen.map((t) => t.last), ref.greedy.map((_, i) => i === 31));
    const all = [...ref.prompt, ...tokens];
    const { logits } = model.forward(all);
    for (let s = 0; s < 32; ++s) assert.equal(argmax(logits, (ref.prompt.length + s - 1) * ref.vocab, ref.vocab), tokens[s], `${label}: step ${s}`);
    assert.ok(model.memoryBytes > model.weightBytes);
  } finally {
    model.dispose();
  }
}

test('checkpoints from files (Uint8Array), Blobs and URLs match the float64 reference, on both backends', async () => {
  for (const { name: backend, lab } of labs) {
    for (const name of CASES) {
      await checkCase(lab, name, await files(dir, name), `${backend} ${name} (bytes)`);
      await checkCase(lab, name, await files(dir, name, { blobs: true }), `${backend} ${name} (Blobs)`);
    }
    await checkCase(lab, 'llama-untied-sharded', server.url('llama-untied-sharded'), `${backend} sharded (URL)`);
    await checkCase(lab, 'gpt2-f16', new URL(server.url('gpt2-f16')), `${backend} gpt2 (URL object)`);
    assert.equal(lab.liveModels, 0);
  }
});

test('activation_function "gelu" is the exact GELU (config.activation \'gelu\'), "gelu_new" its tanh form', async () => {
  for (const { name: backend, lab } of labs) {
    const exact = await lab.loadModel(await files(dir, 'gpt2-gelu'));
    const tanh = await lab.loadModel(await files(dir, 'gpt2-f16'));
    assert.equal(exact.config.activation, 'gelu', backend);
    assert.equal(tanh.config.activation, 'gelu_tanh', backend);
    exact.dispose();
    tanh.dispose();
  }
});

test('a URL without generation_config.json or an index: the 404s are fine, and only the files needed are fetched', async () => {
  const { lab } = labs[0];
  server.requests.length = 0;
  const model = await lab.loadModel(server.url('gpt2-f16'));
  assert.deepEqual(server.requests, ['config.json', 'generation_config.json', 'model.safetensors.index.json', 'model.safetensors',
    'tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt']);
  assert.equal(model.tokenizer, null);  // no tokenizer files: token ids in and out
  assert.deepEqual(model.config.defaults, { temperature: 0, topK: 0, topP: 1 });  // no generation config: greedy
  model.dispose();
});

// A tokenizer may have fewer ids than the embeddings have rows (Qwen2 pads its embeddings past its tokens): a sampled
// row past the tokenizer's ids has no text, as Hugging Face's decode skips it, and the generation goes on.
test('a generated token past the tokenizer\'s ids adds no text and does not end the generation', async () => {
  const { lab } = labs[0];
  const model = await lab.loadModel({ ...(await files(dir, 'gpt2-f16')), 'tokenizer.json': sentencePiece(20, { 5: '▁so', 6: '▁be', 7: '▁it' }) });
  assert.deepEqual([model.config.vocabSize, model.tokenizer.vocabSize], [50, 20]);
  const prompt = [5, 6, 7], sample = { maxTokens: 12, temperature: 1.5, topK: 0, topP: 1, stop: [], seed: 0 };
  let pieces;
  for (; ; ++sample.seed) {  // a seed whose tokens fall on both sides of the tokenizer's last id
    assert.ok(sample.seed < 100, 'no seed of 100 gave tokens on both sides of id 20');
    pieces = [];
    for await (const t of model.stream(prompt, sample)) pieces.push([t.id, t.text]);
    if (pieces.some(([id]) => id >= 20) && pieces.some(([id]) => id < 20)) break;
  }
  const ids = pieces.map(([id]) => id);
  for (const [id, text] of pieces) if (id >= 20) assert.equal(text, '', `token ${id} has no text`);
  const { text, tokens } = await model.generate(prompt, sample);
  assert.deepEqual(Array.from(tokens), ids);
  assert.equal(text, pieces.map(([, piece]) => piece).join(''));
  const known = ids.filter((id) => id < 20);
  assert.equal(model.tokenizer.decode([...prompt, ...known]), `${model.tokenizer.decode(prompt)}${text}`);
  // A prompt may hold such rows too, at its end among them: they add no text before the generated tokens'.
  const padded = await model.generate([...prompt, 30, 21], sample);
  const generated = Array.from(padded.tokens).filter((id) => id < 20);
  assert.equal(model.tokenizer.decode([...prompt, ...generated]), `${model.tokenizer.decode(prompt)}${padded.text}`);
  model.dispose();
});

// A dev server (Vite's among them) answers a path it has no file for with its index page, 200 and text/html, instead
// of a 404: the optional files are then absent, and a missing config.json is an error that says what came.
test('a server that answers missing files with a web page: the optional ones are absent, a required one an error', async () => {
  const { lab } = labs[0];
  const folder = await files(dir, 'gpt2-f16');
  const spa = createServer((req, res) => {
    const name = decodeURIComponent(req.url.split('/').pop());
    if (req.url.startsWith('/models/gpt2/') && folder[name]) res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(folder[name]);
    else res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title>');
  });
  await new Promise((resolve) => spa.listen(0, '127.0.0.1', resolve));
  after(() => new Promise((resolve) => spa.close(resolve)));
  const base = `http://127.0.0.1:${spa.address().port}/models/`;
  const model = await lab.loadModel(`${base}gpt2/`);
  assert.equal(model.tokenizer, null);
  assert.deepEqual(model.config.defaults, { temperature: 0, topK: 0, topP: 1 });
  model.dispose();
  await assert.rejects(lab.loadModel(`${base}gpt3/`),
    /^Error: loadModel: http:\/\/127\.0\.0\.1:\d+\/models\/gpt3\/config\.json answered with a web page \(Content-Type text\/html\), not the file/);
  assert.equal(lab.liveModels, 0);
});

test('stream(): tokens as they come, early exit, seeds, stop ids, the generation config\'s defaults', async () => {
  const { lab } = labs[0];
  const model = await lab.loadModel(await files(dir, 'llama-untied-sharded'));
  const ref = reference(dir, 'llama-untied-sharded');
  // generation_config.json: do_sample with temperature 0.7, top_k 20, top_p 0.9; eos [1, 2].
  assert.deepEqual(model.config.defaults, { temperature: 0.7, topK: 20, topP: 0.9 });
  assert.deepEqual(model.config.eos, [1, 2]);
  const streamed = [];
  for await (const t of model.stream(ref.prompt, { maxTokens: 32, temperature: 0, stop: [] })) streamed.push(t.id);
  assert.deepEqual(streamed, ref.greedy);
  // Leaving the loop early, then another generation: it starts afresh.
  let count = 0;
  for await (const t of model.stream(ref.prompt, { maxTokens: 32, temperature: 0, stop: [] })) if (++count === 3 || t.last) break;
  assert.deepEqual(Array.from((await model.generate(ref.prompt, { maxTokens: 5, temperature: 0, stop: [] })).tokens), ref.greedy.slice(0, 5));
  // Seeds: equal seeds, equal samples (the defaults sample).
  const a = await model.generate(ref.prompt, { maxTokens: 20, seed: 7, stop: [] });
  const b = await model.generate(ref.prompt, { maxTokens: 20, seed: 7, stop: [] });
  assert.deepEqual(a.tokens, b.tokens);
  // Stop ids: the first one ends it, returned last.
  const stopAt = ref.greedy[3];
  const stopped = await model.generate(ref.prompt, { maxTokens: 32, temperature: 0, stop: stopAt });
  assert.equal(stopped.reason, 'stop');
  assert.deepEqual(Array.from(stopped.tokens), ref.greedy.slice(0, ref.greedy.indexOf(stopAt) + 1));
  // A second generation ends the first: its iterator rejects at its next step.
  const first = model.stream(ref.prompt, { maxTokens: 10, temperature: 0 });
  await first.next();
  await model.generate(ref.prompt, { maxTokens: 2, temperature: 0 });
  await assert.rejects(first.next(), /another generate\(\) or stream\(\) on this model started/);
  // An abort signal ends it before its next token.
  const controller = new AbortController();
  const tokens = [];
  await assert.rejects(model.generate(ref.prompt, {
    maxTokens: 20, temperature: 0, stop: [], signal: controller.signal, onToken: (t) => (tokens.push(t.id), tokens.length === 2 && controller.abort()),
  }), { name: 'AbortError' });
  assert.equal(tokens.length, 2);
  model.dispose();
  assert.throws(() => model.forward([1]), /Model.forward: this model was disposed/);
  assert.equal(lab.liveModels, 0);
});

// A SentencePiece-style tokenizer.json (Llama 2's decoders: ▁ → space, byte fallback, and the space a text begins with
// stripped) of `vocab` ids, token i spelled `names[i]` where given and "t<i>" otherwise.
function sentencePiece(vocab, names) {
  const tokens = Array.from({ length: vocab }, (_, i) => names[i] ?? `t${i}`);
  return new TextEncoder().encode(JSON.stringify({
    model: { type: 'BPE', vocab: Object.fromEntries(tokens.map((t, i) => [t, i])), merges: [], byte_fallback: true },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' },
      { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  }));
}

test('generated text continues the prompt: a first token keeps its space, a character split over tokens comes whole', async () => {
  const { lab } = labs[0];
  const weights = await files(dir, 'gpt2-f16');  // vocab 50, no tokenizer: ids in and out
  const bare = await lab.loadModel(weights);
  // Sampled tokens depend on the seed alone, not on a tokenizer: find a seed whose first four are distinct, then
  // spell them as a word beginning with a space and the three bytes of "€" (E2 82 AC).
  const prompt = [3, 4], sample = { maxTokens: 4, temperature: 1.5, topK: 0, topP: 1, stop: [] };
  let seed = 0, ids;
  for (; ; ++seed) {
    assert.ok(seed < 100, 'no seed of 100 gave four distinct tokens outside the prompt');
    ids = Array.from((await bare.generate(prompt, { ...sample, seed })).tokens);
    if (new Set(ids).size === 4 && !ids.some((id) => prompt.includes(id))) break;
  }
  bare.dispose();
  const names = { [ids[0]]: '▁Hi', [ids[1]]: '<0xE2>', [ids[2]]: '<0x82>', [ids[3]]: '<0xAC>' };
  const model = await lab.loadModel({ ...weights, 'tokenizer.json': sentencePiece(50, names) });
  const pieces = [];
  for await (const t of model.stream(prompt, { ...sample, seed })) pieces.push(t.text);
  // Decoded alone the tokens read "Hi€" (the Strip decoder drops the space a text begins with); after the prompt they
  // add " Hi€". The euro sign's first two bytes add nothing visible yet, its last adds it whole.
  assert.deepEqual(pieces, [' Hi', '', '', '€']);
  const { text, tokens } = await model.generate(prompt, { ...sample, seed });
  assert.deepEqual(Array.from(tokens), ids);
  assert.equal(text, ' Hi€');
  assert.equal(model.tokenizer.decode([...prompt, ...tokens]), `t${prompt[0]}t${prompt[1]}${text}`);
  // Bytes that never make a character are given at the end, as the decoder gives them (U+FFFD).
  const cut = await model.generate(prompt, { ...sample, seed, maxTokens: 3 });
  assert.equal(cut.text, ' Hi\uFFFD\uFFFD');
  model.dispose();
});

test('a lab on the operators\' module started with a wasmUrl function gets the language-model module from it too', async () => {
  const seen = [];
  const lab = await init({ wasmUrl: (file) => (seen.push(file), pathToFileURL(dist + file)) });
  const model = await lab.loadModel(await files(dir, 'gpt2-f16'));
  assert.deepEqual(seen, [lab.buildInfo().simd ? 'attnlab-simd.wasm' : 'attnlab-scalar.wasm', lab.buildInfo().simd ? 'attnlab-gpt-simd.wasm' : 'attnlab-gpt-scalar.wasm']);
  model.dispose();
  lab.dispose();
});

test('a lab on the operators\' module loads the language-model module when it first needs it', async () => {
  const lab = await init();  // no gpt: true
  assert.equal(typeof lab.createGPT, 'function');
  const ref = reference(dir, 'gpt2-f16');
  const model = await lab.loadModel(await files(dir, 'gpt2-f16'));
  checkLogits(model.forward(ref.ids).logits, ref, ref.ids.length, 'operators lab');
  assert.equal(lab.liveModels, 1);
  model.dispose();
  assert.equal(lab.liveModels, 0);
});
