// lab.kvCache's binding: marshalling only. A cache is a KvCache owned by wasm memory; JS holds its address as
// a handle and frees it with kvCacheFree (dispose(), or the wrapper's FinalizationRegistry).
#include <emscripten/bind.h>

#include <memory>
#include <string>

#include "kv_cache.h"
#include "marshal.h"
#include "validate.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;
using attnlab::detail::check_count;

KvCache* handle(std::uintptr_t h) { return reinterpret_cast<KvCache*>(h); }

// Sizes as the JS numbers given; 0 when the status (lastStatus) says why not.
std::uintptr_t create_js(double batch, double kv_heads, double dk, double dv, double capacity, int layout) {
  KvCacheConfig c;
  c.layout = layout == 1 ? Layout::bshd : Layout::bhsd;
  for (auto [name, value, field] : {std::tuple{"batch", batch, &c.batch}, {"kvHeads", kv_heads, &c.kv_heads},
                                    {"dk", dk, &c.dk}, {"dv", dv, &c.dv}, {"capacity", capacity, &c.capacity}})
    if (auto s = check_count(name, value, *field); !s.ok()) return keep(std::move(s)), 0;
  std::unique_ptr<KvCache> cache;
  if (keep(KvCache::create(c, cache))) return 0;
  return reinterpret_cast<std::uintptr_t>(cache.release());
}

// append's rope option, when given: a float64 per field (the JS values as given), in this order.
#define ATTNLAB_KV_ROPE(X) \
  X(has_base) X(base) X(rotary_dim) /* 0 = dk */ X(interleaved) X(cos) X(cos_len) X(sin) X(sin_len) X(positions) X(positions_len)
struct RopeCall {
#define ATTNLAB_FIELD(name) double name;
  ATTNLAB_KV_ROPE(ATTNLAB_FIELD)
#undef ATTNLAB_FIELD
};

// "q,q_len,…,": one string literal, the field names in order.
std::string rope_fields() {
#define ATTNLAB_NAME(name) #name ","
  return ATTNLAB_KV_ROPE(ATTNLAB_NAME);
#undef ATTNLAB_NAME
}

std::size_t whole(double x) { return static_cast<std::size_t>(x); }

// layout: -1 = the cache's own, 0 bhsd, 1 bshd; rope: address of a RopeCall, or 0.
int append_js(std::uintptr_t h, std::uintptr_t k, std::size_t k_len, std::uintptr_t v, std::size_t v_len, int layout,
              std::uintptr_t rope_call) {
  KvAppendArgs a{in(k, k_len), in(v, v_len)};
  if (layout >= 0) a.layout = layout == 1 ? Layout::bshd : Layout::bhsd;
  KvRope rope;
  if (rope_call) {
    const RopeCall& r = *reinterpret_cast<const RopeCall*>(rope_call);
    if (r.has_base) rope.base = r.base;
    if (r.rotary_dim != 0)
      if (auto s = check_count("rope: rotaryDim", r.rotary_dim, rope.rotary_dim); !s.ok()) return keep(std::move(s));
    rope.interleaved = r.interleaved != 0;
    rope.cos = in(whole(r.cos), whole(r.cos_len));
    rope.sin = in(whole(r.sin), whole(r.sin_len));
    if (r.positions)
      rope.positions = std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(whole(r.positions)), whole(r.positions_len));
    a.rope = &rope;
  }
  return keep(handle(h)->append(a));
}

int read_js(std::uintptr_t h, bool values, std::uintptr_t o, std::size_t len) {
  return keep(values ? handle(h)->read_values(out(o, len)) : handle(h)->read_keys(out(o, len)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_kv_cache) {
  using namespace emscripten;
  function("kvCacheCreate", &create_js);
  function("kvCacheAppend", &append_js);
  function("kvCacheRopeFields", &rope_fields);
  function("kvCacheLength", +[](std::uintptr_t h, std::size_t b) { return handle(h)->length(b); });
  function("kvCacheRead", &read_js);
  function("kvCacheReset", +[](std::uintptr_t h) { handle(h)->reset(); });
  function("kvCacheFree", +[](std::uintptr_t h) { delete handle(h); });
}
