// lab.matmul: the matrix product a·b (or a·bᵀ), row-major. Types and unknown options here; sizes, lengths and
// values in the engine (src/wasm/matmul_bindings.cpp), whose message names the argument.
import { engineCall } from './call.js';
import { checkKeys, describe, flag, isF32, number, options, outBuffer } from './checks.js';

export const MATMUL_OPTIONS = ['m', 'k', 'n', 'transposeB', 'out'];

function matrix(fn, name, v) {
  if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
  return v;
}

/** lab.matmul in two steps: prepare (types, then the engine's check) and run. */
export function matmulCall(m) {
  const op = engineCall(m, 'matmul'), { F } = op;
  return {
    op,
    prepare(a, b, opts) {
      const fn = 'matmul';
      matrix(fn, 'a', a);
      matrix(fn, 'b', b);
      options(fn, opts);
      checkKeys(fn, opts, MATMUL_OPTIONS);
      const d = op.descriptor();
      d[F.m] = number(fn, 'm', opts.m), d[F.k] = number(fn, 'k', opts.k), d[F.n] = number(fn, 'n', opts.n);
      d[F.transpose_b] = flag(fn, 'transposeB', opts.transposeB);
      const given = { a, b, out: outBuffer(fn, opts.out) };
      op.check(fn, d, given);
      return { fn, d, given };
    },
    run: ({ fn, d, given }) => op.run(fn, d, given).out,
  };
}

