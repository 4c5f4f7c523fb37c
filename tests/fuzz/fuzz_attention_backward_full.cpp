// libFuzzer: attention_backward() over the whole operator. Random batch/heads/GQA shapes, layouts, causal alignments,
// windows, softcap, ALiBi, additive or boolean masks with random broadcast (and shorter-than-nk) shapes, key lengths;
// the forward (streaming, with lse) runs first, then the backward gets its output and lse — sometimes perturbed or
// cut short —, a fuzzed dOutput, sometimes a wrong gradient buffer or a cache.
// Options the forward refuses → the backward refuses them with the same argument and message (one contract);
// success → every gradient within the bounded double reference (attention_full_grad_reference.h) on the inputs it
// was given; failure → a range error naming the argument, every gradient buffer untouched.
#include <cmath>
#include <memory>
#include <optional>

#include "../native/attention_full_grad_reference.h"
#include "attention.h"
#include "attention_backward.h"
#include "fuzz_input.h"
#include "kv_cache.h"

namespace {

bool untouched(const std::vector<float>& b) {
  for (float x : b)
    if (x != 4242.0f) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t batch = 1 + in.size(1), G = 1 + in.size(1), H = G * (1 + in.size(2)), nq = 1 + in.size(8),
                    nk = 1 + in.size(139), dk = 1 + in.size(5), dv = 1 + in.size(5);
  const std::uint8_t f1 = in.byte(), f2 = in.byte(), f3 = in.byte();
  const bool bshd = f1 & 1, has_scale = f1 & 2, has_softcap = f1 & 4, has_alibi = f1 & 8, has_lengths = f1 & 16,
             windowed = f1 & 32, perturb = f1 & 64, cut_lse = f1 & 128;
  const bool cut_output = f3 % 32 == 0, cut_d_o = f3 % 32 == 1, long_dq = f3 % 32 == 2, with_cache = f3 % 32 == 3;
  const int causal = f2 % 3, mask_kind = (f2 / 3) % 3;
  const std::int64_t wl = std::int64_t(in.byte() % 12) - 2, wr = std::int64_t(in.byte() % 12) - 2;  // -2: invalid
  const std::optional<double> scale = has_scale ? std::optional<double>(in.value()) : std::nullopt;
  const std::optional<double> softcap = has_softcap ? std::optional<double>(in.value()) : std::nullopt;
  const auto q = in.values(batch * H * nq * dk), k = in.values(batch * G * nk * dk), v = in.values(batch * G * nk * dv);

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
      shape.push_back(std::int64_t(m));
      c.mask_shape[d] = m;
    }
    std::size_t count = 1;
    for (auto m : shape) count *= std::size_t(m);
    if (mask_kind == 1) {
      mask = in.values(count);
      for (auto& x : mask) x = in.flag() ? -INFINITY : x;
    } else {
      keep.resize(count);
      for (auto& x : keep) x = in.byte() % 4 != 0;
    }
  }
  std::vector<std::int32_t> lengths;
  if (has_lengths)
    for (std::size_t b = 0; b < batch; ++b) lengths.push_back(std::int32_t(in.byte() % (nk + 1)));
  std::vector<float> slopes;
  if (has_alibi) slopes = in.values(H);

  attnlab::AttentionArgs a;
  a.q = q, a.k = k, a.v = v, a.nq = nq, a.nk = nk, a.dk = dk, a.dv = dv;
  a.batch = batch, a.heads = H, a.kv_heads = G;
  a.scale = scale, a.softcap = softcap;
  a.causal = causal == 0 ? attnlab::Causal() : causal == 1 ? attnlab::Causal(attnlab::Causal::bottom_right) : attnlab::Causal(attnlab::Causal::top_left);
  a.layout = bshd ? attnlab::Layout::bshd : attnlab::Layout::bhsd;
  if (windowed) a.window = {wl, wr};
  a.mask = mask, a.bool_mask = keep, a.mask_shape = shape;
  a.key_lengths = lengths, a.alibi_slopes = slopes;
  a.path = attnlab::AttentionPath::streaming;
  const std::size_t rows = batch * H * nq;
  std::vector<float> out(rows * dv), lse(rows);
  const auto fwd = attnlab::attention(a, {out, {}, {}, {}, lse});
  auto d_o = in.values(rows * dv);

  std::vector<float> dq(q.size() + (long_dq ? 1 : 0), 4242.0f), dkk(k.size(), 4242.0f), dvv(v.size(), 4242.0f);
  if (!fwd.ok()) {  // the same options, refused by the same checks
    const auto st = attnlab::attention_backward(a, {out, lse, d_o}, {dq, dkk, dvv});
    FUZZ_REQUIRE(!st.ok() && (st.arg == fwd.arg || long_dq));
    if (!long_dq) FUZZ_REQUIRE(st.message == fwd.message);
    FUZZ_REQUIRE(untouched(dq) && untouched(dkk) && untouched(dvv));
    return 0;
  }
  if (perturb) lse[in.size(rows - 1)] += in.value();  // an lse that may not match (or be NaN / ±inf)
  if (cut_lse) lse.pop_back();
  if (cut_output) out.pop_back();
  if (cut_d_o) d_o.pop_back();
  std::unique_ptr<attnlab::KvCache> cache;
  if (with_cache) {
    FUZZ_REQUIRE(attnlab::KvCache::create({batch, G, dk, dv, nk}, cache).ok());
    a.cache = cache.get();
  }
  const auto st = attnlab::attention_backward(a, {out, lse, d_o}, {dq, dkk, dvv});
  if (!st.ok()) {
    FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    FUZZ_REQUIRE(untouched(dq) && untouched(dkk) && untouched(dvv));
    // Refusals must have a reason: a cut or perturbed tensor, a wrong buffer, a cache, a bad dOutput, or gradients
    // beyond float32 (named dOutput).
    FUZZ_REQUIRE(cut_lse || cut_output || cut_d_o || long_dq || with_cache || perturb || st.arg == "dOutput");
    return 0;
  }
  FUZZ_REQUIRE(!cut_lse && !cut_output && !cut_d_o && !long_dq && !with_cache && fuzz::all_finite(d_o, false));

  c.scale = scale ? double(float(*scale)) : double(1.0f / std::sqrt(float(dk)));
  c.softcap = softcap ? double(float(*softcap)) : 0.0;
  if (windowed) c.window_left = wl, c.window_right = wr;
  if (mask_kind == 1) c.mask = &mask;
  if (mask_kind == 2) c.keep = &keep;
  c.key_lengths = lengths, c.alibi = slopes;
  // Bounds for both orders the kernel may use (q pre-scaled, or the tile scaled when that could overflow).
  const auto in_q = bnd::inputs(q), in_k = bnd::inputs(k), in_v = bnd::inputs(v), in_o = bnd::inputs(out),
             in_lse = bnd::inputs(lse), in_do = bnd::inputs(d_o);
  const auto g1 = ref::attention_full_grad(in_q, in_k, in_v, in_o, in_lse, in_do, c, true);
  const auto g2 = ref::attention_full_grad(in_q, in_k, in_v, in_o, in_lse, in_do, c, false);
  auto check = [](const char* name, const std::vector<float>& got, const std::vector<bnd::B>& w1, const std::vector<bnd::B>& w2) {
    for (std::size_t i = 0; i < got.size(); ++i) {
      FUZZ_REQUIRE(std::isfinite(got[i]));  // a success holds finite gradients only
      if (!std::isfinite(w1[i].v)) continue;  // the double formula itself overflows (inputs near 1e30)
      const double e = std::fmax(w1[i].e, w2[i].e);
      if (!(std::fabs(double(got[i]) - w1[i].v) <= e)) {
        std::fprintf(stderr, "%s[%zu] = %.9g, want %.9g ± %.3g\n", name, i, double(got[i]), w1[i].v, e);
        fuzz::fail("gradient outside the reference bound");
      }
    }
  };
  check("dq", dq, g1.dq, g2.dq);
  check("dk", dkk, g1.dk, g2.dk);
  check("dv", dvv, g1.dv, g2.dv);
  return 0;
}
