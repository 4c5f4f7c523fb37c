// attentionBackward: the forward's cases, with the saved output and lse of the float64 forward rounded to float32
// (what a float32 forward returns, up to its rounding) and a random dOutput; `out` buffers for any of dq, dk, dv.
// Its own mutations: a wrong lse (shifted on one row, −Infinity on a row that sees keys, the wrong count), wrong
// saved tensors, the forward's own options.
import { randomAttentionCase } from '../../support/attention-cases.mjs';
import { attentionFullRef } from '../../support/attention-full-ref.mjs';
import { attentionGradRef } from '../../support/attention-grad-ref.mjs';
import { assertWithin } from '../../support/reference.mjs';
import { drawSizes, inferSome, paddingMask, sharedMutations, sizesOf } from './attention.mjs';
import { bad, checked, notF32, offByOne, outBuffer, pickMutation, poisoned, unknownKey } from './common.mjs';

const KEYS = ['q', 'k', 'v', 'output', 'lse', 'dOutput', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout', 'causal',
  'window', 'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'out'];
const GRADS = [['dq', 'q'], ['dk', 'k'], ['dv', 'v']];

const f32scale = (c) => (c.scale === undefined ? undefined : Math.fround(c.scale));

export const attentionBackward = {
  op: 'attentionBackward',
  fn: 'attentionBackward',
  draw(r) {
    // The float64 gradient reference costs far more per element than the forward's: smaller cases.
    const sizes = r.bool(0.1) ? { maxNq: 40, maxNk: 150, maxD: 8 } : r.bool(0.2) ? drawSizes(r) ?? { maxNq: 10, maxD: 12 } : { maxNq: 10, maxD: 12 };
    let c = randomAttentionCase(r, sizes);
    if (r.bool(0.35)) c = paddingMask(r, c);  // (a wrong lse must be told from a padded one)
    const fwd = attentionFullRef({ ...c, scale: f32scale(c) });
    c.output = Float32Array.from(fwd.out.value);
    c.lse = Float32Array.from(fwd.lse.value);
    c.dOutput = r.array(c.output.length);
    c = inferSome(r, c);
    if (r.bool(0.25)) {
      c.out = {};
      for (const [g, x] of GRADS) if (r.bool(0.6)) c.out[g] = outBuffer(r, c[x].length);
    }
    return { opts: c };
  },
  mutate(r, a) {
    const c = a.opts, with_ = (p) => ({ opts: { ...c, ...p } });
    const wrap = (f) => (rr) => {
      const m = f(rr);
      return m && { ...m, args: { opts: m.args } };
    };
    // Rows whose lse a wrong value must be told from: finite, and not so large that float32 cannot resolve a shift.
    const rows = [];
    c.lse.forEach((x, i) => Number.isFinite(x) && Math.abs(x) < 1e4 && rows.push(i));
    // Half the time one of the backward's own arguments (the lse first among them), else an option it shares.
    const own = [
      () => {
        if (!rows.length) return null;
        const lse = Float32Array.from(c.lse), i = r.pick(rows);
        lse[i] += r.pick([1, -1, 3]);
        return bad('lse shifted on one row', with_({ lse }), 'RangeError', ['lse'], 'lse');
      },
      () => {
        if (!rows.length) return null;
        const lse = Float32Array.from(c.lse);
        lse[r.pick(rows)] = -Infinity;
        return bad('lse −Infinity on a row that sees keys', with_({ lse }), 'RangeError', ['lse'], 'lse');
      },
      () => bad('lse of the wrong length', with_({ lse: offByOne(r, c.lse) }), 'RangeError', ['lse']),
      () => bad('lse holds NaN or +Infinity', with_({ lse: poisoned(r, c.lse, { negInf: true }) }), 'RangeError', ['lse']),
      () => bad('output of the wrong length', with_({ output: offByOne(r, c.output) }), 'RangeError', ['output']),
      () => bad('output holds NaN or ±Infinity', with_({ output: poisoned(r, c.output) }), 'RangeError', ['output']),
      () => bad('dOutput of the wrong length', with_({ dOutput: offByOne(r, c.dOutput) }), 'RangeError', ['dOutput']),
      () => bad('dOutput holds NaN or ±Infinity', with_({ dOutput: poisoned(r, c.dOutput) }), 'RangeError', ['dOutput']),
      () => { const name = r.pick(['output', 'lse', 'dOutput']), w = notF32(r, c[name]); return bad(`${name} not a Float32Array`, with_({ [name]: w.value }), w.cls, [name]); },
      () => { const [g, x] = r.pick(GRADS); return bad(`out.${g} of the wrong length`, with_({ out: { ...c.out, [g]: offByOne(r, new Float32Array(c[x].length)) } }), 'RangeError', [`out.${g}`, g]); },
      () => { const [g] = r.pick(GRADS), w = notF32(r, c.q); return bad(`out.${g} not a Float32Array`, with_({ out: { ...c.out, [g]: w.value } }), w.cls, [`out.${g}`]); },
      () => bad('out not an object of gradients', with_({ out: r.pick([new Float32Array(c.q.length), [c.q], 'dq']) }), 'TypeError', ['out']),
      () => bad('out with an unknown gradient', with_({ out: { ...c.out, dx: new Float32Array(c.q.length) } }), 'TypeError', ['dx']),
      () => bad('cache given', with_({ cache: {} }), 'TypeError', ['cache']),
      () => { const k = r.pick(['returnLse', 'returnWeights', unknownKey(r, KEYS)]); return bad('unknown option', with_({ [k]: true }), 'TypeError', [k]); },
    ];
    const shared = sharedMutations(r, c).map(wrap);
    if (r.bool()) return pickMutation(r, shared) ?? pickMutation(r, own);
    return (r.bool(0.4) ? pickMutation(r, own.slice(0, 2)) : null) ?? pickMutation(r, own) ?? pickMutation(r, shared);
  },
  sync: (lab, a) => lab.attentionBackward(a.opts),
  async: (lab, a) => lab.attentionBackwardAsync(a.opts),
  outs: (a) => (a.opts?.out && typeof a.opts.out === 'object' ? Object.values(a.opts.out) : []),
  identity: (a, got) => GRADS.map(([g]) => [a.opts?.out?.[g], got[g]]),
  check(a, got) {
    const c = a.opts, ref = attentionGradRef({ ...c, ...sizesOf(c), scale: f32scale(c) });
    for (const [g] of GRADS) assertWithin(got[g], checked(ref[g], g), g);
    const extra = Object.keys(got).filter((k) => !['dq', 'dk', 'dv'].includes(k));
    if (extra.length) throw new Error(`the result holds ${extra.join(', ')}`);
  },
};
