// lab.kvCache: keys and values kept in wasm memory between calls, so that a decode step moves only its new token
// and its queries. The engine owns the storage (keys packed the way its attention kernel reads them); this object
// holds the handle and frees it on dispose() — or, if it is dropped without that, when it is garbage-collected.
// Every call is an engine call (src/wasm/kv_cache_bindings.cpp) with the handle in its `cache` field.
import { engineCall, option } from './call.js';
import { checkKeys, describe, flag, int32s, layoutCode, nonEmpty, optionalNumber, optionalTensor, options, required, tensor } from './checks.js';

export const KV_CACHE_OPTIONS = ['batch', 'kvHeads', 'dk', 'dv', 'capacity', 'layout'];
export const KV_APPEND_OPTIONS = ['layout', 'rope'];
export const KV_ROPE_OPTIONS = ['base', 'rotaryDim', 'interleaved', 'cos', 'sin', 'positions'];

// Cache object → its state; only caches made by some lab's kvCache() are in it.
const states = new WeakMap();

/** The state of a cache passed to attention(): one made by this module instance, not disposed. */
export function cacheOf(fn, cache, m) {
  const s = states.get(cache);
  if (!s || (m && s.m !== m)) throw new TypeError(`${fn}: cache must be a cache made by this lab's kvCache(), got ${describe(cache)}`);
  if (!s.handle) throw new Error(`${fn}: the cache was disposed`);
  return s;
}

export function makeKvCache(m, live) {
  const create = engineCall(m, 'kvCacheCreate'), append = engineCall(m, 'kvCacheAppend'), read = engineCall(m, 'kvCacheRead');
  const lengths = engineCall(m, 'kvCacheLengths'), reset = engineCall(m, 'kvCacheReset'), free = engineCall(m, 'kvCacheFree');
  // A call on the cache whose handle is h.
  const on = (c, h) => {
    const d = c.descriptor();
    d[c.F.cache] = h;
    return d;
  };
  const release = (h) => free.call('kvCache.dispose', on(free, h));

  // A cache dropped without dispose() is freed here after it is collected. The held value is only the handle.
  const registry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => {
      release(handle);
      live.count -= 1;
    })
    : null;

  class KvCache {
    get batch() { return state(this).batch; }
    get kvHeads() { return state(this).kvHeads; }
    get dk() { return state(this).dk; }
    get dv() { return state(this).dv; }
    get capacity() { return state(this).capacity; }
    get layout() { return state(this).layout; }
    /** Tokens held by each batch item. */
    get lengths() {
      const fn = 'kvCache.lengths';
      return lengths.call(fn, on(lengths, use(this, fn).handle)).lengths;
    }
    /** Whether dispose() was called. */
    get disposed() { return !state(this).handle; }

    append(k, v, opts = {}) {
      const fn = 'kvCache.append';
      const s = use(this, fn);
      const given = { k: tensor(fn, 'k', k), v: tensor(fn, 'v', v) };
      options(fn, opts);
      checkKeys(fn, opts, KV_APPEND_OPTIONS);
      const d = on(append, s.handle), { F } = append;
      d[F.layout] = opts.layout === undefined ? -1 : layoutCode(fn, 'layout', opts.layout);
      // rope: the new keys are rotated at their cache positions on the way in (lab.rope's options).
      if (opts.rope !== undefined && opts.rope !== null) {
        const o = opts.rope;
        if (typeof o !== 'object') throw new TypeError(`${fn}: rope must be an options object, got ${describe(o)}`);
        checkKeys(`${fn}: rope`, o, KV_ROPE_OPTIONS);
        d[F.rope] = 1;
        option(d, F.base, optionalNumber(fn, 'rope.base', o.base));
        option(d, F.rotary_dim, optionalNumber(fn, 'rope.rotaryDim', o.rotaryDim));
        d[F.interleaved] = flag(fn, 'rope.interleaved', o.interleaved);
        given.cos = optionalTensor(fn, 'rope.cos', o.cos), given.sin = optionalTensor(fn, 'rope.sin', o.sin);
        if (o.positions !== undefined && o.positions !== null) given.positions = nonEmpty(fn, 'rope.positions', int32s(fn, 'rope.positions', o.positions));
      }
      append.call(fn, d, given);
      return this;
    }

    reset() {
      reset.call('kvCache.reset', on(reset, use(this, 'kvCache.reset').handle));
      return this;
    }

    /** Keys as `[batch, kvHeads, max(lengths), dk]` ('bhsd'), zeros past an item's length. */
    keys() { return values(this, 'kvCache.keys', false); }
    /** Values as `[batch, kvHeads, max(lengths), dv]` ('bhsd'). */
    values() { return values(this, 'kvCache.values', true); }

    dispose() {
      const s = state(this);
      if (!s.handle) return;
      registry?.unregister(this);
      release(s.handle);
      s.handle = 0;
      live.count -= 1;
    }
  }

  function state(cache) {
    const s = states.get(cache);
    if (!s) throw new TypeError('kvCache: not a cache made by kvCache()');
    return s;
  }
  function use(cache, fn) {
    const s = state(cache);
    if (!s.handle) throw new Error(`${fn}: the cache was disposed`);
    return s;
  }
  function values(cache, fn, wantValues) {
    const d = on(read, use(cache, fn).handle);
    d[read.F.values] = wantValues ? 1 : 0;
    return read.call(fn, d).out ?? new Float32Array(0); // (an empty cache reads as nothing)
  }

  return function kvCache(opts) {
    const fn = 'kvCache';
    options(fn, opts);
    checkKeys(fn, opts, KV_CACHE_OPTIONS);
    const d = create.descriptor(), { F } = create;
    for (const name of ['dk', 'dv', 'capacity']) required(fn, name, opts[name]);
    option(d, F.batch, optionalNumber(fn, 'batch', opts.batch));
    option(d, F.kv_heads, optionalNumber(fn, 'kvHeads', opts.kvHeads));
    d[F.dk] = opts.dk, d[F.dv] = opts.dv, d[F.capacity] = opts.capacity;
    const layout = opts.layout === undefined ? 'bhsd' : opts.layout;
    d[F.layout] = layoutCode(fn, 'layout', layout);
    create.call(fn, d);
    const cache = new KvCache();
    const handle = d[F.cache];
    // The sizes as the engine resolved them.
    states.set(cache, { m, handle, batch: d[F.batch], kvHeads: d[F.kv_heads], dk: d[F.dk], dv: d[F.dv], capacity: d[F.capacity], layout });
    registry?.register(cache, handle, cache);
    live.count += 1;
    return cache;
  };
}
