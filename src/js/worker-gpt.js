// The small GPT's part of an init({ threads }) worker: its share of GPT.trainStepAsync (gpt-async.js). The worker
// keeps a replica of each model it trains, resident between steps (the calling thread names the model by a key):
// the replica's weights are brought up to date at the start of a step only when they changed, its gradient goes
// into the step's exchange, and the replica owns one slice of the parameters, whose summed gradient, AdamW update
// and moments it computes. The messages carry descriptors the calling thread prepared; the worker fills in its
// replica's handle, and its engine checks them again. Only in workers running a GPT module.
import { engineCall } from './call.js';

export function makeGptWorker(m) {
  const call = (name) => engineCall(m, name);
  const create = call('gptCreate'), free = call('gptFree'), write = call('gptWriteState'), partial = call('gptPartialGradients');
  const reduce = call('gptReduceSlice'), update = call('gptUpdateSlice');
  const fn = 'GPT.trainStep';
  const replicas = new Map(); // model key → the replica's handle

  function replica(key) {
    const h = replicas.get(key);
    if (!h) throw new Error(`${fn}: this worker holds no replica of the model (was it replaced?); the step was not applied`);
    return h;
  }
  function writeState(h, part, data, steps) {
    const d = write.descriptor();
    d[write.F.model] = h, d[write.F.part] = part, d[write.F.offset] = 0;
    if (steps !== undefined) d[write.F.steps] = steps, d[write.F.steps + 1] = 1;
    write.call(fn, d, { data });
  }
  // A descriptor prepared on the calling thread (d: its fields as numbers), on this worker's replica.
  function on(op, given, h) {
    const d = op.descriptor();
    d.set(given);
    d[op.F.model] = h;
    return d;
  }

  const phases = {
    // The replica made (shape: a gptCreate descriptor) or kept, and its whole state written: weights, moments, steps.
    seed({ key, shape, params, moment1, moment2, steps }) {
      let h = replicas.get(key);
      if (!h) {
        const d = create.descriptor();
        d.set(shape);
        create.call(fn, d);
        replicas.set(key, (h = d[create.F.model]));
      }
      writeState(h, 0, params), writeState(h, 1, moment1), writeState(h, 2, moment2, steps);
      return {};
    },
    // This part's gradient (partial: a gptPartialGradients descriptor), on the replica's weights — after `params`
    // (the step's weights, when the replica's are older) were written over them — into `into` (shared memory) or
    // sent back.
    gradients({ key, params, d, tokens, targets, into }) {
      const h = replica(key), t = performance.now();
      if (params) writeState(h, 0, params);
      const t0 = performance.now();
      const desc = on(partial, d, h);
      const o = partial.call(fn, desc, { tokens, targets, gradients: into });
      const lossSum = desc[partial.F.loss_sum];
      return { lossSum, grads: into || !Number.isFinite(lossSum) ? null : o.gradients, ms: performance.now() - t0, gatherMs: t0 - t };
    },
    // The slice's gradients of every part (parts: arrays of the slice's length) summed → its sum of squares.
    // (Each round also says how long its work took: lab.trainTimes().)
    reduce({ key, d, parts }) {
      const t = performance.now(), desc = on(reduce, d, replica(key));
      reduce.call(fn, desc, { gradients: parts });
      return { sumSquares: desc[reduce.F.sum_squares], ms: performance.now() - t };
    },
    // The slice's AdamW update; its weights and moments after it into `into`'s arrays (shared memory) or sent back.
    update({ key, d, into, length }) {
      const t = performance.now();
      const given = into ?? { parameters: new Float32Array(length), moment1: new Float32Array(length), moment2: new Float32Array(length) };
      update.call(fn, on(update, d, replica(key)), given);
      return { ...(into ? {} : given), ms: performance.now() - t };
    },
    drop({ key }) {
      const h = replicas.get(key);
      if (!h) return {};
      replicas.delete(key);
      const d = free.descriptor();
      d[free.F.model] = h;
      free.call(fn, d);
      return {};
    },
  };
  return (message) => phases[message.phase](message);
}
