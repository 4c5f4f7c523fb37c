// The small GPT's part of an init({ threads }) worker: one part of GPT.trainStepAsync's batch (gpt-async.js).
// The worker keeps a replica per model shape (the model's gptCreate descriptor without the seed; the two most
// recently used): the weights arrive with every part and are written over the replica's, so a replica is never out
// of date, serves any model of its shape, and needs no message when a model is disposed. Only in workers running a
// GPT module.
import { engineCall } from './call.js';

const KEEP = 2;

export function makeGptWorker(m) {
  const create = engineCall(m, 'gptCreate'), partial = engineCall(m, 'gptPartialGradients'), free = engineCall(m, 'gptFree');
  const fn = 'GPT.trainStep';
  const replicas = new Map(); // shape key → the replica's handle, least recently used first
  function replica(shape) {
    const key = shape.join(',');
    let h = replicas.get(key);
    if (h) replicas.delete(key);
    else {
      const d = create.descriptor();
      d.set(shape);
      create.call(fn, d);
      h = d[create.F.model];
      if (replicas.size >= KEEP) {
        const [oldest, old] = replicas.entries().next().value;
        replicas.delete(oldest);
        const f = free.descriptor();
        f[free.F.model] = old;
        free.call(fn, f);
      }
    }
    replicas.set(key, h);
    return h;
  }
  // { shape (a gptCreate descriptor, seed 0), params (parameter layout), tokens, targets, normalizer } →
  // { lossSum, grads | null }: grads is dL/dθ of (this part's summed losses) / normalizer, the whole batch's count
  // of targets. The engine checks the parameters' length against the replica's.
  return ({ shape, params, tokens, targets, normalizer }) => {
    const d = partial.descriptor(), { F } = partial;
    d[F.model] = replica(shape), d[F.normalizer] = normalizer;
    const o = partial.call(fn, d, { parameters: params, tokens, targets });
    const lossSum = d[F.loss_sum];
    return { lossSum, grads: Number.isFinite(lossSum) ? o.gradients : null };
  };
}
