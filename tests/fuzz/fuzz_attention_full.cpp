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
#include "fuzz_attention_options.h"
#include "fuzz_checks.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  fuzz::AttentionOptions o;
  const std::size_t batch = o.batch = in.size(3), kv_heads = in.size(3), group = in.size(3), nq = o.nq = in.size(9),
                    nk = o.nk = in.size(140), dk = o.dk = in.size(6), dv = o.dv = in.size(6);
  o.heads = kv_heads * (group ? group : 1) + (in.byte() % 16 == 0);  // now and then not a multiple
  o.kv_heads = kv_heads;
  const std::uint8_t f1 = in.byte(), f2 = in.byte();
  const bool use_cache = f1 & 2, want_matrix = f1 & 4, want_lse = f1 & 8, has_scale = f1 & 16, has_softcap = f1 & 32,
             has_alibi = f1 & 64, has_lengths = f1 & 128;
  o.bshd = f1 & 1, o.causal = f2 % 3, o.mask_kind = (f2 / 3) % 3;  // mask: none, additive, boolean
  const auto path = attnlab::AttentionPath((f2 / 9) % 3);
  o.window_left = std::int64_t(in.byte() % 12) - 2, o.window_right = std::int64_t(in.byte() % 12) - 2;  // -2: invalid
  o.windowed = in.flag();
  const long dq = in.delta(), dkk = in.delta(), dvv = in.delta(), dm = in.delta(), dout = in.delta();
  if (has_scale) o.scale = in.value();
  if (has_softcap) o.softcap = in.value();
  const bool bshd = o.bshd;
  const std::size_t H = o.heads, G = kv_heads;
  const auto q = in.values(fuzz::adjust(batch * H * nq * dk, dq));
  const auto k = in.values(fuzz::adjust(batch * G * nk * dk, dkk)), v = in.values(fuzz::adjust(batch * G * nk * dv, dvv));
  o.decode_mask(in, true, dm);  // sometimes a shape that does not broadcast, or one element short or long
  if (has_lengths) o.decode_key_lengths(in, true);
  if (has_alibi) o.decode_slopes(in, true);

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
  std::vector<float> out(fuzz::adjust(rows * dv, dout), fuzz::kUntouched), lse(want_lse ? rows : 0, fuzz::kUntouched);
  std::vector<float> weights(want_matrix ? rows * nk : 0, fuzz::kUntouched), scores(weights.size(), fuzz::kUntouched), raw(weights.size(), fuzz::kUntouched);
  attnlab::AttentionArgs a;
  o.apply(a);
  a.q = q;
  if (!use_cache) a.k = k, a.v = v, a.nk = nk, a.dk = dk, a.dv = dv;
  a.path = path;
  a.cache = cache.get();
  const auto st = attnlab::attention(a, {out, raw, scores, weights, lse});

  // The contract, written out independently.
  const float s = o.scale_used();
  bool valid = batch && H && nq && nk && dk && dv && G && H % G == 0 && q.size() == batch * H * nq * dk &&
               (use_cache || (k.size() == batch * G * nk * dk && v.size() == batch * G * nk * dv)) && out.size() == rows * dv &&
               !(path == attnlab::AttentionPath::streaming && want_matrix) && fuzz::all_finite(q, false) &&
               fuzz::all_finite(k, false) && fuzz::all_finite(v, false);
  if (const auto scale = o.scale) valid = valid && std::isfinite(*scale) && *scale > 0 && float(*scale) > 0 && std::isfinite(float(*scale));
  if (const auto softcap = o.softcap) {
    const float cap = float(*softcap);
    valid = valid && std::isfinite(*softcap) && *softcap > 0 && cap > 0 && std::isfinite(cap) && std::isfinite(1.0f / cap);
  }
  if (o.windowed) valid = valid && o.window_left >= -1 && o.window_right >= -1;
  if (o.mask_kind && valid) {
    const auto& shape = o.mask_shape;
    const std::size_t target[4] = {batch, H, nq, nk};
    std::size_t count = 1;
    for (std::size_t d = 4 - shape.size(); d < 4; ++d) {
      const std::size_t m = std::size_t(shape[d - (4 - shape.size())]);
      valid = valid && (m == 1 || m == target[d] || (d == 3 && m < nk));
      count *= m;
    }
    valid = valid && (o.mask_kind == 1 ? o.mask.size() : o.keep.size()) == count && fuzz::all_finite(o.mask, true);
  }
  if (has_lengths) {
    valid = valid && o.key_lengths.size() == batch;
    for (auto l : o.key_lengths) valid = valid && l >= 0 && std::size_t(l) <= nk;
  }
  if (has_alibi) {
    valid = valid && o.slopes.size() == H && fuzz::all_finite(o.slopes, false);
    for (float x : o.slopes) valid = valid && std::fabs(double(x)) * double(nq + nk) <= 1e37;
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
    FUZZ_REQUIRE(fuzz::untouched(out) && fuzz::untouched(lse) && fuzz::untouched(weights) && fuzz::untouched(scores) && fuzz::untouched(raw));
    return 0;
  }
  if (!st.ok()) std::fprintf(stderr, "unexpected error: %s\n", st.message.c_str());
  FUZZ_REQUIRE(st.ok());

  const bool streaming = path == attnlab::AttentionPath::streaming || (path == attnlab::AttentionPath::automatic && !want_matrix);
  const auto want = ref::attention_full(q, rotate ? k_rotated : k, v, o.reference_case(streaming));
  fuzz::check_bounded("out", out, want.out);
  if (want_lse) fuzz::check_bounded("lse", lse, want.lse);
  if (want_matrix) {
    fuzz::check_bounded("weights", weights, want.weights);
    fuzz::check_bounded("scores", scores, want.scores);
    fuzz::check_bounded("raw", raw, want.raw);
  }
  return 0;
}
