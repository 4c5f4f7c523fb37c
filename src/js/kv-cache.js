// lab.kvCache: keys and values kept in wasm memory between calls, so that a decode step moves only its new token
// and its queries. The engine owns the storage (keys packed the way its attention kernel reads them); this object
// holds the handle and frees it on dispose() — or, if it is dropped without that, when it is garbage-collected.
import { checkKeys, describe, flag, int32s, layoutCode, number, optionalTensor, options, tensor } from './checks.js';
import { arena, checkKind } from './memory.js';

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
  const R = Object.fromEntries(m.kvCacheRopeFields().split(',').filter(Boolean).map((name, i) => [name, i]));
  const ROPE_FIELDS = Object.keys(R).length;

  // A cache dropped without dispose() is freed here after it is collected. The held value is only the handle.
  const registry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => {
      m.kvCacheFree(handle);
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
      const s = use(this, 'kvCache.lengths');
      return Int32Array.from({ length: s.batch }, (_, b) => m.kvCacheLength(s.handle, b));
    }
    /** Whether dispose() was called. */
    get disposed() { return !state(this).handle; }

    append(k, v, opts = {}) {
      const fn = 'kvCache.append';
      const s = use(this, fn);
      tensor(fn, 'k', k);
      tensor(fn, 'v', v);
      options(fn, opts);
      checkKeys(fn, opts, ['layout', 'rope']);
      const layout = opts.layout === undefined ? -1 : layoutCode(fn, 'layout', opts.layout);
      // rope: the new keys are rotated at their cache positions on the way in (lab.rope's options).
      let rope = null;
      if (opts.rope !== undefined && opts.rope !== null) {
        const o = opts.rope;
        if (typeof o !== 'object') throw new TypeError(`${fn}: rope must be an options object, got ${describe(o)}`);
        checkKeys(`${fn}: rope`, o, ['base', 'rotaryDim', 'interleaved', 'cos', 'sin', 'positions']);
        rope = {
          base: o.base === undefined ? undefined : number(fn, 'rope.base', o.base),
          rotaryDim: o.rotaryDim === undefined ? 0 : number(fn, 'rope.rotaryDim', o.rotaryDim),
          interleaved: flag(fn, 'rope.interleaved', o.interleaved),
          cos: optionalTensor(fn, 'rope.cos', o.cos), sin: optionalTensor(fn, 'rope.sin', o.sin),
          positions: o.positions === undefined || o.positions === null ? undefined : int32s(fn, 'rope.positions', o.positions),
        };
      }
      const a = arena(m, fn, [
        { name: 'k', length: k.length, data: k }, { name: 'v', length: v.length, data: v },
        { name: 'rope', length: rope ? ROPE_FIELDS : 0, type: 'f64' },
        { name: 'rope.cos', length: rope?.cos?.length ?? 0, data: rope?.cos }, { name: 'rope.sin', length: rope?.sin?.length ?? 0, data: rope?.sin },
        { name: 'rope.positions', length: rope?.positions?.length ?? 0, data: rope?.positions, type: 'i32' },
      ]);
      try {
        if (rope) {
          const d = a.view(2);
          d[R.has_base] = rope.base === undefined ? 0 : 1, d[R.base] = rope.base ?? 0;
          d[R.rotary_dim] = rope.rotaryDim, d[R.interleaved] = rope.interleaved ? 1 : 0;
          d[R.cos] = a.at(3), d[R.cos_len] = rope.cos?.length ?? 0, d[R.sin] = a.at(4), d[R.sin_len] = rope.sin?.length ?? 0;
          d[R.positions] = a.at(5), d[R.positions_len] = rope.positions?.length ?? 0;
        }
        checkKind(m, fn, m.kvCacheAppend(s.handle, a.at(0), k.length, a.at(1), v.length, layout, a.at(2)));
      } finally {
        a.free();
      }
      s.length = m.kvCacheLength(s.handle, 0);
      return this;
    }

    reset() {
      const s = use(this, 'kvCache.reset');
      m.kvCacheReset(s.handle);
      s.length = 0;
      return this;
    }

    /** Keys as `[batch, kvHeads, max(lengths), dk]` ('bhsd'), zeros past an item's length. */
    keys() { return read(this, 'kvCache.keys', false); }
    /** Values as `[batch, kvHeads, max(lengths), dv]` ('bhsd'). */
    values() { return read(this, 'kvCache.values', true); }

    dispose() {
      const s = state(this);
      if (!s.handle) return;
      registry?.unregister(this);
      m.kvCacheFree(s.handle);
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
  function read(cache, fn, values) {
    const s = use(cache, fn);
    const length = s.batch * s.kvHeads * s.length * (values ? s.dv : s.dk);
    const a = arena(m, fn, [{ name: values ? 'values' : 'keys', length }]);
    try {
      checkKind(m, fn, m.kvCacheRead(s.handle, values, a.at(0), length));
      return a.read(0);
    } finally {
      a.free();
    }
  }

  return function kvCache(opts) {
    const fn = 'kvCache';
    options(fn, opts);
    checkKeys(fn, opts, ['batch', 'kvHeads', 'dk', 'dv', 'capacity', 'layout']);
    for (const name of ['dk', 'dv', 'capacity'])
      if (opts[name] === undefined) throw new TypeError(`${fn}: ${name} is required, got undefined`);
    const sizes = ['batch', 'kvHeads', 'dk', 'dv', 'capacity'].map((name) => (opts[name] === undefined ? 1 : number(fn, name, opts[name])));
    const layout = opts.layout === undefined ? 'bhsd' : opts.layout;
    const handle = m.kvCacheCreate(...sizes, layoutCode(fn, 'layout', layout));
    checkKind(m, fn, handle ? 0 : m.lastStatus().kind);
    const cache = new KvCache();
    const [batch, kvHeads, dk, dv, capacity] = sizes;
    states.set(cache, { m, handle, batch, kvHeads, dk, dv, capacity, layout, length: 0 });
    registry?.register(cache, handle, cache);
    live.count += 1;
    return cache;
  };
}
