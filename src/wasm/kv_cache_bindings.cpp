// lab.kvCache's binding: marshalling only. A cache is a KvCache owned by wasm memory; JS holds its address as
// a handle and frees it with kvCacheFree (dispose(), or the wrapper's FinalizationRegistry).
#include <emscripten/bind.h>

#include <memory>

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

// layout: -1 = the cache's own, 0 bhsd, 1 bshd.
int append_js(std::uintptr_t h, std::uintptr_t k, std::size_t k_len, std::uintptr_t v, std::size_t v_len, int layout) {
  KvAppendArgs a{in(k, k_len), in(v, v_len)};
  if (layout >= 0) a.layout = layout == 1 ? Layout::bshd : Layout::bhsd;
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
  function("kvCacheLength", +[](std::uintptr_t h, std::size_t b) { return handle(h)->length(b); });
  function("kvCacheRead", &read_js);
  function("kvCacheReset", +[](std::uintptr_t h) { handle(h)->reset(); });
  function("kvCacheFree", +[](std::uintptr_t h) { delete handle(h); });
}
