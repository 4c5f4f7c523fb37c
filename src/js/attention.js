// lab.attention: scaled dot-product attention of one sequence and one head.
import { checkKeys, flag, length, optionalTensor, options, outBuffer, positive, quotient, size, tensor } from './checks.js';
import { arena, check } from './memory.js';

export function makeAttention(m) {
  return function attention(opts) {
    const fn = 'attention';
    options(fn, opts);
    checkKeys(fn, opts, ['q', 'k', 'v', 'nq', 'nk', 'dk', 'dv', 'causal', 'scale', 'mask', 'returnScores', 'returnWeights', 'returnRawScores', 'out']);
    const q = tensor(fn, 'q', opts.q), k = tensor(fn, 'k', opts.k), v = tensor(fn, 'v', opts.v);
    const mask = optionalTensor(fn, 'mask', opts.mask);
    // Sizes: any left out are inferred from the lengths, dk first (from nq or nk when it is not given).
    let { nq, nk, dk, dv } = opts;
    if (nq !== undefined) size(fn, 'nq', nq);
    if (nk !== undefined) size(fn, 'nk', nk);
    if (dv !== undefined) size(fn, 'dv', dv);
    if (dk !== undefined) size(fn, 'dk', dk);
    else if (nq !== undefined) dk = quotient(fn, 'q', q.length, nq, 'nq');
    else if (nk !== undefined) dk = quotient(fn, 'k', k.length, nk, 'nk');
    else throw new TypeError(`${fn}: dk is required (or nq or nk, to infer it from q.length or k.length), got undefined`);
    nq ??= quotient(fn, 'q', q.length, dk, 'dk');
    nk ??= quotient(fn, 'k', k.length, dk, 'dk');
    dv ??= quotient(fn, 'v', v.length, nk, 'nk');
    length(fn, 'q', q, nq * dk, `nq·dk = ${nq}·${dk}`);
    length(fn, 'k', k, nk * dk, `nk·dk = ${nk}·${dk}`);
    length(fn, 'v', v, nk * dv, `nk·dv = ${nk}·${dv}`);
    if (mask) length(fn, 'mask', mask, nq * nk, `nq·nk = ${nq}·${nk}`);
    const scale = opts.scale === undefined ? undefined : positive(fn, 'scale', opts.scale);
    const causal = flag(fn, 'causal', opts.causal);
    const wantScores = flag(fn, 'returnScores', opts.returnScores);
    const wantWeights = flag(fn, 'returnWeights', opts.returnWeights);
    const wantRaw = flag(fn, 'returnRawScores', opts.returnRawScores);
    const out = outBuffer(fn, opts.out, nq * dv, `nq·dv = ${nq}·${dv}`);
    // nq·nk only matters (and only has to fit) when one of the score matrices is wanted.
    const nn = wantScores || wantWeights || wantRaw ? nq * nk : 0;
  
    const a = arena(m, fn, [
      { name: 'q', length: q.length, data: q },
      { name: 'k', length: k.length, data: k },
      { name: 'v', length: v.length, data: v },
      { name: 'mask', length: mask ? mask.length : 0, data: mask },
      { name: 'output', length: nq * dv },
      { name: 'rawScores', length: wantRaw ? nn : 0 },
      { name: 'scores', length: wantScores ? nn : 0 },
      { name: 'weights', length: wantWeights ? nn : 0 },
    ]);
    try {
      check(fn, m.attention(nq, nk, dk, dv, scale !== undefined, scale ?? 0, causal,
        a.at(0), q.length, a.at(1), k.length, a.at(2), v.length, a.at(3), mask ? mask.length : 0,
        a.at(4), nq * dv, a.at(5), a.at(6), a.at(7), nn));
      const result = { output: a.readInto(4, out) };
      if (wantScores) result.scores = a.read(6);
      if (wantWeights) result.weights = a.read(7);
      if (wantRaw) result.rawScores = a.read(5);
      return result;
    } finally {
      a.free();
    }
  }
}
