// Trains the explorer's shipped "trained weights" model with the engine's own small GPT and writes it as
// web/src/model/trained/words-gpt.safetensors. Bit for bit reproducible: fixed seeds, the SIMD module (its float32
// arithmetic is the same on every machine), the corpus and batches of the explorer's learn lab (web/src/text/corpus.ts,
// web/src/model/train-tasks.ts, bundled here with esbuild).
//   node scripts/train-explorer-model.mjs           trains and writes the file
//   node scripts/train-explorer-model.mjs --check   trains and fails unless the result equals the committed file
// Needs `npm run build` (dist/). About 2–10 s.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${repo}web/src/model/trained/words-gpt.safetensors`;
/** The shipped model: small enough to read every matrix in the explorer's tables (d_model 16, 2 heads of 8). */
export const CONFIG = { context: 24, dModel: 16, heads: 2, layers: 1, mlp: true, position: 'learned', bias: false, seed: 11 };
export const TRAIN = { steps: 2000, batchSeed: 2024, lr: 3e-3, weightDecay: 0, gradClip: 1 };

const bundled = await build({ entryPoints: [`${repo}web/src/model/train-tasks.ts`], bundle: true, write: false, format: 'esm', platform: 'neutral', logLevel: 'error' });
const tasks = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);
const { init } = await import(`${repo}dist/index.js`);

const lab = await init({ gpt: true, simd: true, wasmBinary: readFileSync(`${repo}dist/attnlab-gpt-simd.wasm`) });
const corpus = tasks.wordsCorpus();
const gpt = lab.createGPT({ vocabSize: corpus.vocab.length, ...CONFIG });
const next = tasks.batchMaker('words', TRAIN.batchSeed);
let loss = 0;
const t0 = performance.now();
for (let s = 0; s < TRAIN.steps; s++) {
  const b = next();
  loss = gpt.trainStep(b.tokens, b.targets, { lr: TRAIN.lr, weightDecay: TRAIN.weightDecay, gradClip: TRAIN.gradClip });
}
const bytes = gpt.toSafetensors();
const sha = createHash('sha256').update(bytes).digest('hex');
console.log(`trained ${TRAIN.steps} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s: last batch loss ${loss.toFixed(4)}, ${gpt.parameterCount} parameters, ${bytes.length} bytes, sha256 ${sha}`);
if (process.argv.includes('--check')) {
  if (!existsSync(OUT)) { console.error(`missing ${OUT}`); process.exit(1); }
  const committed = readFileSync(OUT);
  if (!committed.equals(Buffer.from(bytes))) { console.error('the committed model differs from what this script trains'); process.exit(1); }
  console.log('the committed model is reproduced bit for bit');
} else {
  mkdirSync(`${repo}web/src/model/trained`, { recursive: true });
  writeFileSync(OUT, bytes);
  console.log(`wrote ${OUT}`);
}
gpt.dispose();
