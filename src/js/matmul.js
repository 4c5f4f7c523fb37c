// lab.matmul: the matrix product a·b (or a·bᵀ), row-major. Types and unknown options are checked here; sizes,
// lengths and values by the engine, whose message names the argument.
import { checkKeys, describe, flag, isF32, options } from './checks.js';
import { arena, check } from './memory.js';

// A size must reach the engine unchanged: a number that is a non-negative integer within size_t (32 bits in
// wasm). The engine itself rejects 0 and every length that does not match.
function count(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`${fn}: ${name} must be an integer >= 1, got ${v}`);
  return v;
}

function matrix(fn, name, v) {
  if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
  return v;
}

export function makeMatmul(m) {
  return function matmul(a, b, opts) {
    const fn = 'matmul';
    matrix(fn, 'a', a);
    matrix(fn, 'b', b);
    options(fn, opts);
    checkKeys(fn, opts, ['m', 'k', 'n', 'transposeB', 'out']);
    const rows = count(fn, 'm', opts.m), depth = count(fn, 'k', opts.k), cols = count(fn, 'n', opts.n);
    const transposeB = flag(fn, 'transposeB', opts.transposeB);
    const out = opts.out === undefined || opts.out === null ? undefined : matrix(fn, 'out', opts.out);
    // The engine's output buffer is as long as the caller's `out` (the engine checks it against m·n), else m·n.
    const outLength = out ? out.length : rows * cols;
    const mem = arena(m, fn, [
      { name: 'a', length: a.length, data: a },
      { name: 'b', length: b.length, data: b },
      { name: 'out', length: outLength },
    ]);
    try {
      check(fn, m.matmul(rows, depth, cols, transposeB, mem.at(0), a.length, mem.at(1), b.length, mem.at(2), outLength));
      return mem.readInto(2, out);
    } finally {
      mem.free();
    }
  };
}
