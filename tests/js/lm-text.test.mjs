// A generation's text (lm.js generatedText: what generate() and stream() give as `text`, and the text stop strings
// are looked for in), which decodes a window of the last few ids at each token, against what it must equal: every id
// decoded again at each token, as transformers' TextStreamer does. Long random id sequences (fixed seeds) on GPT-2's
// byte-level tokenizer (with and without the clean-up of spaces its tokenizer_config.json asks for), Llama 2's
// SentencePiece one (byte fallback, the first space stripped) and a Metaspace decoder: multi-byte characters split
// over tokens, emoji, CJK, byte pieces that never make a character, special tokens, ids past the tokenizer's, and the
// clean-up's patterns. The text after every token, and every piece given out, must be the same; and the ids decoded
// over a generation must grow with its length, not its square.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';

import { dist, init, repo } from './support/load.mjs';
import { rng } from './support/random.mjs';

const { generatedText } = await import(pathToFileURL(`${dist}lm.js`).href);
const lab = await init({ gpt: true });
after(() => lab.dispose());

const models = (name) => `${repo}node_modules/@lenml/tokenizer-${name}/models/`;
const read = (path) => readFileSync(path);
const llamaWith = (decoder) => {
  const j = JSON.parse(readFileSync(`${models('llama2')}tokenizer.json`, 'utf8'));
  j.decoder = decoder;
  return new TextEncoder().encode(JSON.stringify(j));
};
const TOKENIZERS = {
  'gpt2': { 'tokenizer.json': read(`${models('gpt2')}tokenizer.json`) },
  'gpt2 with clean-up': { 'tokenizer.json': read(`${models('gpt2')}tokenizer.json`), 'tokenizer_config.json': read(`${models('gpt2')}tokenizer_config.json`) },
  'llama2': { 'tokenizer.json': read(`${models('llama2')}tokenizer.json`), 'tokenizer_config.json': read(`${models('llama2')}tokenizer_config.json`) },
  'metaspace': { 'tokenizer.json': llamaWith({ type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false }] }) },
};

// What generatedText stands for: the context and every generated id decoded again at each token.
function wholeDecodes(tokenizer, prompt) {
  const ids = Array.from(prompt).filter((id) => id < tokenizer.vocabSize).slice(-4);  // the last 4 with text
  const before = tokenizer.decode(ids).replace(/\uFFFD+$/, '');
  let text = '', given = 0;
  return {
    add(token) {
      if (token < tokenizer.vocabSize) ids.push(token);
      const all = tokenizer.decode(Int32Array.from(ids));
      let from = 0;
      while (from < before.length && all[from] === before[from]) ++from;
      text = all.slice(from);
      return text;
    },
    piece(last) {
      const ready = last ? text : text.replace(/\uFFFD+$/, '');
      const piece = ready.slice(given);
      given = Math.max(given, ready.length);
      return piece;
    },
  };
}

// Text whose tokens split characters over bytes (emoji, CJK, accents) or meet the clean-up's patterns.
const SNIPPETS = ['Hello, world!', ' naïve café', '日本語のテキストです。', '中文字符', '😀🎉👍🏽', '👨‍👩‍👧', ' 한국어', ' Ελληνικά', '€ £ ¥',
  " don't", " I'm", " it's", " we've", " they're", " 'quoted' ", ' , . ? !', ' n', "'t", " '", ' ', '  double  spaces  ', '\n\n',
  'x ' + "' y", ' \u{10FFFF}', '\uFFFD', 'ok .', ' <s>', '<|endoftext|>'];

// One random sequence of `n` ids for `tk`, in chunks: snippets' ids, any ids, bytes (of whole or cut characters, or
// any byte), special tokens, ids past the tokenizer's (rows a model may have beyond them, in a prompt or generated).
function randomIds(tk, r, n) {
  const byteIds = Array.from({ length: 256 }, (_, b) => tk.idOf(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`));
  const byteLevel = byteIds[0] === undefined;  // GPT-2: its first 256 ids are the byte alphabet
  const byteId = (b) => (byteLevel ? byteLevelId(tk, b) : byteIds[b]);
  const specials = Object.values(tk.specialTokens).map((s) => s.id);
  const ids = [];
  while (ids.length < n) {
    const kind = r.next();
    if (kind < 0.3) ids.push(...tk.encode(r.pick(SNIPPETS), { addSpecialTokens: false }));
    else if (kind < 0.5) for (let k = r.int(1, 4); k > 0; --k) ids.push(r.int(0, tk.vocabSize - 1));
    else if (kind < 0.7) {  // a character's UTF-8 bytes, all or some of them
      const bytes = new TextEncoder().encode(String.fromCodePoint(r.pick([r.int(0x80, 0x7FF), r.int(0x800, 0xD7FF), r.int(0x1F300, 0x1FAFF), r.int(0x4E00, 0x9FFF)])));
      for (const b of bytes.subarray(0, r.bool(0.8) ? bytes.length : r.int(1, bytes.length - 1))) ids.push(byteId(b));
    } else if (kind < 0.85) for (let k = r.int(1, 3); k > 0; --k) ids.push(byteId(r.int(0, 255)));
    else if (kind < 0.95) ids.push(r.pick(specials));
    else ids.push(tk.vocabSize + r.int(0, 20));
  }
  return Int32Array.from(ids.slice(0, n));
}

// GPT-2's id of the token that is byte b alone (its byte-level alphabet: printable bytes as themselves, the others
// shifted past U+00FF).
const alphabets = new WeakMap();
function byteLevelId(tk, b) {
  let ids = alphabets.get(tk);
  if (!ids) {
    const chars = [];
    let shifted = 0;
    for (let i = 0; i < 256; ++i) {
      const printable = (i >= 0x21 && i <= 0x7E) || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE && i <= 0xFF);
      chars.push(String.fromCharCode(printable ? i : 256 + shifted++));
    }
    ids = chars.map((c) => tk.idOf(c));
    alphabets.set(tk, ids);
  }
  return ids[b];
}

// A tokenizer that counts the ids it decodes.
function counting(tk) {
  const wrapped = { count: 0, get vocabSize() { return tk.vocabSize; }, get cleanUpTokenizationSpaces() { return tk.cleanUpTokenizationSpaces; }, tokenOf: (id) => tk.tokenOf(id) };
  wrapped.decode = (ids, opts) => ((wrapped.count += ids.length), tk.decode(ids, opts));
  return wrapped;
}

// Runs both over the ids after the prompt; the first difference fails, named by its token.
function compare(tk, prompt, ids, label, restartsExpected = false) {
  const whole = wholeDecodes(tk, prompt), counted = counting(tk), windowed = generatedText(counted, prompt);
  for (let i = 0; i < ids.length; ++i) {
    const last = i === ids.length - 1;
    const at = `${label}: token ${i} (id ${ids[i]}) after ${JSON.stringify(Array.from(ids.subarray(Math.max(0, i - 8), i)))}`;
    assert.equal(windowed.add(ids[i]), whole.add(ids[i]), `${at}: the text so far`);
    assert.equal(windowed.piece(last), whole.piece(last), `${at}: the piece given out`);
    if (!restartsExpected) assert.equal(windowed.restarts, 0, `${at}: the window's text before its cut changed`);
  }
  return restartsExpected ? windowed.restarts : counted.count;
}

for (const [name, files] of Object.entries(TOKENIZERS)) {
  test(`${name}: the text after every token equals decoding every id again`, async () => {
    const tk = await lab.loadTokenizer(files);
    const r = rng(name.length * 7919 + 1);
    try {
      // Long generations: the ids decoded grow with the length (a few windows' worth per token).
      for (let k = 0; k < 3; ++k) {
        const n = 1500, prompt = randomIds(tk, r, r.int(1, 6)), ids = randomIds(tk, r, n);
        const decoded = compare(tk, prompt, ids, `${name} long #${k}`);
        assert.ok(decoded < 40 * n, `${name} long #${k}: ${decoded} ids decoded for ${n} tokens`);
      }
      // Short ones end anywhere: the last piece gives what is left.
      for (let k = 0; k < 60; ++k) compare(tk, randomIds(tk, r, r.int(1, 6)), randomIds(tk, r, r.int(1, 80)), `${name} short #${k}`);
      // English text, as a model would give it.
      const text = readFileSync(`${repo}tests/js/fixtures/tokenizer/kjv.txt`, 'utf8');
      const ids = tk.encode(text, { addSpecialTokens: false });
      assert.ok(compare(tk, ids.subarray(0, 5), ids.subarray(5), `${name} text`) < 40 * ids.length);
    } finally {
      tk.dispose();
    }
  });
}

// Text with a space near every token's end (numbers, single letters): the cut still moves, so the ids decoded grow
// with the length, with the clean-up of spaces (its patterns' starts held back only) and without it.
test('text with a space at every token: the ids decoded grow with the length', async () => {
  for (const name of ['gpt2', 'gpt2 with clean-up', 'llama2']) {
    const tk = await lab.loadTokenizer(TOKENIZERS[name]);
    try {
      for (const text of [Array.from({ length: 600 }, (_, i) => ` ${i % 10}`).join(''), Array.from({ length: 600 }, (_, i) => ` ${'abcdefghij'[i % 10]}`).join('')]) {
        const ids = tk.encode(text, { addSpecialTokens: false });
        const decoded = compare(tk, ids.subarray(0, 2), ids.subarray(2), `${name} ${JSON.stringify(text.slice(0, 8))}…`);
        assert.ok(decoded < 40 * ids.length, `${name}: ${decoded} ids decoded for ${ids.length} tokens`);
      }
    } finally {
      tk.dispose();
    }
  }
});

// A prompt that ends in rows past the tokenizer's: the context is its last ids that have text, so a SentencePiece
// decoder still keeps the first generated word's space.
test('a prompt ending in several ids past the tokenizer\'s keeps the seam with its last text', async () => {
  const tk = await lab.loadTokenizer(TOKENIZERS.llama2);
  try {
    const the = tk.idOf('▁the'), time = tk.idOf('▁time');
    const v = tk.vocabSize;
    assert.equal(generatedText(tk, Int32Array.of(the, v, v + 1, v + 2, v + 3, v + 4)).add(time), ' time');
  } finally {
    tk.dispose();
  }
});

// A decoder chain the cut's rules do not know (a Replace whose pattern spans tokens, after ByteLevel): the window's
// text before its cut changes, and the text falls back to decoding every id. The fallback is counted, and the text
// stays the same.
test('a decoder the cut does not know: the fallback to decoding every id fires, is counted, and the text is the same', async () => {
  const j = JSON.parse(readFileSync(`${models('gpt2')}tokenizer.json`, 'utf8'));
  j.decoder = { type: 'Sequence', decoders: [j.decoder, { type: 'Replace', pattern: { String: 'e t' }, content: 'E_T' }] };
  const tk = await lab.loadTokenizer({ 'tokenizer.json': new TextEncoder().encode(JSON.stringify(j)) });
  try {
    const ids = tk.encode(readFileSync(`${repo}tests/js/fixtures/tokenizer/kjv.txt`, 'utf8').slice(0, 4000), { addSpecialTokens: false });
    assert.ok(compare(tk, ids.subarray(0, 3), ids.subarray(3), 'Replace after ByteLevel', true) > 0, 'no fallback fired');
  } finally {
    tk.dispose();
  }
});
