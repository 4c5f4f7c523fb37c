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
#include "fuzz_attention_options.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "kv_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  fuzz::AttentionOptions o;
  const std::size_t batch = o.batch = 1 + in.size(1), G = o.kv_heads = 1 + in.size(1), H = o.heads = G * (1 + in.size(2)),
                    nq = o.nq = 1 + in.size(8), nk = o.nk = 1 + in.size(139), dk = o.dk = 1 + in.size(5), dv = o.dv = 1 + in.size(5);
  const std::uint8_t f1 = in.byte(), f2 = in.byte(), f3 = in.byte();
  const bool has_scale = f1 & 2, has_softcap = f1 & 4, has_alibi = f1 & 8, has_lengths = f1 & 16, perturb = f1 & 64, cut_lse = f1 & 128;
  const bool cut_output = f3 % 32 == 0, cut_d_o = f3 % 32 == 1, long_dq = f3 % 32 == 2, with_cache = f3 % 32 == 3;
  o.bshd = f1 & 1, o.windowed = f1 & 32, o.causal = f2 % 3, o.mask_kind = (f2 / 3) % 3;
  o.window_left = std::int64_t(in.byte() % 12) - 2, o.window_right = std::int64_t(in.byte() % 12) - 2;  // -2: invalid
  if (has_scale) o.scale = in.value();
  if (has_softcap) o.softcap = in.value();
  const auto q = in.values(batch * H * nq * dk), k = in.values(batch * G * nk * dk), v = in.values(batch * G * nk * dv);
  o.decode_mask(in);
  if (has_lengths) o.decode_key_lengths(in);
  if (has_alibi) o.decode_slopes(in);

  attnlab::AttentionArgs a;
  o.apply(a);
  a.q = q, a.k = k, a.v = v, a.nk = nk, a.dk = dk, a.dv = dv;
  a.path = attnlab::AttentionPath::streaming;
  const std::size_t rows = batch * H * nq;
  std::vector<float> out(rows * dv), lse(rows);
  const auto fwd = attnlab::attention(a, {out, {}, {}, {}, lse});
  auto d_o = in.values(rows * dv);

  std::vector<float> dq(q.size() + (long_dq ? 1 : 0), fuzz::kUntouched), dkk(k.size(), fuzz::kUntouched), dvv(v.size(), fuzz::kUntouched);
  if (!fwd.ok()) {  // the same options, refused by the same checks
    const auto st = attnlab::attention_backward(a, {out, lse, d_o}, {dq, dkk, dvv});
    FUZZ_REQUIRE(!st.ok() && (st.arg == fwd.arg || long_dq));
    if (!long_dq) FUZZ_REQUIRE(st.message == fwd.message);
    FUZZ_REQUIRE(fuzz::untouched(dq) && fuzz::untouched(dkk) && fuzz::untouched(dvv));
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
    FUZZ_REQUIRE(fuzz::untouched(dq) && fuzz::untouched(dkk) && fuzz::untouched(dvv));
    // Refusals must have a reason: a cut or perturbed tensor, a wrong buffer, a cache, a bad dOutput, or gradients
    // beyond float32 (named dOutput).
    FUZZ_REQUIRE(cut_lse || cut_output || cut_d_o || long_dq || with_cache || perturb || st.arg == "dOutput");
    return 0;
  }
  FUZZ_REQUIRE(!cut_lse && !cut_output && !cut_d_o && !long_dq && !with_cache && fuzz::all_finite(d_o, false));

  const ref::FullCase c = o.reference_case();
  // Bounds for both orders the kernel may use (q pre-scaled, or the tile scaled when that could overflow).
  const auto in_q = bnd::inputs(q), in_k = bnd::inputs(k), in_v = bnd::inputs(v), in_o = bnd::inputs(out),
             in_lse = bnd::inputs(lse), in_do = bnd::inputs(d_o);
  const auto g1 = ref::attention_full_grad(in_q, in_k, in_v, in_o, in_lse, in_do, c, true);
  const auto g2 = ref::attention_full_grad(in_q, in_k, in_v, in_o, in_lse, in_do, c, false);
  fuzz::check_gradient("dq", dq, g1.dq, g2.dq);
  fuzz::check_gradient("dk", dkk, g1.dk, g2.dk);
  fuzz::check_gradient("dv", dvv, g1.dv, g2.dv);
  return 0;
}
