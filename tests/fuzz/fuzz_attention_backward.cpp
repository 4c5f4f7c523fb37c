// libFuzzer: attention's backward. The forward (streaming, with lse) runs on fuzzed q, k, v, mask; then the backward
// gets its output and lse — sometimes perturbed, cut short, or with bad values — and a fuzzed dOutput.
// Success → every gradient within the bounded double reference of the formula on the inputs it was given;
// failure → a range error naming the argument, every gradient buffer untouched.
#include <cmath>
#include <optional>

#include "../native/attention_grad_reference.h"
#include "attention.h"
#include "attention_backward.h"
#include "attention_impl.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t nq = in.size(12) + 1, nk = in.size(12) + 1, dk = in.size(8) + 1, dv = in.size(8) + 1;
  const std::uint8_t flags = in.byte();
  const bool causal = flags & 1, masked = flags & 2, has_scale = flags & 4, perturb = flags & 8, cut = flags & 16;
  const std::optional<float> scale = has_scale ? std::optional<float>(in.value()) : std::nullopt;
  auto q = in.values(nq * dk), k = in.values(nk * dk), v = in.values(nk * dv), d_o = in.values(nq * dv);
  std::vector<float> mask = masked ? in.values(nq * nk) : std::vector<float>{};
  for (auto& m : mask) m = in.flag() ? -INFINITY : m;
  // The forward, through the public entry point's checks: inputs it refuses have no backward to test.
  std::vector<float> out(nq * dv);
  if (!fuzz::all_finite(q, false) || !fuzz::all_finite(k, false) || !fuzz::all_finite(v, false) ||
      !attnlab::attention({q, k, v, nq, nk, dk, dv, scale, causal, mask, attnlab::AttentionPath::streaming}, {out}).ok())
    return 0;
  const float s = scale ? *scale : 1.0f / std::sqrt(float(dk));
  std::vector<float> lse(nq);
  attnlab::detail::AttentionProblem p{q.data(), dk, k.data(), dk, v.data(), dv, nq, nk, dk, dv, s, causal,
                                      masked ? mask.data() : nullptr, out.data(), dv, nullptr, nullptr, nullptr};
  p.lse = lse.data();
  FUZZ_REQUIRE(attnlab::detail::attend_streaming(p).ok());
  if (perturb) lse[in.size(nq - 1)] += in.value();  // an lse that may not match (or be NaN / ±inf)
  if (cut) lse.pop_back();

  std::vector<float> dq(nq * dk, fuzz::kUntouched), dkk(nk * dk, fuzz::kUntouched), dvv(nk * dv, fuzz::kUntouched);
  attnlab::AttentionBackwardArgs a{q, k, v, out, lse, d_o, nq, nk, dk, dv};
  a.scale = scale, a.causal = causal, a.mask = mask;
  const auto st = attnlab::attention_backward(a, {dq, dkk, dvv});
  if (!st.ok()) {
    FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    FUZZ_REQUIRE(fuzz::untouched(dq) && fuzz::untouched(dkk) && fuzz::untouched(dvv));
    // Refusals must have a reason: a cut or perturbed lse, a bad dOutput, or gradients beyond float32.
    FUZZ_REQUIRE(cut || perturb || !fuzz::all_finite(d_o, false) || st.arg == "dOutput");
    return 0;
  }
  FUZZ_REQUIRE(!cut && fuzz::all_finite(d_o, false));
  // Bounds for both orders the kernel may use (Q pre-scaled, or the tile scaled when that could overflow).
  const auto g1 = ref::attention_grad(bnd::inputs(q), bnd::inputs(k), bnd::inputs(v), bnd::inputs(out), bnd::inputs(lse),
                                      bnd::inputs(d_o), nq, nk, dk, dv, bnd::in(s), causal, masked ? &mask : nullptr, true);
  const auto g2 = ref::attention_grad(bnd::inputs(q), bnd::inputs(k), bnd::inputs(v), bnd::inputs(out), bnd::inputs(lse),
                                      bnd::inputs(d_o), nq, nk, dk, dv, bnd::in(s), causal, masked ? &mask : nullptr, false);
  fuzz::check_gradient("dq", dq, g1.dq, g2.dq);
  fuzz::check_gradient("dk", dkk, g1.dk, g2.dk);
  fuzz::check_gradient("dv", dvv, g1.dv, g2.dv);
  return 0;
}
