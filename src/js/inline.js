// attnlab/inline: the same API as attnlab (index.js), with the operators' two .wasm modules carried inside the JS
// as base64 (attnlab-{simd,scalar}.inline.js, written by scripts/build-wasm.sh), so nothing has to be served or
// copied next to a bundle: for esbuild, Rollup without an asset plugin, CommonJS and Node bundles, single-file
// apps. Static imports only, so every bundler makes one chunk of it whatever its configuration; the price is that
// both modules are in it (the scalar one is the fallback for engines without SIMD128). The modules with the small
// GPT are in attnlab/inline-gpt (inline-gpt.js), so that this entry stays small: init({ gpt: true }) here needs
// wasmUrl or wasmBinary.
import createAttnlab from './attnlab.mjs';
import scalar from './attnlab-scalar.inline.js';
import simd from './attnlab-simd.inline.js';
import workerScript from './attnlab-worker.inline.js';
import { compileBase64, start } from './loader.js';

export { simdSupported } from './loader.js';

/**
 * Loads the engine from the module inside this package's JS and resolves with a {@link Lab}.
 * @param {import('./index.js').InitOptions} [options]
 */
export function init(options = {}) {
  return start(options, createAttnlab, async (file) => {
    if (file === 'attnlab-simd.wasm') return compileBase64(simd, file);
    if (file === 'attnlab-scalar.wasm') return compileBase64(scalar, file);
    throw new Error(
      `init: attnlab/inline carries the operators' modules only; for gpt: true import { init } from 'attnlab/inline-gpt' ` +
        `(the modules with the small GPT inside the JS), or pass wasmUrl or wasmBinary with ${file}.`,
    );
  }, async () => workerScript); // init({ threads }): the workers' script, carried here too
}
