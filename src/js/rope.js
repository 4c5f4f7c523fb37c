// lab.rope: rotary position embedding of query/key heads (ONNX RotaryEmbedding, HF apply_rotary_pos_emb). Types
// here; sizes, positions, tables and values in the engine (src/wasm/rope_bindings.cpp).
import { engineCall, option } from './call.js';
import { checkKeys, flag, int32, int32s, layoutCode, nonEmpty, number, optionalNumber, optionalTensor, options, outBuffer, tensor } from './checks.js';

export const ROPE_OPTIONS = ['batch', 'heads', 'dk', 'layout', 'positions', 'offset', 'base', 'rotaryDim', 'interleaved', 'cos', 'sin', 'inverse', 'out'];

/** lab.rope in two steps: prepare (types, then the engine's check) and run. */
export function ropeCall(m) {
  const op = engineCall(m, 'rope'), { F } = op;
  return {
    op,
    prepare(x, opts = {}) {
      const fn = 'rope';
      tensor(fn, 'x', x);
      options(fn, opts);
      checkKeys(fn, opts, ROPE_OPTIONS);
      if (opts.dk === undefined) throw new TypeError(`${fn}: dk is required (the width of one head), got undefined`);
      const d = op.descriptor();
      d[F.dk] = number(fn, 'dk', opts.dk);
      option(d, F.batch, optionalNumber(fn, 'batch', opts.batch));
      option(d, F.heads, optionalNumber(fn, 'heads', opts.heads));
      option(d, F.rotary_dim, optionalNumber(fn, 'rotaryDim', opts.rotaryDim));
      option(d, F.base, optionalNumber(fn, 'base', opts.base));
      d[F.layout] = opts.layout === undefined ? 0 : layoutCode(fn, 'layout', opts.layout);
      d[F.interleaved] = flag(fn, 'interleaved', opts.interleaved);
      d[F.inverse] = flag(fn, 'inverse', opts.inverse);
      let offset;
      if (typeof opts.offset === 'number') offset = Int32Array.of(int32(fn, 'offset', opts.offset));
      else if (opts.offset !== undefined && opts.offset !== null) offset = nonEmpty(fn, 'offset', int32s(fn, 'offset', opts.offset));
      const given = {
        x, offset, out: outBuffer(fn, opts.out),
        positions: opts.positions === undefined || opts.positions === null ? undefined : nonEmpty(fn, 'positions', int32s(fn, 'positions', opts.positions)),
        cos: optionalTensor(fn, 'cos', opts.cos), sin: optionalTensor(fn, 'sin', opts.sin),
      };
      op.check(fn, d, given);
      return { fn, d, given };
    },
    run: ({ fn, d, given }) => op.run(fn, d, given).out,
    finish: (p, outputs) => outputs.out,
  };
}

