// The small GPT's part of an init({ threads }) worker: one part of GPT.trainStepAsync's batch (gpt-async.js).
// The worker keeps a replica per model shape (config without the seed; the two most recently used): the weights
// arrive with every part and are written over the replica's, so a replica is never out of date, serves any model
// of its shape, and needs no message when a model is disposed. Only in workers running a GPT module.
import { arena, check } from './memory.js';

const KEEP = 2;

export function makeGptWorker(m) {
  const replicas = new Map(); // shape key → GPTModel handle, least recently used first
  function replica(c) {
    const key = JSON.stringify({ ...c, seed: 0 });
    let h = replicas.get(key);
    if (h) replicas.delete(key);
    else {
      h = new m.GPTModel();
      const status = h.create(c.vocabSize, c.context, c.dModel, c.heads, c.kvHeads, c.layers, c.mlp, c.position === 'rope', c.tied, c.bias, 0);
      if (status.kind !== 0) h.delete(), check('GPT.trainStep', status);
      if (replicas.size >= KEEP) {
        const [oldest, old] = replicas.entries().next().value;
        replicas.delete(oldest), old.delete();
      }
    }
    replicas.set(key, h);
    return h;
  }
  // { config, params (parameter layout), tokens, targets, seq, normalizer } → { lossSum, grads | null }:
  // grads is dL/dθ of (this part's summed losses) / normalizer, the whole batch's count of targets.
  return ({ config, params, tokens, targets, seq, normalizer }) => {
    const fn = 'GPT.trainStep', h = replica(config);
    if (params.length !== h.parameterCount()) throw new Error(`${fn}: a worker's model has ${h.parameterCount()} parameters, the step sent ${params.length}`);
    m.HEAPF32.set(params, h.parametersAddress() >>> 2);
    const a = arena(m, fn, [
      { name: 'tokens', length: tokens.length, type: 'i32', data: tokens },
      { name: 'targets', length: targets.length, type: 'i32', data: targets },
    ]);
    try {
      check(fn, h.partialGradients(a.at(0), a.at(1), tokens.length, seq, normalizer));
    } finally {
      a.free();
    }
    const lossSum = h.lossSum(), at = h.gradientsAddress() >>> 2;
    return { lossSum, grads: Number.isFinite(lossSum) ? m.HEAPF32.slice(at, at + params.length) : null };
  };
}
