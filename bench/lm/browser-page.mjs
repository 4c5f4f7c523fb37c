// A runtime of the LM bench in a Chromium page (bench/lm/browser.mjs): the same adapters and handlers as the
// Node workers, with a host that imports from the bench's static server and fetches the checkpoint.
import { adapters, makeHandlers } from './handlers.mjs';

const host = {
  name: 'chromium',
  attnlabDist: 'dist',
  import: (spec) => (spec === 'attnlab' ? import('/dist/index.js') : spec === 'onnxruntime-web' ? import('/ort/ort.wasm.min.mjs') : import(spec)),
  wasmPaths: (pkg) => (pkg === 'onnxruntime-web' ? '/ort/' : '/tfjs-wasm/'),
  version: async (pkg) => (await (await fetch(`/pkg/${pkg}/package.json`)).json()).version,
  async read(dir, file) {
    const res = await fetch(`${dir}/${file}`);
    if (!res.ok) throw new Error(`${dir}/${file}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  },
  gc: globalThis.gc ?? (() => {}),
  rss: () => null,
  cpuMs: () => NaN,   // (a page cannot see its CPU time; the orchestrator measures the browser's)
};
const handlers = makeHandlers(host);
const error = (e) => String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ');
let lib = null;

window.bench = {
  async start(runtime) {
    if (runtime === 'stream') return { info: { library: 'wasm streaming read' } };
    try {
      const made = await (await adapters[runtime]()).create(host);
      if (made.missing) return { missing: made.missing };
      lib = made;
      return { info: lib.info, dtypes: lib.dtypes };
    } catch (e) {
      return { failed: error(e) };
    }
  },
  async ask(msg) {
    try {
      return await handlers[msg.type](lib, msg);
    } catch (e) {
      return { failed: error(e) };
    }
  },
};
