// The language-model engine on GPT-2 small's shape (12 layers, d 768, vocab 50257; random weights written by
// tests/lm/checkpoints.py --small), one thread, in Node, by hand (not a test): `node bench/lm-decode.mjs
// [--dtypes F32,F16,BF16] [--tokens 32] [--rounds 3]`. Prints, per dtype, with the load average beside each:
//   load           time and MB/s from the files (Blobs) into the engine;
//   stream read    a plain wasm SIMD read of the same weight bytes (what a decode step must stream): GB/s;
//   decode         tokens/s after a 16-token prompt (greedy, the KV cache), and the GB/s of weights it implies,
//                  as a fraction of the stream read's;
//   prefill        a 128-token prompt through the model into the KV cache (generate with maxTokens 1: the last
//                  row's logits only), tokens/s; and forward() of 128 tokens (every row's logits);
//   memory         the module's wasm memory against the weights plus the KV cache (and what else the model holds).
// --ort adds onnxruntime-web (wasm, one thread) on the prefill's matrix products alone — each of the 12 layers'
// four and the head, as single MatMul sessions with the weights as initializers — to calibrate the prefill.
import { spawnSync } from 'node:child_process';
import { openAsBlob, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const dtypes = arg('dtypes', 'F32,F16,BF16').split(',');
const decodeTokens = Number(arg('tokens', '32'));
const rounds = Number(arg('rounds', '3'));
const load = () => `load ${loadavg()[0].toFixed(2)}`;
const { init } = await import(pathToFileURL(join(repo, 'dist/index.js')).href);

console.log(`attnlab language-model bench: GPT-2 small shape, random weights; ${cpus()[0].model}, ${cpus().length} cores; Node ${process.version}`);

// Wall time and this process's CPU time of fn(), in ms. On a machine shared with other work (the load printed
// beside each number), CPU time is what the work itself cost; wall time includes waiting for a core.
function timed(fn) {
  const c0 = process.cpuUsage(), t0 = performance.now();
  const r = fn();
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000, result: r };
}
async function timedAsync(fn) {
  const c0 = process.cpuUsage(), t0 = performance.now();
  const r = await fn();
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000, result: r };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function benchDtype(dtype) {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-lm-bench-'));
  try {
    const w = spawnSync('/usr/bin/python3', [join(repo, 'tests/lm/checkpoints.py'), dir, '--small', '--dtype', dtype], { encoding: 'utf8' });
    if (w.status !== 0) throw new Error(w.stderr);
    const files = new Map(await Promise.all(readdirSync(dir).map(async (f) => [f, await openAsBlob(join(dir, f))])));
    const fileBytes = [...files.values()].reduce((a, b) => a + b.size, 0);
    const lab = await init({ gpt: true });
    const before = lab.memoryBytes;
    let t0 = performance.now();
    const model = await lab.loadModel(files);
    const loadMs = performance.now() - t0;
    const weights = model.weightBytes;
    console.log(`\n== ${dtype}: ${(weights / 2 ** 20).toFixed(1)} MiB of weights in memory (files ${(fileBytes / 2 ** 20).toFixed(1)} MiB)`);
    console.log(`  load            ${loadMs.toFixed(0)} ms, ${(fileBytes / loadMs / 1e3).toFixed(0)} MB/s   (${load()})`);

    // Plain streaming read of the same bytes.
    const read = () => timed(() => model[Symbol.for('attnlab.readWeights')]());
    const reads = Array.from({ length: 7 }, read);
    const streamGBs = weights / median(reads.map((t) => t.wall)) / 1e6, streamCpu = weights / median(reads.map((t) => t.cpu)) / 1e6;
    console.log(`  stream read     ${streamGBs.toFixed(2)} GB/s wall, ${streamCpu.toFixed(2)} GB/s per CPU-second (over ${(weights / 1e6).toFixed(0)} MB, median of 7)   (${load()})`);

    // Decode: tokens after the first (which includes the prompt's prefill).
    const prompt = Int32Array.from({ length: 16 }, (_, i) => 100 + i * 37);
    // A first generation, unmeasured: V8 compiles wasm functions with its baseline compiler first and optimizes the
    // hot ones as they run (wasm has no on-stack replacement, so a function is swapped on its next call).
    await model.generate(prompt, { maxTokens: 16, temperature: 0, stop: [] });
    // Rounds of decode, each followed by a stream read: their ratio is taken under the same load.
    const perToken = [], perTokenCpu = [], ratios = [];
    for (let r = 0; r < rounds; ++r) {
      const stamps = [];
      let c0;
      await model.generate(prompt, {
        maxTokens: decodeTokens + 1, temperature: 0, stop: [],
        onToken: () => (stamps.push(performance.now()), stamps.length === 1 && (c0 = process.cpuUsage())),
      });
      const c = process.cpuUsage(c0);
      perToken.push((stamps.at(-1) - stamps[0]) / decodeTokens);
      perTokenCpu.push((c.user + c.system) / 1000 / decodeTokens);
      const s = read();
      ratios.push(s.cpu / perTokenCpu.at(-1));
    }
    const ms = median(perToken), msCpu = median(perTokenCpu);
    const afterDecode = { wasm: lab.memoryBytes, model: model.memoryBytes };
    const gbs = weights / ms / 1e6;
    console.log(`  decode          ${(1000 / ms).toFixed(2)} tokens/s wall (${ms.toFixed(1)} ms/token), ${(1000 / msCpu).toFixed(2)} per CPU-second ` +
      `(${msCpu.toFixed(1)} ms): ${(weights / msCpu / 1e6).toFixed(2)} GB/s of weights per CPU-second, ${(100 * median(ratios)).toFixed(0)} % of the ` +
      `stream read's rate in the same rounds (median of ${rounds})   (${load()})`);

    // Prefill of 128 tokens: into the cache (last logits only), and forward() (every row's logits).
    const long = Int32Array.from({ length: 128 }, (_, i) => (i * 7919) % 50257);
    const pre = [], fwd = [];
    for (let r = 0; r < rounds; ++r) {
      pre.push(await timedAsync(() => model.generate(long, { maxTokens: 1, temperature: 0 })));
      fwd.push(timed(() => model.forward(long)));
    }
    const [pw, pc, fw, fc] = [pre.map((t) => t.wall), pre.map((t) => t.cpu), fwd.map((t) => t.wall), fwd.map((t) => t.cpu)].map(median);
    console.log(`  prefill 128     ${(128000 / pw).toFixed(1)} tokens/s wall (${pw.toFixed(0)} ms), ${(128000 / pc).toFixed(1)} per CPU-second; ` +
      `forward(128) with all logits ${fw.toFixed(0)} ms wall, ${fc.toFixed(0)} ms CPU   (${load()})`);

    // Memory after load and decode; then after the 128-token calls, whose activations, cache and (forward) 25.7 MB
    // of logits the model or the caller holds.
    const mib = (b) => (b / 2 ** 20).toFixed(1);
    for (const [when, m] of [['after decode', afterDecode], ['after prefill', { wasm: lab.memoryBytes, model: model.memoryBytes }]])
      console.log(`  memory ${when.padEnd(14)} wasm ${mib(m.wasm)} MiB (${mib(before)} before loading): weights ${mib(weights)} MiB + ` +
        `KV cache and activations ${mib(m.model - weights)} MiB → ${(m.wasm / m.model).toFixed(3)}× what the model holds`);
    model.dispose();
    return { dtype, ms: msCpu, prefill: pc, forward: fc };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ortPrefill() {
  const ort = await import('onnxruntime-web');
  const { model, node, valueInfo, tensor, DataType } = await import('./lib/onnx.mjs');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = join(repo, 'node_modules/onnxruntime-web/dist/');
  ort.env.logLevel = 'error';
  const n = 128, d = 768;
  // [in, out] per product of one layer, and the head (its weight [vocab, d] transposed as ONNX's MatMul wants).
  const shapes = [[d, 3 * d], [d, d], [d, 4 * d], [4 * d, d]];
  let layers = 0, headAll = 0, headLast = 0;
  const results = [];
  for (const [k, m, rows = n] of [...shapes, [d, 50257], [d, 50257, 1]]) {
    const wdata = new Float32Array(k * m).map(() => Math.random() * 0.02 - 0.01);
    // The weights as an initializer (what a model file holds), or for the head (154 MB, past what bench/lib/onnx.mjs
    // encodes) as an input fed once: the same MatMul kernel either way.
    const asInput = m === 50257;
    const bytes = model({
      nodes: [node('MatMul', ['x', 'w'], ['y'])], initializers: asInput ? [] : [tensor('w', DataType.FLOAT, [k, m], wdata)],
      inputs: [valueInfo('x', DataType.FLOAT, [rows, k]), ...(asInput ? [valueInfo('w', DataType.FLOAT, [k, m])] : [])],
      outputs: [valueInfo('y', DataType.FLOAT, [rows, m])],
    });
    const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: 1 });
    const feeds = { x: new ort.Tensor('float32', new Float32Array(rows * k).fill(0.5), [rows, k]) };
    if (asInput) feeds.w = new ort.Tensor('float32', wdata, [k, m]);
    await s.run(feeds);
    const t = [];
    for (let r = 0; r < 5; ++r) t.push((await timedAsync(() => s.run(feeds))).cpu);
    const ms = median(t);  // CPU time, as attnlab's below
    results.push(`[${rows}×${k}]·[${k}×${m}] ${ms.toFixed(1)} ms (${(2 * rows * k * m / ms / 1e6).toFixed(1)} GFLOP/s)`);
    if (m !== 50257) layers += 12 * ms;
    else if (rows === 1) headLast = ms;
    else headAll = ms;
    await s.release();
  }
  console.log(`\n== onnxruntime-web ${ort.env.versions?.web ?? ''} MatMul, one thread: ${results.join('; ')}`);
  console.log(`  products of a 128-token prefill: 12 layers ${layers.toFixed(0)} ms, + the head on the last row ${headLast.toFixed(1)} ms, ` +
    `or on every row ${headAll.toFixed(0)} ms   (${load()})`);
  return { prefill: layers + headLast, forward: layers + headAll };
}

const results = [];
for (const dtype of dtypes) results.push(await benchDtype(dtype));
const f32 = results.find((r) => r.dtype === 'F32');
if (f32) for (const r of results) if (r !== f32) console.log(`\n${r.dtype} decode: ${(f32.ms / r.ms).toFixed(2)}× F32's tokens per CPU-second`);
if (process.argv.includes('--ort')) {
  const ort = await ortPrefill();
  if (f32) {
    console.log(`attnlab F32, whole model, against onnxruntime-web's matrix products alone (a lower bound on its time), CPU time:`);
    console.log(`  prefill into the cache ${f32.prefill.toFixed(0)} ms vs ${ort.prefill.toFixed(0)} ms: ${(ort.prefill / f32.prefill).toFixed(2)}×; ` +
      `forward(128) with every logit ${f32.forward.toFixed(0)} ms vs ${ort.forward.toFixed(0)} ms: ${(ort.forward / f32.forward).toFixed(2)}×`);
  }
}
