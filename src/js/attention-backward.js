// lab.attentionBackward: the gradients of lab.attention with respect to q, k and v, for every option of the forward.
// The options are read by the forward's own code (attention.js) and travel in the same call descriptor; this file
// adds the saved tensors (output, lse), dOutput and the gradients' buffers. The engine validates every size and value.
import { callFields, inputParts, readAttentionOptions, writeInputs } from './attention.js';
import { checkKeys, describe, isF32, options, tensor } from './checks.js';
import { arena, checkKind } from './memory.js';

const KEYS = ['q', 'k', 'v', 'output', 'lse', 'dOutput', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout', 'causal',
  'window', 'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'out'];
const GRADS = ['dq', 'dk', 'dv'];

export function makeAttentionBackward(m) {
  const { F, FIELDS } = callFields(m);

  return function attentionBackward(opts) {
    const fn = 'attentionBackward';
    options(fn, opts);
    if (opts.cache !== undefined)
      throw new TypeError(`${fn}: cache is not an option of the backward pass: it takes explicit k and v (the keys and values the forward attended to)`);
    checkKeys(fn, opts, KEYS);
    const o = readAttentionOptions(fn, opts, undefined);
    const output = tensor(fn, 'output', opts.output);
    const lse = tensor(fn, 'lse', opts.lse);
    const dOutput = tensor(fn, 'dOutput', opts.dOutput);
    // Optional buffers for the gradients: { dq, dk, dv }, each a Float32Array shaped as q, k, v (the engine checks lengths).
    const out = {};
    if (opts.out !== undefined && opts.out !== null) {
      if (typeof opts.out !== 'object' || Array.isArray(opts.out) || ArrayBuffer.isView(opts.out))
        throw new TypeError(`${fn}: out must be an object { dq?, dk?, dv? } of Float32Arrays, got ${describe(opts.out)}`);
      checkKeys(`${fn}: out`, opts.out, GRADS);
      for (const name of GRADS) {
        const b = opts.out[name];
        if (b === undefined || b === null) continue;
        if (!isF32(b)) throw new TypeError(`${fn}: out.${name} must be a Float32Array, got ${describe(b)}`);
        out[name] = b;
      }
    }
    const lengths = { dq: out.dq ? out.dq.length : o.q.length, dk: out.dk ? out.dk.length : o.k.length, dv: out.dv ? out.dv.length : o.v.length };

    const a = arena(m, fn, [
      { name: 'descriptor', length: FIELDS, type: 'f64' },
      ...inputParts(o),
      { name: 'output', length: output.length, data: output },
      { name: 'lse', length: lse.length, data: lse },
      { name: 'dOutput', length: dOutput.length, data: dOutput },
      { name: 'dq', length: lengths.dq },
      { name: 'dk', length: lengths.dk },
      { name: 'dv', length: lengths.dv },
    ]);
    try {
      const d = a.view(0);
      d.fill(0);
      writeInputs(d, F, a, o);
      d[F.output] = a.at(7), d[F.output_len] = output.length;
      d[F.lse] = a.at(8), d[F.lse_len] = lse.length;
      d[F.d_output] = a.at(9), d[F.d_output_len] = dOutput.length;
      d[F.dq] = a.at(10), d[F.dq_len] = lengths.dq;
      d[F.dk_out] = a.at(11), d[F.dk_len] = lengths.dk;
      d[F.dv_out] = a.at(12), d[F.dv_len] = lengths.dv;
      checkKind(m, fn, m.attentionBackward(a.at(0)));
      return { dq: a.readInto(10, out.dq), dk: a.readInto(11, out.dk), dv: a.readInto(12, out.dv) };
    } finally {
      a.free();
    }
  };
}
