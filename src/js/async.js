// The async twins of the lab's functions (softmaxAsync, attentionAsync, …): the same options, the same result bit
// for bit, the same errors. Each twin first prepares the call on the calling thread exactly as the synchronous
// function does — types checked, then the engine's check, which validates every size and option and resolves what
// was left out — so a call the engine refuses is refused here, before any part exists, with the synchronous form's
// own error. With a pool (init({ threads: n }), n ≥ 2) a checked call is cut into parts whose results do not depend
// on how the work is cut — whole rows (softmax, softmaxBackward), blocks of 64 rows (matmul: the GEMM's own row
// block, so every row sees the same blocking; no last part of fewer than 4 rows), blocks of equal work over (batch
// item, K/V head, query rows) (attention: each worker gets only the rows and heads it reads, attention-parts.js) —
// each part a descriptor of the same engine call, which a worker runs and the calling thread merges. rope and
// multiHeadAttention go whole to one worker.
// Where the work ran is counted (stats, lab.threadStats()): parts a worker computed, calls kept on the calling thread
// (below the tuning thresholds, over a KV cache, threads: 1), and calls run again on the calling thread after a
// part failed or could not be posted. For a valid call nothing runs again. A part the engine refuses (a bad value:
// the check before the cut reads no values) fails the call: its message would name the part's own slice, so the
// whole call runs again here and throws what one call throws (softmax parts carry their offset, so their errors
// are the whole call's already). Of several failing parts, the first (in the order a whole call meets them) wins.
import { NotSent } from './threads.js';
import { attentionResult, backwardCalls, mergeAttentionPart, mergeBackward, partCalls, planAttention, planBackward, recycle } from './attention-parts.js';

// [begin, end) spans covering `total` in `parts` near-equal pieces whose boundaries are multiples of `align`.
function spans(total, parts, align = 1) {
  const blocks = Math.ceil(total / align);
  parts = Math.max(1, Math.min(parts, blocks));
  const list = [];
  for (let i = 0; i < parts; ++i) {
    const begin = Math.min(total, Math.floor((blocks * i) / parts) * align);
    const end = Math.min(total, Math.floor((blocks * (i + 1)) / parts) * align);
    list.push([begin, end]);
  }
  return list;
}

// Where cutting a call starts to pay: a part's round trip — slicing its inputs, posting them, copying them into
// the worker's memory, reading its rows out, merging them — costs time beyond its work, so calls below these sizes
// run on this thread. Chosen from the measurements in docs/performance.md#when-the-async-twins-cut-a-call.
// Exported for the tests, which lower them to send small calls through the workers.
export const tuning = {
  // softmax, softmaxBackward, in floats: row-wise softmax costs about what its copies to and from a worker cost, so
  // cut in two it was slower at every size measured; it is cut only above this, to keep the calling thread free of
  // a call that long.
  inlineFloats: 1 << 22,
  minPartFloats: 1 << 14,
  // matmul, in multiply-adds: about where two workers start to win.
  inlineMatmul: 4e8,
  // attention, in multiply-adds (32 more keys per row for its fixed costs): about where two workers start to win
  // in Node (Chromium's round trip costs about twice Node's).
  inlineWork: 1.2e7,
  minPartWork: 4e6,
};

/** A fresh count of where the async twins' work ran (lab.threadStats()). */
export function threadStats() {
  return { workerParts: 0, inlineCalls: 0, reruns: 0 };
}

/**
 * The twins over `calls` (the lab's prepare/run pairs, lab.js) and `pool` (undefined: every call on this thread),
 * counting into `stats`.
 */
export function makeAsync(calls, pool, stats) {
  // A call kept on this thread: the checked call, run here.
  const inline = (c, p) => {
    stats.inlineCalls += 1;
    return c.run(p);
  };
  if (!pool) {
    // threads: 1: the same calls on the calling thread, as promises.
    const here = (c) => async (...args) => inline(c, c.prepare(...args));
    return {
      softmaxAsync: here(calls.softmax),
      softmaxBackwardAsync: here(calls.softmaxBackward),
      attentionAsync: here(calls.attention),
      multiHeadAttentionAsync: here(calls.multiHeadAttention),
      matmulAsync: here(calls.matmul),
      ropeAsync: here(calls.rope),
      attentionBackwardAsync: here(calls.attentionBackward),
    };
  }
  const threads = pool.size;

  // Parts of one call (each a list of { d, given } descriptors of engine call `op`, with the buffers to transfer),
  // run by the workers. Resolves with each part's results, or, when a part failed, with { failed } (the first
  // failure in part order; a part that could not be posted is a NotSent). dispose() during the call rejects.
  // `took(p, value)` sees each part's results as they arrive.
  async function inWorkers(op, fn, parts, took) {
    const runs = parts.map(({ calls: list, transfer }, p) => {
      const run = pool.run({ op: 'call', name: op.name, fn, calls: list }, transfer).then((value) => {
        stats.workerParts += 1;
        took?.(p, value);
        return value;
      });
      return run;
    });
    const done = await Promise.allSettled(runs);
    const failed = done.find((d) => d.status === 'rejected');
    if (!failed) return { values: done.map((d) => d.value) };
    if (pool.disposed) throw failed.reason; // dispose() during the call: it rejects, as every twin does
    return { failed: failed.reason };
  }

  // The whole call again on this thread, after a part failed: its result, or the error one call throws.
  const rerun = (c, args) => {
    stats.reruns += 1;
    return c.run(c.prepare(...args));
  };

  // The inputs of a sub-call, sliced out of the whole call's, with their buffers to transfer.
  const own = (given) => ({ given, transfer: Object.values(given).map((a) => a.buffer) });

  async function softmaxAsync(x, opts = {}) {
    const c = calls.softmax, p = c.prepare(x, opts);
    if (x.length < tuning.inlineFloats) return inline(c, p);
    const { F } = c.op, cols = p.d[F.cols], rows = x.length / cols;
    const parts = spans(rows, Math.min(threads, Math.ceil(x.length / tuning.minPartFloats))).map(([r0, r1]) => {
      const d = p.d.slice();
      d[F.first_index] = r0 * cols; // a bad value is named x[first_index + …], as in one whole call
      const { given, transfer } = own({ x: x.slice(r0 * cols, r1 * cols) });
      return { calls: [{ d, given }], transfer };
    });
    const { values, failed } = await inWorkers(c.op, p.fn, parts);
    if (failed && !(failed instanceof NotSent)) throw failed; // a part's error names x[i] as the whole call does
    if (failed) return rerun(c, [x, opts]);
    const result = p.given.out ?? new Float32Array(x.length);
    let at = 0;
    for (const v of values) result.set(v.values[0].out, at), (at += v.values[0].out.length);
    return result;
  }

  async function softmaxBackwardAsync(opts) {
    const c = calls.softmaxBackward, p = c.prepare(opts), { y, dy } = p.given;
    if (y.length < tuning.inlineFloats) return inline(c, p);
    const cols = p.d[c.op.F.cols], rows = y.length / cols;
    const parts = spans(rows, Math.min(threads, Math.ceil(y.length / tuning.minPartFloats))).map(([r0, r1]) => {
      const { given, transfer } = own({ y: y.slice(r0 * cols, r1 * cols), dy: dy.slice(r0 * cols, r1 * cols) });
      return { calls: [{ d: p.d.slice(), given }], transfer };
    });
    const { values, failed } = await inWorkers(c.op, p.fn, parts);
    if (failed) return rerun(c, [opts]); // a part names y[i] from its own first row: the whole call names it as one call
    const dx = new Float32Array(y.length);
    let at = 0;
    for (const v of values) dx.set(v.values[0].dx, at), (at += v.values[0].dx.length);
    return dx;
  }

  async function matmulAsync(a, b, opts) {
    const c = calls.matmul, p = c.prepare(a, b, opts), { F } = c.op;
    const rows = p.d[F.m], depth = p.d[F.k], cols = p.d[F.n];
    if (rows * depth * cols < tuning.inlineMatmul) return inline(c, p);
    const perRow = depth * (cols + 1);
    const cut = spans(rows, Math.min(threads, Math.ceil((rows * perRow) / tuning.minPartFloats)), 64);
    // A last part of 1–3 rows goes with the part before: alone, fewer rows than the GEMM's 4-row panel take the
    // engine's few-row path (gemm_blocked.cpp: a decode step's), whose sums round unlike those rows' in one call.
    if (cut.length > 1 && cut.at(-1)[1] - cut.at(-1)[0] < 4) cut.at(-2)[1] = cut.pop()[1];
    const parts = cut.map(([r0, r1]) => {
      const d = p.d.slice();
      d[F.m] = r1 - r0;
      const rowsA = a.slice(r0 * depth, r1 * depth);
      return { calls: [{ d, given: { a: rowsA, b } }], transfer: [rowsA.buffer] };
    });
    const { values, failed } = await inWorkers(c.op, p.fn, parts);
    if (failed) return rerun(c, [a, b, opts]); // the whole call's own error
    const result = p.given.out ?? new Float32Array(rows * cols);
    let at = 0;
    for (const v of values) result.set(v.values[0].out, at), (at += v.values[0].out.length);
    return result;
  }

  async function attentionAsync(opts) {
    const c = calls.attention, p = c.prepare(opts);
    // A cache lives in this thread's module: such a call runs here, as do calls too small to be worth a part.
    if (p.cache) return inline(c, p);
    const plan = planAttention(p, c.op.F, threads, tuning.minPartWork);
    if (plan.work < tuning.inlineWork) return inline(c, p);
    // Without `out`, each part is merged as it arrives, while the others still compute; `out` is written only
    // once every part succeeded.
    const early = plan.out === undefined;
    let result;
    const take = (part, v) => {
      mergeAttentionPart(plan, (result ??= attentionResult(plan)), part, v.values);
      recycle([...v.spare.flat(), ...v.values.flatMap(Object.values)]);
    };
    const { values, failed } = await inWorkers(c.op, p.fn, plan.plan.map((rects) => partCalls(plan, rects)), early ? take : undefined);
    if (failed) return rerun(c, [opts]); // a part refused its rows: the whole call names the error as one call would
    if (!early) values.forEach((v, part) => take(part, v));
    return result;
  }

  async function attentionBackwardAsync(opts) {
    const c = calls.attentionBackward, p = c.prepare(opts);
    const plan = planBackward(p, c.op.F, threads, tuning.minPartWork);
    if (plan.work < tuning.inlineWork) return inline(c, p);
    const { values, failed } = await inWorkers(c.op, p.fn, plan.plan.map((rects) => backwardCalls(plan, rects)));
    if (failed) return rerun(c, [opts]); // a part refused: the whole call names the error
    const result = mergeBackward(plan, values.map((v) => v.values));
    recycle(values.flatMap((v) => [...v.spare.flat(), ...v.values.flatMap(Object.values)]));
    return result;
  }

  // A whole call in one worker: frees this thread, and concurrent calls spread over the pool. Only the inputs are
  // posted; the caller's `out` is filled here once the call succeeded. The worker runs the very descriptor checked
  // here, so an error it meets is the one a call on this thread meets.
  function whole(c) {
    return async (...args) => {
      const p = c.prepare(...args);
      p.d = p.d.slice(); // (kept until the call is done: the op's descriptor is scratch)
      const part = { calls: [{ d: p.d, given: c.op.inputs(p.given) }], transfer: [] };
      const { values, failed } = await inWorkers(c.op, p.fn, [part]);
      if (failed && !(failed instanceof NotSent)) throw failed;
      if (failed) return rerun(c, args);
      return c.finish(p, c.op.deliver(values[0].values[0], p.given));
    };
  }

  return {
    softmaxAsync,
    softmaxBackwardAsync,
    attentionAsync,
    multiHeadAttentionAsync: whole(calls.multiHeadAttention),
    matmulAsync,
    ropeAsync: whole(calls.rope),
    attentionBackwardAsync,
  };
}
