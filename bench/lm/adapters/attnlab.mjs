// attnlab's real-model runtime through the package's public API: lab.loadModel(files) with the checkpoint's
// config.json and model.safetensors, model.forward(ids) for the prefill's logits, model.generate(prompt,
// { maxTokens, temperature: 0, stop: [], onToken }) for greedy decoding with the KV cache resident in wasm memory, and
// model.memoryBytes and lab.memoryBytes (the module's whole wasm memory, which never shrinks: what the memory
// target is about). The package is the host's (Node: dist/ of this checkout, or ATTNLAB_LM_DIST).
//
// Whether the loader exists is decided by looking for the function (typeof lab.loadModel), never by catching an
// error: once it is there, every failure of it is a failure of the bench.

/**
 * The lab that has loadModel, or { missing: reason } when the build has none. Throws only when the package itself
 * cannot be loaded. The lab with the GPT modules first: its own module runs the model, so lab.memoryBytes is the
 * memory the model lives in (a plain init()'s lab may run models in a second module its memoryBytes does not see).
 */
export async function findLoader(host) {
  const { init } = await host.import('attnlab');
  for (const extra of [{ gpt: true }, {}]) {
    const lab = await init({ simd: true, ...extra });
    if (typeof lab.loadModel === 'function') return { lab, init: extra };
  }
  return { missing: `lab.loadModel is not a function in ${host.attnlabDist}/ (the package has no real-model loader yet)` };
}

/** The id of a token as onToken or generate hands it over: a number, or an object with an id. */
const tokenId = (t) => (typeof t === 'number' ? t : typeof t === 'bigint' ? Number(t) : t?.id ?? t?.token ?? t?.tokenId);

/** host: bench/lm/host-node.mjs, or the Chromium page's own (bench/lm/browser-page.mjs). */
export async function create(host) {
  const found = await findLoader(host);
  if (found.missing) return { missing: found.missing };
  const { lab } = found;
  let model = null;
  return {
    info: {
      library: 'attnlab', version: await host.version('attnlab'), backend: lab.backend, dist: host.attnlabDist,
      how: `init(${JSON.stringify({ simd: true, ...found.init })}); lab.loadModel({ config.json, model.safetensors }); model.forward(ids).logits; model.generate(prompt, { maxTokens, temperature: 0, stop: [], onToken })`,
    },
    dtypes: ['F32', 'F16', 'BF16'],
    async load(dir) {
      const files = {};
      for (const name of ['config.json', 'model.safetensors']) files[name] = await host.read(dir, name);
      model = await lab.loadModel(files);
    },
    async prefill(ids) {
      return (await model.forward(Int32Array.from(ids))).logits;
    },
    async generate(ids, steps, onToken) {
      const seen = [];
      // stop: [] so that the end-of-text token does not end it early (every runtime decodes the same count)
      const result = await model.generate(Int32Array.from(ids), {
        maxTokens: steps, temperature: 0, stop: [],
        onToken: (t) => { const id = tokenId(t); seen.push(id); onToken(id, null); },
      });
      const returned = result?.tokens ?? result?.ids ?? result;
      const tokens = seen.length ? seen : Array.from(returned ?? [], tokenId);
      return tokens.slice(0, steps);
    },
    memory: () => ({ memoryBytes: model?.memoryBytes, labMemoryBytes: lab.memoryBytes }),
    dispose() { model?.dispose(); },
  };
}
