// By hand: the time Model.generate/stream spend building the generated text (lm.js generatedText: add + piece per
// token), apart from the model, for generations of 256, 1024 and 4096 tokens of English text, on GPT-2's byte-level
// tokenizer (with and without its clean-up of spaces) and Llama 2's SentencePiece one (byte fallback).
//   node bench/generated-text.mjs [DIST]     (DIST: a build of the package, dist/ by default: npm run build)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const repo = new URL('../', import.meta.url);
const dist = pathToFileURL(`${resolve(process.argv[2] ?? new URL('dist', repo).pathname)}/`);
const { init } = await import(new URL('index.js', dist).href);
const { generatedText } = await import(new URL('lm.js', dist).href);
const lab = await init({ gpt: true });
const read = (path) => readFileSync(new URL(path, repo));
const models = (name) => `node_modules/@lenml/tokenizer-${name}/models/`;
const TOKENIZERS = {
  'gpt2': { 'tokenizer.json': read(`${models('gpt2')}tokenizer.json`) },
  'gpt2 + clean-up': { 'tokenizer.json': read(`${models('gpt2')}tokenizer.json`), 'tokenizer_config.json': read(`${models('gpt2')}tokenizer_config.json`) },
  'llama2 (sentencepiece)': { 'tokenizer.json': read(`${models('llama2')}tokenizer.json`) },
};
const corpus = readFileSync(new URL('tests/js/fixtures/tokenizer/kjv.txt', repo), 'utf8');

// The text part of a generation of `ids` after `prompt`, in ms (all, and the last 256 tokens'): as Model's #tokens
// does it, a stop string looked for if given.
function run(tk, prompt, ids, stop) {
  const t0 = performance.now();
  const text = generatedText(tk, prompt);
  let out = '', tail = 0;
  for (let i = 0; i < ids.length; ++i) {
    if (i === ids.length - 256) tail = performance.now();
    const soFar = text.add(ids[i]);
    if (stop && soFar.includes(stop)) throw new Error('stopped');
    out += text.piece(i === ids.length - 1);
  }
  const end = performance.now();
  return { ms: end - t0, tailMs: end - tail, out };
}

for (const [name, files] of Object.entries(TOKENIZERS)) {
  const tk = await lab.loadTokenizer(files);
  const all = tk.encode(corpus.repeat(20), { addSpecialTokens: false });
  const prompt = all.subarray(0, 8);
  for (const n of [256, 1024, 4096]) {
    const ids = all.subarray(8, 8 + n);
    run(tk, prompt, ids.subarray(0, 64));  // warm-up
    const runs = [0, 1, 2].map(() => run(tk, prompt, ids));
    const best = Math.min(...runs.map((r) => r.ms)), tail = Math.min(...runs.map((r) => r.tailMs));
    const withStop = run(tk, prompt, ids, '\u0001never').ms;
    const full = tk.decode([...prompt, ...ids]);
    if (!full.endsWith(runs[0].out)) throw new Error(`${name}: the pieces are not the decoded text's end`);
    console.log(`${name.padEnd(24)} ${String(n).padStart(5)} tokens: ${best.toFixed(1).padStart(8)} ms, ` +
      `${(best / n).toFixed(3)} ms/token on average, ${(tail / 256).toFixed(3)} over the last 256; with a stop string ${withStop.toFixed(1)} ms`);
  }
  tk.dispose();
}
lab.dispose();
