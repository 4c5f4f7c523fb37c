// Loads the built package from dist/ (what `npm run build` produces) and one instance per backend.
// A missing build fails every test file with the same clear message instead of skipping.
// ATTNLAB_DIST=dist-debug (a folder relative to the repo, or absolute) runs the same tests against another
// build of the package: scripts/test-js-debug.sh uses it for the -sASSERTIONS=2 -sSAFE_HEAP=1 modules.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repo = fileURLToPath(new URL('../../../', import.meta.url));
const distDir = (process.env.ATTNLAB_DIST || 'dist').replace(/\/+$/, '');
export const dist = isAbsolute(distDir) ? `${distDir}/` : `${repo}${distDir}/`;
/** True when the tests run against a build other than dist/ (the debug modules). */
export const altDist = dist !== `${repo}dist/`;
export const packageJson = JSON.parse(readFileSync(`${repo}package.json`, 'utf8'));

export const distFiles = ['index.js', 'inline.js', 'inline-gpt.js', 'variant.js', 'loader.js', 'lab.js', 'checks.js', 'call.js', 'softmax.js', 'attention.js', 'kv-cache.js', 'multihead.js', 'rope.js', 'softmax-backward.js', 'attention-backward.js', 'gpt.js', 'matmul.js', 'tokenizer.js', 'index.d.ts',
  'attnlab.mjs', 'attnlab-simd.wasm', 'attnlab-scalar.wasm', 'attnlab-simd.inline.js', 'attnlab-scalar.inline.js',
  'attnlab-gpt-simd.wasm', 'attnlab-gpt-scalar.wasm', 'attnlab-gpt-simd.inline.js', 'attnlab-gpt-scalar.inline.js',
  'async.js', 'threads.js', 'lab-threads.js', 'gpt-async.js', 'gpt-train-args.js', 'attention-parts.js', 'attnlab-worker.js', 'attnlab-worker.inline.js'];
distFiles.push('lm.js', 'load-model.js', 'model-module.js', 'lm-workers.js', 'lm-exchange.js');  // lab.loadModel (and lab.loadTokenizer from any lab)
const missing = distFiles.filter((f) => !existsSync(dist + f));
if (missing.length) {
  // (no build at all, as in a fresh clone: one short line rather than every file's name)
  const what = missing.length === distFiles.length ? 'has no build of the package' : `is missing ${missing.join(', ')}`;
  throw new Error(altDist
    ? `${dist} (ATTNLAB_DIST) ${what}: run scripts/build-wasm-debug.sh first`
    : `dist/ ${what}: run \`npm run build\` (scripts/build-wasm.sh) before the package tests`);
}

export const { init, simdSupported } = await import(pathToFileURL(`${dist}index.js`).href);

// Both modules are tested in every suite: SIMD (what init() picks here) and the scalar fallback.
export const backends = [
  { name: 'wasm-simd', simd: true },
  { name: 'wasm', simd: false },
];

export async function loadLabs(options = {}) {
  return Promise.all(backends.map(async (b) => ({ ...b, lab: await init({ ...options, simd: b.simd }) })));
}
