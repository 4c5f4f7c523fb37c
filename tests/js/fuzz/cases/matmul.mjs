// matmul: sizes around the 4-row panels, the 64-row blocks the async twin cuts at (tails of 1–3 rows included),
// the 8-column blocks and the 256-deep k blocks; both layouts of b; every kind of `out`.
import { assertWithin, matmul as matmulRef } from '../../support/reference.mjs';
import { bad, badFlag, badSize, checked, notF32, offByOne, outBuffer, pickMutation, poisoned, transpose, unknownKey } from './common.mjs';

const KEYS = ['m', 'k', 'n', 'transposeB', 'out'];

export const matmul = {
  op: 'matmul',
  fn: 'matmul',
  draw(r) {
    const m = r.pick([r.int(1, 9), r.int(1, 70), Math.max(1, 64 * r.int(1, 2) + r.int(-3, 3)), r.int(100, 140)]);
    const k = r.pick([r.int(1, 9), r.int(1, 40), r.int(254, 260), r.int(257, 300)]);
    const n = r.pick([r.int(1, 12), r.int(1, 40), r.int(126, 130)]);
    const transposeB = r.bool();
    const opts = { m, k, n };
    if (transposeB || r.bool(0.2)) opts.transposeB = transposeB;
    if (r.bool(0.25)) opts.out = outBuffer(r, m * n);
    return { a: r.array(m * k), b: r.array(k * n), opts };
  },
  mutate(r, x) {
    const o = x.opts, with_ = (p) => ({ a: x.a, b: x.b, opts: { ...o, ...p } });
    return pickMutation(r, [
      () => { const w = notF32(r, x.a); return bad('a not a Float32Array', { ...x, a: w.value }, w.cls, ['a']); },
      () => { const w = notF32(r, x.b); return bad('b not a Float32Array', { ...x, b: w.value }, w.cls, ['b']); },
      () => bad('a of the wrong length', { ...x, a: offByOne(r, x.a) }, 'RangeError', ['a']),
      () => bad('b of the wrong length', { ...x, b: offByOne(r, x.b) }, 'RangeError', ['b']),
      () => bad('a holds NaN or ±Infinity', { ...x, a: poisoned(r, x.a) }, 'RangeError', ['a']),
      () => bad('b holds NaN or ±Infinity', { ...x, b: poisoned(r, x.b) }, 'RangeError', ['b']),
      () => bad('a and b too large', { ...x, a: x.a.map(() => 3e19), b: x.b.map(() => 3e19) }, 'RangeError', ['a', 'b']),
      () => { const name = r.pick(['m', 'k', 'n']), s = badSize(r); return bad(`${name} not a size`, with_({ [name]: s.value }), s.cls, [name]); },
      () => { const name = r.pick(['m', 'k', 'n']); return bad(`${name} off by one`, with_({ [name]: o[name] + 1 }), 'RangeError', [name, 'a', 'b']); },
      () => bad('transposeB not a boolean', with_({ transposeB: badFlag(r) }), 'TypeError', ['transposeB']),
      () => bad('out of the wrong length', with_({ out: offByOne(r, new Float32Array(o.m * o.n).fill(-7.25)) }), 'RangeError', ['out']),
      () => { const w = notF32(r, x.a); return bad('out not a Float32Array', with_({ out: w.value }), w.cls, ['out']); },
      () => { const k = unknownKey(r, KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('options not an object', { ...x, opts: r.pick([null, 5, undefined]) }, 'TypeError', ['options']),
      // m rows of output (16–64 MB of them) for an `a` of a handful of rows.
      () => bad('huge m, tiny a', with_({ m: Math.floor(r.int(4e6, 16e6) / o.n) }), 'RangeError', ['a', 'm'], 'huge'),
      () => bad('m·n past 2^31', with_({ m: 2 ** 16 + r.int(0, 9), n: 2 ** 16 + r.int(0, 9) }), 'RangeError', ['a', 'b', 'm', 'n'], 'past2^31'),
    ]);
  },
  sync: (lab, x) => lab.matmul(x.a, x.b, x.opts),
  async: (lab, x) => lab.matmulAsync(x.a, x.b, x.opts),
  outs: (x) => [x.opts?.out],
  identity: (x, got) => [[x.opts?.out, got]],
  check(x, got) {
    const { m, k, n, transposeB } = x.opts;
    const b = transposeB ? transpose(x.b, n, k) : x.b;
    assertWithin(got, checked(matmulRef(x.a, null, b, null, m, k, n), 'matmul'), 'matmul');
  },
};
