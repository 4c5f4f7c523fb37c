// attnlab's real-model runtime through the package's public API: lab.loadModel(files) with the checkpoint's
// config.json and model.safetensors, model.forward(ids) for the prefill's logits, model.generate(prompt,
// { maxTokens, temperature: 0, onToken }) for greedy decoding with the KV cache resident in wasm memory, and
// model.memoryBytes. The package is dist/ of this checkout unless ATTNLAB_LM_DIST names another build's dist/.
//
// Whether the loader exists is decided by looking for the function (typeof lab.loadModel), never by catching an
// error: once it is there, every failure of it is a failure of the bench.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const distDir = path.resolve(root, process.env.ATTNLAB_LM_DIST || 'dist');

/**
 * The lab that has loadModel (a plain init(), or one with the GPT modules), or { missing: reason } when the
 * build has none. Throws only when the package itself cannot be loaded.
 */
export async function findLoader(options = {}) {
  const entry = path.join(distDir, 'index.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} not found: run \`npm run build\` first`);
  const { init } = await import(pathToFileURL(entry).href);
  for (const extra of [{}, { gpt: true }]) {
    const lab = await init({ simd: true, ...options, ...extra });
    if (typeof lab.loadModel === 'function') return { lab, init: extra };
    lab.dispose?.();
  }
  return { missing: `lab.loadModel is not a function in ${path.relative(root, distDir) || distDir}/ (the package has no real-model loader yet)` };
}

/** The id of a token as onToken or generate hands it over: a number, or an object with an id. */
const tokenId = (t) => (typeof t === 'number' ? t : typeof t === 'bigint' ? Number(t) : t?.id ?? t?.token ?? t?.tokenId);

export async function create() {
  const found = await findLoader();
  if (found.missing) return { missing: found.missing };
  const { lab } = found;
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  let model = null;
  return {
    info: {
      library: 'attnlab', version: pkg.version, backend: lab.backend, dist: path.relative(root, distDir) || distDir,
      how: `init(${JSON.stringify({ simd: true, ...found.init })}); lab.loadModel({ config.json, model.safetensors }); model.forward(ids).logits; model.generate(prompt, { maxTokens, temperature: 0, onToken })`,
    },
    dtypes: ['F32', 'F16', 'BF16'],
    async load(dir) {
      const files = {};
      for (const name of ['config.json', 'model.safetensors']) files[name] = new Uint8Array(fs.readFileSync(path.join(dir, name)));
      model = await lab.loadModel(files);
    },
    async prefill(ids) {
      return model.forward(Int32Array.from(ids)).logits;
    },
    async generate(ids, steps, onToken) {
      const seen = [];
      const result = await model.generate(Int32Array.from(ids), {
        maxTokens: steps, temperature: 0,
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

