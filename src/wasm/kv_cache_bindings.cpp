// lab.kvCache's binding: a cache is a KvCache owned by wasm memory; JS holds its address as a handle (the `cache`
// field of each call) and frees it with kvCacheFree (dispose(), or the wrapper's FinalizationRegistry).
#include <memory>

#include "call.h"
#include "kv_cache.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// batch, kv_heads: default 1 (written back); layout 0 bhsd, 1 bshd. cache: the new cache's handle, written back.
#define ATTNLAB_KV_CREATE_CALL(N, O, T) O(batch) O(kv_heads) N(dk) N(dv) N(capacity) N(layout) N(cache)
ATTNLAB_CALL_STRUCT(KvCreateCall, ATTNLAB_KV_CREATE_CALL);

Status create_call(KvCreateCall& c) {
  KvCacheConfig config;
  config.layout = c.layout == 1 ? Layout::bshd : Layout::bhsd;
  if (!size_of(c.batch, 1, config.batch)) return size_error("batch", c.batch);
  if (!size_of(c.kv_heads, 1, config.kv_heads)) return size_error("kvHeads", c.kv_heads);
  for (auto [name, value, field] : {std::tuple{"dk", c.dk, &config.dk}, {"dv", c.dv, &config.dv}, {"capacity", c.capacity, &config.capacity}})
    if (!size_of(value, *field)) return size_error(name, value);
  std::unique_ptr<KvCache> cache;
  if (auto s = KvCache::create(config, cache); !s.ok()) return s;
  c.batch.set(double(config.batch)), c.kv_heads.set(double(config.kv_heads));
  c.cache = handle_of(cache.release());
  return Status::success();
}

// layout: -1 = the cache's own, 0 bhsd, 1 bshd. rope: 1 when the keys are rotated on the way in, with lab.rope's
// options (base, rotary_dim: default dk, interleaved, the tables, positions: default the cache positions).
#define ATTNLAB_KV_APPEND_CALL(N, O, T)                                                                  \
  N(cache) N(layout) N(rope) O(base) O(rotary_dim) N(interleaved) T(k, f32, in) T(v, f32, in)           \
  T(cos, f32, in) T(sin, f32, in) T(positions, i32, in)
ATTNLAB_CALL_STRUCT(KvAppendCall, ATTNLAB_KV_APPEND_CALL);

Status append_call(KvAppendCall& c) {
  KvAppendArgs a{in<float>(c.k), in<float>(c.v)};
  if (c.layout >= 0) a.layout = c.layout == 1 ? Layout::bshd : Layout::bhsd;
  KvRope rope;
  if (c.rope != 0) {
    rope.base = c.base.get();
    if (!size_of(c.rotary_dim, 0, rope.rotary_dim)) {
      Status s = size_error("rotaryDim", c.rotary_dim);
      s.message = "rope: " + s.message;  // as the core names the rope option's other errors
      return s;
    }
    rope.interleaved = c.interleaved != 0;
    rope.cos = in<float>(c.cos), rope.sin = in<float>(c.sin);
    rope.positions = in<std::int32_t>(c.positions);
    a.rope = &rope;
  }
  KvCache& cache = *handle<KvCache>(c.cache);
  return c.check ? cache.check_append(a) : cache.append(a);
}

// values: 0 keys, 1 values; out: [batch, kvHeads, max length, d] ('bhsd').
#define ATTNLAB_KV_READ_CALL(N, O, T) N(cache) N(values) T(out, f32, out)
ATTNLAB_CALL_STRUCT(KvReadCall, ATTNLAB_KV_READ_CALL);

Status read_call(KvReadCall& c) {
  const KvCache& cache = *handle<KvCache>(c.cache);
  const bool values = c.values != 0;
  if (c.check) return resolve(c.out, cache.read_size(values)), Status::success();
  return values ? cache.read_values(out<float>(c.out)) : cache.read_keys(out<float>(c.out));
}

// The tokens each batch item holds.
#define ATTNLAB_KV_LENGTHS_CALL(N, O, T) N(cache) T(lengths, i32, out)
ATTNLAB_CALL_STRUCT(KvLengthsCall, ATTNLAB_KV_LENGTHS_CALL);

Status lengths_call(KvLengthsCall& c) {
  const KvCache& cache = *handle<KvCache>(c.cache);
  const std::size_t batch = cache.config().batch;
  if (c.check) return resolve(c.lengths, batch), length_is("lengths", c.lengths.size(), batch, "batch");
  if (auto s = length_is("lengths", c.lengths.size(), batch, "batch"); !s.ok()) return s;
  const std::span<std::int32_t> lengths = out<std::int32_t>(c.lengths);
  for (std::size_t b = 0; b < batch; ++b) lengths[b] = std::int32_t(cache.length(b));  // ≤ capacity < 2^31
  return Status::success();
}

#define ATTNLAB_KV_HANDLE_CALL(N, O, T) N(cache)
ATTNLAB_CALL_STRUCT(KvHandleCall, ATTNLAB_KV_HANDLE_CALL);

Status reset_call(KvHandleCall& c) {
  handle<KvCache>(c.cache)->reset();
  return Status::success();
}

Status free_call(KvHandleCall& c) {
  delete handle<KvCache>(c.cache);
  return Status::success();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_kv_cache) {
  ATTNLAB_BIND_CALL("kvCacheCreate", KvCreateCall, create_call);
  ATTNLAB_BIND_CALL("kvCacheAppend", KvAppendCall, append_call);
  ATTNLAB_BIND_CALL("kvCacheRead", KvReadCall, read_call);
  ATTNLAB_BIND_CALL("kvCacheLengths", KvLengthsCall, lengths_call);
  ATTNLAB_BIND_CALL("kvCacheReset", KvHandleCall, reset_call);
  ATTNLAB_BIND_CALL("kvCacheFree", KvHandleCall, free_call);
}
