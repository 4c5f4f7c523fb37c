// The async twins of the lab's functions (softmaxAsync, attentionAsync, …): the same options, the same result
// bit for bit, the same errors. With a pool (init({ threads: n }), n ≥ 2) each call is cut into parts whose
// results do not depend on how the work is cut — whole rows (softmax, softmaxBackward), blocks of 64 rows
// (matmul: the GEMM's own row block, so every row sees the same blocking), (batch item, K/V head) pairs
// (attention: every worker gets the whole call, validates all of it and computes only its pairs) — sent to the
// workers and merged here. Arguments that would be refused, or cannot be posted to a worker, go through the
// synchronous function on this thread, so the error is its own. Errors raised in a worker come back as the
// same class with the same message; of several failing parts, the first (in the order a whole call would
// meet them) wins.
import { checkKeys, flag, isF32, number, options, outBuffer, quotient, size, tensor, length, positive } from './checks.js';
import { NotSent } from './threads.js';

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

// Work below this many floats is not cut further (a part's round trip costs tens of microseconds).
const MIN_PART_FLOATS = 1 << 14;

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
    const rows = x.length / cols;
    const parts = spans(rows, Math.min(threads, Math.ceil(x.length / MIN_PART_FLOATS))).map(([r0, r1]) => {
      const chunk = x.slice(r0 * cols, r1 * cols);
      return pool.run({ op: 'softmax', x: chunk, cols, temperature, log, offset: r0 * cols }, [chunk.buffer]);
    });
    const { values } = await settle(parts);
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
    const rows = y.length / cols;
    const parts = spans(rows, Math.min(threads, Math.ceil(y.length / MIN_PART_FLOATS))).map(([r0, r1]) => {
      const ys = y.slice(r0 * cols, r1 * cols), dys = dy.slice(r0 * cols, r1 * cols);
      return pool.run({ op: 'softmaxBackward', y: ys, dy: dys, cols, temperature, log }, [ys.buffer, dys.buffer]);
    });
    let values;
    try {
      ({ values } = await settle(parts));
    } catch {
      // A part names y[i] from its own first row: the whole call on this thread names it as one call would.
      return lab.softmaxBackward(opts);
    }
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
    const perRow = depth * (cols + 1);
    const parts = spans(rows, Math.min(threads, Math.ceil((rows * perRow) / MIN_PART_FLOATS)), 64).map(([r0, r1]) => {
      const rowsA = a.slice(r0 * depth, r1 * depth);
      return pool.run({ op: 'matmul', a: rowsA, b, m: r1 - r0, k: depth, n: cols, transposeB }, [rowsA.buffer]);
    });
    let values;
    try {
      ({ values } = await settle(parts, () => lab.matmul(a, b, opts)));
    } catch {
      return lab.matmul(a, b, opts); // the whole call's own error
    }
    if (!values) return lab.matmul(a, b, opts);
    const result = out ?? new Float32Array(rows * cols);
    let at = 0;
    for (const v of values) result.set(v, at), (at += v.length);
    return result;
  }

  async function attentionAsync(opts) {
    const plain = opts !== null && typeof opts === 'object';
    // A KV cache lives in this thread's module: such calls run here (a step's attention over a cache is small).
    if (!plain || (opts.cache !== undefined && opts.cache !== null)) return lab.attention(opts);
    const { batch = 1, heads = 1 } = opts;
    const kvHeads = opts.kvHeads ?? heads;
    const isSize = (v) => Number.isInteger(v) && v >= 1 && v <= 0x7fffffff;
    const out = opts.out ?? undefined;
    if (!isSize(batch) || !isSize(heads) || !isSize(kvHeads) || (out !== undefined && !isF32(out))) return lab.attention(opts);
    const items = batch * kvHeads;
    const qLength = isF32(opts.q) ? opts.q.length : 0;
    const options = out === undefined ? opts : { ...opts, out: undefined };
    const outLength = out?.length;
    const parts = spans(items, Math.min(threads, Math.max(1, Math.ceil((qLength * 4) / MIN_PART_FLOATS)))).map(([begin, end]) =>
      pool.run({ op: 'attention', options, begin, end, outLength }),
    );
    const { values, fallback } = await settle(parts, () => lab.attention(opts));
    if (!values) return fallback;
    const ranges = spans(items, parts.length);
    const { result, sizes } = values[0];
    const { nq, layout } = sizes;
    const group = heads / kvHeads, bh = batch * heads;
    for (const [i, { result: part }] of values.entries()) {
      const [begin, end] = ranges[i];
      for (const key of Object.keys(result)) {
        const source = part[key];
        const target = key === 'output' ? out ?? result.output : result[key];
        if (source === target) continue;
        if (key === 'output' && layout === 1) {
          // [batch, nq, heads, dv]: the item's heads are a run of each row.
          const dv = source.length / (bh * nq);
          for (let item = begin; item < end; ++item) {
            const b = Math.floor(item / kvHeads), h0 = (item % kvHeads) * group;
            for (let r = 0; r < nq; ++r) {
              const at = ((b * nq + r) * heads + h0) * dv;
              target.set(source.subarray(at, at + group * dv), at);
            }
          }
        } else {
          // [batch, heads, …]: items [begin, end) are one run of whole heads.
          const per = source.length / bh;
          target.set(source.subarray(begin * group * per, end * group * per), begin * group * per);
        }
      }
    }
    if (out !== undefined) result.output = out;
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
    attentionBackwardAsync: whole('attentionBackward', lab.attentionBackward),
  };
}
