// lab.attentionBackward: the gradients of lab.attention with respect to q, k and v, for every option of the forward.
// The options are read by the forward's own code (attention.js) and travel in the same fields; this file adds the
// saved tensors (output, lse), dOutput and the gradients' buffers. The engine validates every size and value
// (src/wasm/attention_backward_bindings.cpp).
import { engineCall } from './call.js';
import { checkKeys, describe, isF32, options, tensor } from './checks.js';
import { ATTENTION_OPTIONS, readAttentionOptions } from './attention.js';

export const ATTENTION_BACKWARD_OPTIONS = [...ATTENTION_OPTIONS.filter((k) => k !== 'cache' && !k.startsWith('return')), 'output', 'lse', 'dOutput'];
// The gradients: the result's (and out's) names, the engine's tensors.
const GRADS = [['dq', 'gradQ'], ['dk', 'gradK'], ['dv', 'gradV']];

/** lab.attentionBackward in two steps: prepare (types, then the engine's check) and run. */
export function attentionBackwardCall(m) {
  const op = engineCall(m, 'attentionBackward'), { F } = op;
  const finish = (p, o) => ({ dq: o.gradQ, dk: o.gradK, dv: o.gradV });
  return {
    op,
    prepare(opts) {
      const fn = 'attentionBackward';
      options(fn, opts);
      if (opts.cache !== undefined)
        throw new TypeError(`${fn}: cache is not an option of the backward pass: it takes explicit k and v (the keys and values the forward attended to)`);
      checkKeys(fn, opts, ATTENTION_BACKWARD_OPTIONS);
      const d = op.descriptor();
      const given = readAttentionOptions(fn, opts, d, F, undefined);
      given.output = tensor(fn, 'output', opts.output);
      given.savedLse = tensor(fn, 'lse', opts.lse); // (the forward's: its own field of the shared descriptor)
      given.dOutput = tensor(fn, 'dOutput', opts.dOutput);
      // Optional buffers for the gradients: { dq, dk, dv }, each a Float32Array shaped as q, k, v.
      if (opts.out !== undefined && opts.out !== null) {
        if (typeof opts.out !== 'object' || Array.isArray(opts.out) || ArrayBuffer.isView(opts.out))
          throw new TypeError(`${fn}: out must be an object { dq?, dk?, dv? } of Float32Arrays, got ${describe(opts.out)}`);
        checkKeys(`${fn}: out`, opts.out, GRADS.map(([name]) => name));
        for (const [name, grad] of GRADS) {
          const b = opts.out[name];
          if (b === undefined || b === null) continue;
          if (!isF32(b)) throw new TypeError(`${fn}: out.${name} must be a Float32Array, got ${describe(b)}`);
          given[grad] = b;
        }
      }
      op.check(fn, d, given);
      return { fn, d, given };
    },
    run: (p) => finish(p, op.run(p.fn, p.d, p.given)),
    finish,
  };
}

