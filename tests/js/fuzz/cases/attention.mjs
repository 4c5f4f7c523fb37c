// attention over whole tensors: every option of support/attention-cases.mjs (batch, heads over fewer K/V heads,
// layouts, causal alignments, windows, softcap, additive and boolean masks broadcast by maskShape, keyLengths,
// ALiBi), sizes left to inference, the matrices and lse on request, every kind of `out`, and −1e9-style padding
// masks. The mutations of the options it shares with attentionBackward and with attention over a KV cache are here.
import { randomAttentionCase } from '../../support/attention-cases.mjs';
import { attentionFullRef } from '../../support/attention-full-ref.mjs';
import { assertWithin } from '../../support/reference.mjs';
import { bad, badFlag, badSize, checked, notF32, offByOne, outBuffer, pickMutation, poisoned, unknownKey } from './common.mjs';

export const FORWARD_KEYS = ['q', 'k', 'v', 'cache', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout', 'causal', 'window',
  'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'returnScores', 'returnWeights', 'returnRawScores', 'returnLse', 'out'];
const RETURNS = [['returnScores', 'scores'], ['returnWeights', 'weights'], ['returnRawScores', 'raw'], ['returnLse', 'lse']];

/** Sizes drawn for a case: mostly small, now and then long enough to cut rows into several 32-row blocks. */
export const drawSizes = (r) => r.pick([undefined, undefined, undefined, { maxNq: 40, maxNk: 150, maxD: 12 }, { maxNq: 70, maxNk: 90, maxD: 6 }]);

/**
 * A padding mask as models build them: a large finite negative number (not −Infinity) on the padded keys of each
 * batch item, sometimes on every key of some query rows too (rows of padding tokens).
 */
export function paddingMask(r, c) {
  const big = -r.pick([1e9, 1e9, 1e6, 1e4, 1e30]);
  const rows = r.bool(0.4) ? c.nq : 1;
  const mask = new Float32Array(c.batch * rows * c.nk);
  for (let b = 0; b < c.batch; ++b) {
    const keep = r.int(1, c.nk);
    for (let i = 0; i < rows; ++i) {
      const all = rows > 1 && r.bool(0.2);
      for (let j = 0; j < c.nk; ++j) if (all || j >= keep) mask[(b * rows + i) * c.nk + j] = big;
    }
  }
  c.mask = mask;
  c.maskShape = [c.batch, 1, rows, c.nk];
  return c;
}

/** Some of the sizes left out, to be inferred from the lengths (dk stays, or nq stays to infer it). */
export function inferSome(r, c) {
  if (r.bool(0.75)) return c;
  const drop = r.bool() ? ['nq', 'nk', 'dv'] : ['dk', 'nk', 'dv'];
  for (const name of drop) if (r.bool(0.7)) delete c[name];
  if (c.kvHeads === c.heads && r.bool(0.5)) delete c.kvHeads;  // (its default is heads)
  if (c.heads === 1 && (c.kvHeads ?? 1) === 1 && r.bool(0.5)) delete c.heads;
  if (c.batch === 1 && r.bool(0.5)) delete c.batch;
  return c;
}

// The full sizes of a case (what inference gives).
export function sizesOf(c) {
  const batch = c.batch ?? 1, heads = c.heads ?? 1, kvHeads = c.kvHeads ?? heads;
  const dk = c.dk ?? c.q.length / (batch * heads * c.nq);
  const nq = c.nq ?? c.q.length / (batch * heads * dk), nk = c.nk ?? c.k.length / (batch * kvHeads * dk);
  const dv = c.dv ?? c.v.length / (batch * kvHeads * nk);
  return { batch, heads, kvHeads, nq, nk, dk, dv };
}

/**
 * One thing wrong with the options attention, attentionBackward and attention over a cache share, as a list of
 * candidates for pickMutation. `cached`: the case reads K/V from a cache (no k, v of its own; `sizes` gives its
 * sizes).
 */
export function sharedMutations(r, c, { cached = false, sizes } = {}) {
  const s = sizes ?? sizesOf(c), with_ = (p) => ({ ...c, ...p });
  const given = ['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv'].filter((n) => c[n] !== undefined);
  const allGiven = given.length === 7;
  const list = [
    () => { const w = notF32(r, c.q); return bad('q not a Float32Array', with_({ q: w.value }), w.cls, ['q']); },
    () => bad('q left out', with_({ q: undefined }), 'TypeError', ['q']),
    () => bad('q of the wrong length', with_({ q: offByOne(r, c.q) }), 'RangeError', allGiven ? ['q'] : ['q', 'k', 'v', 'dk']),
    () => bad('q holds NaN or ±Infinity', with_({ q: poisoned(r, c.q) }), 'RangeError', ['q']),
    () => { const name = r.pick(given.length ? given : ['nq']), b = badSize(r); return bad(`${name} not a size`, with_({ [name]: b.value }), b.cls, [name]); },
    () => (allGiven ? bad('nq off by one', with_({ nq: s.nq + 1 }), 'RangeError', ['q', 'nq']) : null),
    () => (s.heads > 1 || c.kvHeads !== undefined ? bad('kvHeads does not divide heads', with_({ kvHeads: s.heads + 1, heads: s.heads }), 'RangeError', ['kvHeads', 'heads']) : null),
    () => { const w = notF32(r, c.q); return bad('mask of a type that is no mask', with_({ mask: r.pick([Int8Array.of(1), w.value]) }), 'TypeError', ['mask']); },
    () => (c.mask ? bad('mask of the wrong length', with_({ mask: offByOne(r, c.mask) }), 'RangeError', ['mask', 'maskShape']) : null),
    () => (c.mask instanceof Float32Array ? bad('mask holds NaN or +Infinity', with_({ mask: poisoned(r, c.mask, { negInf: true }) }), 'RangeError', ['mask']) : null),
    () => {
      const shape = c.maskShape ?? [s.nq, s.nk];
      const full = [s.batch, s.heads, s.nq, s.nk].slice(4 - shape.length);
      const d = r.int(0, shape.length - 1);
      const wrong = shape.slice();
      wrong[d] = full[d] + 1;
      if (!c.mask) return null;
      return bad('maskShape neither 1 nor the full size', with_({ maskShape: wrong, mask: new c.mask.constructor(wrong.reduce((x, y) => x * y, 1)) }), 'RangeError', ['maskShape', 'mask']);
    },
    () => {
      if (!c.mask) return null;
      const shape = c.maskShape ?? [s.nq, s.nk];
      return bad('maskShape of 5 dims', with_({ maskShape: [1, ...Array(4 - shape.length).fill(1), ...shape] }), 'RangeError', ['maskShape']);
    },
    () => bad('maskShape not an array of numbers', with_({ maskShape: r.pick(['1,2', [1, '2'], 3]) }), 'TypeError', ['maskShape']),
    () => bad('keyLengths of the wrong count', with_({ keyLengths: Array.from({ length: s.batch + 1 }, () => 1) }), 'RangeError', ['keyLengths']),
    () => bad('a key length past nk or negative', with_({ keyLengths: Array.from({ length: s.batch }, (_, b) => (b === 0 ? r.pick([s.nk + 1, -1]) : 1)) }), 'RangeError', ['keyLengths']),
    () => bad('a key length that is not an integer', with_({ keyLengths: Array.from({ length: s.batch }, () => 1.5) }), 'RangeError', ['keyLengths']),
    () => bad('keyLengths not integers', with_({ keyLengths: r.pick(['3', { 0: 1 }, Float32Array.of(1)]) }), 'TypeError', ['keyLengths']),
    () => bad('alibiSlopes of the wrong count', with_({ alibiSlopes: new Float32Array(s.heads + 1) }), 'RangeError', ['alibiSlopes']),
    () => bad('alibiSlopes holds NaN or ±Infinity', with_({ alibiSlopes: poisoned(r, new Float32Array(s.heads).fill(0.1)) }), 'RangeError', ['alibiSlopes']),
    () => bad('layout not a layout', with_({ layout: r.pick(['bsdh', 'BHSD', '']) }), 'RangeError', ['layout']),
    () => bad('layout not a string', with_({ layout: r.pick([0, null, true]) }), 'TypeError', ['layout']),
    () => bad('causal not an alignment', with_({ causal: r.pick(['left', 'top-right', '']) }), 'RangeError', ['causal']),
    () => bad('causal not a boolean or string', with_({ causal: r.pick([1, 0, null]) }), 'TypeError', ['causal']),
    () => bad('window not [left, right]', with_({ window: r.pick([[1], [1, 2, 3], 'x', 4]) }), 'TypeError', ['window']),
    () => bad('window sides not integers ≥ −1', with_({ window: r.pick([[1.5, 0], [0, -2], [Number.NaN, 1], [-Infinity, 0]]) }), 'RangeError', ['window']),
    () => bad('scale not positive and finite', with_({ scale: r.pick([0, -1, Number.NaN, Infinity]) }), 'RangeError', ['scale']),
    () => bad('scale not a number', with_({ scale: r.pick(['1', null]) }), 'TypeError', ['scale']),
    () => bad('softcap not positive and finite', with_({ softcap: r.pick([0, -1, Number.NaN, Infinity]) }), 'RangeError', ['softcap']),
    () => bad('options not an object', r.pick([null, 5, 'q']), 'TypeError', ['options']),
    // Rows of output (16–64 MB of them) for a q of a handful of rows.
    () => (c.nq !== undefined ? bad('huge nq, tiny q', with_({ nq: Math.max(s.nq + 1, Math.floor(r.int(4e6, 16e6) / (s.batch * s.heads * s.dv))) }), 'RangeError', ['q', 'nq'], 'huge') : null),
  ];
  if (!cached) {
    list.push(
      () => { const w = notF32(r, c.k); return bad('k not a Float32Array', with_({ k: w.value }), w.cls, ['k']); },
      () => bad('v left out', with_({ v: undefined }), 'TypeError', ['v']),
      () => (allGiven ? bad('k of the wrong length', with_({ k: offByOne(r, c.k) }), 'RangeError', ['k']) : null),
      () => (allGiven ? bad('v of the wrong length', with_({ v: offByOne(r, c.v) }), 'RangeError', ['v']) : null),
      () => bad('k holds NaN or ±Infinity', with_({ k: poisoned(r, c.k) }), 'RangeError', ['k']),
      () => bad('v holds NaN or ±Infinity', with_({ v: poisoned(r, c.v) }), 'RangeError', ['v']),
      // ‖q‖·‖k‖ ≥ 1e40 (the engine's limit for scores that cannot overflow is 1e37, scale ≥ 0.1 here).
      () => bad('q and k too large', with_({ q: c.q.map(() => 1e20), k: c.k.map(() => 1e20) }), 'RangeError', ['q', 'k']),
      // Sizes whose product passes 2³¹.
      () => (allGiven ? bad('nq·dv past 2^31', with_({ nq: 2 ** 20 + r.int(0, 9), dv: 2 ** 12 + r.int(0, 9) }), 'RangeError', ['q', 'v', 'nq', 'dv'], 'past2^31') : null),
    );
  }
  return list;
}

export const attention = {
  op: 'attention',
  fn: 'attention',
  draw(r) {
    const c = inferSome(r, r.bool(0.15) ? paddingMask(r, randomAttentionCase(r, drawSizes(r))) : randomAttentionCase(r, drawSizes(r)));
    for (const [flag] of RETURNS) if (r.bool(0.25)) c[flag] = true;
    if (r.bool(0.25)) {
      const s = sizesOf(c);
      c.out = outBuffer(r, s.batch * s.heads * s.nq * s.dv);
    }
    return { opts: c };
  },
  mutate(r, a) {
    const c = a.opts, s = sizesOf(c), with_ = (p) => ({ opts: { ...c, ...p } });
    const wrap = (f) => (rr) => {
      const m = f(rr);
      return m && { ...m, args: { opts: m.args } };
    };
    return pickMutation(r, [
      ...sharedMutations(r, c).map(wrap),
      () => bad('a return flag not a boolean', with_({ [r.pick(RETURNS)[0]]: badFlag(r) }), 'TypeError', RETURNS.map(([f]) => f)),
      () => bad('out of the wrong length', with_({ out: offByOne(r, new Float32Array(s.batch * s.heads * s.nq * s.dv).fill(-7.25)) }), 'RangeError', ['out']),
      () => { const w = notF32(r, c.q); return bad('out not a Float32Array', with_({ out: w.value }), w.cls, ['out']); },
      () => { const k = unknownKey(r, FORWARD_KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('cache not a cache', with_({ cache: r.pick([{}, 'cache', 1]) }), 'TypeError', ['cache']),
    ]);
  },
  sync: (lab, a) => lab.attention(a.opts),
  async: (lab, a) => lab.attentionAsync(a.opts),
  outs: (a) => [a.opts?.out],
  identity: (a, got) => [[a.opts?.out, got.output]],
  check(a, got) {
    checkForward(a.opts, got, attentionFullRef({ ...a.opts, ...sizesOf(a.opts), scale: a.opts.scale === undefined ? undefined : Math.fround(a.opts.scale) }));
  },
};

/** The output and every matrix asked for, against the reference; nothing else in the result. */
export function checkForward(c, got, ref) {
  assertWithin(got.output, checked(ref.out, 'output'), 'output');
  const keys = ['output'];
  for (const [flag, name] of RETURNS) {
    if (!c[flag]) continue;
    const key = name === 'raw' ? 'rawScores' : name;
    keys.push(key);
    assertWithin(got[key], checked(ref[name], key), key);
  }
  const extra = Object.keys(got).filter((k) => !keys.includes(k));
  if (extra.length) throw new Error(`the result holds ${extra.join(', ')}, which was not asked for`);
}
