// attentionAsync's and attentionBackwardAsync's plans (the backward's at the end): a call cut into parts of equal work over (batch item, K/V head, query rows), each part
// sent as sub-calls that hold only what they read — their q rows, their K/V heads, their slices of the mask, the
// key lengths and the ALiBi slopes — with the engine's query range (q_begin/q_end: the diagonals and ALiBi still
// measure from each row's position in the whole call), and merged back row by row. A row's result does not
// depend on how the rows are cut (the engine's query range is bit-identical wherever it cuts), so the parts
// only balance the work. Everything here is copying; the engine validates each sub-call, and a part that fails
// sends the whole call to the synchronous form, whose error is the one a whole call names.
import { checkKeys, flag, isF32, options } from './checks.js';
import { isSize, readAttentionOptions } from './attention.js';

const KEYS = ['q', 'k', 'v', 'cache', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout', 'causal', 'window',
  'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'returnScores', 'returnWeights', 'returnRawScores',
  'returnLse', 'out'];
const MATRICES = [['returnScores', 'scores'], ['returnWeights', 'weights'], ['returnRawScores', 'rawScores']];

// Query rows cut at multiples of this many folded rows (row·group), the streaming kernel's block: every part's
// blocks stay whole. (Any cut would give the same bits; this one wastes no work.)
const BLOCK = 32;
// A row's cost in keys, beyond the keys it sees (packing, the output row).
const ROW_COST = 32;

// Buffers reused from call to call: the parts' inputs come back from the workers once copied into their wasm
// memory, the parts' outputs once merged (never a buffer handed to the caller). Fresh buffers of megabytes cost
// page faults and garbage collections on every call (measured: docs/performance.md#threads). Kept while calls keep
// coming, released after a second without one (a timer that does not keep Node alive), so an idle lab holds none
// of them.
const spare = new Map();  // byteLength → ArrayBuffer[]
let release;
function fresh(Type, length) {
  const b = spare.get(length * Type.BYTES_PER_ELEMENT)?.pop();
  return b ? new Type(b) : new Type(length);
}

/** Gives buffers of finished parts back for reuse (the caller no longer uses them). */
export function recycle(arrays) {
  const seen = new Set();  // (a buffer listed twice would later back two arrays at once)
  for (const a of arrays) {
    const b = a?.buffer;
    if (!b || seen.has(b) || b.byteLength < 1 << 16 || a.byteOffset !== 0 || a.byteLength !== b.byteLength) continue;
    seen.add(b);
    const list = spare.get(b.byteLength) ?? spare.set(b.byteLength, []).get(b.byteLength);
    if (list.length < 8) list.push(b);
  }
  clearTimeout(release);
  release = setTimeout(() => spare.clear(), 1000);
  release.unref?.();
}

// Rows [r0, r1) of heads [h0, h1) of batch item b of a [batch, H, S, D] tensor in a layout (0 bhsd, 1 bshd),
// as a [1, h1 − h0, r1 − r0, D] tensor in the same layout; `put` writes such a part back.
function take(x, layout, H, S, D, b, h0, h1, r0, r1) {
  const part = fresh(x.constructor, (h1 - h0) * (r1 - r0) * D);
  if (layout === 0 && (h1 - h0 === 1 || (r0 === 0 && r1 === S))) {
    part.set(x.subarray(((b * H + h0) * S + r0) * D, ((b * H + h1 - 1) * S + r1) * D));
  } else if (layout === 0) {
    const n = (r1 - r0) * D;
    for (let h = h0; h < h1; ++h) part.set(x.subarray(((b * H + h) * S + r0) * D, ((b * H + h) * S + r0) * D + n), (h - h0) * n);
  } else if (h0 === 0 && h1 === H) {
    part.set(x.subarray((b * S + r0) * H * D, (b * S + r1) * H * D));
  } else {
    const n = (h1 - h0) * D;
    for (let s = r0; s < r1; ++s) part.set(x.subarray(((b * S + s) * H + h0) * D, ((b * S + s) * H + h0) * D + n), (s - r0) * n);
  }
  return part;
}

function put(target, part, layout, H, S, D, b, h0, h1, r0, r1) {
  if (layout === 0 && (h1 - h0 === 1 || (r0 === 0 && r1 === S))) {
    target.set(part, ((b * H + h0) * S + r0) * D);
  } else if (layout === 0) {
    const n = (r1 - r0) * D;
    for (let h = h0; h < h1; ++h) target.set(part.subarray((h - h0) * n, (h - h0 + 1) * n), ((b * H + h) * S + r0) * D);
  } else if (h0 === 0 && h1 === H) {
    target.set(part, (b * S + r0) * H * D);
  } else {
    const n = (h1 - h0) * D;
    for (let s = r0; s < r1; ++s) target.set(part.subarray((s - r0) * n, (s - r0 + 1) * n), ((b * S + s) * H + h0) * D);
  }
}

// The mask's shape as the engine broadcasts it ([batch, heads, nq, keys], each 1 or the full size, keys ≤ nk), or
// null when the engine would refuse it (the synchronous call then names the problem).
function maskDims(o) {
  if (!o.mask) return o.maskShape ? null : [1, 1, 1, o.nk];
  const full = [o.batch, o.heads, o.nq, o.nk];
  const shape = o.maskShape?.length ? o.maskShape : [o.nq, o.nk]; // [] is no shape to the engine: [nq, nk]
  if (shape.length > 4 || !shape.every((x) => Number.isInteger(x) && x >= 1)) return null;
  const m = [1, 1, 1, 1];
  shape.forEach((x, i) => (m[4 - shape.length + i] = x));
  for (let d = 0; d < 4; ++d) if (!(m[d] === 1 || m[d] === full[d] || (d === 3 && m[d] < full[d]))) return null;
  return m[0] * m[1] * m[2] * m[3] === o.mask.length ? m : null;
}

/**
 * The parts of a call, or null when it is not for splitting (anything the synchronous form would refuse or
 * treat specially: the caller runs that one). `parts` is the most parts wanted; `minWork` the least work (in
 * multiply-adds) worth a part.
 */
export function planAttention(opts, parts, minWork) {
  const fn = 'attention';
  let o, want;
  try {
    options(fn, opts);
    checkKeys(fn, opts, KEYS);
    if (opts.cache !== undefined && opts.cache !== null) return null;
    o = readAttentionOptions(fn, opts, undefined);
    want = Object.fromEntries([...MATRICES, ['returnLse', 'lse']].map(([key]) => [key, flag(fn, key, opts[key])]));
    if (opts.out !== undefined && opts.out !== null && !isF32(opts.out)) return null;
  } catch {
    return null;
  }
  const { batch, heads, kvHeads, nq, nk, dk, dv } = o;
  if (![batch, heads, kvHeads, nq, nk, dk, dv].every((x) => x !== undefined && isSize(x)) || heads % kvHeads !== 0) return null;
  const group = heads / kvHeads;
  if (o.q.length !== batch * heads * nq * dk || o.k.length !== batch * kvHeads * nk * dk || o.v.length !== batch * kvHeads * nk * dv) return null;
  const out = opts.out ?? undefined;
  if (out && out.length !== batch * heads * nq * dv) return null;
  if (o.keyLengths && o.keyLengths.length !== batch) return null;
  if (o.alibi && o.alibi.length !== heads) return null;
  const m = maskDims(o);
  if (!m) return null;
  const matrices = MATRICES.filter(([key]) => want[key]).length;
  // Beyond what one module's memory holds the synchronous call refuses; parts would not.
  const bytes = 4 * (o.q.length + o.k.length + o.v.length + batch * heads * nq * (dv + matrices * nk + 1)) + (o.mask?.byteLength ?? 0);
  if (bytes > 2 ** 31 - 2 ** 20) return null;

  // The work of each block of rows (cuts fall between blocks): the keys a row sees (as the engine's key_span, taken
  // at the block's middle row: exact for the straight edges of causal masks and windows), plus its fixed cost. Per
  // batch item, shared by items with the same key count.
  const align = BLOCK / gcd(BLOCK, group), blocks = Math.ceil(nq / align);
  const [wl, wr] = o.window;
  const causal = o.causal !== 0, topLeft = o.causal === 2;
  const itemRows = [];  // per batch item: prefix sums of the block costs, [blocks + 1]
  const byKeys = new Map();
  for (let b = 0; b < batch; ++b) {
    const keys = Math.min(nk, o.keyLengths ? Math.max(0, o.keyLengths[b]) : nk), end = Math.min(keys, m[3] === 1 ? nk : m[3]); // a key dimension of 1 broadcasts
    if (byKeys.has(keys)) {
      itemRows.push(byKeys.get(keys));
      continue;
    }
    const prefix = new Float64Array(blocks + 1);
    for (let j = 0; j < blocks; ++j) {
      const r0 = j * align, r1 = Math.min(nq, r0 + align), i = (r0 + r1 - 1) / 2;
      let lo = 0, hi = end;
      if (causal || wl >= 0 || wr >= 0) {
        const d = i + (topLeft ? 0 : keys - nq);
        if (causal) hi = Math.min(hi, d + 1);
        if (wr >= 0) hi = Math.min(hi, d + wr + 1);
        if (wl >= 0) lo = Math.max(lo, d - wl);
      }
      prefix[j + 1] = prefix[j] + (r1 - r0) * (Math.max(0, hi - lo) + ROW_COST);
    }
    byKeys.set(keys, prefix);
    itemRows.push(prefix);
  }
  const items = batch * kvHeads;
  const itemCost = (item) => itemRows[Math.floor(item / kvHeads)][blocks];
  let total = 0;
  for (let item = 0; item < items; ++item) total += itemCost(item);
  const work = total * group * (dk + dv);
  const count = Math.max(1, Math.min(parts, Math.floor(work / minWork)));

  // Cut points along (item, row), at equal shares of the cost, between blocks.
  const cuts = [[0, 0]];
  let item = 0, before = 0;  // cost of the items before `item`
  for (let p = 1; p < count; ++p) {
    const target = (total * p) / count;
    while (item < items && before + itemCost(item) <= target) before += itemCost(item++);
    if (item >= items) break;
    const prefix = itemRows[Math.floor(item / kvHeads)];
    let lo = 0, hi = blocks;  // first block boundary whose prefix reaches the target
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before + prefix[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && target - (before + prefix[lo - 1]) < before + prefix[lo] - target) --lo;  // the nearer boundary
    const row = Math.min(nq, lo * align);
    const cut = row >= nq ? [item + 1, 0] : [item, row];
    const last = cuts[cuts.length - 1];
    if (cut[0] > last[0] || (cut[0] === last[0] && cut[1] > last[1])) cuts.push(cut);
  }
  cuts.push([items, 0]);

  // Each part as rectangles: one batch item, a run of K/V heads, one run of rows.
  const plan = [];
  for (let p = 0; p + 1 < cuts.length; ++p) {
    const [i0, r0] = cuts[p], [i1, r1] = cuts[p + 1];
    const rects = [];
    let it = i0;
    if (r0 > 0) {
      rects.push({ b: Math.floor(it / kvHeads), g0: it % kvHeads, g1: (it % kvHeads) + 1, r0, r1: i1 === it ? r1 : nq });
      ++it;
    }
    while (it < i1) {
      const b = Math.floor(it / kvHeads), g0 = it % kvHeads, g1 = Math.min(kvHeads, g0 + (i1 - it));
      rects.push({ b, g0, g1, r0: 0, r1: nq });
      it += g1 - g0;
    }
    if (r1 > 0 && i1 < items && (r0 === 0 || i1 !== i0)) rects.push({ b: Math.floor(i1 / kvHeads), g0: i1 % kvHeads, g1: (i1 % kvHeads) + 1, r0: 0, r1 });
    if (rects.length) plan.push(rects);
  }
  return { o, m, want, out, group, plan, work };
}

function gcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The sub-calls of one part, with the buffers to transfer: each holds only what its rectangle reads. */
export function partCalls({ o, m, want, group }, rects, opts) {
  const transfer = [];
  const own = (x) => (transfer.push(x.buffer), x);
  const calls = rects.map(({ b, g0, g1, r0, r1 }) => {
    const h0 = g0 * group, h1 = g1 * group;
    const sub = {
      q: own(take(o.q, o.layout, o.heads, o.nq, o.dk, b, h0, h1, r0, r1)),
      k: own(take(o.k, o.layout, o.kvHeads, o.nk, o.dk, b, g0, g1, 0, o.nk)),
      v: own(take(o.v, o.layout, o.kvHeads, o.nk, o.dv, b, g0, g1, 0, o.nk)),
      batch: 1, heads: h1 - h0, kvHeads: g1 - g0, nq: o.nq, nk: o.nk, dk: o.dk, dv: o.dv,
    };
    for (const key of ['layout', 'causal', 'window', 'scale', 'softcap']) if (opts[key] !== undefined) sub[key] = opts[key];
    for (const [key] of [...MATRICES, ['returnLse']]) if (want[key]) sub[key] = true;
    if (o.mask) {
      const [mh0, mh1] = m[1] === 1 ? [0, 1] : [h0, h1], [mr0, mr1] = m[2] === 1 ? [0, 1] : [r0, r1];
      sub.mask = own(take(o.mask, 0, m[1], m[2], m[3], m[0] === 1 ? 0 : b, mh0, mh1, mr0, mr1));
      sub.maskShape = [1, mh1 - mh0, mr1 - mr0, m[3]];
    }
    if (o.keyLengths) sub.keyLengths = own(Int32Array.of(o.keyLengths[b]));
    if (o.alibi) sub.alibiSlopes = own(o.alibi.slice(h0, h1));
    sub.out = own(fresh(Float32Array, (h1 - h0) * (r1 - r0) * o.dv));
    return { opts: sub, part: { qBegin: r0, qEnd: r1 } };
  });
  return { calls, transfer };
}

/** The result to merge the parts into: `out` for the output when given, fresh arrays otherwise. */
export function attentionResult({ o, want, out }) {
  const rows = o.batch * o.heads * o.nq;
  const result = { output: out ?? new Float32Array(rows * o.dv) };
  for (const [key, name] of MATRICES) if (want[key]) result[name] = new Float32Array(rows * o.nk);
  if (want.returnLse) result.lse = new Float32Array(rows);
  return result;
}

/** Part p's results (values[c]: its sub-call c's) into their rows of `result`. */
export function mergeAttentionPart({ o, group, plan }, result, p, values) {
  plan[p].forEach(({ b, g0, g1, r0, r1 }, c) => {
    const got = values[c], h0 = g0 * group, h1 = g1 * group;
    put(result.output, got.output, o.layout, o.heads, o.nq, o.dv, b, h0, h1, r0, r1);
    for (const [, name] of MATRICES) if (result[name]) put(result[name], got[name], 0, o.heads, o.nq, o.nk, b, h0, h1, r0, r1);
    if (result.lse) put(result.lse, got.lse, 0, o.heads, o.nq, 1, b, h0, h1, r0, r1);
  });
}

/** The merged result of every part (results[p][c]: the result of part p's sub-call c). */
export function mergeAttention(plan, results) {
  const result = attentionResult(plan);
  results.forEach((values, p) => mergeAttentionPart(plan, result, p, values));
  return result;
}

// ---- attentionBackwardAsync: parts over (batch item, K/V head), whole rows. A K/V head's gradients sum over its
// query heads' rows, so a part takes whole K/V heads with every query head of their group: each sub-call's
// dq, dk and dv are exactly the whole call's for those heads (the backward of one head reads only that head).

const BACKWARD_KEYS = ['q', 'k', 'v', 'output', 'lse', 'dOutput', 'batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'layout',
  'causal', 'window', 'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes', 'out'];
const GRADS = ['dq', 'dk', 'dv'];

/** The parts of a backward call (as planAttention), or null when it is not for splitting. */
export function planBackward(opts, parts, minWork) {
  const fn = 'attentionBackward';
  let o;
  const out = {};
  try {
    options(fn, opts);
    if (opts.cache !== undefined) return null;
    checkKeys(fn, opts, BACKWARD_KEYS);
    o = readAttentionOptions(fn, opts, undefined);
    if (opts.out !== undefined && opts.out !== null) {
      if (typeof opts.out !== 'object' || Array.isArray(opts.out) || ArrayBuffer.isView(opts.out)) return null;
      checkKeys(fn, opts.out, GRADS);
      for (const name of GRADS) if (opts.out[name] !== undefined && opts.out[name] !== null) out[name] = opts.out[name];
    }
  } catch {
    return null;
  }
  const { batch, heads, kvHeads, nq, nk, dk, dv } = o;
  if (![batch, heads, kvHeads, nq, nk, dk, dv].every((x) => x !== undefined && isSize(x)) || heads % kvHeads !== 0) return null;
  const group = heads / kvHeads, rows = batch * heads * nq;
  const lengths = { q: rows * dk, k: batch * kvHeads * nk * dk, v: batch * kvHeads * nk * dv, output: rows * dv, dOutput: rows * dv, lse: rows };
  for (const [name, want] of Object.entries(lengths)) {
    const x = name in o ? o[name] : opts[name];
    if (!isF32(x) || x.length !== want) return null;
  }
  for (const [name, like] of [['dq', 'q'], ['dk', 'k'], ['dv', 'v']]) if (out[name] && (!isF32(out[name]) || out[name].length !== lengths[like])) return null;
  // Beyond what one module's memory holds the synchronous call refuses (its inputs and gradients in one arena);
  // parts would not.
  const held = Object.values(lengths).reduce((a, b) => a + b, 0) + lengths.q + lengths.k + lengths.v;
  if (4 * held + (o.mask?.byteLength ?? 0) > 2 ** 31 - 2 ** 20) return null;
  if (o.keyLengths && o.keyLengths.length !== batch) return null;
  if (o.alibi && o.alibi.length !== heads) return null;
  const m = maskDims(o);
  if (!m) return null;
  const items = batch * kvHeads;
  // The work of an item: its query heads' rows times the keys they see (key lengths differ by batch item).
  const itemWork = (item) => {
    const b = Math.floor(item / kvHeads);
    return group * nq * (o.keyLengths ? Math.max(1, Math.min(nk, o.keyLengths[b])) : nk) * (2 * dk + 3 * dv);
  };
  let work = 0;
  for (let i = 0; i < items; ++i) work += itemWork(i);
  const count = Math.max(1, Math.min(parts, items, Math.floor(work / minWork)));
  const plan = [];
  let item = 0, done = 0;
  for (let p = 0; p < count && item < items; ++p) {
    const target = (work * (p + 1)) / count, first = item;
    while (item < items && (item === first || done + itemWork(item) / 2 <= target)) done += itemWork(item++);
    if (p === count - 1) item = items;
    const rects = [];
    for (let it = first; it < item; ) {
      const b = Math.floor(it / kvHeads), g0 = it % kvHeads, g1 = Math.min(kvHeads, g0 + (item - it));
      rects.push({ b, g0, g1 });
      it += g1 - g0;
    }
    plan.push(rects);
  }
  return { o, m, out, group, plan, work, saved: { output: opts.output, lse: opts.lse, dOutput: opts.dOutput } };
}

/** The sub-calls of one backward part, with the buffers to transfer. */
export function backwardCalls({ o, m, group, saved }, rects, opts) {
  const transfer = [];
  const own = (x) => (transfer.push(x.buffer), x);
  const calls = rects.map(({ b, g0, g1 }) => {
    const h0 = g0 * group, h1 = g1 * group;
    const sub = {
      q: own(take(o.q, o.layout, o.heads, o.nq, o.dk, b, h0, h1, 0, o.nq)),
      k: own(take(o.k, o.layout, o.kvHeads, o.nk, o.dk, b, g0, g1, 0, o.nk)),
      v: own(take(o.v, o.layout, o.kvHeads, o.nk, o.dv, b, g0, g1, 0, o.nk)),
      output: own(take(saved.output, o.layout, o.heads, o.nq, o.dv, b, h0, h1, 0, o.nq)),
      dOutput: own(take(saved.dOutput, o.layout, o.heads, o.nq, o.dv, b, h0, h1, 0, o.nq)),
      lse: own(take(saved.lse, 0, o.heads, o.nq, 1, b, h0, h1, 0, o.nq)),
      batch: 1, heads: h1 - h0, kvHeads: g1 - g0, nq: o.nq, nk: o.nk, dk: o.dk, dv: o.dv,
    };
    for (const key of ['layout', 'causal', 'window', 'scale', 'softcap']) if (opts[key] !== undefined) sub[key] = opts[key];
    if (o.mask) {
      const [mh0, mh1] = m[1] === 1 ? [0, 1] : [h0, h1];
      sub.mask = own(take(o.mask, 0, m[1], m[2], m[3], m[0] === 1 ? 0 : b, mh0, mh1, 0, m[2]));
      sub.maskShape = [1, mh1 - mh0, m[2], m[3]];
    }
    if (o.keyLengths) sub.keyLengths = own(Int32Array.of(o.keyLengths[b]));
    if (o.alibi) sub.alibiSlopes = own(o.alibi.slice(h0, h1));
    return sub;
  });
  return { calls, transfer };
}

/** The gradients of every part, merged (into out's buffers when given: only now, once every part succeeded). */
export function mergeBackward({ o, out, group, plan }, results) {
  const result = {
    dq: out.dq ?? new Float32Array(o.q.length), dk: out.dk ?? new Float32Array(o.k.length), dv: out.dv ?? new Float32Array(o.v.length),
  };
  plan.forEach((rects, p) =>
    rects.forEach(({ b, g0, g1 }, c) => {
      const got = results[p][c];
      put(result.dq, got.dq, o.layout, o.heads, o.nq, o.dk, b, g0 * group, g1 * group, 0, o.nq);
      put(result.dk, got.dk, o.layout, o.kvHeads, o.nk, o.dk, b, g0, g1, 0, o.nk);
      put(result.dv, got.dv, o.layout, o.kvHeads, o.nk, o.dv, b, g0, g1, 0, o.nk);
    }),
  );
  return result;
}
