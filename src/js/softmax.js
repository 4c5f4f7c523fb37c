// lab.softmax: row-wise softmax / log-softmax over rows of `cols`. Types here; cols, temperature, lengths and
// values in the engine (src/wasm/softmax_bindings.cpp).
import { engineCall, option } from './call.js';
import { checkKeys, flag, number, options, outBuffer, tensor } from './checks.js';

export const SOFTMAX_OPTIONS = ['cols', 'temperature', 'log', 'out'];

// Softmax into a new array goes through wasm memory in chunks of whole rows of about this many floats (256 KiB).
const CHUNK_FLOATS = 1 << 16;

/** lab.softmax in two steps: prepare (types, then the engine's check) and run. */
export function softmaxCall(m) {
  const op = engineCall(m, 'softmax'), { F } = op;
  return {
    op,
    /** The call checked: { fn, d, given } (d: its descriptor, cols resolved). Throws the call's own errors. */
    prepare(x, opts = {}) {
      const fn = 'softmax';
      tensor(fn, 'x', x);
      options(fn, opts);
      checkKeys(fn, opts, SOFTMAX_OPTIONS);
      const d = op.descriptor();
      if (opts.cols !== undefined) option(d, F.cols, number(fn, 'cols', opts.cols));
      if (opts.temperature !== undefined) option(d, F.temperature, number(fn, 'temperature', opts.temperature));
      d[F.log] = flag(fn, 'log', opts.log);
      const given = { x, out: outBuffer(fn, opts.out) };
      op.check(fn, d, given);
      return { fn, d, given };
    },
    run({ fn, d, given }) {
      const { x, out } = given;
      // Into the caller's buffer, or a call of one chunk: all of x is staged in wasm memory first (so that a bad
      // value in the last row still leaves out untouched) and computed in place there (out may be x itself).
      const cols = d[F.cols], chunk = Math.max(1, Math.floor(CHUNK_FLOATS / cols)) * cols;
      if (out || x.length <= chunk) return op.run(fn, d, given).out;
      // A new array is never seen when the call throws, so it is filled chunk by chunk of whole rows: the wasm
      // memory needed stays at one chunk of 256 KiB (or one row, when a row is longer) instead of all of x, and
      // wasm memory never shrinks. As fast as staging all of x (docs/performance.md#row-softmax).
      const result = new Float32Array(x.length);
      for (let i = 0; i < x.length; i += chunk) {
        const part = d.slice();
        part[F.first_index] = i; // a bad value is named x[i + …], as in one call
        const end = Math.min(x.length, i + chunk);
        op.call(fn, part, { x: x.subarray(i, end), out: result.subarray(i, end) });
      }
      return result;
    },
  };
}

