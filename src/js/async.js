// The async twins of the lab's functions (softmaxAsync, attentionAsync, …): the same options, the same result
// bit for bit, the same errors. With a pool (init({ threads: n }), n ≥ 2) each call is cut into parts whose
// results do not depend on how the work is cut — whole rows (softmax, softmaxBackward), blocks of 64 rows
// (matmul: the GEMM's own row block, so every row sees the same blocking), blocks of equal work over (batch
// item, K/V head, query rows) (attention: each worker gets only the rows and heads it reads, attention-parts.js)
// — sent to the workers and merged here. Arguments that would be refused, or cannot be posted to a worker, go
// through the synchronous function on this thread, so the error is its own (so does an attention call a part
// of which fails: its parts are sub-calls, whose messages would name their own slices). Errors raised in a worker come back as the
// same class with the same message; of several failing parts, the first (in the order a whole call would
// meet them) wins.
import { checkKeys, flag, number, options, outBuffer, quotient, size, tensor, length, positive } from './checks.js';
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

// Settles every part; throws the first failure in part order (a NotSent one: `fallback()` answers instead).
async function settle(parts, fallback) {
  const done = await Promise.allSettled(parts);
  const failed = done.find((d) => d.status === 'rejected');
  if (failed) {
    if (failed.reason instanceof NotSent) return { fallback: fallback() };
    throw failed.reason;
  }
  return { values: done.map((d) => d.value) };
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

export function makeAsync(lab, pool) {
  if (!pool) {
    // threads: 1: the same functions on the calling thread, as promises.
    const wrap = (f) => async (...args) => f(...args);
    return {
      softmaxAsync: wrap(lab.softmax),
      softmaxBackwardAsync: wrap(lab.softmaxBackward),
      attentionAsync: wrap(lab.attention),
      multiHeadAttentionAsync: wrap(lab.multiHeadAttention),
      matmulAsync: wrap(lab.matmul),
      ropeAsync: wrap(lab.rope),
      attentionBackwardAsync: wrap(lab.attentionBackward),
    };
  }
  const threads = pool.size;

  async function softmaxAsync(x, opts = {}) {
    const fn = 'softmax';
    let cols, temperature, log, out;
    try {
      tensor(fn, 'x', x);
      options(fn, opts);
      checkKeys(fn, opts, ['cols', 'temperature', 'log', 'out']);
      cols = opts.cols === undefined ? x.length : size(fn, 'cols', opts.cols);
      quotient(fn, 'x', x.length, cols, 'cols');
      temperature = opts.temperature === undefined ? 1 : number(fn, 'temperature', opts.temperature);
      log = flag(fn, 'log', opts.log);
      out = outBuffer(fn, opts.out, x.length, 'x.length');
    } catch {
      return lab.softmax(x, opts); // throws the synchronous form's own error
    }
    if (x.length < tuning.inlineFloats) return lab.softmax(x, opts);
    const rows = x.length / cols;
    const parts = spans(rows, Math.min(threads, Math.ceil(x.length / tuning.minPartFloats))).map(([r0, r1]) => {
      const chunk = x.slice(r0 * cols, r1 * cols);
      return pool.run({ op: 'softmax', x: chunk, cols, temperature, log, offset: r0 * cols }, [chunk.buffer]);
    });
    // A part that could not be posted: the whole call here.
    const { values, fallback } = await settle(parts, () => lab.softmax(x, opts));
    if (!values) return fallback;
    const result = out ?? new Float32Array(x.length);
    let at = 0;
    for (const v of values) result.set(v, at), (at += v.length);
    return result;
  }

  async function softmaxBackwardAsync(opts) {
    const fn = 'softmaxBackward';
    let y, dy, cols, temperature, log;
    try {
      options(fn, opts);
      checkKeys(fn, opts, ['y', 'dy', 'cols', 'temperature', 'log']);
      y = tensor(fn, 'y', opts.y), dy = tensor(fn, 'dy', opts.dy);
      cols = opts.cols === undefined ? y.length : size(fn, 'cols', opts.cols);
      quotient(fn, 'y', y.length, cols, 'cols');
      length(fn, 'dy', dy, y.length, 'y.length');
      temperature = opts.temperature === undefined ? 1 : positive(fn, 'temperature', opts.temperature);
      log = flag(fn, 'log', opts.log);
    } catch {
      return lab.softmaxBackward(opts);
    }
    if (y.length < tuning.inlineFloats) return lab.softmaxBackward(opts);
    const rows = y.length / cols;
    const parts = spans(rows, Math.min(threads, Math.ceil(y.length / tuning.minPartFloats))).map(([r0, r1]) => {
      const ys = y.slice(r0 * cols, r1 * cols), dys = dy.slice(r0 * cols, r1 * cols);
      return pool.run({ op: 'softmaxBackward', y: ys, dy: dys, cols, temperature, log }, [ys.buffer, dys.buffer]);
    });
    let values;
    try {
      ({ values } = await settle(parts, () => null));
    } catch (e) {
      if (pool.disposed) throw e; // dispose() during the call: it rejects, as every twin does
      // A part names y[i] from its own first row: the whole call on this thread names it as one call would.
      return lab.softmaxBackward(opts);
    }
    if (!values) return lab.softmaxBackward(opts); // a part that could not be posted
    const dx = new Float32Array(y.length);
    let at = 0;
    for (const v of values) dx.set(v, at), (at += v.length);
    return dx;
  }

  async function matmulAsync(a, b, opts) {
    const fn = 'matmul';
    let rows, depth, cols, transposeB, out;
    try {
      tensor(fn, 'a', a), tensor(fn, 'b', b);
      options(fn, opts);
      checkKeys(fn, opts, ['m', 'k', 'n', 'transposeB', 'out']);
      rows = size(fn, 'm', opts.m), depth = size(fn, 'k', opts.k), cols = size(fn, 'n', opts.n);
      transposeB = flag(fn, 'transposeB', opts.transposeB);
      if (a.length !== rows * depth || b.length !== depth * cols) throw new RangeError();
      out = outBuffer(fn, opts.out, rows * cols, 'm·n');
    } catch {
      return lab.matmul(a, b, opts);
    }
    if (rows * depth * cols < tuning.inlineMatmul) return lab.matmul(a, b, opts);
    const perRow = depth * (cols + 1);
    const parts = spans(rows, Math.min(threads, Math.ceil((rows * perRow) / tuning.minPartFloats)), 64).map(([r0, r1]) => {
      const rowsA = a.slice(r0 * depth, r1 * depth);
      return pool.run({ op: 'matmul', a: rowsA, b, m: r1 - r0, k: depth, n: cols, transposeB }, [rowsA.buffer]);
    });
    let values;
    try {
      ({ values } = await settle(parts, () => lab.matmul(a, b, opts)));
    } catch (e) {
      if (pool.disposed) throw e; // dispose() during the call: it rejects, as every twin does
      return lab.matmul(a, b, opts); // the whole call's own error
    }
    if (!values) return lab.matmul(a, b, opts);
    const result = out ?? new Float32Array(rows * cols);
    let at = 0;
    for (const v of values) result.set(v, at), (at += v.length);
    return result;
  }

  async function attentionAsync(opts) {
    // Not for splitting (a cache lives in this thread's module; anything the synchronous form refuses): run here.
    const plan = planAttention(opts, threads, tuning.minPartWork);
    if (!plan || plan.work < tuning.inlineWork) return lab.attention(opts);
    // Without `out`, each part is merged as it arrives, while the others still compute; `out` is written only
    // once every part succeeded.
    const early = plan.out === undefined;
    let result;
    const take = (p, v) => {
      mergeAttentionPart(plan, (result ??= attentionResult(plan)), p, v.values);
      recycle([...v.spare.flat(), ...v.values.flatMap(Object.values)]);
    };
    const parts = plan.plan.map((rects, p) => {
      const { calls, transfer } = partCalls(plan, rects, opts);
      const run = pool.run({ op: 'attentionParts', calls }, transfer);
      return early ? run.then((v) => take(p, v)) : run;
    });
    let values;
    try {
      ({ values } = await settle(parts, () => null));
    } catch (e) {
      if (pool.disposed) throw e; // dispose() during the call: it rejects, as every twin does
      values = undefined; // a part refused its rows: the whole call here names the error as one call would
    }
    if (!values) return lab.attention(opts);
    if (!early) values.forEach((v, p) => take(p, v));
    return result;
  }

  async function attentionBackwardAsync(opts) {
    const plan = planBackward(opts, threads, tuning.minPartWork);
    if (!plan) return whole('attentionBackward', lab.attentionBackward)(opts); // (a call to refuse: its own error)
    if (plan.work < tuning.inlineWork) return lab.attentionBackward(opts);
    const parts = plan.plan.map((rects) => {
      const { calls, transfer } = backwardCalls(plan, rects, opts);
      return pool.run({ op: 'attentionBackwardParts', calls }, transfer);
    });
    let values;
    try {
      ({ values } = await settle(parts, () => null));
    } catch (e) {
      if (pool.disposed) throw e;
      values = undefined;
    }
    if (!values) return lab.attentionBackward(opts); // a part refused: the whole call names the error
    const result = mergeBackward(plan, values.map((v) => v.values));
    recycle(values.flatMap((v) => [...v.spare.flat(), ...v.values.flatMap(Object.values)]));
    return result;
  }

  // A whole call in one worker: frees this thread, and concurrent calls spread over the pool.
  function whole(name, sync) {
    return async (...args) => {
      try {
        const value = await pool.run({ op: 'call', name, args });
        const out = name === 'rope' ? args[1]?.out : args[0]?.out;
        if (out === undefined || out === null) return value;
        if (name === 'rope') return out.set(value), out;
        if (name === 'attentionBackward') {
          // out: { dq?, dk?, dv? }, filled only once the whole call succeeded.
          for (const key of ['dq', 'dk', 'dv']) if (out[key]) out[key].set(value[key]), (value[key] = out[key]);
          return value;
        }
        out.set(value.output);
        value.output = out;
        return value;
      } catch (e) {
        if (e instanceof NotSent) return sync(...args);
        throw e;
      }
    };
  }

  return {
    softmaxAsync,
    softmaxBackwardAsync,
    attentionAsync,
    multiHeadAttentionAsync: whole('multiHeadAttention', lab.multiHeadAttention),
    matmulAsync,
    ropeAsync: whole('rope', lab.rope),
    attentionBackwardAsync,
  };
}
