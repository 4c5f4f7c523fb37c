// attnlab: softmax, scaled dot-product and multi-head attention in WebAssembly, as plain functions over
// Float32Array. Hand-written ESM wrapper around the Embind modules (the glue attnlab.mjs and the modules
// attnlab-{simd,scalar}.wasm, and attnlab-gpt-{simd,scalar}.wasm with the small GPT: variant.js). This entry
// (`attnlab`) loads the .wasm file beside it: browsers fetch it (compiled while it streams), Node reads it from
// disk; where the file is not there (a bundler that copies no assets, a CommonJS bundle without import.meta.url)
// it imports the module's copy inside the package's JS instead, and buildInfo() says so. inline.js
// (`attnlab/inline`) and inline-gpt.js (`attnlab/inline-gpt`) are the same API with a pair of modules inside the
// JS. loader.js does the loading for all; lab.js assembles the functions, one file per operation (softmax.js, …).
// They check types (TypeError naming the argument, checks.js) and write each call's descriptor; call.js has the
// engine check it (sizes, values: RangeError naming the argument), copies each tensor into wasm memory in one bulk
// copy, calls the engine, copies results out and frees everything, error or not.
import createAttnlab from './attnlab.mjs';
import { compileBesideOrInline, readBesideOrInline, start } from './loader.js';
import { setLmWorkers } from './lm.js';

export { simdSupported } from './loader.js';

// Where this file was loaded from; undefined where a bundler emptied import.meta (CommonJS output).
const base = import.meta.url;

// Literal `new URL('./…', import.meta.url)`s: Vite, webpack and Parcel see the files and emit them; only the
// chosen module is downloaded (the workers' script only for threads > 1).
function beside(file) {
  if (!base) return undefined;
  switch (file) {
    case 'attnlab-simd.wasm': return new URL('./attnlab-simd.wasm', import.meta.url);
    case 'attnlab-scalar.wasm': return new URL('./attnlab-scalar.wasm', import.meta.url);
    case 'attnlab-gpt-simd.wasm': return new URL('./attnlab-gpt-simd.wasm', import.meta.url);
    case 'attnlab-gpt-scalar.wasm': return new URL('./attnlab-gpt-scalar.wasm', import.meta.url);
    case 'attnlab-worker.js': return new URL('./attnlab-worker.js', import.meta.url);
  }
  throw new Error(`attnlab: no file named ${file}`);
}

// The same files inside the JS, for where they are not beside it. Literal dynamic imports: Vite, webpack and
// Rollup make each a chunk of its own, fetched only when its file is missing; esbuild (no code splitting unless
// asked) carries them inside the bundle, evaluated only then.
function inside(file) {
  switch (file) {
    case 'attnlab-simd.wasm': return import('./attnlab-simd.inline.js');
    case 'attnlab-scalar.wasm': return import('./attnlab-scalar.inline.js');
    case 'attnlab-gpt-simd.wasm': return import('./attnlab-gpt-simd.inline.js');
    case 'attnlab-gpt-scalar.wasm': return import('./attnlab-gpt-scalar.inline.js');
    case 'attnlab-worker.js': return import('./attnlab-worker.inline.js');
  }
  throw new Error(`attnlab: no file named ${file}`);
}

/**
 * Loads the engine and resolves with a {@link Lab}. See index.d.ts for the options.
 * @param {import('./index.js').InitOptions} [options]
 */
export function init(options = {}) {
  setLmWorkers(() => import('./lm-workers.js'));
  return start(options, createAttnlab, {
    module: (file) => compileBesideOrInline(beside(file), file, () => inside(file)),
    workerScript: () => readBesideOrInline(beside('attnlab-worker.js'), 'attnlab-worker.js', () => inside('attnlab-worker.js')),
  });
}
