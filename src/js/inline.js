// attnlab/inline: the same API as attnlab (index.js), with the operators' two .wasm modules carried inside the JS
// as base64 (attnlab-{simd,scalar}.inline.js, written by scripts/build-wasm.sh), so nothing is served, copied or
// requested beside a bundle: single-file apps, and bundles that should not first ask for a file that is not there
// (attnlab itself falls back to the same copies after such a request). Static imports only, so every bundler makes
// one chunk of it whatever its configuration (Rollup's output.file included); the price is that both modules are
// in it (the scalar one is the fallback for engines without SIMD128). The modules with the small GPT are in
// attnlab/inline-gpt (inline-gpt.js), so that this entry stays small: init({ gpt: true }) here needs wasmUrl or
// wasmBinary.
import createAttnlab from './attnlab.mjs';
import scalar from './attnlab-scalar.inline.js';
import simd from './attnlab-simd.inline.js';
import workerScript from './attnlab-worker.inline.js';
import { compileBase64, start } from './loader.js';
import * as lmWorkers from './lm-workers.js';
import { setLmWorkers } from './lm.js';

export { simdSupported } from './loader.js';

/**
 * Loads the engine from the module inside this package's JS and resolves with a {@link Lab}.
 * @param {import('./index.js').InitOptions} [options]
 */
export function init(options = {}) {
  setLmWorkers(async () => lmWorkers);
  return start(options, createAttnlab, {
    module: async (file) => {
      if (file === 'attnlab-simd.wasm') return { module: await compileBase64(simd, file), source: 'inline' };
      if (file === 'attnlab-scalar.wasm') return { module: await compileBase64(scalar, file), source: 'inline' };
      throw new Error(
        `init: attnlab/inline carries the operators' modules only; for gpt: true import { init } from 'attnlab/inline-gpt' ` +
          `(the modules with the small GPT inside the JS), or pass wasmUrl or wasmBinary with ${file}.`,
      );
    },
    workerScript: async () => ({ text: workerScript }), // init({ threads }): the workers' script, carried here too
  });
}
