// GPT.trainStepAsync: trainStep with the batch's sequences split across init({ threads })'s workers
// (data-parallel). Everything trainStep checks is checked here first, on this thread, by the same code (the same
// errors). Then each worker gets the current weights with its part — whole sequences — and its replica of the
// model (worker-gpt.js) computes that part's gradient divided by the whole batch's count of targets (−1 is not
// counted), so the parts simply add up to the gradient of the batch's mean loss. The sum is applied here by one
// AdamW update in the engine (the model's apply_gradients: train_step's own update, clipping on the summed
// gradient); until then nothing in the model changes, so a failing part, a non-finite loss or gradient, a
// disposed lab or model leaves it as it was.
// Weights go out with every part rather than every replica applying the summed gradient too: the bytes are the
// same (parameterCount floats to each worker per step either way), but the replicas then hold no optimizer
// state, cannot drift, serve any model of their shape from any worker, and setWeights between steps just works.
// Steps on one model run one after another in call order (each starts once the previous one settled).
import { trainArgs, writeTrainOptions } from './gpt.js';

const disposedLab = () => new Error('attnlab: this lab was disposed; its async calls need a new init()');

// port: the model's side ({ calls (gpt.js's engine calls), config, threads: { pool, closed(), stats }, handle() →
// its engine handle or 0, shape() → its replicas' gptCreate descriptor, sync(tokens, targets, opts) → trainStep,
// busy, last }), kept by gpt.js.
export function trainStepAsync(port, tokens, targets, opts) {
  const fn = 'GPT.trainStep', { calls, threads } = port;
  if (threads?.closed()) return Promise.reject(disposedLab());
  if (!threads?.pool) {
    // threads: 1: trainStep itself, on this thread.
    try {
      const loss = port.sync(tokens, targets, opts);
      if (threads) threads.stats.inlineCalls += 1;
      return Promise.resolve(loss);
    } catch (e) {
      return Promise.reject(e);
    }
  }
  let step;
  try {
    const h = port.handle();
    if (!h) throw new Error(`${fn}: this model was disposed`);
    // Everything trainStep checks, by the engine on this thread: the sizes first, then (a dry run) the token ids.
    const call = calls.gptTrainStep, d = calls.on(call, h);
    const given = trainArgs(fn, call, d, tokens, targets, opts);
    d[call.F.dry_run] = 1;
    call.call(fn, d, given);
    // The batch as it is now: the caller may reuse its arrays while the step waits its turn.
    step = { tokens: tokens.slice(), targets: targets.slice(), opts: { ...opts } };
  } catch (e) {
    return Promise.reject(e);
  }
  port.busy++;
  const run = (port.last ?? Promise.resolve()).then(() => inWorkers(port, step));
  port.last = run.then(
    () => port.busy--,
    () => port.busy--,
  );
  return run;
}

async function inWorkers(port, { tokens, targets, opts }) {
  const fn = 'GPT.trainStep', { calls, threads, config } = port;
  const gone = () => (threads.closed() ? disposedLab() : new Error(`${fn}: this model was disposed during trainStepAsync; the step was not applied`));
  let h = port.handle();
  if (!h || threads.closed()) throw gone();
  // (the engine checked that the batch is whole sequences of the context)
  const seq = config.context, batch = tokens.length / seq;
  let counted = 0;
  for (const t of targets) counted += t >= 0;
  const params = calls.gptParameters.call(fn, calls.on(calls.gptParameters, h)).parameters;
  const shape = port.shape();
  // Near-equal runs of whole sequences, one per worker; a run without a counted target adds nothing.
  const parts = [], n = Math.min(threads.pool.size, batch);
  for (let i = 0; i < n; ++i) {
    const [t0, t1] = [Math.floor((batch * i) / n) * seq, Math.floor((batch * (i + 1)) / n) * seq];
    const part = targets.slice(t0, t1);
    if (part.some((t) => t >= 0))
      parts.push(threads.pool.run({ op: 'gptGradients', shape, params, tokens: tokens.slice(t0, t1), targets: part, normalizer: counted }));
  }
  const done = await Promise.allSettled(parts);
  const failed = done.find((d) => d.status === 'rejected');
  if (failed) throw failed.reason; // (the first part's in batch order)
  threads.stats.workerParts += parts.length;
  h = port.handle();
  if (!h || threads.closed()) throw gone();
  const values = done.map((d) => d.value);
  let lossSum = 0;
  for (const v of values) lossSum += v.lossSum;
  // The parts' gradients summed (a non-finite loss: the engine names it, and no gradient counts).
  const grads = Number.isFinite(lossSum) ? values[0].grads : new Float32Array(params.length);
  if (Number.isFinite(lossSum))
    for (let k = 1; k < values.length; ++k) {
      const part = values[k].grads;
      for (let i = 0; i < grads.length; ++i) grads[i] += part[i]; // float32 sums: each rounded once, as the engine's
    }
  const apply = calls.gptApplyGradients, d = calls.on(apply, h);
  d[apply.F.loss_sum] = lossSum, d[apply.F.count] = counted;
  writeTrainOptions(fn, apply, d, opts);
  apply.call(fn, d, { gradients: grads });
  return d[apply.F.loss];
}
