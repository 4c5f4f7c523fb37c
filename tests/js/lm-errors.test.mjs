// lab.loadModel's bad inputs, each a clear error naming the file and the field (or the argument), after which the
// lab keeps working and nothing of the failed load stays: repeated ten times, a failure never grows wasm memory, and
// no model is left alive. The engine's own checks are tested in depth natively (tests/native/lm_errors_test.cpp);
// these go through the package: bytes, Blobs, fetches that fail or are aborted halfway, and calls on a model.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';

import { init, loadLabs } from './support/load.mjs';
import { files, serve, writeCheckpoints } from './support/lm-fixtures.mjs';

const { dir, cleanup } = writeCheckpoints(['gpt2-f16', 'llama-tied-bf16']);
after(cleanup);
const labs = await loadLabs({ gpt: true });
const server = await serve(dir);
after(() => server.close());
const good = await files(dir, 'gpt2-f16');
const text = (bytes) => new TextDecoder().decode(bytes);
const bytes = (s) => new TextEncoder().encode(s);
const withFile = (name, value) => ({ ...good, [name]: value });
// A tokenizer.json of `n` one-character tokens (code points from "0" on) and no merges.
const letters = (n) => JSON.stringify({ model: { type: 'BPE', vocab: Object.fromEntries(Array.from({ length: n }, (_, i) => [String.fromCodePoint(48 + i), i])), merges: [] } });
const withConfig = (edit) => withFile('config.json', bytes(edit(text(good['config.json']))));

// The safetensors header as text, and a file with it replaced (same data).
function header(b) {
  const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
  return { json: text(b.subarray(8, 8 + n)), data: b.subarray(8 + n) };
}
function withHeader(b, edit) {
  const { json, data } = header(b);
  let h = bytes(edit(json));
  const padded = new Uint8Array(Math.ceil(h.length / 8) * 8).fill(0x20);
  padded.set(h);
  h = padded;
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

// Every case: the error, then the lab as before (memory, live models) after ten more of the same, and a good load.
async function expectFailure(lab, label, load, check) {
  await assert.rejects(load(), check, label);
  const memory = lab.memoryBytes;
  for (let i = 0; i < 10; ++i) await assert.rejects(load(), check, label);
  assert.equal(lab.memoryBytes, memory, `${label}: wasm memory grew from ${memory} to ${lab.memoryBytes} over ten failed loads`);
  assert.equal(lab.liveModels, 0, label);
  const model = await lab.loadModel(good);
  assert.equal(model.forward([3, 4]).shape[1], 50);
  model.dispose();
}

test('bad files: each a clear error naming the file and field, nothing left behind', async () => {
  const st = good['model.safetensors'];
  for (const { name: backend, lab } of labs) {
    const warm = await lab.loadModel(good);  // the allocator's free lists settle after a first model
    warm.dispose();
    const cases = [
      ['config.json not JSON', withFile('config.json', bytes('{"architectures": ')), { name: 'RangeError', message: /loadModel: config\.json is not valid JSON/ }],
      ['config.json missing', Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'config.json')), /loadModel: config\.json is missing from the files given/],
      ['an architecture not supported', withConfig((c) => c.replace('"GPT2LMHeadModel"', '"T5ForConditionalGeneration"')),
        { name: 'RangeError', message: /config\.json: architectures\[0\] = "T5ForConditionalGeneration" is not supported/ }],
      ['a field of the wrong kind', withConfig((c) => c.replace('"n_layer": 3', '"n_layer": "3"')), /config\.json: n_layer = "3" must be an integer from 1/],
      ['a model past wasm memory', withConfig((c) => c.replace('"vocab_size": 50', '"vocab_size": 100000000')),
        /config\.json: this GPT2LMHeadModel needs at least \d+ MiB for its weights .* more than the 2048 MiB/],
      ['generation_config.json malformed', withFile('generation_config.json', bytes('{"eos_token_id": [1, 2,]}')), /generation_config\.json is not valid JSON/],
      ['a truncated safetensors file', withFile('model.safetensors', st.subarray(0, st.length - 3)),
        /model\.safetensors is truncated: it ended after \d+ bytes, its header describes \d+/],
      ['a truncated Blob', withFile('model.safetensors', new Blob([st.subarray(0, 100)])), /model\.safetensors is truncated/],
      ['a malformed header', withFile('model.safetensors', withHeader(st, (h) => h.replace('"dtype"', '"dtype" "'))),
        /model\.safetensors: not a usable safetensors file: the JSON header is malformed/],
      ['a shape that disagrees with config.json', withFile('model.safetensors', withHeader(st, (h) => h.replace('"ln_f.weight":{"dtype":"F16","shape":[16]', '"ln_f.weight":{"dtype":"F16","shape":[8,2]'))),
        /model\.safetensors: ln_f\.weight has shape \[8, 2\], but config\.json's sizes need \[16\]/],
      ['a quantized dtype', withFile('model.safetensors', withHeader(st, (h) => h.replace('"ln_f.weight":{"dtype":"F16","shape":[16]', '"ln_f.weight":{"dtype":"I8","shape":[32]'))),
        /"ln_f\.weight" has dtype "I8"; F32, F16 and BF16 weights are supported/],
      ['a file of the wrong type', withFile('model.safetensors', [1, 2, 3]), { name: 'TypeError', message: /model\.safetensors must be a Uint8Array, an ArrayBuffer or a Blob/ }],
      // The fixture's embeddings have 50 rows: a tokenizer with ids up to 60 belongs to other weights.
      ['a tokenizer whose vocabulary disagrees with the embeddings', withFile('tokenizer.json', bytes(letters(61))),
        { name: 'RangeError', message: /tokenizer\.json has token id 60, but the embeddings have 50 rows \(config\.json vocab_size = 50\)/ }],
      // The tokenizer's own errors begin with the function called, as every other error here does.
      ['a malformed tokenizer.json', withFile('tokenizer.json', bytes(letters(20).slice(0, -5))), { name: 'RangeError', message: /^loadModel: tokenizer\.json: / }],
      // Half of GPT-2's pair: a tokenizer was meant, so the load says what is missing instead of loading without it.
      ['vocab.json without merges.txt', withFile('vocab.json', bytes('{"0": 0}')),
        { name: 'RangeError', message: /^loadModel: a tokenizer needs tokenizer\.json, or vocab\.json and merges\.txt; got vocab\.json without merges\.txt/ }],
      // SentencePiece's model file alone: a tokenizer was meant, in a form the package does not read.
      ['tokenizer.model without tokenizer.json', withFile('tokenizer.model', bytes('\n\u0005hello')),
        { name: 'RangeError', message: /^loadModel: tokenizer\.model is SentencePiece's own model file, which attnlab does not read: give the folder's tokenizer\.json too/ }],
      ['a tokenizer_config.json naming a token the vocabulary lacks', { ...withFile('tokenizer.json', bytes(letters(50))), 'tokenizer_config.json': bytes('{"bos_token": "<s>"}') },
        { name: 'RangeError', message: /^loadModel: tokenizer_config\.json: bos_token: "<s>" is not a token of the tokenizer/ }],
    ];
    for (const [label, source, check] of cases) await expectFailure(lab, `${backend}: ${label}`, () => lab.loadModel(source), check);
    // A tokenizer that fits: the model takes and gives text, and dispose() frees both.
    const withText = await lab.loadModel(withFile('tokenizer.json', bytes(letters(50))));
    assert.deepEqual(Array.from(withText.tokenizer.encode('0123')), [0, 1, 2, 3]);
    const { tokens, text } = await withText.generate('0123', { maxTokens: 3, temperature: 0, stop: [] });
    // The text the tokens add after the prompt's (this tokenizer has no decoder: tokens are joined by spaces).
    assert.equal(withText.tokenizer.decode([0, 1, 2, 3, ...tokens]), `${withText.tokenizer.decode([0, 1, 2, 3])}${text}`);
    assert.equal(withText.forward('01').shape[0], 2);
    withText.dispose();
    assert.ok(withText.tokenizer.disposed, "the model's tokenizer is freed with it");
    assert.equal(lab.liveModels, 0);
    await assert.rejects(lab.loadModel(42), { name: 'TypeError', message: /expected a base URL .* or the model's files/ });
    // A folder on disk, given as a path or a file: URL (Node's fetch reads no files): the error says to pass its files.
    await assert.rejects(lab.loadModel('gpt2/'), { name: 'TypeError', message: /"gpt2\/" is not a URL .*pass the folder's files by name/ });
    await assert.rejects(lab.loadModel(new URL(`file://${dir}/gpt2-f16/`)),
      { name: 'Error', message: /could not fetch file:\/\/.*\/gpt2-f16\/config\.json \(.*\): .*file: URLs.*pass the folder's files by name/ });
    // A hub URL copied from the browser (the repository's page, a folder's or a file's) serves HTML, not the files:
    // the error gives the files' URL (and nothing is fetched).
    for (const page of ['https://huggingface.co/openai-community/gpt2', 'https://huggingface.co/openai-community/gpt2/tree/main',
      'https://huggingface.co/openai-community/gpt2/blob/main/config.json']) {
      await assert.rejects(lab.loadModel(page), { name: 'TypeError',
        message: /^loadModel: https:\/\/huggingface\.co\/.* is not where the hub serves a repository's files; they are under resolve\/<revision>\/: https:\/\/huggingface\.co\/openai-community\/gpt2\/resolve\/main\/$/ });
    }
    await assert.rejects(lab.loadModel(new URL('https://huggingface.co/org/model/tree/v1.0/onnx/')), { name: 'TypeError', message: /: https:\/\/huggingface\.co\/org\/model\/resolve\/v1\.0\/onnx\/$/ });
    await assert.rejects(lab.loadModel(good, { signal: 'stop' }), { name: 'TypeError', message: /signal must be an AbortSignal/ });
    // A disposed lab loads no more models; one that never had workers is not told they are gone.
    const single = await init({ gpt: true, simd: backend === 'wasm-simd' });
    single.dispose();
    await assert.rejects(single.loadModel(good), { name: 'Error', message: /^attnlab: this lab was disposed \(loadModel needs a new init\(\)\)$/ });
  }
});

test('downloads: a fetch that fails halfway, a missing file, an abort — nothing left behind', async () => {
  const { lab } = labs[0];
  const url = server.url('gpt2-f16');
  await expectFailure(lab, 'halfway', () => {
    server.fail('model.safetensors', 5000);
    return lab.loadModel(url);
  }, /loadModel: the download of http:\/\/127\.0\.0\.1:\d+\/gpt2-f16\/resolve\/main\/model\.safetensors failed after \d+ of \d+ bytes|model\.safetensors is truncated/);
  await expectFailure(lab, 'missing', () => lab.loadModel(server.url('no-such-model')),
    /loadModel: could not fetch http:\/\/127\.0\.0\.1:\d+\/no-such-model\/resolve\/main\/config\.json \(HTTP 404 Not Found\)/);
  // Aborted while the weights stream in.
  await expectFailure(lab, 'aborted', () => {
    const controller = new AbortController();
    return lab.loadModel(url, { signal: controller.signal, onProgress: (p) => p.file === 'model.safetensors' && controller.abort() });
  }, { name: 'AbortError' });
  const controller = new AbortController();
  controller.abort(new Error('changed my mind'));
  await assert.rejects(lab.loadModel(good, { signal: controller.signal }), /changed my mind/);
});

// A load refused partway through a file must let go of the download: a response body left unread keeps its
// connection open (and a server sending a 500 MB checkpoint) until the body is garbage-collected. The server here
// sends a malformed header and then bytes without end; it sees the client close the connection. Without the
// cancel the close never comes, and the test's timeout fails it.
test('a load refused partway through a download ends the download: the server sees the connection close', { timeout: 60_000 }, async () => {
  const { lab } = labs[0];
  const malformed = bytes('{"a":   ');
  const head = new Uint8Array(8 + malformed.length), rest = new Uint8Array(1 << 20);
  new DataView(head.buffer).setBigUint64(0, BigInt(malformed.length), true);
  head.set(malformed, 8);
  let closed;
  const connectionClosed = new Promise((resolve) => (closed = resolve));
  const endless = createServer(async (req, res) => {
    const name = req.url.split('/').pop();
    if (name !== 'model.safetensors') {
      if (good[name]) res.writeHead(200).end(good[name]);
      else res.writeHead(404).end();
      return;
    }
    res.on('close', closed);
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    res.write(head);
    while (!res.destroyed) {
      if (!res.write(rest)) await new Promise((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
    }
  });
  await new Promise((resolve) => endless.listen(0, '127.0.0.1', resolve));
  after(() => {  // (also after a timeout, when the connection was left open)
    endless.closeAllConnections();
    return new Promise((resolve) => endless.close(resolve));
  });
  await assert.rejects(lab.loadModel(`http://127.0.0.1:${endless.address().port}/m/resolve/main/`),
    { name: 'RangeError', message: /loadModel: model\.safetensors: not a usable safetensors file: the JSON header is malformed/ });
  await connectionClosed;
  assert.equal(lab.liveModels, 0);
});

test('calls on a loaded model: bad ids, an empty prompt, maxTokens past the context; the model keeps working', async () => {
  for (const { name: backend, lab } of labs) {
    const model = await lab.loadModel(good);  // vocab 50, n_positions 48
    const before = model.forward([3, 4, 5]).logits;
    const memory = model.memoryBytes;
    const rejectsRange = async (p, re) => assert.rejects(p, { name: 'RangeError', message: re });
    assert.throws(() => model.forward([3, 50]), { name: 'RangeError', message: /Model\.forward: ids\[1\] = 50 is not a token id: the vocabulary has ids 0 to 49 \(config\.json vocab_size = 50\)/ });
    assert.throws(() => model.forward([]), { name: 'RangeError', message: /ids must hold at least one token id/ });
    assert.throws(() => model.forward([3.5]), { name: 'RangeError', message: /ids\[0\] must be an integer/ });
    assert.throws(() => model.forward('hello'), { name: 'TypeError', message: /loaded without a tokenizer/ });
    assert.throws(() => model.forward([3], { attention: 1 }), { name: 'TypeError', message: /attention must be a boolean/ });
    await rejectsRange(model.generate([], { maxTokens: 3 }), /Model\.generate: prompt must hold at least one token id/);
    await rejectsRange(model.generate([3, 4, 5], { maxTokens: 46 }), /the prompt's 3 tokens and maxTokens = 46 make 49 positions, past the model's context of 48 \(config\.json n_positions\)/);
    await rejectsRange(model.generate([3], { maxTokens: 0 }), /maxTokens must be an integer >= 1, got 0/);
    await rejectsRange(model.generate([3], { maxTokens: 2, temperature: -1 }), /temperature must be finite and >= 0/);
    await rejectsRange(model.generate([3], { maxTokens: 2, temperature: 1e-50 }), /temperature must be 0 or at least 3e-39/);
    await rejectsRange(model.generate([3], { maxTokens: 2, topP: 0 }), /topP must be in \(0, 1\]/);
    await rejectsRange(model.generate([3], { maxTokens: 2, topK: 1.5 }), /topK must be an integer >= 0/);
    await rejectsRange(model.generate([3], { maxTokens: 2, stop: [99] }), /stop\[0\] = 99 is not a token id/);
    assert.throws(() => model.stream([3], { maxTokens: 2, stop: 'the end' }), { name: 'TypeError', message: /stop strings need a tokenizer/ });
    // A list of strings and ids: each error names the entry as given (its index in the whole list).
    assert.throws(() => model.stream([3], { maxTokens: 2, stop: ['the end', null] }), { name: 'TypeError', message: /Model\.stream: stop\[1\] must be a number, got null/ });
    assert.throws(() => model.stream([3], { maxTokens: 2, stop: ['the end', 4.5] }), { name: 'RangeError', message: /Model\.stream: stop\[1\] must be an integer/ });
    // '' is in every text: it would stop every generation at its first token.
    assert.throws(() => model.stream([3], { maxTokens: 2, stop: [4, ''] }), { name: 'RangeError', message: /Model\.stream: stop\[1\] is an empty string/ });
    assert.throws(() => model.stream([3], { maxTokens: 2, stop: '' }), { name: 'RangeError', message: /Model\.stream: stop is an empty string/ });
    assert.throws(() => model.stream([3], { maxTokens: 2, beams: 4 }), { name: 'TypeError', message: /unknown option "beams"/ });
    assert.throws(() => model.stream([3]), { name: 'TypeError', message: /options with maxTokens are required/ });
    // Still the same model.
    assert.deepEqual(model.forward([3, 4, 5]).logits, before);
    assert.equal((await model.generate([3, 4, 5], { maxTokens: 45, temperature: 0, stop: [] })).tokens.length, 45);
    assert.ok(model.memoryBytes >= memory);
    model.dispose();
    assert.equal(lab.liveModels, 0, backend);
  }
});

test('models are freed: twenty loads and dispose()s do not grow wasm memory', async () => {
  const { lab } = labs[0];
  const llama = await files(dir, 'llama-tied-bf16');
  const cycle = async () => {
    const m = await lab.loadModel(llama);
    await m.generate([3, 4], { maxTokens: 8, temperature: 0 });
    m.dispose();
  };
  await cycle();
  await cycle();
  const settled = lab.memoryBytes;
  for (let i = 0; i < 20; ++i) await cycle();
  assert.equal(lab.memoryBytes, settled);
});

// Token ids: the model takes every form its tokenizer takes (checks.js's tokenIds, one function for both), the
// same ids to the same results, and refuses the same ones with the same error.
test('token ids: a model takes and refuses what its tokenizer does', async () => {
  const { lab } = labs[0];
  const model = await lab.loadModel(withFile('tokenizer.json', bytes(letters(50))));
  const tk = model.tokenizer;
  const greedy = { maxTokens: 3, temperature: 0, stop: [] };
  const logits = model.forward([3, 4, 5]).logits, decoded = tk.decode([3, 4, 5]), tokens = tk.tokens([3, 4, 5]);
  const generated = Array.from((await model.generate([3, 4, 5], greedy)).tokens);
  for (const T of [Int32Array, Uint32Array, Int16Array, Uint16Array, Int8Array, Uint8Array, Uint8ClampedArray]) {
    const ids = T.of(3, 4, 5);
    assert.equal(tk.decode(ids), decoded, T.name);
    assert.deepEqual(tk.tokens(ids), tokens, T.name);
    assert.deepEqual(model.forward(ids).logits, logits, T.name);
    assert.deepEqual((await model.forwardAsync(ids)).logits, logits, T.name);
    assert.deepEqual(Array.from((await model.generate(ids, greedy)).tokens), generated, T.name);
    const streamed = [];
    for await (const t of model.stream(ids, greedy)) streamed.push(t.id);
    assert.deepEqual(streamed, generated, T.name);
  }
  // Each refused by all of them alike: the same class, and the same message after the function's name.
  const refused = [
    [Uint32Array.of(3, 2 ** 31), RangeError, 'ids[1] must be an integer (32-bit), got 2147483648'],
    [[3, 4.5], RangeError, 'ids[1] must be an integer (32-bit), got 4.5'],
    [[3, '4'], TypeError, 'ids[1] must be a number, got "4"'],
    [Float32Array.of(3, 4), TypeError, /^ids must be an Int32Array, another integer typed array .* or an array of integers, got Float32Array$/],
    [BigInt64Array.of(3n), TypeError, /got BigInt64Array$/],
    [new BigUint64Array(0), TypeError, /got BigUint64Array$/],
    [new DataView(new ArrayBuffer(4)), TypeError, /got DataView$/],
    [3, TypeError, /got 3$/],
  ];
  const calls = [
    ['Tokenizer.decode', 'ids', (ids) => tk.decode(ids)],
    ['Tokenizer.tokens', 'ids', (ids) => tk.tokens(ids)],
    ['Model.forward', 'ids', (ids) => model.forward(ids)],
    ['Model.forward', 'ids', (ids) => model.forwardAsync(ids)],
    ['Model.generate', 'prompt', (ids) => model.generate(ids, greedy)],
    ['Model.stream', 'prompt', (ids) => model.stream(ids, greedy)],
  ];
  for (const [ids, type, message] of refused)
    for (const [fn, name, call] of calls) {
      const label = `${fn}(${ids?.constructor?.name ?? ids})`;
      const text = typeof message === 'string' ? message.replace(/^ids/, name) : null;
      await assert.rejects(async () => call(ids), (e) => {
        assert.equal(e.constructor, type, label);
        assert.ok(e.message.startsWith(`${fn}: ${name}`), `${label}: ${e.message}`);
        if (text) assert.equal(e.message, `${fn}: ${text}`, label);
        else assert.match(e.message.slice(`${fn}: `.length).replace(new RegExp(`^${name}`), 'ids'), message, label);
        return true;
      });
    }
  assert.deepEqual(model.forward([3, 4, 5]).logits, logits);
  model.dispose();
});

// A stop list of strings and ids: the engine sees the ids alone, and the error names the entry in the list as given.
test('a bad stop id among stop strings is named by its index in the list given', async () => {
  for (const { name: backend, lab } of labs) {
    const model = await lab.loadModel(withFile('tokenizer.json', bytes(letters(50))));
    const bad = (stop, name) => ({ name: 'RangeError', message: new RegExp(`^Model\\.(generate|stream): ${name.replace(/[[\]]/g, '\\$&')} = 99 is not a token id`) });
    for (const [stop, name] of [[['9', 99], 'stop[1]'], [['9', 4, '8', 99], 'stop[3]'], [[4, 99, 'x'], 'stop[1]'], [99, 'stop'], [[99], 'stop[0]']]) {
      const label = `${backend}: stop ${JSON.stringify(stop)}`;
      await assert.rejects(model.generate([3], { maxTokens: 2, stop }), bad(stop, name), label);
      await assert.rejects(model.stream([3], { maxTokens: 2, stop }).next(), bad(stop, name), label);
    }
    assert.equal((await model.generate([3], { maxTokens: 2, temperature: 0, stop: ['9', 4] })).tokens.length > 0, true);
    model.dispose();
  }
});
