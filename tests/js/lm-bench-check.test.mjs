// The LM bench (bench/lm/) cannot rot: its self-check runs here. On a 3-layer GPT-2-shaped checkpoint written by
// NumPy, onnxruntime-web (the bench's ONNX graph with past/present KV) and TensorFlow.js (the bench's forward in
// tfjs ops) must give the float64 forward's logits within the bound derived from float32 arithmetic, for the
// prefill and every decode step, and its greedy tokens. attnlab's rows (F32, F16, BF16) may be skipped only
// while the package has no lab.loadModel: decided here by looking for the function, so that once the loader
// exists, the bench must run it and pass.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { dist, init, repo } from './support/load.mjs';

test('the LM bench self-check: onnxruntime-web, tfjs and attnlab (once it loads models) match float64', async (t) => {
  const labs = [await init(), await init({ gpt: true })];
  const hasLoader = labs.some((lab) => typeof lab.loadModel === 'function');
  const run = spawnSync(process.execPath, ['bench/lm/run.mjs', '--check'], {
    cwd: repo, encoding: 'utf8', env: { ...process.env, ATTNLAB_LM_DIST: dist },
  });
  const out = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, `bench/lm/run.mjs --check failed:\n${out}`);
  assert.match(out, /onnxruntime-web F32 +ok /);
  assert.match(out, /tfjs-wasm F32 +ok /);
  for (const dtype of ['F32', 'F16', 'BF16']) {
    if (hasLoader) assert.match(out, new RegExp(`attnlab ${dtype} +ok `), `attnlab ${dtype} must be checked once lab.loadModel exists:\n${out}`);
    else assert.match(out, new RegExp(`attnlab ${dtype} +skipped: lab.loadModel is not a function`));
  }
  if (!hasLoader) t.diagnostic('attnlab skipped: lab.loadModel does not exist in this build');
  for (const lab of labs) lab.dispose?.();
});

test('the LM bench\'s streaming read (a hand-assembled wasm module) reads every byte of its buffer', async () => {
  const { measureStream } = await import('../../bench/lm/stream.mjs');
  // sizes below, at and above a whole loop step (128 bytes) and a wasm page; measureStream checks the module's
  // sum of the buffer's u32 words (all ones) against their count, and throws when it differs
  for (const bytes of [128, 200, 65536, 65536 + 128, 3 << 20]) {
    const r = await measureStream(bytes, { reps: 1, minMs: 0 });
    assert.equal(r.bytes, Math.ceil(bytes / 128) * 128);
    assert.ok(r.gbps > 0);
  }
});

test('the LM kernels bench (the matrix-vector kernels alone) builds its module and passes its float64 check', () => {
  const run = spawnSync(process.execPath, ['bench/lm-kernels.mjs', '--check'], { cwd: repo, encoding: 'utf8' });
  const out = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, `bench/lm-kernels.mjs --check failed:\n${out}`);
  assert.match(out, /^checked: every kernel's y within/m);
});

test('the decode-attention bench checks what it times: over the cache, the bits of the same keys and values given directly', () => {
  for (const positions of [1, 160, 300]) {
    const run = spawnSync(process.execPath, ['bench/decode-attention.mjs', dist, '--check', `--positions=${positions}`], { cwd: repo, encoding: 'utf8' });
    assert.equal(run.status, 0, `bench/decode-attention.mjs --check failed:\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /decode attention over the cache ok/);
  }
});
