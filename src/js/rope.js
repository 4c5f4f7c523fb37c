// lab.rope: rotary position embedding of query/key heads (ONNX RotaryEmbedding, HF apply_rotary_pos_emb).
import { checkKeys, describe, flag, optionalTensor, options, outBuffer, size, tensor } from './checks.js';
import { arena, check } from './memory.js';

const LAYOUTS = ['bhsd', 'bshd'];

// Integers cross as an Int32Array. What the engine cannot see once converted (a non-integer, a value past
// int32) is refused here; the engine checks the rest (negative, past the tables, the count).
function int32List(fn, name, v) {
  if (v instanceof Int32Array || Object.prototype.toString.call(v) === '[object Int32Array]') {
    if (v.length === 0) throw new RangeError(`${fn}: ${name} must not be empty, got length 0`);
    return v;
  }
  if (!Array.isArray(v)) throw new TypeError(`${fn}: ${name} must be an Int32Array or an array of integers, got ${describe(v)}`);
  if (v.length === 0) throw new RangeError(`${fn}: ${name} must not be empty, got length 0`);
  const out = new Int32Array(v.length);
  for (let i = 0; i < v.length; ++i) out[i] = int32(fn, `${name}[${i}]`, v[i]);
  return out;
}

function int32(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new RangeError(`${fn}: ${name} must be an integer (32-bit), got ${v}`);
  return v;
}

export function makeRope(m) {
  return function rope(x, opts = {}) {
    const fn = 'rope';
    tensor(fn, 'x', x);
    options(fn, opts);
    checkKeys(fn, opts, ['batch', 'heads', 'dk', 'layout', 'positions', 'offset', 'base', 'rotaryDim', 'interleaved', 'cos', 'sin', 'inverse', 'out']);
    if (opts.dk === undefined) throw new TypeError(`${fn}: dk is required (the width of one head), got undefined`);
    const dk = size(fn, 'dk', opts.dk);
    const batch = opts.batch === undefined ? 1 : size(fn, 'batch', opts.batch);
    const heads = opts.heads === undefined ? 1 : size(fn, 'heads', opts.heads);
    const rotaryDim = opts.rotaryDim === undefined ? 0 : size(fn, 'rotaryDim', opts.rotaryDim);
    let layout = 0;
    if (opts.layout !== undefined) {
      if (typeof opts.layout !== 'string') throw new TypeError(`${fn}: layout must be 'bhsd' or 'bshd', got ${describe(opts.layout)}`);
      layout = LAYOUTS.indexOf(opts.layout);
      if (layout < 0) throw new RangeError(`${fn}: layout must be 'bhsd' or 'bshd', got ${describe(opts.layout)}`);
    }
    const positions = opts.positions === undefined || opts.positions === null ? undefined : int32List(fn, 'positions', opts.positions);
    let offset;
    if (typeof opts.offset === 'number') offset = new Int32Array([int32(fn, 'offset', opts.offset)]);
    else if (opts.offset !== undefined && opts.offset !== null) offset = int32List(fn, 'offset', opts.offset);
    if (opts.base !== undefined && typeof opts.base !== 'number') throw new TypeError(`${fn}: base must be a number, got ${describe(opts.base)}`);
    const interleaved = flag(fn, 'interleaved', opts.interleaved);
    const inverse = flag(fn, 'inverse', opts.inverse);
    const cos = optionalTensor(fn, 'cos', opts.cos), sin = optionalTensor(fn, 'sin', opts.sin);
    const out = outBuffer(fn, opts.out, x.length, 'x.length');

    const a = arena(m, fn, [
      { name: 'x', length: x.length, data: x }, // rotated in place in wasm memory
      { name: 'positions', length: positions ? positions.length : 0 },
      { name: 'offset', length: offset ? offset.length : 0 },
      { name: 'cos', length: cos ? cos.length : 0, data: cos },
      { name: 'sin', length: sin ? sin.length : 0, data: sin },
    ]);
    try {
      if (positions) m.HEAP32.set(positions, a.at(1) >>> 2);
      if (offset) m.HEAP32.set(offset, a.at(2) >>> 2);
      check(fn, m.rope({
        x: a.at(0), out: a.at(0), xLength: x.length, batch, heads, dk, rotaryDim, layout,
        positions: a.at(1), positionsLength: positions ? positions.length : 0,
        offset: a.at(2), offsetLength: offset ? offset.length : 0,
        hasBase: opts.base !== undefined, base: opts.base ?? 0, interleaved, inverse,
        cos: a.at(3), cosLength: cos ? cos.length : 0, sin: a.at(4), sinLength: sin ? sin.length : 0,
      }));
      return a.readInto(0, out);
    } finally {
      a.free();
    }
  };
}
