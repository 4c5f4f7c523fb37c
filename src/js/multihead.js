// lab.multiHeadAttention: projections, per-head attention, concatenation and W_o in one engine call. Types here;
// sizes (n or dModel inferred from x.length), lengths and values in the engine (src/wasm/multihead_bindings.cpp).
import { engineCall, option } from './call.js';
import { checkKeys, flag, number, optionalNumber, optionalTensor, options, outBuffer, tensor } from './checks.js';

export const MULTIHEAD_OPTIONS = ['x', 'n', 'dModel', 'heads', 'kvHeads', 'dk', 'dv', 'wq', 'wk', 'wv', 'wo', 'causal', 'scale', 'mask',
  'returnIntermediates', 'out'];

/** lab.multiHeadAttention in two steps: prepare (types, then the engine's check) and run. */
export function multiHeadCall(m) {
  const op = engineCall(m, 'multiHeadAttention'), { F } = op;
  const finish = ({ d }, o) => {
    const result = { output: o.out };
    if (!d[F.intermediates]) return result;
    Object.assign(result, { q: o.q, k: o.k, v: o.v, concat: o.concat });
    const sizes = { n: d[F.n], heads: d[F.heads], kvHeads: d[F.kv_heads], dk: d[F.dk], dv: d[F.dv] };
    result.heads = splitHeads(result, o.scores, o.weights, sizes);
    return result;
  };
  return {
    op,
    prepare(opts) {
      const fn = 'multiHeadAttention';
      options(fn, opts);
      checkKeys(fn, opts, MULTIHEAD_OPTIONS);
      const given = {
        x: tensor(fn, 'x', opts.x), wq: tensor(fn, 'wq', opts.wq), wk: tensor(fn, 'wk', opts.wk), wv: tensor(fn, 'wv', opts.wv),
        wo: tensor(fn, 'wo', opts.wo), mask: optionalTensor(fn, 'mask', opts.mask), out: outBuffer(fn, opts.out),
      };
      if (opts.dModel === undefined && opts.n === undefined)
        throw new TypeError(`${fn}: dModel is required (or n, to infer it from x.length), got undefined`);
      if (opts.heads === undefined) throw new TypeError(`${fn}: heads is required, got undefined`);
      const d = op.descriptor();
      option(d, F.n, optionalNumber(fn, 'n', opts.n));
      option(d, F.d_model, optionalNumber(fn, 'dModel', opts.dModel));
      d[F.heads] = number(fn, 'heads', opts.heads);
      option(d, F.kv_heads, optionalNumber(fn, 'kvHeads', opts.kvHeads));
      option(d, F.dk, optionalNumber(fn, 'dk', opts.dk));
      option(d, F.dv, optionalNumber(fn, 'dv', opts.dv));
      option(d, F.scale, optionalNumber(fn, 'scale', opts.scale));
      d[F.causal] = flag(fn, 'causal', opts.causal);
      d[F.intermediates] = flag(fn, 'returnIntermediates', opts.returnIntermediates);
      op.check(fn, d, given);
      return { fn, d, given };
    },
    run: (p) => finish(p, op.run(p.fn, p.d, p.given)),
    finish,
  };
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
