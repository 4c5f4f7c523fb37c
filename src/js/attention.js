// lab.attention: scaled dot-product attention over whole tensors (batch × heads, GQA, masks, windows, a KV cache…).
// This file checks types and unknown options, infers the sizes left out, moves the tensors into wasm memory and
// writes one call descriptor there; the engine validates every size and value (its messages name the argument).
import { checkKeys, describe, flag, int32s, isF32, layoutCode, number, optionalTensor, options, tensor } from './checks.js';
import { cacheOf } from './kv-cache.js';
import { arena, checkKind } from './memory.js';

const KEYS = ['q', 'k', 'v', 'cache', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout', 'causal', 'window',
  'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'returnScores', 'returnWeights', 'returnRawScores',
  'returnLse', 'out'];
const CAUSAL = new Map([[false, 0], [true, 1], ['bottom-right', 1], ['top-left', 2]]);

// `total` elements in rows of `per` (described as `perText`): the row count, or a RangeError naming both.
function rowsOf(fn, name, total, per, perText) {
  const n = total / per;
  if (!Number.isInteger(n)) throw new RangeError(`${fn}: ${name}.length must be a multiple of ${perText} = ${per}, got ${total}`);
  return n;
}

// The call descriptor's field indices: one float64 per field, in the order the binding declares
// (src/wasm/attention_call.h, shared with lab.attentionBackward).
export function callFields(m) {
  const F = Object.fromEntries(m.attentionCallFields().split(',').filter(Boolean).map((name, i) => [name, i]));
  return { F, FIELDS: Object.keys(F).length };
}

// A size the engine would accept (inference divides by the given sizes only when each is one).
export const isSize = (x) => x === undefined || (Number.isInteger(x) && x >= 1 && x <= 0x7fffffff);

// The inputs and options lab.attention and lab.attentionBackward share: types checked, sizes inferred from the
// lengths (or the cache) where left out. Values and sizes are the engine's to check.
export function readAttentionOptions(fn, opts, cache) {
  const q = tensor(fn, 'q', opts.q);
  const k = cache ? optionalTensor(fn, 'k', opts.k) : tensor(fn, 'k', opts.k);
  const v = cache ? optionalTensor(fn, 'v', opts.v) : tensor(fn, 'v', opts.v);
  let mask, maskKind = 0;
  if (opts.mask !== undefined && opts.mask !== null) {
    if (isF32(opts.mask)) mask = opts.mask, maskKind = 1;
    else if (opts.mask instanceof Uint8Array) mask = opts.mask, maskKind = 2;
    else throw new TypeError(`${fn}: mask must be a Float32Array (additive) or a Uint8Array (boolean), got ${describe(opts.mask)}`);
    // (an empty array would reach the engine as "no mask")
    if (mask.length === 0) throw new RangeError(`${fn}: mask must not be empty, got length 0`);
  }
  let maskShape;
  if (opts.maskShape !== undefined && opts.maskShape !== null) {
    if (!Array.isArray(opts.maskShape)) throw new TypeError(`${fn}: maskShape must be an array of numbers, got ${describe(opts.maskShape)}`);
    maskShape = opts.maskShape.map((x, i) => number(fn, `maskShape[${i}]`, x));
  }
  const keyLengths = opts.keyLengths === undefined || opts.keyLengths === null ? undefined : int32s(fn, 'keyLengths', opts.keyLengths);
  if (keyLengths?.length === 0) throw new RangeError(`${fn}: keyLengths must have batch entries, got none`);
  const alibi = optionalTensor(fn, 'alibiSlopes', opts.alibiSlopes);
  const layout = opts.layout === undefined ? 0 : layoutCode(fn, 'layout', opts.layout);
  if (opts.causal !== undefined && !CAUSAL.has(opts.causal)) {
    const msg = `${fn}: causal must be true, false, 'bottom-right' or 'top-left', got ${describe(opts.causal)}`;
    throw typeof opts.causal === 'string' ? new RangeError(msg) : new TypeError(msg);
  }
  const causal = CAUSAL.get(opts.causal ?? false);
  let window = [-1, -1];
  if (opts.window !== undefined && opts.window !== null) {
    if (!Array.isArray(opts.window) || opts.window.length !== 2)
      throw new TypeError(`${fn}: window must be an array [left, right], got ${describe(opts.window)}`);
    window = opts.window.map((x, i) => number(fn, `window[${i}]`, x));
  }
  const scale = opts.scale === undefined ? undefined : number(fn, 'scale', opts.scale);
  const softcap = opts.softcap === undefined ? undefined : number(fn, 'softcap', opts.softcap);

  // Sizes: given ones as they are (the engine checks them); the rest inferred from the lengths (or the cache),
  // dk first (from nq or nk when it is not given).
  for (const name of ['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv']) if (opts[name] !== undefined) number(fn, name, opts[name]);
  const batch = opts.batch ?? (cache ? cache.batch : 1);
  const heads = opts.heads ?? (cache ? cache.kvHeads : 1);
  const kvHeads = opts.kvHeads ?? (cache ? cache.kvHeads : heads);
  let { nq, nk, dk, dv } = opts;
  const nkGiven = nk;
  if (cache) {
    nk ??= cache.length || 1; // an empty cache: the engine says so
    dk ??= cache.dk;
    dv ??= cache.dv;
  }
  // Inference divides by the given sizes: only when each is a size at all. Otherwise the engine names the bad one
  // (the sizes it would have inferred are sent as 1, which it accepts).
  if ([batch, heads, kvHeads, nq, nk, dk, dv].every(isSize)) {
    const single = batch === 1 && heads === 1 && kvHeads === 1;
    // "batch·heads·nq = 2·8·3" (or "nq" alone for one head): how a length divides, for the messages.
    const per = (names, values) => {
      const keep = single ? [names.length - 1] : names.map((_, i) => i);
      const text = keep.map((i) => names[i]).join('·');
      return keep.length > 1 ? `${text} = ${keep.map((i) => values[i]).join('·')}` : text;
    };
    if (dk === undefined) {
      if (nq !== undefined) dk = rowsOf(fn, 'q', q.length, batch * heads * nq, per(['batch', 'heads', 'nq'], [batch, heads, nq]));
      else if (nk !== undefined) dk = rowsOf(fn, 'k', k.length, batch * kvHeads * nk, per(['batch', 'kvHeads', 'nk'], [batch, kvHeads, nk]));
      else throw new TypeError(`${fn}: dk is required (or nq or nk, to infer it from q.length or k.length), got undefined`);
    }
    nq ??= rowsOf(fn, 'q', q.length, batch * heads * dk, per(['batch', 'heads', 'dk'], [batch, heads, dk]));
    nk ??= rowsOf(fn, 'k', k.length, batch * kvHeads * dk, per(['batch', 'kvHeads', 'dk'], [batch, kvHeads, dk]));
    dv ??= rowsOf(fn, 'v', v.length, batch * kvHeads * nk, per(['batch', 'kvHeads', 'nk'], [batch, kvHeads, nk]));
  } else {
    nq ??= 1, nk ??= 1, dk ??= 1, dv ??= 1;
  }
  // Query rows (batch·heads·nq) to allocate for; 0 when a size is bad (the engine refuses the call before writing).
  const rows = [batch, heads, nq].every(isSize) ? batch * heads * nq : 0;
  return { q, k, v, mask, maskKind, maskShape, keyLengths, alibi, layout, causal, window, scale, softcap, cache,
    batch, heads, kvHeads, nq, nk, nkGiven, dk, dv, rows };
}

// The arena parts of the inputs, in this order right after the descriptor (parts 1…6).
export function inputParts(o) {
  return [
    { name: 'q', length: o.q.length, data: o.q },
    { name: 'k', length: o.k ? o.k.length : 0, data: o.k },
    { name: 'v', length: o.v ? o.v.length : 0, data: o.v },
    { name: 'mask', length: o.mask ? o.mask.length : 0, data: o.mask, type: o.maskKind === 2 ? 'u8' : 'f32' },
    { name: 'keyLengths', length: o.keyLengths ? o.keyLengths.length : 0, data: o.keyLengths, type: 'i32' },
    { name: 'alibiSlopes', length: o.alibi ? o.alibi.length : 0, data: o.alibi },
  ];
}

// The inputs' and options' fields of descriptor `d` (the inputs at arena parts 1…6).
export function writeInputs(d, F, a, o) {
  d[F.q] = a.at(1), d[F.q_len] = o.q.length;
  d[F.k] = a.at(2), d[F.k_len] = o.k ? o.k.length : 0;
  d[F.v] = a.at(3), d[F.v_len] = o.v ? o.v.length : 0;
  d[F.mask] = a.at(4), d[F.mask_len] = o.mask ? o.mask.length : 0, d[F.mask_kind] = o.maskKind;
  d[F.mask_dims] = o.maskShape ? o.maskShape.length : 0;
  for (let i = 0; i < 4; ++i) d[F[`mask_shape${i}`]] = o.maskShape?.[i] ?? 0;
  d[F.key_lengths] = a.at(5), d[F.key_lengths_len] = o.keyLengths ? o.keyLengths.length : 0;
  d[F.alibi] = a.at(6), d[F.alibi_len] = o.alibi ? o.alibi.length : 0;
  d[F.batch] = o.batch, d[F.heads] = o.heads, d[F.kv_heads] = o.kvHeads;
  d[F.nq] = o.nq, d[F.nk] = o.cache ? o.nkGiven ?? 0 : o.nk, d[F.dk] = o.dk, d[F.dv] = o.dv; // nk 0: the cache's length
  d[F.layout] = o.layout, d[F.causal] = o.causal, d[F.window_left] = o.window[0], d[F.window_right] = o.window[1];
  d[F.has_scale] = o.scale === undefined ? 0 : 1, d[F.scale] = o.scale ?? 0;
  d[F.has_softcap] = o.softcap === undefined ? 0 : 1, d[F.softcap] = o.softcap ?? 0;
  d[F.cache] = o.cache ? o.cache.handle : 0;
}

// lab.attention: one argument, whatever else a caller passes (list.map(lab.attention) gives it an index).
export function makeAttention(m) {
  const ranged = makeRangedAttention(m);
  return function attention(opts) {
    return ranged(opts);
  };
}

// For the async twin's workers only: attention(opts, part) with part = { qBegin, qEnd }, the engine's query range —
// the call holds only query rows [qBegin, qEnd) of its nq (in q, the outputs and the mask's query dimension).
export function makeRangedAttention(m) {
  const { F, FIELDS } = callFields(m);

  return function attention(opts, part) {
    if (part !== undefined && !(Number.isInteger(part?.qBegin) && Number.isInteger(part?.qEnd) && part.qBegin >= 0 && part.qEnd > part.qBegin)) {
      throw new RangeError('attention: an internal query range must be integers 0 ≤ qBegin < qEnd');
    }
    const fn = 'attention';
    options(fn, opts);
    checkKeys(fn, opts, KEYS);
    const cache = opts.cache === undefined || opts.cache === null ? undefined : cacheOf(fn, opts.cache, m);
    const o = readAttentionOptions(fn, opts, cache);
    const wantScores = flag(fn, 'returnScores', opts.returnScores);
    const wantWeights = flag(fn, 'returnWeights', opts.returnWeights);
    const wantRaw = flag(fn, 'returnRawScores', opts.returnRawScores);
    const wantLse = flag(fn, 'returnLse', opts.returnLse);
    if (opts.out !== undefined && opts.out !== null && !isF32(opts.out)) throw new TypeError(`${fn}: out must be a Float32Array, got ${describe(opts.out)}`);
    const out = opts.out ?? undefined;

    // Lengths to allocate; 0 when a size is bad (the engine refuses the call before writing anything).
    const rows = part && o.rows ? o.batch * o.heads * (part.qEnd - part.qBegin) : o.rows;
    const outLength = out ? out.length : isSize(o.dv) ? rows * o.dv : 0;
    const matrix = (wantScores || wantWeights || wantRaw) && isSize(o.nk) ? rows * o.nk : 0;

    const a = arena(m, fn, [
      { name: 'descriptor', length: FIELDS, type: 'f64' },
      ...inputParts(o),
      { name: 'output', length: outLength },
      { name: 'rawScores', length: wantRaw ? matrix : 0 },
      { name: 'scores', length: wantScores ? matrix : 0 },
      { name: 'weights', length: wantWeights ? matrix : 0 },
      { name: 'lse', length: wantLse ? rows : 0 },
    ]);
    try {
      const d = a.view(0);
      d.fill(0);
      writeInputs(d, F, a, o);
      d[F.out] = a.at(7), d[F.out_len] = outLength;
      d[F.raw_scores] = a.at(8), d[F.scores] = a.at(9), d[F.weights] = a.at(10), d[F.matrix_len] = matrix;
      d[F.lse] = a.at(11), d[F.lse_len] = wantLse ? rows : 0;
      d[F.q_begin] = part ? part.qBegin : 0, d[F.q_end] = part ? part.qEnd : 0;
      checkKind(m, fn, m.attention(a.at(0)));
      const result = { output: a.readInto(7, out) };
      if (wantScores) result.scores = a.read(9);
      if (wantWeights) result.weights = a.read(10);
      if (wantRaw) result.rawScores = a.read(8);
      if (wantLse) result.lse = a.read(11);
      return result;
    } finally {
      a.free();
    }
  };
}
