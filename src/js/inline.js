// attnlab/inline: the same API as attnlab (index.js), with both .wasm modules carried inside the JS as base64
// (attnlab-{simd,scalar}.inline.js, written by scripts/build-wasm.sh), so nothing has to be served or copied
// next to a bundle: for esbuild, Rollup without an asset plugin, CommonJS and Node bundles, single-file apps.
// Static imports only, so every bundler makes one chunk of it whatever its configuration; the price is that
// both modules are in it (the scalar one is the fallback for engines without SIMD128).
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
  return start(options, createAttnlab, async (useSimd) =>
    useSimd ? compileBase64(simd, 'attnlab-simd.wasm') : compileBase64(scalar, 'attnlab-scalar.wasm'),
  async () => workerScript, // init({ threads }): the workers' script, carried here too
  );
}
