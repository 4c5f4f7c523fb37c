// The training loop: seeded batches from the training stream, the recipe's schedule, GPT.trainStepAsync on the
// recipe's workers. Records the batch losses, the held-out loss and a hash of the weights as it goes.
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { lrAt, rng } from './recipe.mjs';
import { windowLoss } from './evaluate.mjs';

/** sha256 of every weight's float32 bytes, by name in sorted order. */
export function weightsHash(gpt) {
  const w = gpt.getWeights(), h = createHash('sha256');
  for (const name of Object.keys(w).sort()) h.update(name).update(new Uint8Array(w[name].buffer, w[name].byteOffset, w[name].byteLength));
  return h.digest('hex');
}

/** Batches of `batch` sequences of `context` tokens (and their next tokens) at seeded offsets into `stream`. */
export function batches(stream, context, batch, seed) {
  const r = rng(seed), span = stream.length - context - 1;
  return () => {
    const tokens = new Int32Array(batch * context), targets = new Int32Array(batch * context);
    for (let b = 0; b < batch; ++b) {
      const at = Math.floor(r() * span);
      tokens.set(stream.subarray(at, at + context), b * context);
      targets.set(stream.subarray(at + 1, at + context + 1), b * context);
    }
    return { tokens, targets };
  };
}

/**
 * Trains `gpt` for `train.steps` steps (or the first `until`). `evalWindows`: held-out windows for the periodic
 * held-out loss; `hashAt`: more steps after which the weights' hash is recorded. `say(line)` gets progress lines.
 * Returns the record: every batch loss, their means over each logEvery steps, held-out losses, weight hashes,
 * and the machine's load average at each log line.
 */
export async function train(gpt, stream, evalWindows, train, { until = train.steps, hashAt = [], say = () => {} } = {}) {
  const next = batches(stream, gpt.config.context, train.batch, train.batchSeed);
  const record = { losses: [], lossCurve: [], heldOut: [], hashes: {}, loads: [] };
  const opts = { weightDecay: train.weightDecay, beta1: train.beta1, beta2: train.beta2, eps: train.eps, gradClip: train.gradClip };
  const t0 = performance.now(), c0 = process.cpuUsage();
  for (let s = 0; s < until; ++s) {
    const { tokens, targets } = next();
    const loss = await gpt.trainStepAsync(tokens, targets, { ...opts, lr: lrAt(s, train) });
    record.losses.push(loss);
    const done = s + 1;
    if (done % train.evalEvery === 0 || done === train.steps) {
      record.heldOut.push([done, windowLoss(gpt, evalWindows)]);
      record.hashes[done] = weightsHash(gpt);
    } else if (hashAt.includes(done)) record.hashes[done] = weightsHash(gpt);
    if (done % train.logEvery === 0 || done === until) {
      const wall = (performance.now() - t0) / 1000, c = process.cpuUsage(c0), cpu = (c.user + c.system) / 1e6;
      const avg = record.losses.slice(-train.logEvery).reduce((a, b) => a + b, 0) / Math.min(train.logEvery, record.losses.length);
      record.lossCurve.push([done, avg]);
      record.loads.push(loadavg()[0]);
      const held = record.heldOut.at(-1)?.[0] === done ? `, held-out ${record.heldOut.at(-1)[1].toFixed(4)}` : '';
      say(`step ${done}/${train.steps}: loss ${avg.toFixed(4)}${held}, lr ${lrAt(s, train).toExponential(2)}, ${(done / wall).toFixed(2)} steps/s (${(cpu / done).toFixed(2)} cpu-s/step), ${(wall / 60).toFixed(1)} min`);
    }
  }
  record.seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  record.cpuSeconds = (c.user + c.system) / 1e6;
  return record;
}
