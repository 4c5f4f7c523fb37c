// attnlab through its public API (dist/index.js): each call copies Q, K, V into wasm memory and the output
// back out, exactly what a user pays. With reuseOut, the output goes into one Float32Array allocated per cell
// (the `out` option), as a hot loop would call it: no fresh output array per call.
import path from 'node:path';
import fs from 'node:fs';
import crypto from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function create({ simd, reuseOut = false }) {
  const entry = path.join(root, 'dist/index.js');
  if (!fs.existsSync(entry)) throw new Error('dist/index.js not found: run `npm run build` first');
  const { init } = await import(pathToFileURL(entry).href);
  // Read the module once: the fresh instance of the streaming measurement then runs the very same bytes even
  // if dist/ is rebuilt while the bench runs.
  const wasmFile = path.join(root, 'dist', simd ? 'attnlab-simd.wasm' : 'attnlab-scalar.wasm');
  const wasmBinary = fs.readFileSync(wasmFile);
  const lab = await init({ simd, wasmBinary });
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return {
    info: {
      library: 'attnlab', version: pkg.version, backend: lab.backend, buildInfo: lab.buildInfo(),
      wasmFile: path.basename(wasmFile), wasmBytes: wasmBinary.byteLength,
      wasmSha256: crypto.createHash('sha256').update(wasmBinary).digest('hex').slice(0, 16),
      wasmModified: fs.statSync(wasmFile).mtime.toISOString(),
      how: `init({ simd: ${simd} }); lab.attention({ q, k, v, nq, nk, dk, dv, causal, scale${reuseOut ? ', out' : ''} }).output (streaming path: no matrices requested)${reuseOut ? '; out allocated once per cell' : ''}`,
    },
    attention({ q, k, v, n, d, causal, scale }) {
      const out = reuseOut ? new Float32Array(n * d) : undefined;
      return { run: () => lab.attention({ q, k, v, nq: n, nk: n, dk: d, dv: d, causal, scale, out }).output };
    },
    softmax({ x, cols }) {
      const out = reuseOut ? new Float32Array(x.length) : undefined;
      return { run: () => lab.softmax(x, { cols, out }) };
    },
    // Extras only attnlab has: a fresh instance for the memory measurement, the multi-head call.
    freshInstance: () => init({ simd, wasmBinary }),
    lab,
  };
}
