#include "kv_cache.h"

#include <cstring>
#include <new>
#include <string>

#include "attention_impl.h"
#include "rope.h"
#include "format.h"
#include "validate.h"

namespace attnlab {

using namespace detail;

namespace {

// Row r of a [batch, heads, t, d] tensor in `layout`: the (b, g) rows start at the returned pointer, `ld` apart.
const float* rows_of(const float* x, Layout layout, std::size_t b, std::size_t g, std::size_t heads, std::size_t t,
                     std::size_t d, std::size_t& ld) noexcept {
  if (layout == Layout::bhsd) {
    ld = d;
    return x + (b * heads + g) * t * d;
  }
  ld = heads * d;
  return x + (b * t * heads + g) * d;
}

}  // namespace

Status KvCache::create(const KvCacheConfig& c, std::unique_ptr<KvCache>& out) {
  out.reset();
  for (auto [name, value] : {std::pair{"batch", c.batch}, {"kvHeads", c.kv_heads}, {"dk", c.dk}, {"dv", c.dv},
                             {"capacity", c.capacity}})
    if (auto s = check_size(name, value); !s.ok()) return s;
  std::size_t slots, key_slot, value_slot, keys, values;
  if (auto s = check_product("batch·kvHeads", c.batch, c.kv_heads, slots); !s.ok()) return s;
  if (auto s = check_product("capacity·dk", (c.capacity + kKeyTile - 1) / kKeyTile * kKeyTile, c.dk, key_slot); !s.ok()) return s;
  if (auto s = check_product("capacity·dv", c.capacity, c.dv, value_slot); !s.ok()) return s;
  if (auto s = check_product("capacity", slots, key_slot, keys); !s.ok()) return s;
  if (auto s = check_product("capacity", slots, value_slot, values); !s.ok()) return s;
  std::unique_ptr<KvCache> cache(new (std::nothrow) KvCache());
  if (!cache) return Status::no_memory("the KV cache");
  cache->config_ = c;
  cache->key_slot_ = key_slot, cache->value_slot_ = value_slot;
  cache->keys_ = Scratch(keys);
  cache->values_ = Scratch(values);
  cache->lengths_.reset(new (std::nothrow) std::size_t[c.batch]);
  if (!cache->keys_.ok_for(keys) || !cache->values_.ok_for(values) || !cache->lengths_)
    return Status::no_memory(format("the KV cache (%zu MiB)", (keys + values) / 262144));
  // Zeros, never garbage: the kernels may read past an item's length (weights 0 there, and 0·0 = 0).
  std::memset(cache->keys_.data(), 0, keys * sizeof(float));
  std::memset(cache->values_.data(), 0, values * sizeof(float));
  cache->reset();
  out = std::move(cache);
  return Status::success();
}

void KvCache::reset() noexcept {
  for (std::size_t b = 0; b < config_.batch; ++b) lengths_[b] = 0;
  max_key_norm_ = 0.0;
}

std::size_t KvCache::max_length() const noexcept {
  std::size_t m = 0;
  for (std::size_t b = 0; b < config_.batch; ++b) m = lengths_[b] > m ? lengths_[b] : m;
  return m;
}

// The rotation of the new keys (append's rope option) as lab.rope's arguments; `offset` holds the cache position
// of the first new token when the option gives no positions.
RopeArgs KvCache::rope_args(const KvAppendArgs& a, const std::int32_t& offset) const {
  const KvCacheConfig& c = config_;
  RopeArgs r;
  r.x = a.k, r.batch = c.batch, r.heads = c.kv_heads, r.dk = c.dk;
  r.layout = a.layout.value_or(c.layout) == Layout::bshd ? RopeLayout::bshd : RopeLayout::bhsd;
  if (a.rope->positions.empty()) r.offset = std::span<const std::int32_t>(&offset, 1);
  r.positions = a.rope->positions;
  r.base = a.rope->base, r.rotary_dim = a.rope->rotary_dim, r.interleaved = a.rope->interleaved;
  r.cos = a.rope->cos, r.sin = a.rope->sin;
  return r;
}

namespace {
Status rope_error(Status s) {
  if (!s.ok()) s.message = "rope: " + s.message;
  return s;
}
}  // namespace

Status KvCache::check_append(const KvAppendArgs& a) const {
  const KvCacheConfig& c = config_;
  const std::size_t per_token = c.batch * c.kv_heads * c.dk;  // fits: the storage of one token per slot exists
  if (a.k.empty() || a.k.size() % per_token != 0)
    return range_errorf("k", "k.length must be a positive multiple of batch·kvHeads·dk = %zu·%zu·%zu = %zu, got %zu", c.batch,
                        c.kv_heads, c.dk, per_token, a.k.size());
  const std::size_t t = a.k.size() / per_token;
  std::size_t v_len;
  if (!checked_mul(t, c.batch * c.kv_heads * c.dv, v_len)) return check_product("v", t, c.batch * c.kv_heads * c.dv, v_len);
  if (a.v.size() != v_len)
    return check_length("v", a.v.size(), v_len, format("batch·kvHeads·t·dv = %zu·%zu·%zu·%zu", c.batch, c.kv_heads, t, c.dv));
  const std::size_t held = max_length();
  if (t > c.capacity - held)
    return range_errorf("capacity", "appending %zu token%s to the %zu held would exceed capacity = %zu; the cache is unchanged", t,
                        t == 1 ? "" : "s", held, c.capacity);
  if (a.rope) {
    const std::int32_t offset = std::int32_t(held <= 0x7fffffff ? held : 0x7fffffff);
    if (auto s = rope_error(check_rope(rope_args(a, offset), a.k.size())); !s.ok()) return s;
  }
  return Status::success();
}

Status KvCache::append(const KvAppendArgs& a) {
  const KvCacheConfig& c = config_;
  if (auto s = check_append(a); !s.ok()) return s;
  const Layout layout = a.layout.value_or(c.layout);
  const std::size_t t = a.k.size() / (c.batch * c.kv_heads * c.dk), held = max_length();
  if (auto s = check_values("k", a.k, false); !s.ok()) return s;
  if (auto s = check_values("v", a.v, false); !s.ok()) return s;
  // Keys rotated on the way in go through scratch first: an error leaves the cache as it was.
  std::span<const float> keys = a.k;
  Scratch rotated;
  if (a.rope) {
    rotated = Scratch(a.k.size());
    if (!rotated.ok_for(a.k.size())) return Status::no_memory("the rotated keys");
    const std::int32_t offset = std::int32_t(held <= 0x7fffffff ? held : 0x7fffffff);
    if (auto s = rope_error(rope(rope_args(a, offset), std::span<float>(rotated.data(), a.k.size()))); !s.ok()) return s;
    keys = std::span<const float>(rotated.data(), a.k.size());
  }
  // Every row of either layout is dk contiguous floats.
  const double norm = max_row_norm(keys.data(), keys.size() / c.dk, c.dk, c.dk);
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t g = 0; g < c.kv_heads; ++g) {
      std::size_t ldk, ldv;
      const float* k = rows_of(keys.data(), layout, b, g, c.kv_heads, t, c.dk, ldk);
      const float* v = rows_of(a.v.data(), layout, b, g, c.kv_heads, t, c.dv, ldv);
      const std::size_t at = lengths_[b];
      pack_keys(k, ldk, at, t, c.dk, keys_.data() + slot(b, g) * key_slot_);
      float* vdst = values_.data() + slot(b, g) * value_slot_ + at * c.dv;
      for (std::size_t s = 0; s < t; ++s) std::memcpy(vdst + s * c.dv, v + s * ldv, c.dv * sizeof(float));
    }
  for (std::size_t b = 0; b < c.batch; ++b) lengths_[b] += t;
  max_key_norm_ = norm > max_key_norm_ ? norm : max_key_norm_;
  return Status::success();
}

std::size_t KvCache::read_size(bool values) const noexcept {
  const KvCacheConfig& c = config_;
  return c.batch * c.kv_heads * max_length() * (values ? c.dv : c.dk);  // fits: the storage exists
}

Status KvCache::read_keys(std::span<float> out) const {
  const KvCacheConfig& c = config_;
  const std::size_t n = max_length();
  if (out.size() != c.batch * c.kv_heads * n * c.dk)
    return check_length("out", out.size(), c.batch * c.kv_heads * n * c.dk,
                        format("batch·kvHeads·length·dk = %zu·%zu·%zu·%zu", c.batch, c.kv_heads, n, c.dk));
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t g = 0; g < c.kv_heads; ++g) {
      const float* kt = packed_keys(b, g);
      float* dst = out.data() + slot(b, g) * n * c.dk;
      for (std::size_t j = 0; j < n; ++j) {
        const float* tile = kt + (j / kKeyTile) * kKeyTile * c.dk + j % kKeyTile;
        for (std::size_t d = 0; d < c.dk; ++d) dst[j * c.dk + d] = j < lengths_[b] ? tile[d * kKeyTile] : 0.0f;
      }
    }
  return Status::success();
}

Status KvCache::read_values(std::span<float> out) const {
  const KvCacheConfig& c = config_;
  const std::size_t n = max_length();
  if (out.size() != c.batch * c.kv_heads * n * c.dv)
    return check_length("out", out.size(), c.batch * c.kv_heads * n * c.dv,
                        format("batch·kvHeads·length·dv = %zu·%zu·%zu·%zu", c.batch, c.kv_heads, n, c.dv));
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t g = 0; g < c.kv_heads; ++g) {
      float* dst = out.data() + slot(b, g) * n * c.dv;
      std::memcpy(dst, values(b, g), lengths_[b] * c.dv * sizeof(float));
      std::memset(dst + lengths_[b] * c.dv, 0, (n - lengths_[b]) * c.dv * sizeof(float));
    }
  return Status::success();
}

}  // namespace attnlab
