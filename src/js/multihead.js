// lab.multiHeadAttention: projections, per-head attention, concatenation and W_o in one engine call.
import { checkKeys, flag, length, optionalTensor, options, outBuffer, number, quotient, size, tensor } from './checks.js';
import { arena, check } from './memory.js';

export function makeMultiHeadAttention(m) {
  return function multiHeadAttention(opts) {
    const fn = 'multiHeadAttention';
    options(fn, opts);
    checkKeys(fn, opts, ['x', 'n', 'dModel', 'heads', 'kvHeads', 'dk', 'dv', 'wq', 'wk', 'wv', 'wo', 'causal', 'scale', 'mask', 'returnIntermediates', 'out']);
    const x = tensor(fn, 'x', opts.x);
    const wq = tensor(fn, 'wq', opts.wq), wk = tensor(fn, 'wk', opts.wk), wv = tensor(fn, 'wv', opts.wv), wo = tensor(fn, 'wo', opts.wo);
    const mask = optionalTensor(fn, 'mask', opts.mask);
    let { n, dModel } = opts;
    if (n !== undefined) size(fn, 'n', n);
    if (dModel !== undefined) size(fn, 'dModel', dModel);
    else if (n !== undefined) dModel = quotient(fn, 'x', x.length, n, 'n');
    else throw new TypeError(`${fn}: dModel is required (or n, to infer it from x.length), got undefined`);
    n ??= quotient(fn, 'x', x.length, dModel, 'dModel');
    if (opts.heads === undefined) throw new TypeError(`${fn}: heads is required, got undefined`);
    const heads = size(fn, 'heads', opts.heads);
    const kvHeads = opts.kvHeads === undefined ? heads : size(fn, 'kvHeads', opts.kvHeads);
    if (kvHeads > heads || heads % kvHeads !== 0)
      throw new RangeError(`${fn}: kvHeads must divide heads = ${heads}, got ${kvHeads}`);
    const perHead = (name) => {
      if (opts[name] !== undefined) return size(fn, name, opts[name]);
      if (dModel % heads === 0) return dModel / heads;
      throw new RangeError(`${fn}: ${name} must be given when dModel is not a multiple of heads (it defaults to dModel / heads), got dModel = ${dModel}, heads = ${heads}`);
    };
    const dk = perHead('dk'), dv = perHead('dv');
    length(fn, 'x', x, n * dModel, `n·dModel = ${n}·${dModel}`);
    length(fn, 'wq', wq, dModel * heads * dk, `dModel·heads·dk = ${dModel}·${heads}·${dk}`);
    length(fn, 'wk', wk, dModel * kvHeads * dk, `dModel·kvHeads·dk = ${dModel}·${kvHeads}·${dk}`);
    length(fn, 'wv', wv, dModel * kvHeads * dv, `dModel·kvHeads·dv = ${dModel}·${kvHeads}·${dv}`);
    length(fn, 'wo', wo, heads * dv * dModel, `heads·dv·dModel = ${heads}·${dv}·${dModel}`);
    if (mask) length(fn, 'mask', mask, n * n, `n·n = ${n}·${n}`);
    const scale = opts.scale === undefined ? undefined : number(fn, 'scale', opts.scale);
    const causal = flag(fn, 'causal', opts.causal);
    const inter = flag(fn, 'returnIntermediates', opts.returnIntermediates);
    const out = outBuffer(fn, opts.out, n * dModel, `n·dModel = ${n}·${dModel}`);
  
    const qLen = n * heads * dk, kLen = n * kvHeads * dk, vLen = n * kvHeads * dv, cLen = n * heads * dv, hnn = heads * n * n;
    const a = arena(m, fn, [
      { name: 'x', length: x.length, data: x },
      { name: 'wq', length: wq.length, data: wq },
      { name: 'wk', length: wk.length, data: wk },
      { name: 'wv', length: wv.length, data: wv },
      { name: 'wo', length: wo.length, data: wo },
      { name: 'mask', length: mask ? mask.length : 0, data: mask },
      { name: 'output', length: n * dModel },
      { name: 'q', length: inter ? qLen : 0 },
      { name: 'k', length: inter ? kLen : 0 },
      { name: 'v', length: inter ? vLen : 0 },
      { name: 'scores', length: inter ? hnn : 0 },
      { name: 'weights', length: inter ? hnn : 0 },
      { name: 'concat', length: inter ? cLen : 0 },
    ]);
    let result;
    try {
      check(fn, m.multiHeadAttention(n, dModel, heads, kvHeads, dk, dv, scale !== undefined, scale ?? 0, causal,
        a.at(0), x.length, a.at(1), wq.length, a.at(2), wk.length, a.at(3), wv.length, a.at(4), wo.length,
        a.at(5), mask ? mask.length : 0, a.at(6), n * dModel,
        a.at(7), inter ? qLen : 0, a.at(8), inter ? kLen : 0, a.at(9), inter ? vLen : 0,
        a.at(10), a.at(11), inter ? hnn : 0, a.at(12), inter ? cLen : 0));
      result = { output: a.readInto(6, out) };
      if (!inter) return result;
      Object.assign(result, { q: a.read(7), k: a.read(8), v: a.read(9), concat: a.read(12) });
      result.heads = splitHeads(result, a.read(10), a.read(11), { n, heads, kvHeads, dk, dv });
      return result;
    } finally {
      a.free();
    }
  }
}

// Column block `index` (width w) of a row-major [rows × cols] matrix, as its own [rows × w] matrix.
function columns(src, rows, cols, index, w) {
  const out = new Float32Array(rows * w);
  for (let r = 0; r < rows; ++r) out.set(src.subarray(r * cols + index * w, r * cols + index * w + w), r * w);
  return out;
}

// Per-head views of the engine's stacked intermediates; query head h reads K/V head h / (heads / kvHeads).
function splitHeads(r, scores, weights, { n, heads, kvHeads, dk, dv }) {
  const group = heads / kvHeads;
  const list = [];
  for (let h = 0; h < heads; ++h) {
    const g = Math.floor(h / group);
    list.push({
      q: columns(r.q, n, heads * dk, h, dk),
      k: columns(r.k, n, kvHeads * dk, g, dk),
      v: columns(r.v, n, kvHeads * dv, g, dv),
      scores: scores.slice(h * n * n, (h + 1) * n * n),
      weights: weights.slice(h * n * n, (h + 1) * n * n),
      output: columns(r.concat, n, heads * dv, h, dv),
    });
  }
  return list;
}
