// lab.softmaxBackward: the gradient of row-wise softmax / log-softmax with respect to its logits.
import { checkKeys, flag, options, positive, quotient, size, tensor, length } from './checks.js';
import { arena, check } from './memory.js';

export function makeSoftmaxBackward(m) {
  return function softmaxBackward(opts) {
    const fn = 'softmaxBackward';
    options(fn, opts);
    checkKeys(fn, opts, ['y', 'dy', 'cols', 'temperature', 'log']);
    const y = tensor(fn, 'y', opts.y), dy = tensor(fn, 'dy', opts.dy);
    const cols = opts.cols === undefined ? y.length : size(fn, 'cols', opts.cols);
    quotient(fn, 'y', y.length, cols, 'cols');
    length(fn, 'dy', dy, y.length, 'y.length');
    const temperature = opts.temperature === undefined ? 1 : positive(fn, 'temperature', opts.temperature);
    const log = flag(fn, 'log', opts.log);
    const a = arena(m, fn, [
      { name: 'y', length: y.length, data: y },
      { name: 'dy', length: dy.length, data: dy },
      { name: 'dx', length: y.length },
    ]);
    try {
      check(fn, m.softmaxBackward(a.at(0), a.at(1), y.length, cols, temperature, log, a.at(2)));
      return a.read(2);
    } finally {
      a.free();
    }
  };
}
