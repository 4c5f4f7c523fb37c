// rope: head widths around multiples of 4 pairs, partial rotaryDim, both pairings and layouts, the inverse, every
// form of positions (offset, one per item, a shared row, a row per item), computed angles or given tables.
import { assertWithin } from '../../support/reference.mjs';
import { positionOf, ropeReference, ropeTables } from '../../support/rope-reference.mjs';
import { bad, badFlag, badSize, checked, notF32, offByOne, outBuffer, pickMutation, poisoned, unknownKey } from './common.mjs';

const KEYS = ['batch', 'heads', 'dk', 'layout', 'positions', 'offset', 'base', 'rotaryDim', 'interleaved', 'cos', 'sin', 'inverse', 'out'];

// Positions for `seq` tokens of `batch` items: undefined (0 … seq − 1) or one of the forms lab.rope takes.
function drawPositions(r, batch, seq) {
  const list = (n) => Array.from({ length: n }, () => r.int(0, 300));
  const asInts = (v) => (r.bool() ? Int32Array.from(v) : v);
  switch (r.int(0, 4)) {
    case 0: return {};
    case 1: return { offset: r.int(0, 5000) };
    case 2: return { offset: asInts(list(r.bool() ? 1 : batch)) };
    case 3: return { positions: asInts(list(seq)) };
    default: return { positions: asInts(list(batch * seq)) };
  }
}

function maxPosition(o, batch, seq) {
  const at = positionOf(o, seq);
  let m = 0;
  for (let b = 0; b < batch; ++b) for (let s = 0; s < seq; ++s) m = Math.max(m, at(b, s));
  return m;
}

export const rope = {
  op: 'rope',
  fn: 'rope',
  draw(r) {
    const half = r.pick([1, 2, 3, 4, 5, 7, 8, 9, 16, 17]), extra = r.pick([0, 0, 0, 1, 2]);
    const batch = r.int(1, 3), heads = r.int(1, 3), seq = r.int(1, 8), dk = 2 * half + extra;
    const opts = { dk };
    if (batch > 1 || r.bool(0.2)) opts.batch = batch;
    if (heads > 1 || r.bool(0.2)) opts.heads = heads;
    if (extra || r.bool(0.1)) opts.rotaryDim = 2 * half;
    if (r.bool(0.5)) opts.layout = r.pick(['bhsd', 'bshd']);
    if (r.bool(0.4)) opts.interleaved = r.bool();
    if (r.bool(0.3)) opts.inverse = r.bool();
    Object.assign(opts, drawPositions(r, batch, seq));
    if (r.bool(0.2)) {
      const t = ropeTables(maxPosition(opts, batch, seq) + 1 + r.int(0, 3), 2 * half, r.pick([500, 10000]));
      opts.cos = t.cos, opts.sin = t.sin;
    } else if (r.bool(0.3)) {
      opts.base = r.pick([1, 500, 10000, 1e6]);
    }
    const x = r.array(batch * heads * seq * dk, -2, 2);
    if (r.bool(0.25)) opts.out = outBuffer(r, x.length);
    return { x, opts };
  },
  mutate(r, a) {
    const o = a.opts, with_ = (p) => ({ x: a.x, opts: { ...o, ...p } });
    const rotary = o.rotaryDim ?? o.dk, batch = o.batch ?? 1, seq = a.x.length / (batch * (o.heads ?? 1) * o.dk);
    return pickMutation(r, [
      () => { const w = notF32(r, a.x); return bad('x not a Float32Array', { x: w.value, opts: o }, w.cls, ['x']); },
      () => bad('x of a length that is not whole tokens', { x: offByOne(r, a.x), opts: o }, 'RangeError', ['x']),
      () => bad('x holds NaN or ±Infinity', { x: poisoned(r, a.x), opts: o }, 'RangeError', ['x']),
      () => bad('x too large to rotate', { x: a.x.map((v, i) => (i === 0 ? 3e38 : v)), opts: o }, 'RangeError', ['x']),
      () => bad('dk left out', with_({ dk: undefined }), 'TypeError', ['dk']),
      () => { const name = r.pick(['dk', 'batch', 'heads']), s = badSize(r); return bad(`${name} not a size`, with_({ [name]: s.value }), s.cls, [name]); },
      () => (o.rotaryDim === undefined && o.dk % 2 === 0 ? bad('dk odd', { x: a.x.slice(0, a.x.length - a.x.length / o.dk), opts: { ...o, dk: o.dk - 1, out: undefined } }, 'RangeError', ['dk', 'rotaryDim']) : null),
      () => bad('rotaryDim odd, past dk or 0', with_({ rotaryDim: r.pick([rotary - 1, o.dk + 2, 0]) }), 'RangeError', ['rotaryDim']),
      () => bad('layout not a layout', with_({ layout: r.pick(['bsdh', 'BHSD']) }), 'RangeError', ['layout']),
      () => bad('layout not a string', with_({ layout: r.pick([0, null, true]) }), 'TypeError', ['layout']),
      () => bad('interleaved not a boolean', with_({ interleaved: badFlag(r) }), 'TypeError', ['interleaved']),
      () => bad('inverse not a boolean', with_({ inverse: badFlag(r) }), 'TypeError', ['inverse']),
      () => bad('a negative position', with_({ positions: Array.from({ length: seq }, (_, s) => (s === 0 ? -1 : s)), offset: undefined }), 'RangeError', ['positions']),
      () => bad('positions of the wrong count', with_({ positions: Array.from({ length: seq * batch + 1 }, () => 1), offset: undefined }), 'RangeError', ['positions']),
      () => bad('a position that is not an integer', with_({ positions: Array.from({ length: seq }, (_, s) => s + 0.5), offset: undefined }), 'RangeError', ['positions']),
      () => bad('positions and offset', with_({ positions: Array.from({ length: seq }, (_, s) => s), offset: 1 }), 'RangeError', ['offset', 'positions']),
      () => bad('a negative offset', with_({ offset: -r.int(1, 9), positions: undefined }), 'RangeError', ['offset']),
      () => bad('offset of the wrong count', with_({ offset: Array.from({ length: batch + 1 }, () => 0), positions: undefined }), batch + 1 === 1 ? null : 'RangeError', ['offset']),
      () => (o.cos ? null : bad('base below 1 or not finite', with_({ base: r.pick([0, 0.5, -10, Number.NaN, Infinity]) }), 'RangeError', ['base'])),
      () => bad('base not a number', with_({ base: r.pick(['10000', null]) }), 'TypeError', ['base']),
      () => (o.cos ? bad('base with tables', with_({ base: 10000 }), 'RangeError', ['base']) : null),
      () => (o.cos ? bad('cos without sin', with_({ sin: undefined }), 'RangeError', ['sin', 'cos']) : null),
      () => (o.cos ? bad('sin of another length than cos', with_({ sin: o.sin.slice(0, o.sin.length - rotary / 2) }), 'RangeError', ['sin']) : null),
      () => (o.cos && rotary > 2 ? bad('cos not whole rows', with_({ cos: o.cos.slice(1), sin: o.sin.slice(1) }), 'RangeError', ['cos']) : null),
      () => (o.cos ? bad('a position past the tables', with_({ positions: Array.from({ length: seq }, () => o.cos.length / (rotary / 2)), offset: undefined }), 'RangeError', ['positions']) : null),
      () => (o.cos ? bad('cos holds NaN', with_({ cos: poisoned(r, o.cos) }), 'RangeError', ['cos']) : null),
      () => bad('out of the wrong length', with_({ out: offByOne(r, new Float32Array(a.x.length).fill(-7.25)) }), 'RangeError', ['out']),
      () => { const w = notF32(r, a.x); return bad('out not a Float32Array', with_({ out: w.value }), w.cls, ['out']); },
      () => { const k = unknownKey(r, KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('options not an object', { x: a.x, opts: r.pick([null, 5]) }, 'TypeError', ['options']),
    ].map((f) => (rr) => {
      const m = f(rr);
      return m && m.cls ? m : null;
    }));
  },
  sync: (lab, a) => lab.rope(a.x, a.opts),
  async: (lab, a) => lab.ropeAsync(a.x, a.opts),
  outs: (a) => [a.opts?.out],
  identity: (a, got) => [[a.opts?.out, got]],
  check(a, got) {
    const o = a.opts, batch = o.batch ?? 1, seq = a.x.length / (batch * (o.heads ?? 1) * o.dk);
    const ref = ropeReference(a.x, { ...o, base: o.base ?? 10000, rotaryDim: o.rotaryDim ?? o.dk, positionOf: positionOf(o, seq) });
    assertWithin(got, checked(ref, 'rope'), 'rope');
  },
};
