// TensorFlow.js with the wasm backend (XNNPACK), one thread: GPT-2's forward written with tfjs ops over the same
// state dict (read from model.safetensors by the bench's reader), the KV cache kept as tensors per layer,
// [heads, positions, head_dim], that grow by tf.concat each step. Linear layers are tf.fused.matMul with their
// bias; LayerNorm is tf.moments and arithmetic (tfjs-core has no LayerNorm op); gelu_new is written out. The tied
// output projection is a transposed copy of wte made at load ([d, vocab]: matMul with transposeB took 8× as long
// for a 128-token prefill and 2.4× for a decode step), which costs the copy's memory.
import { readF32Tensors } from '../safetensors.mjs';
import { argmax, readJson } from '../lib.mjs';

/** host: bench/lm/host-node.mjs, or the Chromium page's own (bench/lm/browser-page.mjs). */
export async function create(host) {
  const tf = await host.import('@tensorflow/tfjs-core');
  const wasm = await host.import('@tensorflow/tfjs-backend-wasm');
  wasm.setThreadsCount(1);
  wasm.setWasmPaths(host.wasmPaths('@tensorflow/tfjs-backend-wasm'));
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  const version = await host.version('@tensorflow/tfjs-backend-wasm');
  let cfg = null, W = null;

  const layerNorm = (x, prefix) => {
    const { mean, variance } = tf.moments(x, -1, true);
    const xh = tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, cfg.layer_norm_epsilon)));
    return tf.add(tf.mul(xh, W[`${prefix}.weight`]), W[`${prefix}.bias`]);
  };
  const linear = (x, prefix) => tf.fused.matMul({ a: x, b: W[`${prefix}.weight`], bias: W[`${prefix}.bias`] });
  const c = Math.sqrt(2 / Math.PI);
  const geluNew = (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.tanh(tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), c))));

  /**
   * `ids` at positions past … past + S − 1 after `cache` (an array of {k, v} per layer, or null); returns the
   * logits [S × vocab] as a tensor and the new cache (kept tensors; the old ones are disposed by the caller).
   */
  function step(ids, cache) {
    const D = cfg.n_embd, H = cfg.n_head, dh = D / H, S = ids.length;
    const past = cache ? cache[0].k.shape[1] : 0;
    const next = [];
    const logits = tf.tidy(() => {
      const idsT = tf.tensor1d(ids, 'int32');
      const pos = tf.range(past, past + S, 1, 'int32');
      let x = tf.add(tf.gather(W['transformer.wte.weight'], idsT), tf.gather(W['transformer.wpe.weight'], pos));   // [S, D]
      // the causal mask for S > 1: query i (position past + i) sees keys j ≤ past + i
      let mask = null;
      if (S > 1) {
        const m = new Float32Array(S * (past + S));
        for (let i = 0; i < S; ++i) m.fill(-Infinity, i * (past + S) + past + i + 1, (i + 1) * (past + S));
        mask = tf.tensor2d(m, [S, past + S]);
      }
      const heads = (t) => tf.transpose(tf.reshape(t, [S, H, dh]), [1, 0, 2]);   // [H, S, dh]
      for (let l = 0; l < cfg.n_layer; ++l) {
        const p = `transformer.h.${l}`;
        const [q, k, v] = tf.split(linear(layerNorm(x, `${p}.ln_1`), `${p}.attn.c_attn`), 3, 1).map(heads);
        const K = cache ? tf.concat([cache[l].k, k], 1) : k, V = cache ? tf.concat([cache[l].v, v], 1) : v;   // [H, T, dh]
        next.push({ k: tf.keep(K), v: tf.keep(V) });
        let s = tf.mul(tf.matMul(q, K, false, true), 1 / Math.sqrt(dh));   // [H, S, T]
        if (mask) s = tf.add(s, mask);
        const ctx = tf.reshape(tf.transpose(tf.matMul(tf.softmax(s), V), [1, 0, 2]), [S, D]);
        x = tf.add(x, linear(ctx, `${p}.attn.c_proj`));
        x = tf.add(x, linear(geluNew(linear(layerNorm(x, `${p}.ln_2`), `${p}.mlp.c_fc`)), `${p}.mlp.c_proj`));
      }
      return tf.matMul(layerNorm(x, 'transformer.ln_f'), W.lmHead);   // [S, V]
    });
    return { logits, cache: next };
  }

  const dropCache = (cache) => { for (const { k, v } of cache ?? []) tf.dispose([k, v]); };

  return {
    info: {
      library: '@tensorflow/tfjs-backend-wasm', version, threads: wasm.getThreadsCount(),
      simd: tf.env().getBool('WASM_HAS_SIMD_SUPPORT'),
      how: 'setThreadsCount(1); GPT-2 in tfjs ops (fused.matMul + bias, moments LayerNorm, gelu_new written out, lm_head a transposed copy of wte), KV cache as tensors grown by concat; logits read with dataSync()',
    },
    dtypes: ['F32'],
    async load(dir) {
      cfg = readJson(await host.read(dir, 'config.json'));
      const tensors = readF32Tensors(await host.read(dir, 'model.safetensors'));
      W = Object.fromEntries(Object.entries(tensors).map(([name, t]) => [name, tf.tensor(t.data, t.shape)]));
      W.lmHead = tf.transpose(W['transformer.wte.weight']);
    },
    async prefill(ids) {
      const { logits, cache } = step(Int32Array.from(ids), null);
      dropCache(cache);
      const data = logits.dataSync();
      logits.dispose();
      return data;
    },
    async generate(ids, steps, onToken) {
      const V = cfg.vocab_size;
      let { logits, cache } = step(Int32Array.from(ids), null);
      const tokens = [];
      try {
        for (;;) {
          const last = tf.tidy(() => tf.slice(logits, [logits.shape[0] - 1, 0], [1, V]));
          logits.dispose();
          const row = last.dataSync();
          last.dispose();
          const id = argmax(row);
          tokens.push(id);
          onToken(id, row);
          if (tokens.length === steps) return tokens;
          const out = step(Int32Array.of(id), cache);
          dropCache(cache);
          ({ logits, cache } = out);
        }
      } finally {
        dropCache(cache);
      }
    },
    memory() {
      const m = tf.memory();
      const heap = tf.backend().wasm?.HEAPU8?.buffer?.byteLength;
      return { tensorBytes: m.numBytes, tensors: m.numTensors, wasmBytes: heap };
    },
    dispose() { tf.dispose(Object.values(W ?? {})); },
  };
}
