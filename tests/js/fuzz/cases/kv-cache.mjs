// KV caches: creating one, appending to it (in either layout, with RoPE on the way in: default positions, given
// ones, given tables) and attention over it with every option of the forward. A case holds the cache's options
// and the appends made before the call; a rejected call must leave the cache exactly as it was.
import { randomAttentionCase } from '../../support/attention-cases.mjs';
import { at, attentionFullRef } from '../../support/attention-full-ref.mjs';
import { assertWithin } from '../../support/reference.mjs';
import { ropeReference, ropeTables } from '../../support/rope-reference.mjs';
import { checkForward, drawSizes, sharedMutations } from './attention.mjs';
import { bad, badSize, notF32, offByOne, outBuffer, pickMutation, poisoned, unknownKey } from './common.mjs';

// Positions [s0, s1) of the sequence axis of a [B, H, n, d] tensor in layout `from`, as [B, H, s1 − s0, d] in `to`.
export function slice(x, B, H, n, d, s0, s1, from, to = from) {
  const r = new Float32Array(B * H * (s1 - s0) * d);
  for (let b = 0; b < B; ++b) for (let h = 0; h < H; ++h) for (let s = s0; s < s1; ++s) for (let c = 0; c < d; ++c)
    r[at(to, b, h, s - s0, c, H, s1 - s0, d)] = x[at(from, b, h, s, c, H, n, d)];
  return r;
}

// `n` tokens cut into 1–3 runs.
function runs(r, n) {
  const cuts = new Set([0, n]);
  for (let i = r.int(0, 2); i > 0; --i) if (n > 1) cuts.add(r.int(1, n - 1));
  const sorted = [...cuts].sort((a, b) => a - b);
  return sorted.slice(1).map((s1, i) => [sorted[i], s1]);
}

function drawCreate(r, { batch, kvHeads, dk, dv, capacity, layout }) {
  const o = { dk, dv, capacity };
  if (batch > 1 || r.bool(0.2)) o.batch = batch;
  if (kvHeads > 1 || r.bool(0.2)) o.kvHeads = kvHeads;
  if (layout !== 'bhsd' || r.bool(0.3)) o.layout = layout;
  return o;
}

const sizesOfCreate = (o) => ({ batch: o.batch ?? 1, kvHeads: o.kvHeads ?? 1, dk: o.dk, dv: o.dv, capacity: o.capacity, layout: o.layout ?? 'bhsd' });

function drawAttention(r) {
  const c = randomAttentionCase(r, drawSizes(r));
  const { batch, kvHeads, nk, dk, dv, layout } = c;
  const cacheLayout = r.bool() ? layout : r.pick(['bhsd', 'bshd']);
  const create = drawCreate(r, { batch, kvHeads, dk, dv, capacity: nk + r.int(0, 5), layout: cacheLayout });
  const appends = runs(r, nk).map(([s0, s1]) => ({
    k: slice(c.k, batch, kvHeads, nk, dk, s0, s1, layout), v: slice(c.v, batch, kvHeads, nk, dv, s0, s1, layout),
    opts: layout === cacheLayout ? {} : { layout },
  }));
  const opts = { q: c.q };
  for (const key of ['layout', 'causal', 'window', 'scale', 'softcap', 'mask', 'maskShape', 'keyLengths', 'alibiSlopes']) if (c[key] !== undefined) opts[key] = c[key];
  if (c.heads !== kvHeads || r.bool(0.2)) opts.heads = c.heads;
  if (r.bool(0.3)) opts.nq = c.nq;
  for (const flag of ['returnScores', 'returnWeights', 'returnRawScores', 'returnLse']) if (r.bool(0.2)) opts[flag] = true;
  if (r.bool(0.2)) opts.out = outBuffer(r, c.q.length / dk * dv);
  return { create, appends, call: { kind: 'attention', opts }, full: c };
}

function drawAppend(r) {
  const batch = r.int(1, 3), kvHeads = r.int(1, 3), half = r.int(1, 9), dk = 2 * half + r.pick([0, 0, 1, 2]), dv = r.int(1, 9);
  const before = r.int(0, 6), t = r.int(1, 6), layout = r.pick(['bhsd', 'bshd']);
  const create = drawCreate(r, { batch, kvHeads, dk, dv, capacity: before + 2 * t + r.int(0, 3), layout: r.pick(['bhsd', 'bshd']) });  // (room for the call twice: valid, then with one thing wrong)
  const appends = before ? [{ k: r.array(batch * kvHeads * before * dk), v: r.array(batch * kvHeads * before * dv), opts: { layout: create.layout ?? 'bhsd' } }] : [];
  const opts = {};
  if (layout !== (create.layout ?? 'bhsd') || r.bool(0.3)) opts.layout = layout;
  if (r.bool(0.5) || dk % 2) {
    const rope = {};
    const rotary = dk % 2 || r.bool(0.2) ? 2 * half : dk;
    if (rotary !== dk) rope.rotaryDim = rotary;
    if (r.bool(0.3)) rope.interleaved = r.bool();
    if (r.bool(0.3)) rope.positions = Array.from({ length: r.bool() ? t : batch * t }, () => r.int(0, 50));
    if (r.bool(0.2)) {
      const tables = ropeTables(before + t + 51, rotary, 500);
      rope.cos = tables.cos, rope.sin = tables.sin;
    } else if (r.bool(0.3)) rope.base = r.pick([1, 500, 10000]);
    opts.rope = rope;
  }
  return { create, appends, call: { kind: 'append', k: r.array(batch * kvHeads * t * dk), v: r.array(batch * kvHeads * t * dv), opts } };
}

function drawCreateCall(r) {
  const create = drawCreate(r, { batch: r.int(1, 3), kvHeads: r.int(1, 3), dk: r.int(1, 16), dv: r.int(1, 16), capacity: r.int(1, 64), layout: r.pick(['bhsd', 'bshd']) });
  return { create: null, appends: [], call: { kind: 'create', opts: create } };
}

// The cache's contents as the engine reports them, for "unchanged" checks.
function contents(cache) {
  if (!cache || cache.disposed) return null;
  return { lengths: Array.from(cache.lengths), keys: cache.keys(), values: cache.values() };
}

export const kvCache = {
  op: 'kvCache',
  fn: 'kvCache',
  prefix: (a) => (a.call.kind === 'append' ? 'kvCache.append' : a.call.kind === 'create' ? 'kvCache' : 'attention'),
  draw(r) {
    const kind = r.pick(['attention', 'attention', 'append', 'append', 'create']);
    return kind === 'attention' ? drawAttention(r) : kind === 'append' ? drawAppend(r) : drawCreateCall(r);
  },
  setup(lab, a, env) {
    const ctx = { lab, live: lab.liveKvCaches };
    if (a.create) {
      ctx.cache = lab.kvCache(a.create);
      for (const { k, v, opts } of a.appends) ctx.cache.append(k, v, opts);
    }
    return ctx;
  },
  teardown(ctx) {
    ctx.cache?.dispose();
    ctx.dead?.dispose();
    ctx.foreign?.dispose();
    ctx.made?.dispose();
  },
  sync(lab, a, ctx) {
    const { call } = a;
    if (call.kind === 'create') {
      const made = lab.kvCache(call.opts);
      ctx.made?.dispose();
      return (ctx.made = made);
    }
    const cache = call.cache === 'disposed' ? ctx.dead : call.cache === 'foreign' ? ctx.foreign : ctx.cache;
    if (call.kind === 'append') return cache.append(call.k, call.v, call.opts);
    return lab.attention({ ...call.opts, cache });
  },
  async(lab, a, ctx) {
    if (a.call.kind !== 'attention') return null;  // (no async twin)
    const cache = a.call.cache === 'disposed' ? ctx.dead : a.call.cache === 'foreign' ? ctx.foreign : ctx.cache;
    return lab.attentionAsync({ ...a.call.opts, cache });
  },
  async prepare(a, ctx, env) {
    if (a.call.cache === 'disposed') (ctx.dead = ctx.lab.kvCache(a.create)).dispose();
    if (a.call.cache === 'foreign') ctx.foreign = (await env.otherLab(ctx.lab)).kvCache(a.create);
  },
  state: (ctx) => ({ cache: contents(ctx.cache), live: ctx.lab.liveKvCaches }),
  mutates: (a) => a.call.kind !== 'attention',
  outs: (a) => [a.call.opts?.out],
  identity: (a, got) => (a.call.kind === 'attention' ? [[a.call.opts?.out, got.output]] : []),
  // The valid call's effect: attention leaves the cache as it was; append adds exactly its tokens (rotated as asked);
  // create makes an empty cache of the sizes given.
  check(a, got, ctx, before) {
    const { call } = a;
    if (call.kind === 'create') {
      const s = sizesOfCreate(call.opts);
      const have = { batch: got.batch, kvHeads: got.kvHeads, dk: got.dk, dv: got.dv, capacity: got.capacity, layout: got.layout };
      if (JSON.stringify(have) !== JSON.stringify(s)) throw new Error(`the cache has ${JSON.stringify(have)}, asked for ${JSON.stringify(s)}`);
      if (got.lengths.some((x) => x !== 0)) throw new Error('a new cache is not empty');
      return;
    }
    if (call.kind === 'attention') {
      const c = a.full;
      checkForward(call.opts, got, attentionFullRef({ ...c, scale: c.scale === undefined ? undefined : Math.fround(c.scale) }));
      return;
    }
    if (got !== ctx.cache) throw new Error('append did not return its cache');
    const s = sizesOfCreate(a.create), layout = call.opts.layout ?? s.layout;
    const prev = before.cache.lengths[0], t = call.k.length / (s.batch * s.kvHeads * s.dk), now = contents(ctx.cache);
    if (now.lengths.some((x) => x !== prev + t)) throw new Error(`lengths ${now.lengths} after appending ${t} tokens to ${prev}`);
    const old = (x, d) => slice(x, s.batch, s.kvHeads, prev + t, d, 0, prev, 'bhsd');
    const fresh = (x, d) => slice(x, s.batch, s.kvHeads, prev + t, d, prev, prev + t, 'bhsd');
    const same = (x, y, what) => {
      if (!Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength))) throw new Error(`${what} differ`);
    };
    same(old(now.keys, s.dk), before.cache.keys, 'the keys held before the append');
    same(old(now.values, s.dv), before.cache.values, 'the values held before the append');
    same(fresh(now.values, s.dv), slice(call.v, s.batch, s.kvHeads, t, s.dv, 0, t, layout, 'bhsd'), 'the appended values');
    const k = slice(call.k, s.batch, s.kvHeads, t, s.dk, 0, t, layout, 'bhsd');
    if (!call.opts.rope) return same(fresh(now.keys, s.dk), k, 'the appended keys');
    const rope = call.opts.rope, p = rope.positions;
    const positionOf = p ? (b, i) => p[(p.length === t ? 0 : b * t) + i] : (b, i) => prev + i;
    const ref = ropeReference(k, { batch: s.batch, heads: s.kvHeads, dk: s.dk, layout: 'bhsd', positionOf, base: rope.base ?? 10000,
      rotaryDim: rope.rotaryDim ?? s.dk, interleaved: !!rope.interleaved, cos: rope.cos, sin: rope.sin });
    assertWithin(fresh(now.keys, s.dk), ref, 'the appended keys, rotated');
  },
  mutate(r, a) {
    const { call } = a;
    const withCall = (p) => ({ ...a, call: { ...call, ...p } });
    if (call.kind === 'create') {
      const o = call.opts, with_ = (p) => withCall({ opts: { ...o, ...p } });
      return pickMutation(r, [
        () => { const name = r.pick(['dk', 'dv', 'capacity']); return bad(`${name} left out`, with_({ [name]: undefined }), 'TypeError', [name]); },
        () => { const name = r.pick(['batch', 'kvHeads', 'dk', 'dv', 'capacity']), s = badSize(r); return bad(`${name} not a size`, with_({ [name]: s.value }), s.cls, [name]); },
        () => bad('layout not a layout', with_({ layout: r.pick(['bsdh', '']) }), 'RangeError', ['layout']),
        () => { const k = unknownKey(r, ['batch', 'kvHeads', 'dk', 'dv', 'capacity', 'layout']); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
        () => bad('capacity past 2^31 tokens', with_({ capacity: 2 ** 31 - r.int(1, 9), dk: 64, dv: 64 }), 'RangeError', ['capacity', 'dk', 'dv', 'batch', 'kvHeads'], 'past2^31'),
        () => bad('options not an object', withCall({ opts: r.pick([null, 5, undefined]) }), 'TypeError', ['options']),
      ]);
    }
    const s = sizesOfCreate(a.create);
    if (call.kind === 'append') {
      const o = call.opts, with_ = (p) => withCall({ opts: { ...o, ...p } }), rope = (p) => with_({ rope: { ...o.rope, ...p } });
      const held = a.appends.reduce((n, x) => n + x.k.length / (s.batch * s.kvHeads * s.dk), 0);
      const t = call.k.length / (s.batch * s.kvHeads * s.dk), left = s.capacity - held - t;  // (once the valid append is in)
      return pickMutation(r, [
        () => { const w = notF32(r, call.k); return bad('k not a Float32Array', withCall({ k: w.value }), w.cls, ['k']); },
        () => bad('k of the wrong length', withCall({ k: offByOne(r, call.k) }), 'RangeError', ['k']),
        () => bad('v of the wrong length', withCall({ v: offByOne(r, call.v) }), 'RangeError', ['v']),
        () => bad('k holds NaN or ±Infinity', withCall({ k: poisoned(r, call.k) }), 'RangeError', ['k']),
        () => bad('v holds NaN or ±Infinity', withCall({ v: poisoned(r, call.v) }), 'RangeError', ['v']),
        () => bad('past capacity', withCall({ k: new Float32Array(s.batch * s.kvHeads * (left + 1) * s.dk), v: new Float32Array(s.batch * s.kvHeads * (left + 1) * s.dv) }), 'RangeError', ['capacity']),
        () => bad('layout not a layout', with_({ layout: 'bsdh' }), 'RangeError', ['layout']),
        () => bad('rope not an options object', with_({ rope: r.pick([10000, 'rope', true]) }), 'TypeError', ['rope']),
        () => bad('rope.rotaryDim 0', rope({ rotaryDim: 0 }), 'RangeError', ['rotaryDim'], 'rotaryDim0'),
        () => bad('rope.rotaryDim odd or past dk', rope({ rotaryDim: r.pick([s.dk + 2, (o.rope?.rotaryDim ?? s.dk) - 1 || 3]) }), 'RangeError', ['rotaryDim']),
        () => (o.rope?.cos ? null : bad('rope.base below 1', rope({ base: r.pick([0, 0.5, -1, Number.NaN]) }), 'RangeError', ['base'])),
        () => bad('rope.positions negative', rope({ positions: Array.from({ length: t }, (_, i) => i - 1) }), 'RangeError', ['positions']),
        () => bad('rope.positions of the wrong count', rope({ positions: Array.from({ length: t * s.batch + 1 }, () => 0) }), 'RangeError', ['positions']),
        () => { const k = unknownKey(r, ['base', 'rotaryDim', 'interleaved', 'cos', 'sin', 'positions']); return bad('unknown rope option', rope({ [k]: 1 }), 'TypeError', [k]); },
        () => { const k = unknownKey(r, ['layout', 'rope']); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      ]);
    }
    const c = call.opts, full = a.full;
    const wrap = (f) => (rr) => {
      const m = f(rr);
      return m && { ...m, args: withCall({ opts: m.args }) };
    };
    const sizes = { batch: full.batch, heads: full.heads, kvHeads: full.kvHeads, nq: full.nq, nk: full.nk, dk: full.dk, dv: full.dv };
    const with_ = (p) => withCall({ opts: { ...c, ...p } });
    return pickMutation(r, [
      // (options that are not an object cannot carry the cache)
      ...sharedMutations(r, c, { cached: true, sizes }).map(wrap).map((f) => (rr) => { const m = f(rr); return m?.name === 'options not an object' ? null : m; }),
      () => bad('nk past the cache length', with_({ nk: full.nk + 1 }), 'RangeError', ['nk']),
      () => bad('dk not the cache\u2019s', with_({ dk: full.dk + 1 }), 'RangeError', ['dk', 'q']),
      () => (full.kvHeads > 1 ? bad('heads not a multiple of the cache\u2019s kvHeads', with_({ heads: full.kvHeads + 1, nq: undefined }), 'RangeError', ['heads', 'kvHeads', 'q']) : null),
      () => bad('a disposed cache', withCall({ cache: 'disposed' }), 'Error', ['cache']),
      () => bad('a cache of another lab', withCall({ cache: 'foreign' }), 'TypeError', ['cache']),
    ]);
  },
};
