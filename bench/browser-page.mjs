// One library of the Chromium bench (bench/browser.mjs), in its own page: ?lib=attnlab-simd | attnlab-threads2 |
// ort-graph-kt | ort-threads2. The inputs are the Node bench's float32 files, fetched; each call is timed alone
// (performance.now), gc() between calls longer than 1 ms (Chromium runs with --expose-gc); the sampled output
// rows go back to Node, which checks them against the float64 reference.
import { attentionOpModel } from './lib/onnx-attention.mjs';
import { measureOverhead } from './lib/overhead.mjs';

const lib = new URLSearchParams(location.search).get('lib');
const gc = globalThis.gc ?? (() => {});
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

async function measure(run, { minMs = 300, minReps = 5, slowMs = 2500, warmMs = 300 } = {}) {
  const one = async () => {
    const t = performance.now();
    const out = await run();
    return { ms: performance.now() - t, out };
  };
  let { ms: first, out } = await one();
  const warmStart = performance.now();
  let warm = 1;
  if (first < 500) {
    while (warm < 5 || performance.now() - warmStart < warmMs) {
      if (first > 1) gc(), await turn();
      ({ out } = await one());
      if (++warm >= 200) break;
    }
  }
  const samples = [];
  let total = 0;
  for (;;) {
    if (first > 1) gc(), await turn();
    const r = await one();
    out = r.out;
    samples.push(r.ms);
    total += r.ms;
    if ((samples.length >= minReps && total >= minMs) || (samples.length >= 3 && total >= slowMs) || samples.length >= 2000) break;
  }
  const sorted = [...samples].sort((a, b) => a - b), mid = sorted.length >> 1;
  return { median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2, min: sorted[0], reps: samples.length, warmups: warm, samples, out };
}

const f32 = async (url) => new Float32Array(await (await fetch(url)).arrayBuffer());

async function library() {
  if (lib.startsWith('attnlab')) {
    const threads = lib === 'attnlab-threads2' ? 2 : 1;
    const { init } = await import('/dist/index.js');
    const lab = await init({ simd: true, threads });
    return {
      info: { library: 'attnlab', backend: lab.backend, threads, crossOriginIsolated: globalThis.crossOriginIsolated === true },
      prefill(opts) {
        return threads > 1 ? async () => (await lab.attentionAsync(opts)).output : () => lab.attention(opts).output;
      },
      overhead: (timing) => measureOverhead(lab, measure, timing),
    };
  }
  const ort = await import('/ort/ort.wasm.min.mjs');
  const numThreads = lib === 'ort-threads2' ? 2 : 1;
  ort.env.wasm.numThreads = numThreads;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.logLevel = 'error';
  const options = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: numThreads, interOpNumThreads: 1 };
  const sessions = [];
  return {
    info: { library: 'onnxruntime-web', version: ort.env.versions?.web, numThreads: ort.env.wasm.numThreads, crossOriginIsolated: globalThis.crossOriginIsolated === true },
    async prefillAsync({ q, k, v, batch, heads, nq, dk, causal }) {
      const dims = [batch, heads, nq, dk];
      const s = await ort.InferenceSession.create(attentionOpModel({ batch, heads, nq, nk: nq, d: dk, causal }), options);
      sessions.push(s);
      const feeds = { q: new ort.Tensor('float32', q, dims), k: new ort.Tensor('float32', k, dims), v: new ort.Tensor('float32', v, dims) };
      return async () => (await s.run(feeds)).o.data;
    },
  };
}

let impl;
window.bench = {
  async setup() {
    impl = await library();
    return impl.info;
  },
  async prefill({ shape, files, rows, timing }) {
    const [q, k, v] = await Promise.all([f32(files.q), f32(files.k), f32(files.v)]);
    const { batch, heads, n, d, causal } = shape;
    const opts = { q, k, v, batch, heads, nq: n, nk: n, dk: d, dv: d, causal };
    const run = impl.prefillAsync ? await impl.prefillAsync(opts) : impl.prefill(opts);
    const r = await measure(run, timing);
    const picked = new Float32Array(rows.length * d);
    rows.forEach((row, i) => picked.set(r.out.subarray(row * d, (row + 1) * d), i * d));
    return { median: r.median, min: r.min, reps: r.reps, warmups: r.warmups, samples: r.samples, rows: Array.from(picked) };
  },
  async overhead({ timing }) {
    return impl.overhead ? impl.overhead(timing) : { unsupported: 'attnlab with threads only' };
  },
};
