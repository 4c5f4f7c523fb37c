// libFuzzer: the whole attention descriptor — random batch/heads/GQA shapes, layouts, causal alignments, windows,
// softcap, ALiBi, additive or boolean masks with random broadcast (and shorter-than-nk) shapes, key lengths, both
// paths, lse, and K/V given directly or appended to a KV cache in chunks of either layout. Valid input → within
// the bounded double reference (attention_reference.h); invalid → a range error naming the argument, every output
// untouched (and a failed append leaves the cache as it was).
#include <cmath>
#include <memory>
#include <optional>

#include "../native/attention_reference.h"
#include "attention.h"
#include "fuzz_input.h"
#include "kv_cache.h"
#include "rope.h"

namespace {

double max_row_norm(const std::vector<float>& x, bool bshd, std::size_t b, std::size_t h, std::size_t heads, std::size_t seq,
                    std::size_t d) {
  double best = 0;
  for (std::size_t s = 0; s < seq; ++s) {
    double sum = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const double v = x[ref::at_layout(bshd, b, h, s, c, heads, seq, d)];
      sum += v * v;
    }
    best = std::fmax(best, sum);
  }
  return std::sqrt(best);
}

bool untouched(const std::vector<float>& b) {
  for (float x : b)
    if (x != 4242.0f) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t batch = in.size(3), kv_heads = in.size(3), group = in.size(3), nq = in.size(9), nk = in.size(140),
                    dk = in.size(6), dv = in.size(6);
  const std::size_t heads = kv_heads * (group ? group : 1) + (in.byte() % 16 == 0);  // now and then not a multiple
  const std::uint8_t f1 = in.byte(), f2 = in.byte();
  const bool bshd = f1 & 1, use_cache = f1 & 2, want_matrix = f1 & 4, want_lse = f1 & 8, has_scale = f1 & 16,
             has_softcap = f1 & 32, has_alibi = f1 & 64, has_lengths = f1 & 128;
  const int causal = f2 % 3, mask_kind = (f2 / 3) % 3;  // mask: none, additive, boolean
  const auto path = attnlab::AttentionPath((f2 / 9) % 3);
  const std::int64_t wl = std::int64_t(in.byte() % 12) - 2, wr = std::int64_t(in.byte() % 12) - 2;  // -2: invalid
  const bool windowed = in.flag();
  const long dq = in.delta(), dkk = in.delta(), dvv = in.delta(), dm = in.delta(), dout = in.delta();
  const std::optional<double> scale = has_scale ? std::optional<double>(in.value()) : std::nullopt;
  const std::optional<double> softcap = has_softcap ? std::optional<double>(in.value()) : std::nullopt;
  const std::size_t H = heads, G = kv_heads;
  const auto q = in.values(fuzz::adjust(batch * H * nq * dk, dq));
  const auto k = in.values(fuzz::adjust(batch * G * nk * dk, dkk)), v = in.values(fuzz::adjust(batch * G * nk * dv, dvv));

  // The mask: dims 1…4 right-aligned to [batch, heads, nq, nk], each 1 or full (the key dim sometimes shorter).
  ref::FullCase c;
  c.batch = batch, c.heads = H, c.kv_heads = G, c.nq = nq, c.nk = nk, c.dk = dk, c.dv = dv, c.bshd = bshd, c.causal = causal;
  std::vector<std::int64_t> shape;
  std::vector<float> mask;
  std::vector<std::uint8_t> keep;
  if (mask_kind) {
    const std::size_t target[4] = {batch, H, nq, nk};
    const std::size_t dims = 1 + in.byte() % 4;
    const std::uint8_t pick = in.byte();
    for (std::size_t d = 4 - dims; d < 4; ++d) {
      std::size_t m = (pick >> d) & 1 ? target[d] : 1;
      if (d == 3 && (pick & 0x80) && nk > 2) m = 2 + in.byte() % (nk - 2);  // shorter than nk
      if (d < 3 && (pick & 0x40) && d == 4 - dims) m = target[d] + 1;       // does not broadcast
      shape.push_back(std::int64_t(m));
      c.mask_shape[d] = m;
    }
    std::size_t count = 1;
    for (auto m : shape) count *= std::size_t(m);
    count = fuzz::adjust(count, dm);
    if (mask_kind == 1) {
      mask = in.values(count);
      for (auto& x : mask) x = in.flag() ? -INFINITY : x;
    } else {
      keep.resize(count);
      for (auto& x : keep) x = in.byte() % 4 != 0;
    }
  }
  std::vector<std::int32_t> lengths;
  if (has_lengths) {
    const std::size_t count = batch + (in.byte() % 32 == 0);  // now and then one too many
    for (std::size_t b = 0; b < count; ++b) {
      const std::int32_t len = std::int32_t(in.byte() % (nk + 2));  // nk + 1: past the end
      lengths.push_back(in.byte() % 64 == 0 ? -1 : len);
    }
  }
  std::vector<float> slopes;
  if (has_alibi) slopes = in.values(H + (in.byte() % 32 == 0));

  // K/V directly, or through a cache filled in appends of either layout, the keys rotated on the way in (RoPE at
  // their cache positions) when `rotate`: the reference then attends to the whole K rotated by rope() in one call.
  std::unique_ptr<attnlab::KvCache> cache;
  std::vector<float> k_rotated;
  bool append_failed = false;
  const bool rotate = use_cache && in.byte() % 4 == 0;
  attnlab::KvRope kv_rope;
  if (rotate) {
    kv_rope.rotary_dim = 2 * (in.byte() % 4);  // 0 = dk (odd dk is refused by rope)
    kv_rope.interleaved = in.flag();
    if (in.flag()) kv_rope.base = 1.0 + in.byte() * 100.0;
  }
  if (use_cache) {
    attnlab::KvCacheConfig cfg{batch, G, dk, dv, nk + in.byte() % 4, bshd ? attnlab::Layout::bshd : attnlab::Layout::bhsd};
    if (!attnlab::KvCache::create(cfg, cache).ok()) {
      FUZZ_REQUIRE(!(batch && G && dk && dv && cfg.capacity));  // only bad sizes may fail here
      return 0;
    }
    if (k.size() != batch * G * nk * dk || v.size() != batch * G * nk * dv || !nk) return 0;  // appends need whole tokens
    std::size_t at = 0;
    while (at < nk) {
      const std::size_t t = std::min<std::size_t>(nk - at, 1 + in.byte() % (nk - at));
      const bool chunk_bshd = in.flag();
      std::vector<float> ks(batch * G * t * dk), vs(batch * G * t * dv);
      for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t g = 0; g < G; ++g)
          for (std::size_t s = 0; s < t; ++s) {
            for (std::size_t d = 0; d < dk; ++d)
              ks[ref::at_layout(chunk_bshd, b, g, s, d, G, t, dk)] = k[ref::at_layout(bshd, b, g, at + s, d, G, nk, dk)];
            for (std::size_t d = 0; d < dv; ++d)
              vs[ref::at_layout(chunk_bshd, b, g, s, d, G, t, dv)] = v[ref::at_layout(bshd, b, g, at + s, d, G, nk, dv)];
          }
      attnlab::KvAppendArgs a{ks, vs};
      a.layout = chunk_bshd ? attnlab::Layout::bshd : attnlab::Layout::bhsd;
      if (rotate) a.rope = &kv_rope;
      const std::size_t before = cache->max_length();
      const auto st = cache->append(a);
      if (!st.ok()) {  // a non-finite key or value, or a rope option rope() refuses (odd dk, rotaryDim > dk, huge keys)
        FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range && !st.arg.empty() && st.message.find(st.arg) != std::string::npos);
        FUZZ_REQUIRE(rotate || st.arg == "k" || st.arg == "v");
        FUZZ_REQUIRE(rotate || !fuzz::all_finite(ks, false) || !fuzz::all_finite(vs, false));
        FUZZ_REQUIRE(cache->max_length() == before);
        append_failed = true;
        break;
      }
      at += t;
    }
    if (append_failed) return 0;
    if (rotate) {  // positions 0 … nk − 1 in one call: the same angles, bit for bit
      attnlab::RopeArgs r;
      r.x = k, r.batch = batch, r.heads = G, r.dk = dk, r.layout = bshd ? attnlab::RopeLayout::bshd : attnlab::RopeLayout::bhsd;
      r.rotary_dim = kv_rope.rotary_dim, r.interleaved = kv_rope.interleaved, r.base = kv_rope.base;
      k_rotated.resize(k.size());
      FUZZ_REQUIRE(attnlab::rope(r, k_rotated).ok());
    }
  }

  const std::size_t rows = batch * H * nq;
  std::vector<float> out(fuzz::adjust(rows * dv, dout), 4242.0f), lse(want_lse ? rows : 0, 4242.0f);
  std::vector<float> weights(want_matrix ? rows * nk : 0, 4242.0f), scores(weights.size(), 4242.0f), raw(weights.size(), 4242.0f);
  attnlab::AttentionArgs a;
  a.q = q;
  if (!use_cache) a.k = k, a.v = v, a.nk = nk, a.dk = dk, a.dv = dv;
  a.nq = nq, a.batch = batch, a.heads = H, a.kv_heads = G;
  a.scale = scale, a.softcap = softcap;
  a.causal = causal == 0 ? attnlab::Causal() : causal == 1 ? attnlab::Causal(attnlab::Causal::bottom_right) : attnlab::Causal(attnlab::Causal::top_left);
  a.layout = bshd ? attnlab::Layout::bshd : attnlab::Layout::bhsd;
  if (windowed) a.window = {wl, wr};
  a.mask = mask, a.bool_mask = keep, a.mask_shape = shape;
  a.key_lengths = lengths, a.alibi_slopes = slopes;
  a.path = path;
  a.cache = cache.get();
  const auto st = attnlab::attention(a, {out, raw, scores, weights, lse});

  // The contract, written out independently.
  const float s = scale ? float(*scale) : 1.0f / std::sqrt(float(dk ? dk : 1));
  bool valid = batch && H && nq && nk && dk && dv && G && H % G == 0 && q.size() == batch * H * nq * dk &&
               (use_cache || (k.size() == batch * G * nk * dk && v.size() == batch * G * nk * dv)) && out.size() == rows * dv &&
               !(path == attnlab::AttentionPath::streaming && want_matrix) && fuzz::all_finite(q, false) &&
               fuzz::all_finite(k, false) && fuzz::all_finite(v, false);
  if (scale) valid = valid && std::isfinite(*scale) && *scale > 0 && float(*scale) > 0 && std::isfinite(float(*scale));
  if (softcap) {
    const float cap = float(*softcap);
    valid = valid && std::isfinite(*softcap) && *softcap > 0 && cap > 0 && std::isfinite(cap) && std::isfinite(1.0f / cap);
  }
  if (windowed) valid = valid && wl >= -1 && wr >= -1;
  if (mask_kind && valid) {
    const std::size_t target[4] = {batch, H, nq, nk};
    std::size_t count = 1;
    for (std::size_t d = 4 - shape.size(); d < 4; ++d) {
      const std::size_t m = std::size_t(shape[d - (4 - shape.size())]);
      valid = valid && (m == 1 || m == target[d] || (d == 3 && m < nk));
      count *= m;
    }
    valid = valid && (mask_kind == 1 ? mask.size() : keep.size()) == count && fuzz::all_finite(mask, true);
  }
  if (has_lengths) {
    valid = valid && lengths.size() == batch;
    for (auto l : lengths) valid = valid && l >= 0 && std::size_t(l) <= nk;
  }
  if (has_alibi) {
    valid = valid && slopes.size() == H && fuzz::all_finite(slopes, false);
    for (float x : slopes) valid = valid && std::fabs(double(x)) * double(nq + nk) <= 1e37;
  }
  if (valid) {  // scores that could overflow float32 are refused
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        const double kn = use_cache ? cache->max_key_norm() : max_row_norm(k, bshd, b, h * G / H, G, nk, dk);  // (rotated: the cache's)
        const double bound = max_row_norm(q, bshd, b, h, H, nq, dk) * kn;
        valid = valid && bound <= 1e37 && bound * s <= 1e37;
      }
  }
  if (!valid) {
    FUZZ_REQUIRE(!st.ok() && st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    FUZZ_REQUIRE(untouched(out) && untouched(lse) && untouched(weights) && untouched(scores) && untouched(raw));
    return 0;
  }
  if (!st.ok()) std::fprintf(stderr, "unexpected error: %s\n", st.message.c_str());
  FUZZ_REQUIRE(st.ok());

  c.scale = double(s);
  c.softcap = softcap ? double(float(*softcap)) : 0.0;
  if (windowed) c.window_left = wl, c.window_right = wr;
  if (mask_kind == 1) c.mask = &mask;
  if (mask_kind == 2) c.keep = &keep;
  c.key_lengths = lengths, c.alibi = slopes;
  c.streaming = path == attnlab::AttentionPath::streaming || (path == attnlab::AttentionPath::automatic && !want_matrix);
  const auto want = ref::attention_full(q, rotate ? k_rotated : k, v, c);
  auto check = [](const char* name, const std::vector<float>& got, const ref::Bounded& r) {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!ref::within(got[i], r.value[i], r.bound[i])) {
        std::fprintf(stderr, "%s[%zu] = %.9g, want %.9g ± %.3g\n", name, i, double(got[i]), r.value[i], r.bound[i]);
        fuzz::fail("result outside the reference bound");
      }
  };
  check("out", out, want.out);
  if (want_lse) check("lse", lse, want.lse);
  if (want_matrix) check("weights", weights, want.weights), check("scores", scores, want.scores), check("raw", raw, want.raw);
  return 0;
}
