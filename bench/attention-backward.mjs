#!/usr/bin/env node
// The gradient of attention: attnlab (lab.attention with lse, then lab.attentionBackward) against TensorFlow.js
// (wasm backend, one thread: tf.grads of the same attention written with tfjs ops, which materializes the
// [heads, n, n] weights), on causal self-attention of 8 heads, d = 64, at a few sequence lengths. Both compute the
// forward and the backward of L = Σ dO∘O; the gradients are compared, then timed (median of the runs).
//
//   node bench/attention-backward.mjs [--runs=N] [--simd=false]
//
// Also prints the other load on the machine while it ran (bench/lib/system.mjs): read ratios, not absolute times,
// on a shared machine.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry } from './lib/data.mjs';
import { cpuSnapshot, otherLoad } from './lib/system.mjs';
import { loadTfjsWithGradients } from './lib/tfjs-gradients.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name, d) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d;
const RUNS = Number(value('runs', 5)), SIMD = value('simd', 'true') !== 'false';
const H = 8, D = 64;

const { init } = await import(path.join(root, 'dist/index.js'));
const lab = await init({ simd: SIMD });

const { tf, tfwasm } = await loadTfjsWithGradients();
console.log(`attnlab ${lab.backend} (${lab.buildInfo().kernels}); tfjs ${tf.version_core} wasm, ${tfwasm.getThreadsCount()} thread, SIMD ${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')}`);
console.log(`causal self-attention, ${H} heads, d = ${D}, [heads, n, d] tensors; forward + backward; median of ${RUNS} runs\n`);

const random = (n, r) => Float32Array.from({ length: n }, () => r() * 2 - 1);

function median(fn) {
  fn();  // warm-up
  const ms = [];
  for (let i = 0; i < RUNS; ++i) {
    const t0 = performance.now();
    fn();
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)];
}

console.log('     n   attnlab ms   tfjs ms   speed-up   max |Δ| / max |grad| (dq, dk, dv)');
const before = cpuSnapshot();
for (const n of [128, 512, 1024]) {
  const r = mulberry(n);
  const q = random(H * n * D, r), k = random(H * n * D, r), v = random(H * n * D, r), dO = random(H * n * D, r);
  const opts = { q, k, v, heads: H, nq: n, dk: D, causal: true };
  const attnlab = () => {
    const { output, lse } = lab.attention({ ...opts, returnLse: true });
    return lab.attentionBackward({ ...opts, output, lse, dOutput: dO });
  };
  const scale = 1 / Math.sqrt(D);
  const bias = tf.tensor2d(Float32Array.from({ length: n * n }, (_, i) => (i % n > Math.floor(i / n) ? -1e9 : 0)), [n, n]);
  const [tq, tk, tv, tdO] = [q, k, v, dO].map((x) => tf.tensor3d(x, [H, n, D]));
  const loss = (a, b, c) => tf.sum(tf.mul(tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(a, b, false, true), scale), bias)), c), tdO));
  const grads = tf.grads(loss);
  const tfjs = () => tf.tidy(() => grads([tq, tk, tv]).map((g) => g.dataSync()));
  const mine = attnlab(), theirs = tfjs();
  const diff = ['dq', 'dk', 'dv'].map((name, i) => {
    let d = 0, m = 0;
    for (let j = 0; j < mine[name].length; ++j) d = Math.max(d, Math.abs(mine[name][j] - theirs[i][j])), m = Math.max(m, Math.abs(theirs[i][j]));
    return (d / m).toExponential(1);
  });
  const a = median(attnlab), t = median(tfjs);
  console.log(`${String(n).padStart(6)}   ${a.toFixed(2).padStart(10)}   ${t.toFixed(2).padStart(7)}   ${(t / a).toFixed(2).padStart(7)}×   ${diff.join(', ')}`);
  tf.dispose([bias, tq, tk, tv, tdO]);
}
const load = otherLoad(before, cpuSnapshot(), 0);
console.log(`\nother load while it ran: ${load ? load.otherCores.toFixed(2) : '?'} cores`);
