// The shipped model's tokenizer.json (web/models/kjv-fortunes-gpt/) means what its trainer meant: Hugging Face's
// tokenizers (Rust, @anush008/tokenizers) and the engine's tokenizer (lab.loadTokenizer, where the build has it)
// load the file and give, on the held-out corpus and a tenth of the training documents, exactly the ids that the
// trainer's own encoder (scripts/shipped-model/bpe.mjs) gives, and decode them back to the text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';

import { loadCorpus } from '../../scripts/shipped-model/corpus.mjs';
import { fromTokenizerJson, makeEncoder, decode, END_OF_TEXT, GPT2_PATTERN, BYTE_CHARS } from '../../scripts/shipped-model/bpe.mjs';
import { EOT, FOLDER } from '../../scripts/shipped-model/recipe.mjs';
import { init } from './support/load.mjs';

const { Tokenizer } = createRequire(import.meta.url)('@anush008/tokenizers');
const file = readFileSync(`${FOLDER}/tokenizer.json`, 'utf8');
const json = JSON.parse(file);
const bpe = fromTokenizerJson(json);
const enc = makeEncoder(bpe);
const corpus = loadCorpus();
// Text that the corpus has little of: other scripts, digits, contractions, runs of spaces, tabs and newlines, an
// emoji (four UTF-8 bytes, no merges), a character split across tokens, and the end-of-text token's text inside.
const edges = [
  "I'm sure they'll say we've done what's right; it's 2024, isn't it?",
  'Tabs\tand  two spaces,   three, \n\n\nnewlines \r\n and a trailing space ',
  'Ünïcödé — “quotes”, 日本語のテキスト, Ελληνικά, 🙂 and 👩‍👩‍👧',
  '   leading spaces',
  '',
];
const texts = [...corpus.heldOut.map((d) => d.text), ...corpus.train.filter((_, i) => i % 10 === 0).map((d) => d.text), ...edges];

test('tokenizer.json is GPT-2\'s form: ByteLevel with the regex, BPE, ByteLevel decoder, <|endoftext|> last', () => {
  assert.deepEqual(json.pre_tokenizer, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true });
  assert.equal(json.decoder.type, 'ByteLevel');
  assert.equal(json.model.type, 'BPE');
  assert.equal(json.normalizer, null);
  assert.equal(Object.keys(json.model.vocab).length, 4096);
  assert.equal(json.model.merges.length, 4096 - 257);
  assert.deepEqual(json.added_tokens.map((t) => [t.id, t.content, t.special]), [[EOT, END_OF_TEXT, true]]);
  assert.equal(json.model.vocab[END_OF_TEXT], EOT);
  // The 256 byte tokens spelled as GPT-2 spells them ("Ġ" for the space).
  assert.equal(BYTE_CHARS[32], 'Ġ');
  assert.equal(json.model.vocab['Ġ'], 32);
  assert.equal(GPT2_PATTERN.source, "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
});

test('Hugging Face tokenizers encodes the corpus as the trainer does, and decodes it back', async () => {
  const hf = Tokenizer.fromString(file);
  assert.equal(hf.getVocabSize(true), 4096);
  const encodings = await hf.encodeBatch(texts, { addSpecialTokens: false });
  let tokens = 0;
  for (let i = 0; i < texts.length; ++i) {
    const ids = encodings[i].getIds(), want = enc.encode(texts[i]);
    assert.deepEqual(ids, want, `text ${i} (${JSON.stringify(texts[i].slice(0, 60))}…)`);
    assert.equal(await hf.decode(ids, false), texts[i]);
    assert.equal(decode(bpe.tokens, ids, EOT), texts[i]);
    tokens += ids.length;
  }
  assert.ok(tokens > 100_000, `only ${tokens} tokens compared`);
  // The special token's text is the special token, between the texts' ids.
  const joined = await hf.encode(`${edges[0]}${END_OF_TEXT}${edges[1]}`, null, { addSpecialTokens: false });
  assert.deepEqual(joined.getIds(), [...enc.encode(edges[0]), EOT, ...enc.encode(edges[1])]);
  assert.equal(await hf.decode([EOT], false), END_OF_TEXT);
});

test('the engine\'s tokenizer encodes the corpus as the trainer does (once the package has lab.loadTokenizer)', async (t) => {
  const lab = await init({ gpt: true });
  if (typeof lab.loadTokenizer !== 'function') {
    t.skip('this build of the package has no lab.loadTokenizer yet');
    return;
  }
  const tok = await lab.loadTokenizer({ 'tokenizer.json': new TextEncoder().encode(file) });
  try {
    assert.equal(tok.vocabSize, 4096);
    for (let i = 0; i < texts.length; ++i) {
      const ids = tok.encode(texts[i]);
      assert.deepEqual(Array.from(ids), enc.encode(texts[i]), `text ${i} (${JSON.stringify(texts[i].slice(0, 60))}…)`);
      assert.equal(tok.decode(ids), texts[i]);
    }
    assert.deepEqual(Array.from(tok.encode(`${edges[0]}${END_OF_TEXT}`)), [...enc.encode(edges[0]), EOT]);
  } finally {
    tok.dispose();
  }
});
