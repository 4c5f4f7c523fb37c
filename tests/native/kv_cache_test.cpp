// The KV cache: its contents round-trip in both layouts, every bad append leaves it unchanged, attending to it
// matches the reference with every option, and a prefill followed by single-token decode steps gives exactly
// (bit for bit) the rows of one attention call over the whole sequence.
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "attention.h"
#include "attention_reference.h"
#include "kv_cache.h"
#include "rope.h"
#include "testing.h"

using namespace attnlab;

namespace {

// Positions [s0, s1) of the sequence axis of a [B, H, n, d] tensor in `layout`, as [B, H, s1 − s0, d] in `to`.
std::vector<float> seq_slice(const std::vector<float>& x, bool bshd, std::size_t B, std::size_t H, std::size_t n,
                             std::size_t d, std::size_t s0, std::size_t s1, bool to_bshd) {
  std::vector<float> r(B * H * (s1 - s0) * d);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t s = s0; s < s1; ++s)
        for (std::size_t c = 0; c < d; ++c)
          r[ref::at_layout(to_bshd, b, h, s - s0, c, H, s1 - s0, d)] = x[ref::at_layout(bshd, b, h, s, c, H, n, d)];
  return r;
}

std::unique_ptr<KvCache> make_cache(KvCacheConfig c) {
  std::unique_ptr<KvCache> cache;
  const auto st = KvCache::create(c, cache);
  INFO(st.message);
  REQUIRE(st.ok());
  return cache;
}

std::vector<float> keys_of(const KvCache& c) {
  std::vector<float> out(c.config().batch * c.config().kv_heads * c.max_length() * c.config().dk);
  REQUIRE(c.read_keys(out).ok());
  return out;
}
std::vector<float> values_of(const KvCache& c) {
  std::vector<float> out(c.config().batch * c.config().kv_heads * c.max_length() * c.config().dv);
  REQUIRE(c.read_values(out).ok());
  return out;
}

void expect_error(const Status& st, const std::string& arg) {
  INFO("message: " << st.message);
  CHECK(st.kind == ErrorKind::range);
  CHECK(st.arg == arg);
  CHECK(st.message.find(arg) != std::string::npos);
}

}  // namespace

TEST_CASE("kv cache: contents round-trip in both layouts, reset empties it", "[kv_cache]") {
  const std::size_t B = 2, G = 3, dk = 5, dv = 7, n = 140;  // crosses a key tile (128)
  for (bool bshd : {false, true}) {
    auto cache = make_cache({B, G, dk, dv, 200, bshd ? Layout::bshd : Layout::bhsd});
    const auto k = testing::normal(B * G * n * dk, 1), v = testing::normal(B * G * n * dv, 2);
    // in three appends of 1, 100 and 39 tokens
    std::size_t at = 0;
    for (std::size_t t : {1u, 100u, 39u}) {
      const auto ks = seq_slice(k, false, B, G, n, dk, at, at + t, bshd), vs = seq_slice(v, false, B, G, n, dv, at, at + t, bshd);
      REQUIRE(cache->append({ks, vs}).ok());
      at += t;
      for (std::size_t b = 0; b < B; ++b) CHECK(cache->length(b) == at);
    }
    CHECK(keys_of(*cache) == k);
    CHECK(values_of(*cache) == v);
    cache->reset();
    CHECK(cache->max_length() == 0);
    CHECK(keys_of(*cache).empty());
    // After a reset the cache fills from position 0 again, in the layout given per call.
    const auto k2 = seq_slice(k, false, B, G, n, dk, 0, 3, !bshd), v2 = seq_slice(v, false, B, G, n, dv, 0, 3, !bshd);
    KvAppendArgs other{k2, v2};
    other.layout = bshd ? Layout::bhsd : Layout::bshd;
    REQUIRE(cache->append(other).ok());
    CHECK(keys_of(*cache) == seq_slice(k, false, B, G, n, dk, 0, 3, false));
  }
}

TEST_CASE("kv cache: bad sizes, lengths, values and appends past capacity name the argument and change nothing",
          "[kv_cache][validation]") {
  std::unique_ptr<KvCache> none;
  for (auto [field, name] : {std::pair{0, "batch"}, {1, "kvHeads"}, {2, "dk"}, {3, "dv"}, {4, "capacity"}}) {
    KvCacheConfig c{1, 1, 4, 4, 8};
    std::size_t* fields[] = {&c.batch, &c.kv_heads, &c.dk, &c.dv, &c.capacity};
    *fields[field] = 0;
    expect_error(KvCache::create(c, none), name);
    CHECK(!none);
  }
  const std::size_t B = 2, G = 2, dk = 3, dv = 2;
  auto cache = make_cache({B, G, dk, dv, 10});
  const auto k = testing::normal(B * G * 8 * dk, 3), v = testing::normal(B * G * 8 * dv, 4);
  REQUIRE(cache->append({k, v}).ok());
  const auto keys = keys_of(*cache), values = values_of(*cache);
  const auto k3 = testing::normal(B * G * 3 * dk, 5), v3 = testing::normal(B * G * 3 * dv, 6);
  const auto past = cache->append({k3, v3});
  expect_error(past, "capacity");
  CHECK(past.message == "appending 3 tokens to the 8 held would exceed capacity = 10; the cache is unchanged");
  expect_error(cache->append({std::span<const float>(k3).first(17), v3}), "k");
  expect_error(cache->append({std::span<const float>(k3).first(0), v3}), "k");
  expect_error(cache->append({std::span<const float>(k3).first(12), v3}), "v");  // 1 token of k, 3 of v
  auto bad = k3;
  bad[5] = NAN;
  expect_error(cache->append({std::span<const float>(bad).first(12), std::span<const float>(v3).first(8)}), "k");
  auto bad_v = v3;
  bad_v[0] = INFINITY;
  expect_error(cache->append({std::span<const float>(k3).first(12), std::span<const float>(bad_v).first(8)}), "v");
  CHECK(cache->max_length() == 8);
  CHECK(keys_of(*cache) == keys);
  CHECK(values_of(*cache) == values);
  // Two more tokens fit exactly.
  REQUIRE(cache->append({std::span<const float>(k3).first(2 * B * G * dk), std::span<const float>(v3).first(2 * B * G * dv)}).ok());
  CHECK(cache->max_length() == 10);

  // Attending: the cache's sizes rule; k and v must be left out; an empty cache is refused.
  const auto q = testing::normal(B * 4 * 1 * dk, 7);
  std::vector<float> out(B * 4 * dv, 4242.0f);
  AttentionArgs a{q, {}, {}, 1, 0, 0, 0};
  a.batch = B, a.heads = 4, a.cache = cache.get();
  REQUIRE(attention(a, {out}).ok());
  auto with = [&](std::function<void(AttentionArgs&)> edit) {
    AttentionArgs b = a;
    edit(b);
    return attention(b, {out});
  };
  expect_error(with([](auto& b) { b.batch = 1; }), "batch");
  expect_error(with([](auto& b) { b.kv_heads = 1; }), "kvHeads");
  expect_error(with([](auto& b) { b.dk = 4; }), "dk");
  expect_error(with([](auto& b) { b.dv = 1; }), "dv");
  expect_error(with([](auto& b) { b.nk = 9; }), "nk");
  expect_error(with([&](auto& b) { b.k = k; }), "k");
  const std::vector<std::int32_t> eleven = {10, 11};
  const auto kl = with([&](auto& b) { b.key_lengths = eleven; });
  CHECK(kl.message == "keyLengths[1] = 11 exceeds nk = 10 (the cache's length)");
  cache->reset();
  expect_error(with([](auto&) {}), "cache");
}

TEST_CASE("kv cache: attention over the cache matches the reference with every option, both paths", "[kv_cache]") {
  const std::size_t B = 2, H = 6, G = 2, dk = 12, dv = 9, nq = 5, n = 150;
  auto cache = make_cache({B, G, dk, dv, 160, Layout::bshd});
  const auto k = testing::normal(B * G * n * dk, 11), v = testing::normal(B * G * n * dv, 12);
  REQUIRE(cache->append({seq_slice(k, false, B, G, n, dk, 0, n, true), seq_slice(v, false, B, G, n, dv, 0, n, true)}).ok());
  const auto q = testing::normal(B * H * nq * dk, 13);
  std::vector<std::uint8_t> keep(B * n);
  for (std::size_t t = 0; t < keep.size(); ++t) keep[t] = t % 7 != 3;
  const std::vector<std::int64_t> shape = {std::int64_t(B), 1, 1, std::int64_t(n)};
  ref::FullCase c;
  c.batch = B, c.heads = H, c.kv_heads = G, c.nq = nq, c.nk = n, c.dk = dk, c.dv = dv, c.causal = 1;
  c.window_left = 60, c.softcap = 15.0, c.scale = double(0.3f), c.key_lengths = {150, 133};
  c.alibi = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  c.keep = &keep, c.mask_shape = {B, 1, 1, n};
  for (auto path : {AttentionPath::streaming, AttentionPath::materialized}) {
    c.streaming = path == AttentionPath::streaming;
    const auto want = ref::attention_full(q, k, v, c);
    std::vector<float> out(B * H * nq * dv), lse(B * H * nq), w(c.streaming ? 0 : B * H * nq * n);
    AttentionArgs a{q, {}, {}, nq};
    a.batch = B, a.heads = H, a.cache = cache.get(), a.causal = true, a.window = {60, -1}, a.softcap = 15.0;
    a.scale = double(0.3f), a.key_lengths = c.key_lengths, a.alibi_slopes = c.alibi, a.bool_mask = keep, a.mask_shape = shape;
    a.path = path;
    const auto st = attention(a, {out, {}, {}, w, lse});
    INFO(st.message);
    REQUIRE(st.ok());
    CHECK_BOUNDED(out, want.out);
    CHECK_BOUNDED(lse, want.lse);
    if (!c.streaming) CHECK_BOUNDED(w, want.weights);
  }
}

TEST_CASE("kv cache: prefill then single-token decode steps = one call over the whole sequence, bit for bit",
          "[kv_cache]") {
  const std::size_t B = 2, H = 8, G = 2, dk = 16, dv = 16, n = 150, prefill = 120;  // decode crosses the 128-key tile
  const auto q = testing::normal(B * H * n * dk, 21), k = testing::normal(B * G * n * dk, 22), v = testing::normal(B * G * n * dv, 23);
  std::vector<std::uint8_t> keep(B * n);  // per-item key padding, as a [batch, 1, 1, nk] boolean mask
  for (std::size_t t = 0; t < keep.size(); ++t) keep[t] = (t * 13) % 17 != 5;
  const std::vector<float> slopes = {0.5f, 0.25f, 0.125f, 0.0625f, 0.5f, 0.25f, 0.125f, 0.0625f};
  struct Options {
    const char* name;
    Window window;
    double softcap;
    bool alibi, mask;
  };
  for (const Options& o : {Options{"causal", {}, 0, false, false}, Options{"causal + window + softcap + ALiBi + key padding", {40, 0}, 30.0, true, true}})
    for (bool bshd : {false, true}) {
      INFO(o.name << (bshd ? ", bshd" : ", bhsd"));
      const Layout layout = bshd ? Layout::bshd : Layout::bhsd;
      std::vector<std::int64_t> mask_shape_storage;
      auto args = [&](std::size_t nq, std::span<const float> qs, std::span<const std::uint8_t> keys_mask, std::size_t nk) {
        AttentionArgs a{qs, {}, {}, nq};
        a.batch = B, a.heads = H, a.kv_heads = G, a.causal = true, a.layout = layout, a.window = o.window;
        if (o.softcap > 0) a.softcap = o.softcap;
        if (o.alibi) a.alibi_slopes = slopes;
        if (o.mask) a.bool_mask = keys_mask, mask_shape_storage = {std::int64_t(B), 1, 1, std::int64_t(nk)}, a.mask_shape = mask_shape_storage;
        return a;
      };
      // One call over the whole sequence.
      std::vector<float> full(B * H * n * dv), qq = seq_slice(q, false, B, H, n, dk, 0, n, bshd);
      const auto kk = seq_slice(k, false, B, G, n, dk, 0, n, bshd), vv = seq_slice(v, false, B, G, n, dv, 0, n, bshd);
      {
        AttentionArgs a = args(n, qq, keep, n);
        a.k = kk, a.v = vv, a.nk = n, a.dk = dk, a.dv = dv;
        const auto st = attention(a, {full});
        INFO(st.message);
        REQUIRE(st.ok());
      }
      // Prefill, then one token at a time.
      auto cache = make_cache({B, G, dk, dv, n, layout});
      std::vector<float> got(B * H * n * dv);
      for (std::size_t s0 = 0; s0 < n; s0 = s0 == 0 ? prefill : s0 + 1) {
        const std::size_t s1 = s0 == 0 ? prefill : s0 + 1, t = s1 - s0;
        REQUIRE(cache->append({seq_slice(k, false, B, G, n, dk, s0, s1, bshd), seq_slice(v, false, B, G, n, dv, s0, s1, bshd)}).ok());
        std::vector<std::uint8_t> step_mask(B * s1);
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t j = 0; j < s1; ++j) step_mask[b * s1 + j] = keep[b * n + j];
        const auto qs = seq_slice(q, false, B, H, n, dk, s0, s1, bshd);
        std::vector<float> out(B * H * t * dv);
        AttentionArgs a = args(t, qs, step_mask, s1);
        a.cache = cache.get();
        const auto st = attention(a, {out});
        INFO(st.message);
        REQUIRE(st.ok());
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < t; ++i)
              for (std::size_t c = 0; c < dv; ++c)
                got[ref::at_layout(bshd, b, h, s0 + i, c, H, n, dv)] = out[ref::at_layout(bshd, b, h, i, c, H, t, dv)];
      }
      CHECK(got == full);
    }
}

TEST_CASE("kv cache: append with rope rotates keys at their cache positions = rope over the whole sequence", "[kv_cache][rope]") {
  const std::size_t B = 2, G = 3, dk = 8, dv = 4, n = 140;
  const auto k = testing::normal(B * G * n * dk, 31), v = testing::normal(B * G * n * dv, 32);
  for (bool interleaved : {false, true})
    for (bool bshd : {false, true}) {
      INFO((interleaved ? "interleaved" : "half-split") << (bshd ? ", bshd" : ", bhsd"));
      // The whole sequence rotated at positions 0 … n − 1 by lab.rope's engine call.
      std::vector<float> want(k.size());
      RopeArgs r;
      r.x = k, r.batch = B, r.heads = G, r.dk = dk, r.rotary_dim = 6, r.interleaved = interleaved, r.base = 500.0;
      REQUIRE(rope(r, want).ok());
      auto cache = make_cache({B, G, dk, dv, n, bshd ? Layout::bshd : Layout::bhsd});
      KvRope kr;
      kr.rotary_dim = 6, kr.interleaved = interleaved, kr.base = 500.0;
      for (std::size_t s0 = 0, t = 100; s0 < n; s0 += t, t = 1 + (s0 % 7)) {
        t = std::min(t, n - s0);
        const auto ks = seq_slice(k, false, B, G, n, dk, s0, s0 + t, bshd), vs = seq_slice(v, false, B, G, n, dv, s0, s0 + t, bshd);
        KvAppendArgs a{ks, vs};
        a.rope = &kr;
        REQUIRE(cache->append(a).ok());
      }
      CHECK(keys_of(*cache) == want);  // bit for bit: a position's angles do not depend on the call
      CHECK(values_of(*cache) == v);
    }
  // A bad rope option is the append's error, named, with the cache unchanged.
  auto cache = make_cache({B, G, dk, dv, n});
  KvRope bad;
  bad.rotary_dim = 5;
  const auto ks = seq_slice(k, false, B, G, n, dk, 0, 2, false), vs = seq_slice(v, false, B, G, n, dv, 0, 2, false);
  KvAppendArgs a{ks, vs};
  a.rope = &bad;
  const auto st = cache->append(a);
  CHECK(st.kind == ErrorKind::range);
  CHECK(st.message.find("rope: rotaryDim") == 0);
  CHECK(cache->max_length() == 0);
}
