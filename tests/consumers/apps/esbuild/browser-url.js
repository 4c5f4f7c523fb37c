// esbuild, browser ESM, with attnlab: the .wasm is not beside the bundle, so init() runs the copy inside the JS
// (and buildInfo() says why); with threads, the workers' script (attnlab-worker.js) likewise.
import { init } from 'attnlab';
import { report } from '../check.js';

async function threads() {
  try {
    const lab = await init({ threads: 2 });
    const n = 4 * 256 * 64; // 4 heads × 256 tokens × d 64: enough work to be cut into parts for the workers
    const { output } = await lab.attentionAsync({ q: new Float32Array(n).fill(0.01), k: new Float32Array(n).fill(0.02), v: new Float32Array(n).fill(1), heads: 4, dk: 64 });
    lab.dispose();
    return { fallback: lab.buildInfo().fallback, threads: lab.threads, output: [output[0], output[n - 1]] };
  } catch (e) {
    return { error: String((e && e.message) || e) };
  }
}

// One after the other, so that the page's requests come in a known order.
report(init).then(async (main) => (window.__result = { main, pool: await threads() }));
