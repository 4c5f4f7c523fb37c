// lab.softmaxBackward: the gradient of row-wise softmax / log-softmax with respect to its logits. Types here;
// cols, temperature, lengths and values in the engine (src/wasm/softmax_backward_bindings.cpp).
import { engineCall, option } from './call.js';
import { checkKeys, flag, number, options, tensor } from './checks.js';

export const SOFTMAX_BACKWARD_OPTIONS = ['y', 'dy', 'cols', 'temperature', 'log'];

/** lab.softmaxBackward in two steps: prepare (types, then the engine's check) and run. */
export function softmaxBackwardCall(m) {
  const op = engineCall(m, 'softmaxBackward'), { F } = op;
  return {
    op,
    prepare(opts) {
      const fn = 'softmaxBackward';
      options(fn, opts);
      checkKeys(fn, opts, SOFTMAX_BACKWARD_OPTIONS);
      const given = { y: tensor(fn, 'y', opts.y), dy: tensor(fn, 'dy', opts.dy) };
      const d = op.descriptor();
      if (opts.cols !== undefined) option(d, F.cols, number(fn, 'cols', opts.cols));
      if (opts.temperature !== undefined) option(d, F.temperature, number(fn, 'temperature', opts.temperature));
      d[F.log] = flag(fn, 'log', opts.log);
      op.check(fn, d, given);
      return { fn, d, given };
    },
    run: ({ fn, d, given }) => op.run(fn, d, given).dx,
  };
}

