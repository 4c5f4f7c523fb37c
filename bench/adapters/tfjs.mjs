// TensorFlow.js with the wasm backend (XNNPACK), one thread, at its best: Kᵀ handed over pre-transposed (the
// transpose is done once, outside the timing), the causal mask a tensor built once per shape. Each timed call
// creates the input tensors (the copy into wasm memory every library pays), runs matMul → mul → (add mask) →
// softmax → matMul inside tf.tidy, reads the result with dataSync() (so the work really ran) and disposes it.
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);

export async function create() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const dist = path.join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist') + path.sep;
  wasm.setThreadsCount(1);
  wasm.setWasmPaths(dist);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  const simd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT');
  const threads = tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT');
  const wasmFile = simd ? (threads ? 'tfjs-backend-wasm-threaded-simd.wasm' : 'tfjs-backend-wasm-simd.wasm') : 'tfjs-backend-wasm.wasm';
  const version = JSON.parse(fs.readFileSync(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'), 'utf8')).version;

  return {
    info: {
      library: '@tensorflow/tfjs-backend-wasm', version, coreVersion: tf.version_core, backend: tf.getBackend(),
      threads: wasm.getThreadsCount(), simd, wasmFile, wasmBytes: fs.statSync(dist + wasmFile).size,
      how: 'setThreadsCount(1); setBackend("wasm"); tidy(matMul(Q, Kᵀ pre-transposed) · scale [+ mask] → softmax → matMul V); dataSync()',
    },
    attention({ q, k, v, n, d, causal, scale }) {
      const kT = new Float32Array(d * n);
      for (let j = 0; j < n; ++j) for (let t = 0; t < d; ++t) kT[t * n + j] = k[j * d + t];
      const scaleT = tf.scalar(scale);
      let mask = null;
      if (causal) {
        const m = new Float32Array(n * n);
        for (let i = 0; i < n; ++i) m.fill(-Infinity, i * n + i + 1, (i + 1) * n);
        mask = tf.tensor2d(m, [n, n]);
      }
      return {
        run() {
          const out = tf.tidy(() => {
            const qt = tf.tensor2d(q, [n, d]), kt = tf.tensor2d(kT, [d, n]), vt = tf.tensor2d(v, [n, d]);
            let s = tf.mul(tf.matMul(qt, kt), scaleT);
            if (mask) s = tf.add(s, mask);
            return tf.matMul(tf.softmax(s), vt);
          });
          const data = out.dataSync();
          out.dispose();
          return data;
        },
        dispose() { scaleT.dispose(); mask?.dispose(); },
      };
    },
    softmax({ x, cols }) {
      const rows = x.length / cols;
      return {
        run() {
          const out = tf.tidy(() => tf.softmax(tf.tensor2d(x, [rows, cols])));
          const data = out.dataSync();
          out.dispose();
          return data;
        },
      };
    },
    memory: () => tf.memory(),
  };
}
