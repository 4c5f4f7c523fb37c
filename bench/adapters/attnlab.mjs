// attnlab through its public API (dist/index.js): each call copies Q, K, V into wasm memory and the output
// back out, exactly what a user pays. With reuseOut, the output goes into one Float32Array allocated per cell
// (the `out` option), as a hot loop would call it: no fresh output array per call.
import path from 'node:path';
import fs from 'node:fs';
import crypto from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// With threads (n ≥ 2): init({ threads }) and the async twin lab.attentionAsync for the batched cells (prefill).
export async function create({ simd, reuseOut = false, threads = 1 }) {
  const entry = path.join(root, 'dist/index.js');
  if (!fs.existsSync(entry)) throw new Error('dist/index.js not found: run `npm run build` first');
  const { init } = await import(pathToFileURL(entry).href);
  // Read the module once: the fresh instance of the streaming measurement then runs the very same bytes even
  // if dist/ is rebuilt while the bench runs.
  const wasmFile = path.join(root, 'dist', simd ? 'attnlab-simd.wasm' : 'attnlab-scalar.wasm');
  const wasmBinary = fs.readFileSync(wasmFile);
  const lab = await init({ simd, wasmBinary, threads });
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return {
    info: {
      library: 'attnlab', version: pkg.version, backend: lab.backend, buildInfo: lab.buildInfo(),
      wasmFile: path.basename(wasmFile), wasmBytes: wasmBinary.byteLength,
      wasmSha256: crypto.createHash('sha256').update(wasmBinary).digest('hex').slice(0, 16),
      wasmModified: fs.statSync(wasmFile).mtime.toISOString(),
      threads,
      how: threads > 1 ? `init({ simd: ${simd}, threads: ${threads} }); await lab.attentionAsync({ q, k, v, batch, heads, nq, nk, dk, dv, causal }).output (the call cut into parts of equal work along batch × K/V heads × query rows, over ${threads} workers)` : `init({ simd: ${simd} }); lab.attention({ q, k, v, nq, nk, dk, dv, causal, scale${reuseOut ? ', out' : ''} }).output (streaming path: no matrices requested)${reuseOut ? '; out allocated once per cell' : ''}`,
    },
    attention({ q, k, v, n, d, causal, scale }) {
      const out = reuseOut ? new Float32Array(n * d) : undefined;
      return { run: () => lab.attention({ q, k, v, nq: n, nk: n, dk: d, dv: d, causal, scale, out }).output };
    },
    softmax({ x, cols }) {
      const out = reuseOut ? new Float32Array(x.length) : undefined;
      return { run: () => lab.softmax(x, { cols, out }) };
    },
    // A decode step: the cache holds `past` keys; each call appends the new token and attends (8 query heads over
    // 2 KV heads). Before every call, outside the timing, the cache is put back to `past` keys.
    decode({ heads, kvHeads, d, past, pastK, pastV, q, k, v }) {
      const cache = lab.kvCache({ kvHeads, dk: d, dv: d, capacity: past + 1 });
      const out = reuseOut ? new Float32Array(heads * d) : undefined;
      return {
        prepare: () => cache.reset().append(pastK, pastV),
        run: () => lab.attention({ q, cache: cache.append(k, v), heads, causal: true, out }).output,
        dispose: () => cache.dispose(),
      };
    },
    prefill({ batch, heads, n, d, causal, q, k, v }) {
      const out = reuseOut ? new Float32Array(batch * heads * n * d) : undefined;
      const opts = { q, k, v, batch, heads, nq: n, nk: n, dk: d, dv: d, causal, out };
      if (threads > 1) return { run: async () => (await lab.attentionAsync(opts)).output };
      return { run: () => lab.attention(opts).output };
    },
    // The async twins' cost per call beyond the work: tiny calls through the workers against the same calls here.
    async overhead({ timing }) {
      const [{ measure }, { measureOverhead }] = await Promise.all([import('../lib/measure.mjs'), import('../lib/overhead.mjs')]);
      return measureOverhead(lab, measure, timing);
    },
    // Batch × heads in one call, and the same heads one call each ('bhsd': head (b, h) is one contiguous block).
    batchHeads({ batch, heads, n, d, q, k, v }) {
      const block = n * d, count = batch * heads;
      const out = new Float32Array(count * block);
      const part = (x, i) => x.slice(i * block, (i + 1) * block);
      const qs = Array.from({ length: count }, (_, i) => part(q, i)), ks = qs.map((_, i) => part(k, i)), vs = qs.map((_, i) => part(v, i));
      return {
        batched: { run: () => lab.attention({ q, k, v, batch, heads, nq: n, nk: n, dk: d, dv: d, out }).output },
        single: {
          run: () => {
            for (let i = 0; i < count; ++i) lab.attention({ q: qs[i], k: ks[i], v: vs[i], nq: n, nk: n, dk: d, dv: d, out: out.subarray(i * block, (i + 1) * block) });
            return out;
          },
        },
      };
    },
    // Extras only attnlab has: a fresh instance for the memory measurement, the multi-head call.
    freshInstance: () => init({ simd, wasmBinary }),
    lab,
  };
}
