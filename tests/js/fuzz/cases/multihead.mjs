// multiHeadAttention: heads over fewer K/V heads, head widths given or dModel / heads, n or dModel inferred,
// causal, an additive [n × n] mask, scale, the intermediates, every kind of `out`.
import { randomMask } from '../../support/random.mjs';
import { assertWithin, multiHeadRef } from '../../support/reference.mjs';
import { bad, badFlag, badSize, checked, notF32, offByOne, outBuffer, pickMutation, poisoned, unknownKey } from './common.mjs';

const KEYS = ['x', 'n', 'dModel', 'heads', 'kvHeads', 'dk', 'dv', 'wq', 'wk', 'wv', 'wo', 'causal', 'scale', 'mask', 'returnIntermediates', 'out'];

function widths(c) {
  const kvHeads = c.kvHeads ?? c.heads;
  const dModel = c.dModel ?? c.x.length / c.n, n = c.n ?? c.x.length / dModel;
  return { n, dModel, kvHeads, dk: c.dk ?? dModel / c.heads, dv: c.dv ?? dModel / c.heads };
}

export const multiHeadAttention = {
  op: 'multiHeadAttention',
  fn: 'multiHeadAttention',
  draw(r) {
    const kvHeads = r.pick([1, 1, 2, 3]), heads = kvHeads * r.pick([1, 2, 4]);
    const n = r.int(1, 12);
    const own = r.bool(0.3); // head widths of their own (dModel need not be a multiple of heads)
    const dModel = own ? r.int(1, 24) : heads * r.int(1, 6);
    const dk = own ? r.int(1, 8) : dModel / heads, dv = own ? r.int(1, 8) : dModel / heads;
    const c = {
      x: r.array(n * dModel), heads,
      wq: r.array(dModel * heads * dk, -0.5, 0.5), wk: r.array(dModel * kvHeads * dk, -0.5, 0.5),
      wv: r.array(dModel * kvHeads * dv, -0.5, 0.5), wo: r.array(heads * dv * dModel, -0.5, 0.5),
    };
    const which = r.int(0, 2);
    if (which !== 1) c.n = n;
    if (which !== 0) c.dModel = dModel;
    if (kvHeads !== heads || r.bool(0.2)) c.kvHeads = kvHeads;
    if (own) c.dk = dk, c.dv = dv;
    if (r.bool()) c.causal = r.bool();
    if (r.bool(0.3)) c.mask = randomMask(r, n, n, r.int(0, 1));
    if (r.bool(0.3)) c.scale = r.pick([0.1, 0.5, 2]);
    if (r.bool(0.4)) c.returnIntermediates = true;
    if (r.bool(0.25)) c.out = outBuffer(r, n * dModel);
    return { opts: c };
  },
  mutate(r, a) {
    const c = a.opts, w = widths(c), with_ = (p) => ({ opts: { ...c, ...p } });
    return pickMutation(r, [
      () => { const name = r.pick(['x', 'wq', 'wk', 'wv', 'wo']), t = notF32(r, c[name]); return bad(`${name} not a Float32Array`, with_({ [name]: t.value }), t.cls, [name]); },
      () => { const name = r.pick(['wq', 'wk', 'wv', 'wo']); return bad(`${name} of the wrong length`, with_({ [name]: offByOne(r, c[name]) }), 'RangeError', [name]); },
      () => (c.n !== undefined && c.dModel !== undefined ? bad('x of the wrong length', with_({ x: offByOne(r, c.x) }), 'RangeError', ['x']) : null),
      () => { const name = r.pick(['x', 'wq', 'wk', 'wv', 'wo']); return bad(`${name} holds NaN or ±Infinity`, with_({ [name]: poisoned(r, c[name]) }), 'RangeError', [name]); },
      () => { const name = r.pick(['heads', 'kvHeads', 'n', 'dModel', 'dk', 'dv']), s = badSize(r); return bad(`${name} not a size`, with_({ [name]: s.value }), s.cls, [name]); },
      () => bad('heads left out', with_({ heads: undefined }), 'TypeError', ['heads']),
      () => bad('kvHeads does not divide heads', with_({ kvHeads: c.heads + 1 }), 'RangeError', ['kvHeads']),
      () => (c.dk === undefined && w.dModel > 1 ? bad('dModel not a multiple of heads, no dk', { opts: { ...c, heads: w.dModel + 1, kvHeads: 1 } }, 'RangeError', ['dk', 'dModel', 'heads']) : null),
      () => (c.n !== undefined && c.dModel !== undefined ? bad('n off by one', with_({ n: w.n + 1 }), 'RangeError', ['x', 'n']) : null),
      () => bad('mask of the wrong length', with_({ mask: offByOne(r, c.mask ?? new Float32Array(w.n * w.n)) }), 'RangeError', ['mask']),
      () => bad('mask not a Float32Array', with_({ mask: r.pick([new Uint8Array(w.n * w.n), Array(w.n * w.n).fill(0)]) }), 'TypeError', ['mask']),
      () => bad('mask holds NaN or +Infinity', with_({ mask: poisoned(r, c.mask ?? new Float32Array(w.n * w.n), { negInf: true }) }), 'RangeError', ['mask']),
      () => bad('scale not positive and finite', with_({ scale: r.pick([0, -1, Number.NaN, Infinity]) }), 'RangeError', ['scale']),
      () => bad('causal not a boolean', with_({ causal: r.pick([1, 'true', 'top-left']) }), 'TypeError', ['causal']),
      () => bad('returnIntermediates not a boolean', with_({ returnIntermediates: badFlag(r) }), 'TypeError', ['returnIntermediates']),
      () => bad('out of the wrong length', with_({ out: offByOne(r, new Float32Array(w.n * w.dModel).fill(-7.25)) }), 'RangeError', ['out']),
      () => { const t = notF32(r, c.x); return bad('out not a Float32Array', with_({ out: t.value }), t.cls, ['out']); },
      () => { const k = unknownKey(r, KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('options not an object', { opts: r.pick([null, 5, undefined]) }, 'TypeError', ['options']),
    ]);
  },
  sync: (lab, a) => lab.multiHeadAttention(a.opts),
  async: (lab, a) => lab.multiHeadAttentionAsync(a.opts),
  outs: (a) => [a.opts?.out],
  identity: (a, got) => [[a.opts?.out, got.output]],
  check(a, got) {
    const c = a.opts, w = widths(c);
    const ref = multiHeadRef({ ...c, ...w, scale: c.scale === undefined ? undefined : Math.fround(c.scale) });
    assertWithin(got.output, checked(ref.out, 'output'), 'output');
    const keys = c.returnIntermediates ? ['output', 'q', 'k', 'v', 'concat', 'heads'] : ['output'];
    if (Object.keys(got).join() !== keys.join()) throw new Error(`the result holds ${Object.keys(got).join(', ')}, expected ${keys.join(', ')}`);
    if (!c.returnIntermediates) return;
    for (const key of ['q', 'k', 'v', 'concat']) assertWithin(got[key], checked(ref[key], key), key);
    if (got.heads.length !== c.heads) throw new Error(`heads: ${got.heads.length} entries, expected ${c.heads}`);
    got.heads.forEach((h, i) => {
      for (const key of ['q', 'k', 'v', 'scores', 'weights', 'output']) assertWithin(h[key], checked(ref.heads[i][key], `heads[${i}].${key}`), `heads[${i}].${key}`);
    });
  },
};
