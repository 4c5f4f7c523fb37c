// lab.attention: scaled dot-product attention over whole tensors (batch × heads, GQA, masks, windows, a KV cache…).
// This file checks types and unknown options and writes the call's descriptor; the engine infers the sizes left out,
// validates every size and value (its messages name the argument) and computes (src/wasm/attention_call.h).
import { engineCall, option } from './call.js';
import { checkKeys, describe, flag, int32s, isF32, layoutCode, nonEmpty, number, optionalNumber, optionalTensor, options, outBuffer, tensor } from './checks.js';
import { cacheOf } from './kv-cache.js';

export const ATTENTION_OPTIONS = ['q', 'k', 'v', 'cache', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout', 'causal',
  'window', 'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'returnScores', 'returnWeights', 'returnRawScores',
  'returnLse', 'out'];
const CAUSAL = new Map([[false, 0], [true, 1], ['bottom-right', 1], ['top-left', 2]]);
const SIZES = [['batch', 'batch'], ['heads', 'heads'], ['kvHeads', 'kv_heads'], ['nq', 'nq'], ['nk', 'nk'], ['dk', 'dk'], ['dv', 'dv']];
// The outputs a forward call may return: option, the engine's tensor, the result's field.
const RETURNS = [['returnScores', 'scores', 'return_scores'], ['returnWeights', 'weights', 'return_weights'],
  ['returnRawScores', 'rawScores', 'return_raw_scores'], ['returnLse', 'lse', 'return_lse']];

/**
 * The options lab.attention and lab.attentionBackward share, type-checked and written into descriptor `d` (field
 * indices F); returns the input tensors (given). The engine reads them (attention_call.h).
 */
export function readAttentionOptions(fn, opts, d, F, cache) {
  const given = { q: tensor(fn, 'q', opts.q) };
  given.k = cache ? optionalTensor(fn, 'k', opts.k) : tensor(fn, 'k', opts.k);
  given.v = cache ? optionalTensor(fn, 'v', opts.v) : tensor(fn, 'v', opts.v);
  if (opts.mask !== undefined && opts.mask !== null) {
    if (isF32(opts.mask)) given.mask = opts.mask;
    else if (opts.mask instanceof Uint8Array) given.boolMask = opts.mask;
    else throw new TypeError(`${fn}: mask must be a Float32Array (additive) or a Uint8Array (boolean), got ${describe(opts.mask)}`);
    // (an empty array would reach the engine as "no mask")
    if (opts.mask.length === 0) throw new RangeError(`${fn}: mask must not be empty, got length 0`);
  }
  if (opts.maskShape !== undefined && opts.maskShape !== null) {
    if (!Array.isArray(opts.maskShape)) throw new TypeError(`${fn}: maskShape must be an array of numbers, got ${describe(opts.maskShape)}`);
    opts.maskShape.forEach((x, i) => number(fn, `maskShape[${i}]`, x));
    d[F.mask_dims] = opts.maskShape.length; // (more than 4: the engine says so)
    for (let i = 0; i < Math.min(4, opts.maskShape.length); ++i) d[F[`mask_shape${i}`]] = opts.maskShape[i];
  }
  if (opts.keyLengths !== undefined && opts.keyLengths !== null) given.keyLengths = nonEmpty(fn, 'keyLengths', int32s(fn, 'keyLengths', opts.keyLengths));
  given.alibiSlopes = optionalTensor(fn, 'alibiSlopes', opts.alibiSlopes);
  d[F.layout] = opts.layout === undefined ? 0 : layoutCode(fn, 'layout', opts.layout);
  if (opts.causal !== undefined && !CAUSAL.has(opts.causal)) {
    const msg = `${fn}: causal must be true, false, 'bottom-right' or 'top-left', got ${describe(opts.causal)}`;
    throw typeof opts.causal === 'string' ? new RangeError(msg) : new TypeError(msg);
  }
  d[F.causal] = CAUSAL.get(opts.causal ?? false);
  d[F.window_left] = d[F.window_right] = -1;
  if (opts.window !== undefined && opts.window !== null) {
    if (!Array.isArray(opts.window) || opts.window.length !== 2)
      throw new TypeError(`${fn}: window must be an array [left, right], got ${describe(opts.window)}`);
    d[F.window_left] = number(fn, 'window[0]', opts.window[0]);
    d[F.window_right] = number(fn, 'window[1]', opts.window[1]);
  }
  option(d, F.scale, optionalNumber(fn, 'scale', opts.scale));
  option(d, F.softcap, optionalNumber(fn, 'softcap', opts.softcap));
  for (const [name, field] of SIZES) option(d, F[field], optionalNumber(fn, name, opts[name]));
  if (!cache && opts.dk === undefined && opts.nq === undefined && opts.nk === undefined)
    throw new TypeError(`${fn}: dk is required (or nq or nk, to infer it from q.length or k.length), got undefined`);
  d[F.cache] = cache ? cache.handle : 0;
  return given;
}

/** lab.attention in two steps: prepare (types, then the engine's check: sizes resolved, outputs sized) and run. */
export function attentionCall(m) {
  const op = engineCall(m, 'attention'), { F } = op;
  const finish = (p, o) => {
    const result = { output: o.out };
    for (const [, name] of RETURNS) if (o[name]) result[name] = o[name];
    return result;
  };
  return {
    op,
    prepare(opts) {
      const fn = 'attention';
      options(fn, opts);
      checkKeys(fn, opts, ATTENTION_OPTIONS);
      const cache = opts.cache === undefined || opts.cache === null ? undefined : cacheOf(fn, opts.cache, m);
      const d = op.descriptor();
      const given = readAttentionOptions(fn, opts, d, F, cache);
      for (const [key, , field] of RETURNS) d[F[field]] = flag(fn, key, opts[key]);
      given.out = outBuffer(fn, opts.out);
      op.check(fn, d, given);
      return { fn, d, given, cache };
    },
    run: (p) => finish(p, op.run(p.fn, p.d, p.given)),
    finish,
  };
}

