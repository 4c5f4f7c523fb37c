// attentionAsync's and attentionBackwardAsync's plans (the backward's at the end): a call cut into parts of equal
// work over (batch item, K/V head, query rows), each part sent as sub-calls that hold only what they read — their q
// rows, their K/V heads, their slices of the mask, the key lengths and the ALiBi slopes — with the engine's query
// range (q_begin/q_end: the diagonals and ALiBi still measure from each row's position in the whole call), and
// merged back row by row. A row's result does not depend on how the rows are cut (the engine's query range is
// bit-identical wherever it cuts), so the parts only balance the work. The plans start from a call the engine has
// checked on the calling thread: its sizes, layout and the mask's broadcast shape are the ones the engine resolved
// (read from the checked descriptor), never derived here. Everything here is cutting and copying; each sub-call is
// a descriptor of the same engine call, validated again by the worker's engine.

const MATRICES = [['returnScores', 'scores'], ['returnWeights', 'weights'], ['returnRawScores', 'rawScores']];
// The outputs asked for: option, the descriptor's flag.
const RETURNS = [['returnScores', 'return_scores'], ['returnWeights', 'return_weights'], ['returnRawScores', 'return_raw_scores'],
  ['returnLse', 'return_lse']];

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

// The sizes and options a checked descriptor resolved (O fields hold their value at F[name]).
function resolved(d, F) {
  const m = [0, 1, 2, 3].map((i) => d[F[`mask_broadcast${i}`]]);
  return {
    batch: d[F.batch], heads: d[F.heads], kvHeads: d[F.kv_heads], nq: d[F.nq], nk: d[F.nk], dk: d[F.dk], dv: d[F.dv],
    layout: d[F.layout], causal: d[F.causal], window: [d[F.window_left], d[F.window_right]], m: m[0] ? m : null,
  };
}

/**
 * The parts of a call checked by the engine (attention.js's prepare: { d, given }), F its fields. `parts` is the
 * most parts wanted; `minWork` the least work (in multiply-adds) worth a part.
 */
export function planAttention({ d, given }, F, parts, minWork) {
  const o = resolved(d, F);
  const { batch, heads, kvHeads, nq, nk, dk, dv } = o;
  const group = heads / kvHeads;
  const want = Object.fromEntries(RETURNS.map(([key, field]) => [key, d[F[field]] === 1]));
  const m = o.m ?? [1, 1, 1, nk];
  const keyLengths = given.keyLengths;

  // The work of each block of rows (cuts fall between blocks): the keys a row sees (as the engine's key_span, taken
  // at the block's middle row: exact for the straight edges of causal masks and windows), plus its fixed cost. Per
  // batch item, shared by items with the same key count.
  const align = BLOCK / gcd(BLOCK, group), blocks = Math.ceil(nq / align);
  const [wl, wr] = o.window;
  const causal = o.causal !== 0, topLeft = o.causal === 2;
  const itemRows = [];  // per batch item: prefix sums of the block costs, [blocks + 1]
  const byKeys = new Map();
  for (let b = 0; b < batch; ++b) {
    const keys = Math.min(nk, keyLengths ? Math.max(0, keyLengths[b]) : nk), end = Math.min(keys, m[3] === 1 ? nk : m[3]); // a key dimension of 1 broadcasts
    if (byKeys.has(keys)) {
      itemRows.push(byKeys.get(keys));
      continue;
    }
    const prefix = new Float64Array(blocks + 1);
    for (let j = 0; j < blocks; ++j) {
      const r0 = j * align, r1 = Math.min(nq, r0 + align), i = (r0 + r1 - 1) / 2;
      let lo = 0, hi = end;
      if (causal || wl >= 0 || wr >= 0) {
        const diagonal = i + (topLeft ? 0 : keys - nq);
        if (causal) hi = Math.min(hi, diagonal + 1);
        if (wr >= 0) hi = Math.min(hi, diagonal + wr + 1);
        if (wl >= 0) lo = Math.max(lo, diagonal - wl);
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
  return { d: d.slice(), F, given, o, m: o.m, want, out: given.out, group, plan, work }; // (d: the call's own copy)
}

function gcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}

// A sub-call's descriptor: the whole call's, for batch item b's K/V heads g0…g1 (query heads h0…h1) and the
// query rows r0…r1 (the engine's query range), with the mask's slice shaped [1, heads, rows, keys].
function subCall(d, F, { b, g0, g1, r0, r1, h0, h1, mask }) {
  const sub = d.slice();
  sub[F.batch] = 1, sub[F.heads] = h1 - h0, sub[F.kv_heads] = g1 - g0;
  if (r0 !== undefined) sub[F.q_begin] = r0, sub[F.q_end] = r1;
  if (mask) {
    sub[F.mask_dims] = 4;
    mask.forEach((x, i) => (sub[F[`mask_shape${i}`]] = x));
  }
  return sub;
}

// The mask's slice of one sub-call: [1, heads or 1, rows or 1, keys] of the broadcast shape m.
function maskSlice(mask, m, b, h0, h1, r0, r1) {
  const [mh0, mh1] = m[1] === 1 ? [0, 1] : [h0, h1], [mr0, mr1] = m[2] === 1 ? [0, 1] : [r0, r1];
  return { data: take(mask, 0, m[1], m[2], m[3], m[0] === 1 ? 0 : b, mh0, mh1, mr0, mr1), shape: [1, mh1 - mh0, mr1 - mr0, m[3]] };
}

/** The sub-calls of one part ({ d, given } each), with the buffers to transfer: each holds only what its rectangle reads. */
export function partCalls({ d, F, given, o, m, group }, rects) {
  const transfer = [];
  const own = (x) => (transfer.push(x.buffer), x);
  const mask = given.mask ?? given.boolMask, maskKey = given.mask ? 'mask' : 'boolMask';
  const calls = rects.map(({ b, g0, g1, r0, r1 }) => {
    const h0 = g0 * group, h1 = g1 * group;
    const part = {
      q: own(take(given.q, o.layout, o.heads, o.nq, o.dk, b, h0, h1, r0, r1)),
      k: own(take(given.k, o.layout, o.kvHeads, o.nk, o.dk, b, g0, g1, 0, o.nk)),
      v: own(take(given.v, o.layout, o.kvHeads, o.nk, o.dv, b, g0, g1, 0, o.nk)),
      out: own(fresh(Float32Array, (h1 - h0) * (r1 - r0) * o.dv)),
    };
    let shape;
    if (mask) {
      const slice = maskSlice(mask, m, b, h0, h1, r0, r1);
      part[maskKey] = own(slice.data), shape = slice.shape;
    }
    if (given.keyLengths) part.keyLengths = own(Int32Array.of(given.keyLengths[b]));
    if (given.alibiSlopes) part.alibiSlopes = own(given.alibiSlopes.slice(h0, h1));
    return { d: subCall(d, F, { b, g0, g1, r0, r1, h0, h1, mask: shape }), given: part };
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
    put(result.output, got.out, o.layout, o.heads, o.nq, o.dv, b, h0, h1, r0, r1);
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

/** The parts of a backward call checked by the engine (attention-backward.js's prepare: { d, given }), as planAttention. */
export function planBackward({ d, given }, F, parts, minWork) {
  const o = resolved(d, F);
  const { batch, heads, kvHeads, nq, nk, dk, dv } = o;
  const group = heads / kvHeads;
  const items = batch * kvHeads;
  // The work of an item: its query heads' rows times the keys they see (key lengths differ by batch item).
  const itemWork = (item) => {
    const b = Math.floor(item / kvHeads);
    return group * nq * (given.keyLengths ? Math.max(1, Math.min(nk, given.keyLengths[b])) : nk) * (2 * dk + 3 * dv);
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
  return { d: d.slice(), F, given, o, m: o.m, group, plan, work }; // (d: the call's own copy)
}

/** The sub-calls of one backward part ({ d, given } each), with the buffers to transfer. */
export function backwardCalls({ d, F, given, o, m, group }, rects) {
  const transfer = [];
  const own = (x) => (transfer.push(x.buffer), x);
  const mask = given.mask ?? given.boolMask, maskKey = given.mask ? 'mask' : 'boolMask';
  const calls = rects.map(({ b, g0, g1 }) => {
    const h0 = g0 * group, h1 = g1 * group;
    const part = {
      q: own(take(given.q, o.layout, o.heads, o.nq, o.dk, b, h0, h1, 0, o.nq)),
      k: own(take(given.k, o.layout, o.kvHeads, o.nk, o.dk, b, g0, g1, 0, o.nk)),
      v: own(take(given.v, o.layout, o.kvHeads, o.nk, o.dv, b, g0, g1, 0, o.nk)),
      output: own(take(given.output, o.layout, o.heads, o.nq, o.dv, b, h0, h1, 0, o.nq)),
      dOutput: own(take(given.dOutput, o.layout, o.heads, o.nq, o.dv, b, h0, h1, 0, o.nq)),
      savedLse: own(take(given.savedLse, 0, o.heads, o.nq, 1, b, h0, h1, 0, o.nq)),
    };
    let shape;
    if (mask) {
      const slice = maskSlice(mask, m, b, h0, h1, 0, m[2]);
      part[maskKey] = own(slice.data), shape = slice.shape;
    }
    if (given.keyLengths) part.keyLengths = own(Int32Array.of(given.keyLengths[b]));
    if (given.alibiSlopes) part.alibiSlopes = own(given.alibiSlopes.slice(h0, h1));
    return { d: subCall(d, F, { b, g0, g1, h0, h1, mask: shape }), given: part };
  });
  return { calls, transfer };
}

/** The gradients of every part, merged (into out's buffers when given: only now, once every part succeeded). */
export function mergeBackward({ o, given, group, plan }, results) {
  const result = {
    dq: given.gradQ ?? new Float32Array(given.q.length), dk: given.gradK ?? new Float32Array(given.k.length),
    dv: given.gradV ?? new Float32Array(given.v.length),
  };
  plan.forEach((rects, p) =>
    rects.forEach(({ b, g0, g1 }, c) => {
      const got = results[p][c];
      put(result.dq, got.gradQ, o.layout, o.heads, o.nq, o.dk, b, g0 * group, g1 * group, 0, o.nq);
      put(result.dk, got.gradK, o.layout, o.kvHeads, o.nk, o.dk, b, g0, g1, 0, o.nk);
      put(result.dv, got.gradV, o.layout, o.kvHeads, o.nk, o.dv, b, g0, g1, 0, o.nk);
    }),
  );
  return result;
}
