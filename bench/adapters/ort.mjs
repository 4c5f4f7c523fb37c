// onnxruntime-web, wasm execution provider, one thread, no proxy worker. The ONNX models are encoded here at
// bench time for each shape (bench/lib/onnx.mjs), with fixed dims so the graph optimizer (level "all") can
// fold constants and fuse what it knows (e.g. MatMul + scalar Mul → FusedMatMul).
//
// Variants (one worker process each):
//   graph-kt         Q·Kᵀ with Kᵀ given pre-transposed:  MatMul → Mul(scale) → [Where(mask)] → Softmax → MatMul
//   graph-transpose  the same with K given and a Transpose node in the graph
//   mha              com.microsoft MultiHeadAttention (1 head, scale attribute, unidirectional = causal)
// The causal mask is computed in the graph from constants (Range → Less) and constant-folded into a boolean
// initializer when the session is created, so a run pays only Where(mask, −inf, scores).
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { model, node, valueInfo, tensor, DataType } from '../lib/onnx.mjs';
import { attentionOpModel } from '../lib/onnx-attention.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const F = DataType.FLOAT;

const scalarF = (name, x) => tensor(name, F, [], new Float32Array([x]));
const scalarI = (name, x) => tensor(name, DataType.INT64, [], new BigInt64Array([BigInt(x)]));
const vecI = (name, xs) => tensor(name, DataType.INT64, [xs.length], BigInt64Array.from(xs.map(BigInt)));

/** Nodes + initializers producing `name`: bool [n × n], true where key j > query i (masked). */
function causalMaskNodes(n, name) {
  return {
    nodes: [
      node('Range', ['zero', 'n', 'one'], ['idx']),
      node('Unsqueeze', ['idx', 'axis1'], ['rowsIdx']),
      node('Less', ['rowsIdx', 'idx'], [name]),
    ],
    initializers: [scalarI('zero', 0), scalarI('n', n), scalarI('one', 1), vecI('axis1', [1])],
  };
}

function graphModel(n, d, causal, scale, transposeK) {
  const nodes = [], initializers = [scalarF('scale', scale)];
  if (transposeK) nodes.push(node('Transpose', ['k'], ['kt'], { perm: [1, 0] }));
  nodes.push(node('MatMul', ['q', 'kt'], ['s']), node('Mul', ['s', 'scale'], ['ss']));
  let logits = 'ss';
  if (causal) {
    const m = causalMaskNodes(n, 'masked');
    nodes.push(...m.nodes, node('Where', ['masked', 'ninf', 'ss'], ['sm']));
    initializers.push(...m.initializers, scalarF('ninf', -Infinity));
    logits = 'sm';
  }
  nodes.push(node('Softmax', [logits], ['p'], { axis: -1 }), node('MatMul', ['p', 'v'], ['o']));
  return model({
    nodes, initializers,
    inputs: [valueInfo('q', F, [n, d]), transposeK ? valueInfo('k', F, [n, d]) : valueInfo('kt', F, [d, n]), valueInfo('v', F, [n, d])],
    outputs: [valueInfo('o', F, [n, d])],
    opsets: { '': 17 },
  });
}

function mhaModel(n, d, causal, scale) {
  return model({
    nodes: [node('MultiHeadAttention', ['q', 'k', 'v'], ['o'], { num_heads: 1, scale: { float: scale }, unidirectional: causal ? 1 : 0 }, 'com.microsoft')],
    inputs: [valueInfo('q', F, [1, n, d]), valueInfo('k', F, [1, n, d]), valueInfo('v', F, [1, n, d])],
    outputs: [valueInfo('o', F, [1, n, d])],
    opsets: { '': 17, 'com.microsoft': 1 },
  });
}

function softmaxModel(rows, cols) {
  return model({
    nodes: [node('Softmax', ['x'], ['y'], { axis: -1 })],
    inputs: [valueInfo('x', F, [rows, cols])],
    outputs: [valueInfo('y', F, [rows, cols])],
    opsets: { '': 17 },
  });
}

/** ORT's errors carry a C++ source path and signature; keep what a reader needs. */
function ortMessage(e) {
  let m = String(e?.message ?? e).split('\n')[0];
  const i = m.indexOf('ERROR_MESSAGE:');
  if (i >= 0) m = `session.run failed: ${m.slice(i + 14).trim()}`;
  m = m.replace(/\/\S+\/onnxruntime\/(\S+:\d+)\s+(?:static\s+)?(?:[^()]*\([^()]*\)\s*)?/, '($1) ');
  return m.slice(0, 240);
}

export async function create({ variant, numThreads = 1 }) {
  const ort = await import('onnxruntime-web');
  const dist = path.join(root, 'node_modules/onnxruntime-web/dist') + path.sep;
  ort.env.wasm.numThreads = numThreads; // > 1: ORT's own pthreads on SharedArrayBuffer (Node has it)
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = dist;
  ort.env.logLevel = 'error';
  const options = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: numThreads, interOpNumThreads: 1 };
  const session = (bytes) => ort.InferenceSession.create(bytes, options);
  // Start the runtime once now, so a failure to load shows up as this worker failing, with its reason.
  await session(softmaxModel(1, 4));
  // (its exports map hides package.json from require.resolve: read the file)
  const version = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version;
  const wasmFile = 'ort-wasm-simd-threaded.wasm';

  // One Attention-op session and its feeds, checked by a first run; an op the wasm build lacks is "unsupported".
  async function attentionCell(bytes, feeds) {
    let s;
    try {
      s = await session(bytes);
      await s.run(feeds);
    } catch (e) {
      await s?.release();
      return { unsupported: ortMessage(e) };
    }
    return { run: async () => (await s.run(feeds)).o.data, dispose: () => s.release() };
  }

  const descriptions = {
    'graph-kt': 'MatMul(Q, Kᵀ pre-transposed) → Mul(scale) → [Where(causal mask, −inf)] → Softmax → MatMul(V)',
    'graph-transpose': 'Transpose(K) → MatMul(Q, ·) → Mul(scale) → [Where(causal mask, −inf)] → Softmax → MatMul(V)',
    mha: 'com.microsoft MultiHeadAttention (num_heads 1, scale, unidirectional = causal)',
  };
  return {
    info: {
      library: 'onnxruntime-web', version, ortVersions: ort.env.versions, variant, wasmFile,
      wasmBytes: fs.statSync(dist + wasmFile).size, numThreads: ort.env.wasm.numThreads, simd: ort.env.wasm.simd,
      how: `wasm EP, numThreads ${ort.env.wasm.numThreads}, proxy off, graphOptimizationLevel "all"; ${descriptions[variant]}; session.run per call`,
    },
    async attention({ q, k, v, n, d, causal, scale }) {
      let s, feeds;
      const tq = new ort.Tensor('float32', q, variant === 'mha' ? [1, n, d] : [n, d]);
      const tv = new ort.Tensor('float32', v, variant === 'mha' ? [1, n, d] : [n, d]);
      try {
        if (variant === 'mha') {
          s = await session(mhaModel(n, d, causal, scale));
          feeds = { q: tq, k: new ort.Tensor('float32', k, [1, n, d]), v: tv };
        } else if (variant === 'graph-transpose') {
          s = await session(graphModel(n, d, causal, scale, true));
          feeds = { q: tq, k: new ort.Tensor('float32', k, [n, d]), v: tv };
        } else {
          const kT = new Float32Array(d * n);
          for (let j = 0; j < n; ++j) for (let t = 0; t < d; ++t) kT[t * n + j] = k[j * d + t];
          s = await session(graphModel(n, d, causal, scale, false));
          feeds = { q: tq, kt: new ort.Tensor('float32', kT, [d, n]), v: tv };
        }
        // A first run inside prepare: an op the wasm build lacks (or rejects) fails here, reported as unsupported.
        await s.run(feeds);
      } catch (e) {
        await s?.release();
        return { unsupported: ortMessage(e) };
      }
      return {
        run: async () => (await s.run(feeds)).o.data,
        dispose: () => s.release(),
      };
    },
    // The whole operator through ONNX's Attention op (measured by the graph-kt worker only): a decode step with
    // past_key/past_value (what a decode loop feeds back each step), and a batched causal prefill.
    async decode({ heads, kvHeads, d, past, pastK, pastV, q, k, v }) {
      if (variant !== 'graph-kt') return { unsupported: 'measured by the graph-kt worker only' };
      return attentionCell(attentionOpModel({ heads, kvHeads, nq: 1, nk: 1, d, causal: true, past }), {
        q: new ort.Tensor('float32', q, [1, heads, 1, d]), k: new ort.Tensor('float32', k, [1, kvHeads, 1, d]), v: new ort.Tensor('float32', v, [1, kvHeads, 1, d]),
        past_key: new ort.Tensor('float32', pastK, [1, kvHeads, past, d]), past_value: new ort.Tensor('float32', pastV, [1, kvHeads, past, d]),
      });
    },
    async prefill({ batch, heads, n, d, causal, q, k, v }) {
      if (variant !== 'graph-kt') return { unsupported: 'measured by the graph-kt worker only' };
      const dims = [batch, heads, n, d];
      return attentionCell(attentionOpModel({ batch, heads, nq: n, nk: n, d, causal }), {
        q: new ort.Tensor('float32', q, dims), k: new ort.Tensor('float32', k, dims), v: new ort.Tensor('float32', v, dims),
      });
    },
    async softmax({ x, cols }) {
      if (variant !== 'graph-kt') return { unsupported: 'softmax is measured by the graph-kt worker only' };
      const rows = x.length / cols;
      const s = await session(softmaxModel(rows, cols));
      const feeds = { x: new ort.Tensor('float32', x, [rows, cols]) };
      return { run: async () => (await s.run(feeds)).y.data, dispose: () => s.release() };
    },
  };
}
