// A GPT written by NumPy in the safetensors layout (tests/js/fixtures/gpt_numpy.py, Debian's python3-numpy) loads
// with lab.loadGPT and gives the logits NumPy computes in float64 from the same weights, on both backends. The
// script is an independent implementation of nanoGPT's forward: GQA (4 query heads over 2 K/V heads), biases, the
// MLP with exact GELU, tied embeddings, and a config that travels only in the file's metadata.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { loadLabs, repo } from './support/load.mjs';

// Debian's interpreter, where python3-numpy lives (a python3 earlier on PATH may lack NumPy).
const PYTHON = '/usr/bin/python3';
const labs = await loadLabs();
const work = mkdtempSync(join(tmpdir(), 'attnlab-numpy-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('weights written by NumPy load and give the logits NumPy computes', () => {
  const file = join(work, 'model.safetensors');
  const run = spawnSync(PYTHON, [join(repo, 'tests/js/fixtures/gpt_numpy.py'), file], { encoding: 'utf8' });
  assert.equal(run.status, 0, `python3 failed (is python3-numpy installed? scripts/bootstrap.sh installs it):\n${run.stderr}`);
  const want = JSON.parse(run.stdout);
  const bytes = new Uint8Array(readFileSync(file));
  for (const { name, lab } of labs) {
    const model = lab.loadGPT(bytes);
    assert.deepEqual({ ...model.config }, { vocabSize: 13, context: 8, dModel: 16, heads: 4, kvHeads: 2, layers: 2, mlp: true, position: 'learned', tied: true, bias: true, seed: 0 });
    const { logits } = model.forward(Int32Array.from(want.tokens), { batch: want.batch });
    assert.equal(logits.length, want.logits.length);
    // float32 against float64 on the same float32 weights: every product and sum within γ(k)·Σ|terms| (k ≤ 64),
    // through two blocks whose LayerNorms and softmaxes amplify by at most O(10) at these weights (sd 0.3): a few
    // hundred u, under 1e-5 of the logits' scale (measured: 4e-7 SIMD, 6e-7 scalar).
    const scale = Math.max(...want.logits.map(Math.abs));
    let worst = 0;
    for (let i = 0; i < logits.length; ++i) worst = Math.max(worst, Math.abs(logits[i] - want.logits[i]));
    assert.ok(worst <= 1e-5 * scale, `${name}: worst |attnlab − NumPy| = ${worst} (logits up to ${scale})`);
    // And the file written back holds the same weights.
    const again = lab.loadGPT(model.toSafetensors());
    assert.deepEqual(again.forward(Int32Array.from(want.tokens), { batch: want.batch }).logits, logits);
    model.dispose();
    again.dispose();
  }
});
