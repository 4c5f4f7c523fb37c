// GPT.trainStepAsync: trainStep with the batch's sequences split across init({ threads })'s workers
// (data-parallel), the optimizer's work split too. Everything trainStep checks is checked here first, on this
// thread, by the same code (the same errors). Every worker keeps a replica of the model between steps
// (worker-gpt.js) and owns one slice of the parameters; a step is three rounds:
//   gradients  each worker gets its part — whole sequences — and computes that part's gradient divided by the
//              whole batch's count of targets (−1 is not counted), on its replica's weights, so the parts simply
//              add up to the gradient of the batch's mean loss;
//   reduce     each worker sums its slice of the parts' gradients (in the parts' order) and its slice's sum of
//              squares: the global norm is the square root of the slices' sums, added here;
//   update     each worker applies AdamW to its slice (clipping by that norm) and hands back the slice's weights
//              and moments; the next step's replicas start from those, put together.
// Between rounds this thread checks what trainStep would refuse (a non-finite loss or gradient) before anything
// changed, so a failing part, a refused step, a disposed lab or model leaves the model as it was everywhere.
// The exchange goes through shared memory where the page may share it (always in Node; in browsers when
// crossOriginIsolated): the parts' gradients, and two copies of the state (weights and moments), the step's
// result and the last committed one, which a read of the model between or during steps takes. Elsewhere
// (init({ exchange: 'message' }), or a page without isolation) the same rounds move the same floats by messages.
// This thread's model takes the committed state when it is next read or changed (sync); slices start at multiples
// of the engine's norm chunk, so that a slice's sum of squares is made of the chunks trainStep sums.
// Steps on one model run one after another in call order (each starts once the previous one settled).
import { trainArgs, writeTrainOptions } from './gpt-train-args.js';
import { canShare } from './threads.js';

const disposedLab = () => new Error('attnlab: this lab was disposed; its async calls need a new init()');
const NORM_CHUNK = 4096; // GPT::kNormChunk
let nextKey = 1;

// port: the model's side ({ calls (gpt.js's engine calls), config, threads: { pool, closed(), stats, exchange },
// handle() → its engine handle or 0, shape() → its replicas' gptCreate descriptor, sync(tokens, targets, opts) →
// trainStep, busy, last, trainer }), kept by gpt.js.
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

// The model's training state across the workers (port.trainer), made at its first step, on the lab's workers then
// (pool.members: the model keeps them; if one dies, the next step makes the state again from the model).
function makeTrainer(port) {
  const { calls, threads } = port, workers = threads.pool.members, n = workers.length;
  const P = infoCount(calls, port.handle());
  const shared = threads.exchange !== 'message' && canShare();
  const floats = (count) => new Float32Array(shared ? new SharedArrayBuffer(4 * count) : new ArrayBuffer(4 * count));
  // Near-equal slices at multiples of the norm chunk (a model smaller than that has fewer owners).
  const cut = (i) => Math.min(P, Math.round((P * i) / n / NORM_CHUNK) * NORM_CHUNK);
  const slices = Array.from({ length: n }, (_, i) => ({ offset: cut(i), length: (i === n - 1 ? P : cut(i + 1)) - cut(i) }));
  const state = () => ({ params: floats(P), moment1: floats(P), moment2: floats(P) });
  return {
    key: nextKey++, shared, P, slices, n, workers,
    states: [state(), state()], current: 0, // the committed state, and the one a step writes
    steps: 0,
    grads: shared ? Array.from({ length: n }, () => floats(P)) : null, // each part's gradient
    seeded: new Array(n).fill(false), // per worker: it holds the replica
    holds: new Array(n).fill(-1), // per slot: the committed version its replica's weights are
    version: 0,
    fresh: false, // the workers' state is the model's (else: seed them from it at the next step)
    behind: false, // the model is behind the committed state (sync)
  };
}
function infoCount(calls, h) {
  const d = calls.on(calls.gptInfo, h);
  calls.gptInfo.call('GPT.trainStep', d);
  return d[calls.gptInfo.F.parameter_count];
}

/** Brings this thread's model up to the workers' committed state (before anything reads or changes it). */
export function syncModel(port) {
  const t = port.trainer;
  if (!t?.behind) return;
  const h = port.handle();
  if (!h) return;
  const { gptWriteState: write } = port.calls, s = t.states[t.current];
  ['params', 'moment1', 'moment2'].forEach((key, part) => {
    const d = port.calls.on(write, h);
    d[write.F.part] = part;
    if (part === 2) d[write.F.steps] = t.steps, d[write.F.steps + 1] = 1;
    write.call('GPT.sync', d, { data: s[key] });
  });
  t.behind = false;
}

/** The model changed on this thread (setWeights, trainStep): the workers take its state at the next step. */
export function modelChanged(port) {
  if (port.trainer) port.trainer.fresh = false;
}

/** The model is gone (port: anything with its { threads, trainer }): its replicas are freed. */
export function dropReplicas({ threads, trainer: t }) {
  if (!t || threads.closed()) return;
  const alive = t.workers.filter((w) => !w.dead);
  for (const job of threads.pool.runOn(alive, alive.map(() => ({ op: 'gptTrain', phase: 'drop', key: t.key })))) job.catch(() => {});
}

/** For tests: the worker of slice `slot` ends as if it had crashed. */
export function killWorker(port, slot) {
  const w = port?.trainer?.workers[slot];
  if (!w) throw new Error('GPT.killWorker: this model has no training state on workers (no trainStepAsync yet)');
  port.threads.pool.kill(w);
}

// The model's state (weights, moments, steps) into the committed state, then into every worker's replica.
async function seed(port, t, fn) {
  const { calls } = port, h = port.handle(), s = t.states[t.current];
  if (!t.fresh) {
    calls.gptParameters.call(fn, calls.on(calls.gptParameters, h), { parameters: s.params });
    for (const [part, key] of [[1, 'moment1'], [2, 'moment2']]) {
      const d = calls.on(calls.gptReadState, h);
      d[calls.gptReadState.F.part] = part;
      calls.gptReadState.call(fn, d, { data: s[key] });
      t.steps = d[calls.gptReadState.F.steps];
    }
    t.seeded.fill(false);
    t.version += 1, t.fresh = true, t.behind = false;
  }
  const { pool } = port.threads, shape = port.shape(), jobs = [];
  for (let slot = 0; slot < t.n; ++slot) {
    if (t.seeded[slot]) continue;
    jobs.push(on(pool, t, slot, { phase: 'seed', shape, ...s, steps: t.steps }).then(() => {
      t.seeded[slot] = true, t.holds[slot] = t.version;
    }));
  }
  await settle(jobs);
}

// A round's message to the trainer's worker in `slot`.
const on = (pool, t, slot, message) => pool.runOn([t.workers[slot]], [{ op: 'gptTrain', key: t.key, ...message }])[0];

// Every job settled; the first failure (in the order given) thrown.
async function settle(jobs) {
  const done = await Promise.allSettled(jobs);
  const failed = done.find((d) => d.status === 'rejected');
  if (failed) throw failed.reason;
  return done.map((d) => d.value);
}

async function inWorkers(port, { tokens, targets, opts }) {
  const fn = 'GPT.trainStep', { calls, threads, config } = port, { pool } = threads;
  const gone = () => (threads.closed() ? disposedLab() : new Error(`${fn}: this model was disposed during trainStepAsync; the step was not applied`));
  const live = () => {
    const h = port.handle();
    if (!h || threads.closed()) throw gone();
    return h;
  };
  live();
  if (port.trainer?.workers.some((w) => w.dead)) {
    // A worker of the model's died: the state is made again on the workers there are now, from the model's.
    syncModel(port);
    dropReplicas(port);
    port.trainer = null;
  }
  const t = (port.trainer ??= makeTrainer(port));
  Object.assign(port.replicas, { threads, trainer: t });
  // This thread's own time in the step (between its waits), for lab.trainTimes().
  const t0 = performance.now();
  let mainMs = 0, since = t0;
  const wait = async (promise) => {
    mainMs += performance.now() - since;
    try {
      return await promise;
    } finally {
      since = performance.now();
    }
  };
  try {
    await wait(seed(port, t, fn));
  } catch (e) {
    t.seeded.fill(false); // (a replica half written is written again)
    throw e;
  }
  live();
  const t1 = performance.now();
  // (the engine checked that the batch is whole sequences of the context)
  const seq = config.context, batch = tokens.length / seq;
  let counted = 0;
  for (const y of targets) counted += y >= 0;
  const committed = t.states[t.current], next = t.states[1 - t.current];

  // Round 1: near-equal runs of whole sequences, one per worker; a run without a counted target adds nothing.
  const partial = calls.gptPartialGradients, pd = partial.descriptor();
  pd[partial.F.normalizer] = counted;
  const sent = [], runs = Math.min(t.n, batch);
  for (let i = 0; i < runs; ++i) {
    const [from, to] = [Math.floor((batch * i) / runs) * seq, Math.floor((batch * (i + 1)) / runs) * seq];
    const part = targets.slice(from, to);
    if (!part.some((y) => y >= 0)) continue;
    // (a replica behind the committed weights gets them: in shared memory a view, otherwise a copy)
    const params = t.holds[i] === t.version ? undefined : committed.params;
    sent.push({ slot: i, job: on(pool, t, i, { phase: 'gradients', params, d: pd.slice(), tokens: tokens.slice(from, to), targets: part, into: t.grads?.[i] }) });
    if (params) t.holds[i] = t.version;
  }
  let values;
  try {
    values = await wait(settle(sent.map((s) => s.job)));
  } catch (e) {
    for (const { slot } of sent) t.holds[slot] = -1;
    throw e;
  }
  threads.stats.workerParts += sent.length;
  const t2 = performance.now();
  let h = live();
  let lossSum = 0, slowest = 0;
  for (const v of values) lossSum += v.lossSum, (slowest = Math.max(slowest, v.ms));
  // What every slice's update checks, on this thread: the options, the loss (named as trainStep names it), the norm.
  const upd = calls.gptUpdateSlice, check = (norm) => {
    const d = calls.on(upd, h);
    d[upd.F.dry_run] = 1, d[upd.F.loss_sum] = lossSum, d[upd.F.count] = counted, d[upd.F.norm] = norm;
    writeTrainOptions(fn, upd, d, opts);
    upd.call(fn, d);
    return d[upd.F.loss];
  };
  check(0);

  // Round 2: each slice's gradients summed by its owner.
  const owners = t.slices.map((s, slot) => ({ ...s, slot })).filter((s) => s.length > 0);
  const rd = calls.gptReduceSlice.descriptor(), RF = calls.gptReduceSlice.F;
  const sums = await wait(settle(owners.map(({ slot, offset, length }) => {
    rd[RF.offset] = offset, rd[RF.length] = length;
    const parts = t.shared
      ? sent.map((s) => t.grads[s.slot].subarray(offset, offset + length))
      : values.map((v) => v.grads.slice(offset, offset + length));
    return on(pool, t, slot, { phase: 'reduce', d: rd.slice(), parts });
  })));
  const t3 = performance.now();
  h = live();
  let squares = 0;
  for (const { sumSquares } of sums) squares += sumSquares;
  const loss = check(Math.sqrt(squares));

  // Round 3: each slice's update, into the state this step writes.
  const ud = upd.descriptor();
  writeTrainOptions(fn, upd, ud, opts);
  ud[upd.F.step] = t.steps + 1, ud[upd.F.norm] = Math.sqrt(squares);
  let updated;
  try {
    updated = await wait(settle(owners.map(({ slot, offset, length }) => {
      ud[upd.F.offset] = offset, ud[upd.F.length] = length;
      const into = t.shared ? { parameters: next.params.subarray(offset, offset + length), moment1: next.moment1.subarray(offset, offset + length), moment2: next.moment2.subarray(offset, offset + length) } : undefined;
      return on(pool, t, slot, { phase: 'update', d: ud.slice(), into, length });
    })));
  } catch (e) {
    t.fresh = false; // some replicas may have stepped: all start again from the model (which is synced first)
    syncModel(port);
    throw e;
  }
  if (!t.shared)
    owners.forEach(({ offset }, k) => {
      const v = updated[k];
      next.params.set(v.parameters, offset), next.moment1.set(v.moment1, offset), next.moment2.set(v.moment2, offset);
    });
  // Committed: the step's state is the model's from now on (this thread's copy takes it when read).
  t.current = 1 - t.current, t.steps += 1, t.version += 1, t.behind = true;
  for (const { slot } of owners) if (t.holds[slot] === t.version - 1 && t.slices[slot].length === t.P) t.holds[slot] = t.version;
  const t4 = performance.now(), { times } = threads, most = (list, key) => list.reduce((m, v) => Math.max(m, v[key]), 0);
  mainMs += t4 - since;
  times.steps += 1, times.serialMs += t4 - t0 - slowest, times.workerMs += slowest;
  const work = [mainMs, most(values, 'gatherMs'), most(sums, 'ms'), most(updated, 'ms')];
  times.serialWorkMs += work[0] + work[1] + work[2] + work[3];
  times.mainMs += work[0], times.gatherMs += work[1], times.sumMs += work[2], times.adamwMs += work[3];
  times.seedMs += t1 - t0, times.gradientsMs += t2 - t1, times.reduceMs += t3 - t2, times.updateMs += t4 - t3;
  return loss;
}
