// attnlab/inline-gpt: attnlab/inline (inline.js) with the two modules that have the small GPT inside the JS
// (attnlab-gpt-{simd,scalar}.inline.js) instead of the operators' pair: for init({ gpt: true }) where nothing can
// be served next to a bundle. init() without gpt: true runs the same module (the operators are all in it) and,
// as everywhere, its lab's createGPT and loadGPT throw.
import createAttnlab from './attnlab.mjs';
import scalar from './attnlab-gpt-scalar.inline.js';
import simd from './attnlab-gpt-simd.inline.js';
import workerScript from './attnlab-worker.inline.js';
import { compileBase64, start } from './loader.js';
import * as lmWorkers from './lm-workers.js';
import { setLmWorkers } from './lm.js';

export { simdSupported } from './loader.js';

/**
 * Loads the engine with the small GPT from the module inside this package's JS and resolves with a {@link Lab}.
 * @param {import('./index.js').InitOptions} [options]
 */
export function init(options = {}) {
  setLmWorkers(async () => lmWorkers);
  return start(options, createAttnlab, {
    module: async (file) => {
      const simdFile = file.endsWith('-simd.wasm');
      const name = simdFile ? 'attnlab-gpt-simd.wasm' : 'attnlab-gpt-scalar.wasm';
      return { module: await compileBase64(simdFile ? simd : scalar, name), source: 'inline' };
    },
    workerScript: async () => ({ text: workerScript }), // init({ threads }): the workers' script, carried here too
  });
}
