// onnxruntime-web, wasm execution provider, one thread, no proxy worker, running the bench's ONNX graph of the
// checkpoint (bench/lm/gpt2_onnx.py: input_ids, attention_mask, position_ids, past_key_values.N.key/value →
// logits, present.N.key/value) as transformers.js runs such a graph: every step feeds the previous step's
// present tensors back as past_key_values, with an attention mask of ones and explicit positions. The graph's
// weights are external data inside model.safetensors (and lm_head.bin, the tied output projection transposed as
// an export stores it), handed to the session as bytes.
import { argmax, readJson } from '../lib.mjs';

/** host: bench/lm/host-node.mjs, or the Chromium page's own (bench/lm/browser-page.mjs). */
export async function create(host) {
  const ort = await host.import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = host.wasmPaths('onnxruntime-web');
  ort.env.logLevel = 'error';
  const version = await host.version('onnxruntime-web');
  let session = null, cfg = null;

  const i64 = (values, dims) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);

  /** One run: `ids` at positions past … past + S − 1 after `cache` (null: empty); returns logits and the new cache. */
  async function step(ids, cache) {
    const H = cfg.n_head, dh = cfg.n_embd / cfg.n_head;
    const past = cache ? cache['present.0.key'].dims[2] : 0;
    const S = ids.length, T = past + S;
    const feeds = {
      input_ids: i64(ids, [1, S]),
      attention_mask: i64(new Array(T).fill(1), [1, T]),
      position_ids: i64(Array.from({ length: S }, (_, i) => past + i), [1, S]),
    };
    for (let i = 0; i < cfg.n_layer; ++i) {
      for (const kv of ['key', 'value']) {
        feeds[`past_key_values.${i}.${kv}`] = cache ? cache[`present.${i}.${kv}`] : new ort.Tensor('float32', new Float32Array(0), [1, H, 0, dh]);
      }
    }
    const out = await session.run(feeds);
    return { logits: out.logits.data, cache: out };
  }

  return {
    info: {
      library: 'onnxruntime-web', version, numThreads: ort.env.wasm.numThreads,
      how: 'wasm EP, numThreads 1, proxy off, graphOptimizationLevel "all"; the ONNX graph with past/present KV, present fed back as past each step',
    },
    dtypes: ['F32'],
    async load(dir) {
      cfg = readJson(await host.read(dir, 'config.json'));
      const graph = await host.read(dir, 'model.onnx');
      const externalData = [];
      for (const file of ['model.safetensors', 'lm_head.bin']) externalData.push({ path: file, data: await host.read(dir, file) });
      session = await ort.InferenceSession.create(graph, {
        executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1, externalData,
      });
    },
    /** Logits [n × vocab] of a forward over `ids` from an empty cache. */
    async prefill(ids) {
      return (await step(Array.from(ids), null)).logits;
    },
    /** Greedy: `steps` tokens after `ids`; onToken(id, logitsRow) after each. */
    async generate(ids, steps, onToken) {
      const V = cfg.vocab_size;
      let { logits, cache } = await step(Array.from(ids), null);
      const tokens = [];
      for (;;) {
        const row = logits.subarray(logits.length - V);
        const id = argmax(row);
        tokens.push(id);
        onToken(id, row);
        if (tokens.length === steps) return tokens;
        ({ logits, cache } = await step([id], cache));
      }
    },
    memory: () => ({}),
    async dispose() { await session?.release(); },
  };
}
