#!/usr/bin/env node
// Training speed of the small GPT: attnlab (one thread, and trainStepAsync on two workers: the batch's sequences
// split between them) against TensorFlow.js (wasm backend, one thread), the same model —
// nanoGPT's architecture, 4 layers, 4 heads, d = 128, context 128, batch 8, vocabulary 256 — written with tfjs ops
// and trained with tf.variableGrads + Adam, from the same initial weights on the same batches.
//
//   node bench/train.mjs [--steps=N] [--check=N] [--simd=false]
//
//   --check=N  steps whose losses are printed side by side and must agree to float32 tolerance (default 5)
//   --steps=N  timed steps per library after the check (default 20)
//
// Prints both loss curves, steps per second (median of the timed steps, and the ratio), the memory a step uses
// (attnlab: the model's wasm heap share and the step's workspace; tfjs: tf.profile's peak bytes of one step), and
// the other load on the machine while it ran (bench/lib/system.mjs). Exits non-zero if the curves disagree.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry } from './lib/data.mjs';
import { cpuSnapshot, otherLoad, machineInfo } from './lib/system.mjs';
import { loadTfjsWithGradients } from './lib/tfjs-gradients.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name, d) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d;
const CHECK = Number(value('check', 5)), STEPS = Number(value('steps', 20)), SIMD = value('simd', 'true') !== 'false';
const CONFIG = { vocabSize: 256, context: 128, dModel: 128, heads: 4, layers: 4, seed: 1 };
const BATCH = 8, LR = 1e-3;
// Adam without weight decay on both sides (tf.train.adam has none), no clipping, PyTorch's betas and eps.
const TRAIN = { lr: LR, weightDecay: 0, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

// ---- data: bytes of a seeded order-2 Markov text, so the loss has something to learn ----
const rand = mulberry(7);
const corpus = new Int32Array(200_000);
const next = Array.from({ length: 256 }, () => Array.from({ length: 4 }, () => Math.floor(rand() * 256)));
for (let i = 2; i < corpus.length; ++i) corpus[i] = rand() < 0.9 ? next[(corpus[i - 1] + corpus[i - 2]) & 255][Math.floor(rand() * 4)] : Math.floor(rand() * 256);
function batch(step) {
  const r = mulberry(1000 + step), T = CONFIG.context;
  const x = new Int32Array(BATCH * T), y = new Int32Array(BATCH * T);
  for (let b = 0; b < BATCH; ++b) {
    const at = Math.floor(r() * (corpus.length - T - 1));
    x.set(corpus.subarray(at, at + T), b * T);
    y.set(corpus.subarray(at + 1, at + T + 1), b * T);
  }
  return { x, y };
}

// ---- attnlab ----
const { init } = await import(path.join(root, 'dist/index.js'));
const lab = await init({ simd: SIMD, gpt: true });
const model = lab.createGPT(CONFIG);
const weights = model.getWeights();
// The same model (same seed, same weights) on a lab with two workers: GPT.trainStepAsync.
const lab2 = await init({ simd: SIMD, gpt: true, threads: 2 });
const model2 = lab2.createGPT(CONFIG);

// ---- TensorFlow.js: the same forward, with tfjs ops ----
// tfjs from its ES module build, so that its gradients register into the engine the wasm backend uses: see
// bench/lib/tfjs-gradients.mjs.
const { tf, tfwasm } = await loadTfjsWithGradients();

const { dModel: D, heads: H, layers: L, context: T, vocabSize: V } = CONFIG;
const dh = D / H;
const vars = {};
for (const [name, v] of Object.entries(weights)) {
  if (name === 'lm_head.weight') continue;  // tied: the token embedding
  const shape = model.shapes[name];
  vars[name] = tf.variable(tf.tensor(v, shape), true, name);
}
const causal = tf.tensor2d(Float32Array.from({ length: T * T }, (_, k) => (k % T > Math.floor(k / T) ? -1e9 : 0)), [T, T]);
const scale = tf.scalar(1 / Math.sqrt(dh));
const gelu = (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))));
function layerNorm(x, prefix) {
  const { mean, variance } = tf.moments(x, -1, true);
  const n = tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5)));
  return tf.add(tf.mul(n, vars[`${prefix}.weight`]), vars[`${prefix}.bias`]);
}
const linear = (x, prefix) => tf.add(tf.matMul(x, vars[`${prefix}.weight`], false, true), vars[`${prefix}.bias`]);
function loss(x, y) {
  const B = x.shape[0] / T;
  // The embedding as one-hot · wte: the wasm backend has no UnsortedSegmentSum, which gather's gradient needs.
  let h = tf.add(tf.matMul(tf.oneHot(x, V), vars['transformer.wte.weight']), tf.tile(vars['transformer.wpe.weight'], [B, 1]));  // [B·T, D]
  for (let l = 0; l < L; ++l) {
    const p = `transformer.h.${l}`;
    const qkv = linear(layerNorm(h, `${p}.ln_1`), `${p}.attn.c_attn`);  // [B·T, 3D]
    const heads = (t) => tf.transpose(tf.reshape(t, [B, T, H, dh]), [0, 2, 1, 3]);  // [B, H, T, dh]
    const [q, k, v] = tf.split(qkv, 3, 1).map(heads);
    const att = tf.softmax(tf.add(tf.mul(tf.matMul(q, k, false, true), scale), causal));
    const y2 = tf.reshape(tf.transpose(tf.matMul(att, v), [0, 2, 1, 3]), [B * T, D]);
    h = tf.add(h, linear(y2, `${p}.attn.c_proj`));
    const m = linear(gelu(linear(layerNorm(h, `${p}.ln_2`), `${p}.mlp.c_fc`)), `${p}.mlp.c_proj`);
    h = tf.add(h, m);
  }
  const logits = tf.matMul(layerNorm(h, 'transformer.ln_f'), vars['transformer.wte.weight'], false, true);  // [B·T, V]
  return tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(logits), tf.oneHot(y, V)), -1)));
}
const optimizer = tf.train.adam(LR, TRAIN.beta1, TRAIN.beta2, TRAIN.eps);
function tfStep(step) {
  const { x, y } = batch(step);
  const xt = tf.tensor1d(x, 'int32'), yt = tf.tensor1d(y, 'int32');
  const cost = optimizer.minimize(() => loss(xt, yt), true);
  const value = cost.dataSync()[0];
  tf.dispose([cost, xt, yt]);
  return value;
}
const labStep = (step) => {
  const { x, y } = batch(step);
  return model.trainStep(x, y, TRAIN);
};

// ---- run: the check steps side by side, then the timed steps of each ----
const info = machineInfo();
console.log(`train bench: ${info.cpuModel}, ${info.logicalCpus} cpus, node ${info.node}, load average at start ${info.loadAverageAtStart.join(' ')}`);
console.log(`model: ${L} layers, ${H} heads, d = ${D}, context ${T}, batch ${BATCH}, vocabulary ${V} — ${model.parameterCount} parameters; Adam lr ${LR}`);
console.log(`attnlab ${lab.backend} (${lab.buildInfo().kernels}); tfjs ${tf.version_core} wasm, ${tfwasm.getThreadsCount()} thread, SIMD ${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')}`);
const lab2Step = (step) => {
  const { x, y } = batch(step);
  return model2.trainStepAsync(x, y, TRAIN);
};
console.log('\nstep   attnlab loss   tfjs loss      |diff|/loss   attnlab 2 threads   |diff|/loss');
let worst = 0, worst2 = 0;
for (let s = 0; s < CHECK; ++s) {
  const a = labStep(s), b = tfStep(s), rel = Math.abs(a - b) / Math.abs(b);
  const c = await lab2Step(s), rel2 = Math.abs(c - a) / Math.abs(a);
  worst = Math.max(worst, rel), worst2 = Math.max(worst2, rel2);
  console.log(`${String(s).padStart(4)}   ${a.toFixed(6).padStart(12)}   ${b.toFixed(6).padStart(12)}   ${rel.toExponential(2)}      ${c.toFixed(6).padStart(12)}        ${rel2.toExponential(2)}`);
}
// Float32 tolerance: both sum the same ~10⁷-term forward in a different order (≈ 1e-6 relative on the loss), and
// Adam's first steps move every weight by ≈ lr whatever the gradient's size, so tiny gradient differences reach
// the weights only as their sign flips on near-zero components: a few 1e-5 by step 5.
const TOLERANCE = 1e-4;
console.log(`worst relative difference over ${CHECK} steps: ${worst.toExponential(2)} (tolerance ${TOLERANCE}); 2 threads against 1: ${worst2.toExponential(2)}`);

// cpuMs: CPU time of this process per step, every thread counted (the 2-thread step's workers included): what
// the step costs the machine, which waiting for a core does not inflate.
function time(stepFn, from) {
  const ms = [];
  const before = cpuSnapshot(), cpu0 = process.cpuUsage();
  for (let s = 0; s < STEPS; ++s) {
    const t0 = performance.now();
    stepFn(from + s);
    ms.push(performance.now() - t0);
  }
  const load = otherLoad(before, cpuSnapshot(), 0);  // this process is the only one measured: its CPU time is in ownMs
  const cpu = process.cpuUsage(cpu0);
  ms.sort((p, q) => p - q);
  return { median: ms[Math.floor(ms.length / 2)], min: ms[0], load, cpuMs: (cpu.user + cpu.system) / 1000 / STEPS };
}
async function timeAsync(stepFn, from) {
  const ms = [];
  const before = cpuSnapshot(), cpu0 = process.cpuUsage();
  for (let s = 0; s < STEPS; ++s) {
    const t0 = performance.now();
    await stepFn(from + s);
    ms.push(performance.now() - t0);
  }
  const load = otherLoad(before, cpuSnapshot(), 0);  // process.cpuUsage counts the worker threads too
  const cpu = process.cpuUsage(cpu0);
  ms.sort((p, q) => p - q);
  return { median: ms[Math.floor(ms.length / 2)], min: ms[0], load, cpuMs: (cpu.user + cpu.system) / 1000 / STEPS };
}
const labT = time(labStep, CHECK), lab2T = await timeAsync(lab2Step, CHECK), tfT = time(tfStep, CHECK);
const prof = await tf.profile(() => tfStep(CHECK + STEPS));
const fmt = (t) => `${(1000 / t.median).toFixed(2)} steps/s (median ${t.median.toFixed(1)} ms, best ${t.min.toFixed(1)} ms; CPU ${t.cpuMs.toFixed(1)} ms/step; other load ${t.load ? t.load.otherCores.toFixed(2) : '?'} cores)`;
console.log(`\nattnlab            ${fmt(labT)}`);
console.log(`attnlab 2 threads  ${fmt(lab2T)}`);
console.log(`tfjs               ${fmt(tfT)}`);
console.log(`speed-up ${(tfT.median / labT.median).toFixed(2)}× (median), ${(tfT.min / labT.min).toFixed(2)}× (best); ` +
  `2 threads against 1: ${(labT.median / lab2T.median).toFixed(2)}× (median), ${(labT.min / lab2T.min).toFixed(2)}× (best), ` +
  `CPU per step ${(lab2T.cpuMs / labT.cpuMs).toFixed(2)}× one thread's (the copies and the sum; on 2 free cores its wall time would be at least half that, ${(lab2T.cpuMs / 2).toFixed(0)} ms)`);
const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
console.log(`\nmemory per training step:`);
console.log(`  attnlab: workspace ${mib(model.memoryBytes - 4 * 4 * model.parameterCount)} (activations kept for the backward + scratch), ` +
  `parameters + gradients + Adam moments ${mib(16 * model.parameterCount)}; the module's wasm memory ${mib(lab.memoryBytes)}`);
console.log(`  tfjs:    peak ${mib(prof.peakBytes)} of tensors during a step (tf.profile), ${prof.kernels.length} kernels; parameters + Adam moments ${mib(12 * model.parameterCount)}`);
model.dispose();
model2.dispose();
lab2.dispose();
if (!(worst <= TOLERANCE)) {
  console.error(`the loss curves disagree: ${worst.toExponential(2)} > ${TOLERANCE}`);
  process.exit(1);
}
// Two threads against one: the same engine, the gradient summed in another order (first loss within an ulp, later
// ones from weights that differ in their last bits; tests/js/gpt-async.test.mjs bounds both).
if (!(worst2 <= 1e-5)) {
  console.error(`the 2-thread loss curve disagrees with the 1-thread one: ${worst2.toExponential(2)} > 1e-5`);
  process.exit(1);
}
