// Which module a lab runs. Four are shipped: the operators alone (what init() loads) and the operators with the
// small GPT (init({ gpt: true })), each with SIMD128 kernels and scalar ones (for engines without SIMD). One glue
// (attnlab.mjs) runs all four. Anything that must run the same module as a lab (a worker beside it) names the
// module through moduleFile with the options init() resolved (loader.js: variant()).

/** The module's file name in the package: attnlab-{simd,scalar}.wasm, attnlab-gpt-{simd,scalar}.wasm. */
export function moduleFile({ simd, gpt }) {
  return `attnlab-${gpt ? 'gpt-' : ''}${simd ? 'simd' : 'scalar'}.wasm`;
}

/** The entry that carries the module inside its JS. */
export function inlineEntry(file) {
  return file.startsWith('attnlab-gpt-') ? 'attnlab/inline-gpt' : 'attnlab/inline';
}

/** Whether an instantiated module has the small GPT (its engine calls). */
export function hasGpt(m) {
  return m.callIndex('gptCreate') >= 0;
}

/** Whether an instantiated module has the language-model engine (lab.loadModel): the GPT modules do. */
export function hasLm(m) {
  return m.callIndex('lmLoaderCreate') >= 0;
}
