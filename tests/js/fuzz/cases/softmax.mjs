// softmax and softmaxBackward: rows of logits around shifts that only the max subtraction survives, −Infinity
// entries and whole masked rows, temperatures, log, every kind of `out`.
import { softmaxBackwardRef } from '../../support/softmax-backward-ref.mjs';
import { assertWithin, softmaxRows } from '../../support/reference.mjs';
import { bad, badFlag, badSize, checked, notF32, offByOne, outBuffer, pickMutation, poisoned, unknownKey } from './common.mjs';

function logits(r, rows, cols) {
  const x = new Float32Array(rows * cols);
  for (let row = 0; row < rows; ++row) {
    const shift = r.pick([0, 0, 0, 90, -1000, 1e4, 1e30]);
    for (let j = 0; j < cols; ++j) x[row * cols + j] = r.bool(0.08) ? -Infinity : shift + r.next() * 16 - 8;
    if (r.bool(0.04)) x.fill(-Infinity, row * cols, (row + 1) * cols);
  }
  return x;
}

function shape(r) {
  const cols = r.pick([r.int(1, 9), r.int(1, 70), r.int(60, 300)]);
  return { cols, rows: r.int(1, cols > 100 ? 4 : 9) };
}

const temperature = (r) => r.pick([0.5, 2, Math.exp(Math.log(0.05) + r.next() * Math.log(400))]);
const SOFTMAX_KEYS = ['cols', 'temperature', 'log', 'out'];

export const softmax = {
  op: 'softmax',
  fn: 'softmax',
  draw(r) {
    const { rows, cols } = shape(r);
    const x = logits(r, rows, cols);
    const opts = {};
    if (rows > 1 || r.bool()) opts.cols = cols;
    if (r.bool(0.4)) opts.temperature = temperature(r);
    if (r.bool(0.3)) opts.log = r.bool();
    if (r.bool(0.3)) opts.out = outBuffer(r, x.length);
    return { x, opts };
  },
  mutate(r, a) {
    const with_ = (opts) => ({ x: a.x, opts: { ...a.opts, ...opts } });
    return pickMutation(r, [
      () => { const w = notF32(r, a.x); return bad('x not a Float32Array', { x: w.value, opts: a.opts }, w.cls, ['x']); },
      () => bad('x empty', { x: new Float32Array(0), opts: { ...a.opts, cols: undefined, out: undefined } }, 'RangeError', ['x']),
      () => bad('x holds NaN or +Infinity', { x: poisoned(r, a.x, { negInf: true }), opts: a.opts }, 'RangeError', ['x']),
      () => { const s = badSize(r); return bad('cols not a size', with_({ cols: s.value }), s.cls, ['cols']); },
      () => (a.x.length > 1 ? bad('cols does not divide x.length', with_({ cols: a.x.length + 1 }), 'RangeError', ['x', 'cols']) : null),
      () => bad('temperature not positive and finite', with_({ temperature: r.pick([0, -1, Number.NaN, Infinity, -Infinity, 1e-50]) }), 'RangeError', ['temperature']),
      () => bad('temperature not a number', with_({ temperature: r.pick(['1', null, true]) }), 'TypeError', ['temperature']),
      () => bad('log not a boolean', with_({ log: badFlag(r) }), 'TypeError', ['log']),
      () => bad('out of the wrong length', with_({ out: offByOne(r, new Float32Array(a.x.length).fill(-7.25)) }), 'RangeError', ['out']),
      () => { const w = notF32(r, a.x); return bad('out not a Float32Array', with_({ out: w.value }), w.cls, ['out']); },
      () => { const k = unknownKey(r, SOFTMAX_KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('options not an object', { x: a.x, opts: r.pick([null, 5, 'cols']) }, 'TypeError', ['options']),
    ]);
  },
  sync: (lab, a) => lab.softmax(a.x, a.opts),
  async: (lab, a) => lab.softmaxAsync(a.x, a.opts),
  outs: (a) => [a.opts?.out],
  identity: (a, got) => [[a.opts?.out, got]],
  check(a, got) {
    const cols = a.opts.cols ?? a.x.length, t = Math.fround(a.opts.temperature ?? 1);
    const ref = softmaxRows(a.x, null, cols, { mul: 1 / t, mulRounded: a.opts.temperature !== undefined && a.opts.temperature !== 1, log: !!a.opts.log });
    assertWithin(got, checked(ref, 'softmax'), 'softmax');
  },
};

// Probabilities (or log-probabilities) as a float32 forward gives them: a float64 softmax rounded once.
function forward(x, cols, t, log) {
  const ref = softmaxRows(x, null, cols, { mul: 1 / Math.fround(t), log });
  return Float32Array.from(ref.value);
}

export const softmaxBackward = {
  op: 'softmaxBackward',
  fn: 'softmaxBackward',
  draw(r) {
    const { rows, cols } = shape(r);
    const opts = {};
    if (rows > 1 || r.bool()) opts.cols = cols;
    if (r.bool(0.4)) opts.temperature = temperature(r);
    if (r.bool(0.4)) opts.log = r.bool();
    opts.y = forward(logits(r, rows, cols), cols, opts.temperature ?? 1, !!opts.log);
    opts.dy = r.array(rows * cols, -2, 2);
    return { opts };
  },
  mutate(r, a) {
    const o = a.opts, with_ = (x) => ({ opts: { ...o, ...x } });
    return pickMutation(r, [
      () => { const w = notF32(r, o.y); return bad('y not a Float32Array', with_({ y: w.value }), w.cls, ['y']); },
      () => { const w = notF32(r, o.dy); return bad('dy not a Float32Array', with_({ dy: w.value }), w.cls, ['dy']); },
      () => bad('dy of the wrong length', with_({ dy: offByOne(r, o.dy) }), 'RangeError', ['dy']),
      () => bad('dy holds NaN or ±Infinity', with_({ dy: poisoned(r, o.dy) }), 'RangeError', ['dy']),
      () => {
        const y = Float32Array.from(o.y);
        y[r.int(0, y.length - 1)] = o.log ? r.pick([0.5, Number.NaN, Infinity]) : r.pick([1.5, -0.25, Number.NaN, -Infinity]);
        return bad('y not a forward output', with_({ y }), 'RangeError', ['y']);
      },
      () => { const s = badSize(r); return bad('cols not a size', with_({ cols: s.value }), s.cls, ['cols']); },
      () => (o.y.length > 1 ? bad('cols does not divide y.length', with_({ cols: o.y.length + 1 }), 'RangeError', ['y', 'cols']) : null),
      () => bad('temperature not positive and finite', with_({ temperature: r.pick([0, -2, Number.NaN, Infinity, 1e-50]) }), 'RangeError', ['temperature']),
      () => bad('log not a boolean', with_({ log: badFlag(r) }), 'TypeError', ['log']),
      () => { const k = unknownKey(r, ['y', 'dy', 'cols', 'temperature', 'log']); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('options not an object', { opts: r.pick([null, 5, undefined]) }, 'TypeError', ['options']),
    ]);
  },
  sync: (lab, a) => lab.softmaxBackward(a.opts),
  async: (lab, a) => lab.softmaxBackwardAsync(a.opts),
  check(a, got) {
    const o = a.opts;
    assertWithin(got, checked(softmaxBackwardRef(o.y, o.dy, o.cols ?? o.y.length, o.temperature ?? 1, !!o.log), 'dx'), 'dx');
  },
};
