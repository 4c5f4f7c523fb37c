// attnlab: softmax, scaled dot-product and multi-head attention in WebAssembly, as plain functions over
// Float32Array. Hand-written ESM wrapper around the Embind modules (the glue attnlab.mjs and the modules
// attnlab-{simd,scalar}.wasm, and attnlab-gpt-{simd,scalar}.wasm with the small GPT: variant.js). This entry
// (`attnlab`) loads the .wasm file beside it: browsers fetch it (compiled while it streams), Node reads it from
// disk. inline.js (`attnlab/inline`) and inline-gpt.js (`attnlab/inline-gpt`) are the same API with a pair of
// modules inside the JS. loader.js does the loading for all; lab.js assembles the functions, one file per
// operation (softmax.js, …). They check types (TypeError naming the argument, checks.js) and write each call's
// descriptor; call.js has the engine check it (sizes, values: RangeError naming the argument), copies each
// tensor into wasm memory in one bulk copy, calls the engine, copies results out and frees everything, error or
// not.
// Static imports only: the package builds as one chunk in every bundler (Rollup's output.file included).
import createAttnlab from './attnlab.mjs';
import { compileBeside, readBeside, start } from './loader.js';

export { simdSupported } from './loader.js';

// Where this file was loaded from; undefined where a bundler emptied import.meta (CommonJS output).
const base = import.meta.url;

// Literal `new URL('./…', import.meta.url)`s: Vite, webpack and Parcel see the four files and emit them; only
// the chosen one is downloaded.
function beside(file) {
  if (!base) return undefined;
  switch (file) {
    case 'attnlab-simd.wasm': return new URL('./attnlab-simd.wasm', import.meta.url);
    case 'attnlab-scalar.wasm': return new URL('./attnlab-scalar.wasm', import.meta.url);
    case 'attnlab-gpt-simd.wasm': return new URL('./attnlab-gpt-simd.wasm', import.meta.url);
    case 'attnlab-gpt-scalar.wasm': return new URL('./attnlab-gpt-scalar.wasm', import.meta.url);
  }
  throw new Error(`attnlab: no module named ${file}`);
}

/**
 * Loads the engine and resolves with a {@link Lab}. See index.d.ts for the options.
 * @param {import('./index.js').InitOptions} [options]
 */
export function init(options = {}) {
  return start(options, createAttnlab, (file) => compileBeside(beside(file), file),
    // init({ threads }) only: the workers' script, read beside this file (a separate file: apps without threads
    // do not carry it).
    () => readBeside(base ? new URL('./attnlab-worker.js', import.meta.url) : undefined, 'attnlab-worker.js'),
  );
}
