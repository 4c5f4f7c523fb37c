// lab.softmax: row-wise softmax / log-softmax over rows of `cols`.
import { flag, options, checkKeys, outBuffer, number, quotient, size, tensor } from './checks.js';
import { arena, check } from './memory.js';

// Softmax into a new array goes through wasm memory in chunks of whole rows of about this many floats (256 KiB).
const SOFTMAX_CHUNK_FLOATS = 1 << 16;

export function makeSoftmax(m) {
  return function softmax(x, opts = {}) {
    const fn = 'softmax';
    tensor(fn, 'x', x);
    options(fn, opts);
    checkKeys(fn, opts, ['cols', 'temperature', 'log', 'out']);
    const cols = opts.cols === undefined ? x.length : size(fn, 'cols', opts.cols);
    quotient(fn, 'x', x.length, cols, 'cols');
    const temperature = opts.temperature === undefined ? 1 : number(fn, 'temperature', opts.temperature);
    const log = flag(fn, 'log', opts.log);
    const out = outBuffer(fn, opts.out, x.length, 'x.length');
    // Into the caller's buffer: all of x is staged in wasm memory first, so that a bad value in the last row
    // still leaves out untouched. In place there (the engine allows out = x): half the memory and cache.
    if (out) {
      const a = arena(m, fn, [{ name: 'x', length: x.length, data: x }]);
      try {
        check(fn, m.softmax(a.at(0), x.length, cols, temperature, log, a.at(0), 0));
        return a.readInto(0, out); // out may be x itself: x was copied in before the call
      } finally {
        a.free();
      }
    }
    // A new array is never seen when the call throws, so it is filled chunk by chunk of whole rows: the wasm
    // memory needed stays at one chunk of 256 KiB (or one row, when a row is longer) instead of all of x, and
    // wasm memory never shrinks. As fast as staging all of x (docs/performance.md#row-softmax).
    const result = new Float32Array(x.length);
    const chunk = Math.max(1, Math.floor(SOFTMAX_CHUNK_FLOATS / cols)) * cols;
    const a = arena(m, fn, [{ name: 'x', length: Math.min(chunk, x.length) }]);
    try {
      for (let i = 0; i < x.length; i += chunk) {
        const len = Math.min(chunk, x.length - i), at = a.at(0);
        m.HEAPF32.set(x.subarray(i, i + len), at >>> 2);
        check(fn, m.softmax(at, len, cols, temperature, log, at, i)); // i: a bad value is named x[i + …]
        result.set(m.HEAPF32.subarray(at >>> 2, (at >>> 2) + len), i);
      }
      return result;
    } finally {
      a.free();
    }
  }
}
