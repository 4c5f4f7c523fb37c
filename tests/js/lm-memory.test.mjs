// A Model dropped without dispose() is freed when it is garbage-collected (FinalizationRegistry), as the KV caches
// and GPTs are: lab.liveModels comes back to 0 and twenty dropped models do not grow wasm memory — the calling
// thread's, or for models on the lab's workers every worker's (their shards freed). In a child process with
// --expose-gc, waiting for the registry (not sleeping a fixed time).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist } from './support/load.mjs';
import { writeCheckpoints } from './support/lm-fixtures.mjs';

const { dir, cleanup } = writeCheckpoints(['llama-tied-bf16']);
after(cleanup);

test('a Model dropped without dispose() is freed when collected', () => {
  const child = `
    import { readFileSync, readdirSync } from 'node:fs';
    const { init } = await import(${JSON.stringify(pathToFileURL(`${dist}index.js`).href)});
    const lab = await init({ gpt: true });
    const at = ${JSON.stringify(`${dir}/llama-tied-bf16`)};
    const files = Object.fromEntries(readdirSync(at).filter((f) => f.endsWith('.json') && f !== 'reference.json' || f.endsWith('.safetensors'))
      .map((f) => [f, new Uint8Array(readFileSync(at + '/' + f))]));
    const make = async () => { const m = await lab.loadModel(files); await m.generate([3, 4], { maxTokens: 8, temperature: 0 }); };
    const settle = async () => {
      for (let i = 0; i < 50 && lab.liveModels > 0; ++i) { globalThis.gc(); await new Promise((r) => setTimeout(r, 0)); }
    };
    await make();
    await settle();
    const base = lab.memoryBytes, live = [];
    for (let i = 0; i < 20; ++i) { await make(); await settle(); live.push(lab.liveModels); }
    console.log(JSON.stringify({ base, end: lab.memoryBytes, live }));
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { base, end, live } = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.deepEqual(live, Array(20).fill(0), 'every dropped model was collected and freed');
  // Twenty models held at once would need 20 × their weights, caches and activations; collected, they reuse one's.
  assert.ok(end <= base + 2 ** 20, `wasm memory grew from ${base} to ${end} bytes: dropped models were not freed`);
});

test('a Model on the workers dropped without dispose() frees every worker\'s shard when collected', () => {
  const child = `
    import { readFileSync, readdirSync } from 'node:fs';
    const { init } = await import(${JSON.stringify(pathToFileURL(`${dist}index.js`).href)});
    const lab = await init({ gpt: true, threads: 2 });
    const at = ${JSON.stringify(`${dir}/llama-tied-bf16`)};
    const files = Object.fromEntries(readdirSync(at).filter((f) => f.endsWith('.json') && f !== 'reference.json' || f.endsWith('.safetensors'))
      .map((f) => [f, new Uint8Array(readFileSync(at + '/' + f))]));
    const make = async () => { const m = await lab.loadModel(files); await m.generate([3, 4], { maxTokens: 8, temperature: 0 }); };
    // (until only the probe below is left: it stays live, so waiting for 0 ran all 50 collections every time)
    const settle = async () => {
      for (let i = 0; i < 50 && lab.liveModels > 1; ++i) { globalThis.gc(); await new Promise((r) => setTimeout(r, 0)); }
    };
    // Each worker's wasm memory, through a model kept for the purpose (its own share is the same every time).
    const probe = await lab.loadModel(files);
    const memory = async () => (await probe.workers()).map((w) => ({ wasm: w.wasmBytes, shards: w.shards }));
    await make();
    await settle();
    const base = await memory(), live = [];
    for (let i = 0; i < 20; ++i) { await make(); await settle(); live.push(lab.liveModels); }
    console.log(JSON.stringify({ base, end: await memory(), live }));
    probe.dispose();
    lab.dispose();
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { base, end, live } = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.deepEqual(live, Array(20).fill(1), 'every dropped model was collected (the probe stays)');
  end.forEach((w, rank) => {
    assert.equal(w.shards, 1, `worker ${rank} still holds ${w.shards - 1} shards of dropped models`);
    assert.ok(w.wasm <= base[rank].wasm + 2 ** 20, `worker ${rank}: wasm memory grew from ${base[rank].wasm} to ${w.wasm} bytes`);
  });
});
