// The lab object init() resolves with: one set of plain functions over one module instance.
import { makeAttention } from './attention.js';
import { makeAttentionBackward } from './attention-backward.js';
import { makeKvCache } from './kv-cache.js';
import { makeMultiHeadAttention } from './multihead.js';
import { makeRope } from './rope.js';
import { makeSoftmax } from './softmax.js';
import { makeSoftmaxBackward } from './softmax-backward.js';
import { makeGPT } from './gpt.js';
import { makeMatmul } from './matmul.js';
import { makeLoadModel } from './lm.js';
import { makeTokenizers } from './tokenizer.js';

// `gpt`: whether init() was asked for the small GPT (init({ gpt: true })); without it, createGPT and loadGPT
// throw an Error that says so.
export function makeLab(m, { gpt = false } = {}) {
  const info = m.buildInfo();
  const backend = info.simd ? 'wasm-simd' : 'wasm';
  const caches = { count: 0 };  // KV caches alive (created, not yet disposed or collected)
  const models = { count: 0 };  // loadModel's models alive
  const tokenizers = { count: 0 };  // tokenizers alive, likewise
  return {
    backend,
    softmax: makeSoftmax(m),
    attention: makeAttention(m),
    multiHeadAttention: makeMultiHeadAttention(m),
    matmul: makeMatmul(m),
    rope: makeRope(m),
    kvCache: makeKvCache(m, caches),
    softmaxBackward: makeSoftmaxBackward(m),
    attentionBackward: makeAttentionBackward(m),
    ...makeGPT(m, gpt),
    loadModel: makeLoadModel(m, models),
    ...makeTokenizers(m, tokenizers),
    buildInfo: () => ({ version: info.version, backend, simd: info.simd, kernels: info.kernels }),
    get memoryBytes() {
      return m.HEAPU8.byteLength;
    },
    get liveKvCaches() {
      return caches.count;
    },
    get liveModels() {
      return models.count;
    },
    get liveTokenizers() {
      return tokenizers.count;
    },
  };
}
