// The lab object init() resolves with: one set of plain functions over one module instance. Each operator's file
// gives its call in two steps, prepare (types, then the engine's check) and run; the synchronous functions are the
// two in a row, and the async twins (async.js) take the same pairs, kept on the lab under CALLS.
import { attentionCall } from './attention.js';
import { attentionBackwardCall } from './attention-backward.js';
import { makeKvCache } from './kv-cache.js';
import { multiHeadCall } from './multihead.js';
import { ropeCall } from './rope.js';
import { softmaxCall } from './softmax.js';
import { softmaxBackwardCall } from './softmax-backward.js';
import { makeGPT } from './gpt.js';
import { matmulCall } from './matmul.js';
import { makeLoadModel } from './lm.js';
import { makeTokenizers } from './tokenizer.js';

/** Where a lab keeps its operators' prepare/run pairs (for lab-threads.js); not part of the public API. */
export const CALLS = Symbol('attnlab.calls');

// `gpt`: whether init() was asked for the small GPT (init({ gpt: true })); without it, createGPT and loadGPT
// throw an Error that says so.
export function makeLab(m, { gpt = false } = {}) {
  const info = m.buildInfo();
  const backend = info.simd ? 'wasm-simd' : 'wasm';
  const caches = { count: 0 };  // KV caches alive (created, not yet disposed or collected)
  const models = { count: 0 };  // loadModel's models alive
  const tokenizers = { count: 0 };  // tokenizers alive, likewise
  const calls = {
    softmax: softmaxCall(m), attention: attentionCall(m), multiHeadAttention: multiHeadCall(m), matmul: matmulCall(m),
    rope: ropeCall(m), softmaxBackward: softmaxBackwardCall(m), attentionBackward: attentionBackwardCall(m),
  };
  // name(...args): prepare, then run.
  const sync = (name) => {
    const c = calls[name];
    return { [name]: (...args) => c.run(c.prepare(...args)) }[name];
  };
  const lab = {
    backend,
    softmax: sync('softmax'),
    attention: sync('attention'), // (its prepare takes one argument: list.map(lab.attention) passes an index too)
    multiHeadAttention: sync('multiHeadAttention'),
    matmul: sync('matmul'),
    rope: sync('rope'),
    kvCache: makeKvCache(m, caches),
    softmaxBackward: sync('softmaxBackward'),
    attentionBackward: sync('attentionBackward'),
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
  Object.defineProperty(lab, CALLS, { value: calls });
  return lab;
}
