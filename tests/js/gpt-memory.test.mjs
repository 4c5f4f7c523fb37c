// A GPT's wasm memory comes back: on dispose(), and when the GPT object is garbage-collected (FinalizationRegistry).
// Wasm memory never shrinks, so "comes back" means: creating and dropping many models does not grow it. The
// collection case runs in a child process with --expose-gc, waiting (not sleeping a fixed time) for the registry.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, loadLabs } from './support/load.mjs';

const CONFIG = { vocabSize: 256, context: 64, dModel: 64, heads: 4, layers: 2 }; // ≈ 2 MiB of parameters and state
const labs = await loadLabs();

test('dispose() frees the model: 40 models in turn do not grow wasm memory', () => {
  for (const { name, lab } of labs) {
    const x = new Int32Array(64).fill(3);
    const cycle = (seed) => {
      const m = lab.createGPT({ ...CONFIG, seed });
      m.trainStep(x, x);
      m.generate(x.subarray(0, 4), { maxTokens: 3 });
      m.dispose();
    };
    cycle(0);
    cycle(1);  // the allocator's free lists settle after the first reuse
    const settled = lab.memoryBytes;
    for (let i = 2; i < 40; ++i) cycle(i);
    assert.equal(lab.memoryBytes, settled, `${name}: memory grew from ${settled} to ${lab.memoryBytes}`);
  }
});

test('a GPT dropped without dispose() is freed when collected', () => {
  const child = `
    const { init } = await import(${JSON.stringify(pathToFileURL(`${dist}index.js`).href)});
    const lab = await init();
    const x = new Int32Array(64).fill(3);
    const make = (seed) => { const m = lab.createGPT({ ...${JSON.stringify(CONFIG)}, seed }); m.trainStep(x, x); };
    make(0);
    // Wait until the registry has run: memory reused means the first model's allocation came back.
    const settle = async () => { for (let i = 0; i < 3; ++i) { globalThis.gc(); await new Promise((r) => setTimeout(r, 0)); } };
    await settle();
    const base = lab.memoryBytes;
    for (let i = 1; i <= 20; ++i) { make(i); await settle(); }
    console.log(JSON.stringify({ base, end: lab.memoryBytes }));
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { base, end } = JSON.parse(run.stdout.trim().split('\n').pop());
  // 20 models held at once would need 20 × (≈ 2 MiB of state + ≈ 1 MiB of activations); collected, they reuse one.
  assert.ok(end <= base + 8 * 2 ** 20, `wasm memory grew from ${base} to ${end} bytes: dropped models were not freed`);
});
