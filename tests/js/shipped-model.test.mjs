// The model folder that ships with the explorer (web/models/kjv-fortunes-gpt/):
// - is what scripts/train-shipped-model.mjs trains: --check retrains the corpus, the tokenizer and the first steps
//   bit for bit and checks every file against the run's record;
// - means, to an independent reader, what the engine computes: tests/js/support/gpt2_hf_numpy.py reads config.json
//   and model.safetensors as transformers' GPT-2 does (Conv1D weights [in, out], the activation config.json names,
//   the tied head) and runs the forward in float64. The export itself (hf-folder.mjs) is checked on a model with
//   random weights of every kind: the folder it writes gives NumPy the logits the engine computes from the model
//   it exported, so a wrong name, transpose, activation or tie fails. The committed folder, read back into the
//   engine, gives NumPy's logits and attention weights too (what the page and head-scores.json see).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { f16Bits, f16Safetensors, f16Value, gpt2Config, gpt2Tensors, nanoGptWeights, readSafetensors } from '../../scripts/shipped-model/hf-folder.mjs';
import { fromTokenizerJson, makeEncoder } from '../../scripts/shipped-model/bpe.mjs';
import { FOLDER, rng } from '../../scripts/shipped-model/recipe.mjs';
import { loadLabs, repo } from './support/load.mjs';

// Debian's interpreter, where python3-numpy lives (a python3 earlier on PATH may lack NumPy).
const PYTHON = '/usr/bin/python3';
const config = JSON.parse(readFileSync(`${FOLDER}/config.json`, 'utf8'));
const labs = await loadLabs({ gpt: true });

const work = mkdtempSync(join(tmpdir(), 'attnlab-shipped-'));
after(() => rmSync(work, { recursive: true, force: true }));

// NumPy's forward of a folder: float64 logits and attention, and its float32 logits.
function numpy(folder, sequences) {
  const run = spawnSync(PYTHON, [`${repo}tests/js/support/gpt2_hf_numpy.py`, folder], {
    input: JSON.stringify({ tokens: sequences, attention: true }), encoding: 'utf8', maxBuffer: 1 << 30,
  });
  assert.equal(run.status, 0, `python3 failed (is python3-numpy installed? scripts/bootstrap.sh installs it):\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

// The engine's logits and attention of one sequence against NumPy's (sequence s of `want`).
function compare(gpt, ids, want, s, label) {
  const { logits, attention } = gpt.forward(Int32Array.from(ids), { returnAttention: true });
  // float32 against float64 on the same weights (float16 values are exact in float32). A worst-case bound
  // (each dot product of k ≤ 4·d terms within γ(k) ≈ k·2⁻²⁴ of Σ|terms|, through the blocks and LayerNorms) is
  // near 1e-4 of the logits' scale: loose enough to let the tanh GELU pass for the exact one. The bound is taken
  // from float32 itself instead: NumPy runs the same forward in float32, and the engine may be at most 8 times as
  // far from float64 as that second float32 implementation is (two float32 implementations differ in summation
  // order and blocking, not in the size of their round-off).
  const scale = want.logits[s].reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  let worst = 0, worst32 = 0;
  for (let i = 0; i < logits.length; ++i) {
    worst = Math.max(worst, Math.abs(logits[i] - want.logits[s][i]));
    worst32 = Math.max(worst32, Math.abs(want.logits32[s][i] - want.logits[s][i]));
  }
  assert.ok(worst32 > 0 && worst32 < 1e-5 * scale, `NumPy's float32 forward is ${worst32} from its float64 one`);
  assert.ok(worst <= 8 * worst32, `${label}: worst |engine − NumPy| logit = ${worst}, NumPy float32's = ${worst32} (logits up to ${scale})`);
  // Attention weights: a weight's error is at most its score's error (a dot product of d/heads terms after
  // LayerNorm and a projection of d terms: of order 1e-6 at unit scale) times the weight (≤ 1); 1e-5.
  const t = ids.length, { heads: H, layers: L } = gpt.config;
  let worstA = 0;
  for (let l = 0; l < L; ++l)
    for (let h = 0; h < H; ++h)
      for (let i = 0; i < t; ++i)
        for (let j = 0; j < t; ++j) worstA = Math.max(worstA, Math.abs(attention[l][(h * t + i) * t + j] - (j <= i ? want.attention[s][l][h][i][j] : 0)));
  assert.ok(worstA <= 1e-5, `${label}: worst |engine − NumPy| attention weight = ${worstA}`);
  console.log(`# ${label} (${t} tokens): logits within ${(worst / scale).toExponential(2)} of their scale ${scale.toFixed(2)} (NumPy float32: ${(worst32 / scale).toExponential(2)}), attention within ${worstA.toExponential(2)}`);
}

test('the export writes a folder that NumPy reads as the model the engine exported (random weights of every kind)', () => {
  // Sizes where every Conv1D is told apart by its shape but c_proj (square), which only the values tell.
  const c = { vocabSize: 37, context: 12, dModel: 24, heads: 3, layers: 2 };
  const r = rng(5), normal = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const f16 = (x) => f16Value(f16Bits(x)); // weights the file holds exactly
  for (const { name, lab } of labs) {
    const gpt = lab.createGPT(c);
    const weights = {};
    for (const [key, v] of Object.entries(gpt.getWeights())) {
      if (key === 'lm_head.weight') continue;
      // LayerNorm gains near 1, biases and matrices of a size that gives the MLP's GELU inputs of either sign.
      const at = /ln_.*\.weight$/.test(key) ? 1 : 0, sd = /bias$/.test(key) ? 0.2 : /ln_/.test(key) ? 0.3 : 0.35;
      weights[key] = Float32Array.from(v, () => f16(at + sd * normal()));
    }
    gpt.setWeights(weights);
    const folder = join(work, name);
    rmSync(folder, { recursive: true, force: true });
    execFileSync('mkdir', ['-p', folder]);
    writeFileSync(join(folder, 'model.safetensors'), f16Safetensors(gpt2Tensors(gpt.getWeights(), gpt.shapes)));
    writeFileSync(join(folder, 'config.json'), JSON.stringify(gpt2Config(gpt.config, c.vocabSize - 1)));
    const sequences = [Array.from({ length: c.context }, (_, i) => (i * 7 + 3) % c.vocabSize), [5, 1, 36, 0]];
    const want = numpy(folder, sequences);
    sequences.forEach((ids, s) => compare(gpt, ids, want, s, `${name}, exported random model, sequence ${s}`));
    gpt.dispose();
  }
});

test('the committed model folder is reproduced bit for bit by its script (corpus, tokenizer, first steps, files)', () => {
  const out = execFileSync(process.execPath, [`${repo}scripts/train-shipped-model.mjs`, '--check'], { encoding: 'utf8' });
  assert.match(out, /reproduced bit for bit/);
});

test('config.json describes the engine\'s small GPT in GPT-2\'s terms', () => {
  assert.deepEqual(config.architectures, ['GPT2LMHeadModel']);
  assert.equal(config.model_type, 'gpt2');
  // The small GPT's GELU is the exact erf form: transformers' ACT2FN calls it "gelu" ("gelu_new" is the tanh one).
  assert.equal(config.activation_function, 'gelu');
  assert.equal(config.layer_norm_epsilon, 1e-5);
  assert.equal(config.tie_word_embeddings, true);
  assert.equal(config.bos_token_id, config.vocab_size - 1);
  assert.equal(config.eos_token_id, config.vocab_size - 1);
  const generation = JSON.parse(readFileSync(`${FOLDER}/generation_config.json`, 'utf8'));
  assert.equal(generation.eos_token_id, config.eos_token_id);
});

test('model.safetensors holds GPT-2\'s tensors in float16: names, Conv1D shapes [in, out], no separate lm_head', () => {
  const file = readFileSync(`${FOLDER}/model.safetensors`);
  const n = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.subarray(8, 8 + n).toString('utf8'));
  const { n_embd: d, n_layer: L, vocab_size: V, n_positions: P } = config;
  const want = { 'transformer.wte.weight': [V, d], 'transformer.wpe.weight': [P, d], 'transformer.ln_f.weight': [d], 'transformer.ln_f.bias': [d] };
  for (let i = 0; i < L; ++i) {
    const p = `transformer.h.${i}.`;
    Object.assign(want, {
      [`${p}ln_1.weight`]: [d], [`${p}ln_1.bias`]: [d], [`${p}ln_2.weight`]: [d], [`${p}ln_2.bias`]: [d],
      [`${p}attn.c_attn.weight`]: [d, 3 * d], [`${p}attn.c_attn.bias`]: [3 * d],
      [`${p}attn.c_proj.weight`]: [d, d], [`${p}attn.c_proj.bias`]: [d],
      [`${p}mlp.c_fc.weight`]: [d, 4 * d], [`${p}mlp.c_fc.bias`]: [4 * d],
      [`${p}mlp.c_proj.weight`]: [4 * d, d], [`${p}mlp.c_proj.bias`]: [d],
    });
  }
  const { __metadata__: meta, ...tensors } = header;
  assert.deepEqual(meta, { format: 'pt' });
  assert.deepEqual(Object.fromEntries(Object.entries(tensors).map(([k, t]) => [k, t.shape])), want);
  for (const [name, t] of Object.entries(tensors)) assert.equal(t.dtype, 'F16', name);
  assert.equal(file.length, 8 + n + 2 * Object.values(want).reduce((s, sh) => s + sh.reduce((a, b) => a * b, 1), 0));
});

test('float16 rounding is NumPy\'s: to nearest, ties to even, subnormals, the largest finite value', () => {
  // float32 values around every kind of boundary: exact halves between float16 neighbours (ties), subnormals and
  // the smallest normal, values that round up into the next binade, and 65504 (float16's largest).
  const f = new Float32Array(1), u = new Uint32Array(f.buffer), values = [];
  for (const base of [1, 1.5, 0.1, 3.14159, 2 ** -14, 2 ** -15, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 65504, 65519, 1 - 2 ** -12, 2047.5, 0]) {
    for (const sign of [1, -1]) {
      f[0] = sign * base;
      for (let d = -4100; d <= 4100; d += 4096) for (let e = -2; e <= 2; ++e) {
        const v = new Uint32Array(1);
        v[0] = u[0] + d + e;
        const x = new Float32Array(v.buffer)[0];
        if (Number.isFinite(x) && Math.abs(x) < 65520) values.push(x);
      }
    }
  }
  const r = rng(3);
  for (let i = 0; i < 2000; ++i) values.push(Math.fround((r() - 0.5) * 2 ** (Math.floor(r() * 40) - 26)));
  const run = spawnSync(PYTHON, ['-c', 'import sys, json, numpy as np; x = np.array(json.load(sys.stdin), dtype=np.float32); print(json.dumps(x.astype(np.float16).view(np.uint16).tolist()))'],
    { input: JSON.stringify(values), encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const want = JSON.parse(run.stdout);
  values.forEach((x, i) => assert.equal(f16Bits(x), want[i], `${x}`));
  assert.throws(() => f16Bits(65520), /float16's range/);
});

test('the committed folder, read back into the engine, gives NumPy\'s logits and attention weights', () => {
  const tensors = readSafetensors(new Uint8Array(readFileSync(`${FOLDER}/model.safetensors`))).tensors;
  const enc = makeEncoder(fromTokenizerJson(JSON.parse(readFileSync(`${FOLDER}/tokenizer.json`, 'utf8'))));
  const r = rng(11);
  const sequences = [
    enc.encode('The old man walked to the river, and he said unto his son, Go in peace.'),
    Array.from({ length: config.n_positions }, () => Math.floor(r() * config.vocab_size)), // every position, any token
  ];
  const want = numpy(FOLDER, sequences);
  const c = { vocabSize: config.vocab_size, context: config.n_positions, dModel: config.n_embd, heads: config.n_head, layers: config.n_layer };
  for (const { name, lab } of labs) {
    const gpt = lab.createGPT(c);
    gpt.setWeights(nanoGptWeights(tensors));
    sequences.forEach((ids, s) => compare(gpt, ids, want, s, `${name}, shipped model, sequence ${s}`));
    gpt.dispose();
  }
});
