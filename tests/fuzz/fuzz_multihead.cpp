// libFuzzer: multi-head / grouped-query attention. Structurally invalid input → a range error naming the
// argument and the output untouched. Valid input → within the bounded double reference, or — only when
// the numbers really are beyond float32 (a projection, score or output near 1e37 or more) — refused.
#include <cmath>
#include <string>

#include "../native/reference.h"
#include "fuzz_input.h"
#include "multihead.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t n = in.size(8), d_model = in.size(8), heads = in.size(4), kv_heads = in.size(4);
  const std::size_t dk = in.size(4), dv = in.size(4);  // 0 → d_model / heads
  const bool causal = in.flag(), intermediates = in.flag();
  const long dx = in.delta(), dq = in.delta(), dkk = in.delta(), dvv = in.delta(), dwo = in.delta();
  const std::size_t H = heads, G = kv_heads ? kv_heads : heads;
  const std::size_t DK = dk ? dk : (H && d_model % H == 0 ? d_model / H : 0);
  const std::size_t DV = dv ? dv : (H && d_model % H == 0 ? d_model / H : 0);
  const auto x = in.values(fuzz::adjust(n * d_model, dx));
  const auto wq = in.values(fuzz::adjust(d_model * H * DK, dq)), wk = in.values(fuzz::adjust(d_model * G * DK, dkk)),
             wv = in.values(fuzz::adjust(d_model * G * DV, dvv)), wo = in.values(fuzz::adjust(H * DV * d_model, dwo));
  std::vector<float> out(n * d_model, 4242.0f), weights(intermediates ? H * n * n : 0, 4242.0f);

  attnlab::MultiHeadArgs args{x, n, d_model, heads, kv_heads, dk, dv, wq, wk, wv, wo, std::nullopt, causal, {}};
  attnlab::MultiHeadOutputs outs{out};
  outs.weights = weights;
  const auto st = attnlab::multi_head_attention(args, outs);

  const bool valid = n && d_model && H && G <= H && H % G == 0 && DK && DV && x.size() == n * d_model &&
                     wq.size() == d_model * H * DK && wk.size() == d_model * G * DK && wv.size() == d_model * G * DV &&
                     wo.size() == H * DV * d_model && fuzz::all_finite(x, false) && fuzz::all_finite(wq, false) &&
                     fuzz::all_finite(wk, false) && fuzz::all_finite(wv, false) && fuzz::all_finite(wo, false);
  auto untouched = [](const std::vector<float>& b) {
    for (float v : b)
      if (v != 4242.0f) return false;
    return true;
  };
  if (!valid) {
    FUZZ_REQUIRE(!st.ok() && st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(untouched(out) && untouched(weights));
    return 0;
  }
  // Double reference of the projections; a refusal must be backed by magnitudes near float32's limit.
  const auto Q = ref::gemm(x, wq, n, H * DK, d_model), K = ref::gemm(x, wk, n, G * DK, d_model),
             V = ref::gemm(x, wv, n, G * DV, d_model);
  double biggest = 0;
  for (const auto* m : {&Q, &K, &V})
    for (double v : m->value) biggest = std::fmax(biggest, std::fabs(v));
  double qn = 0, kn = 0;  // largest row norms, for the score bound
  for (std::size_t i = 0; i < n; ++i) {
    double a = 0, b = 0;
    for (std::size_t c = 0; c < H * DK; ++c) a += Q.value[i * H * DK + c] * Q.value[i * H * DK + c];
    for (std::size_t c = 0; c < G * DK; ++c) b += K.value[i * G * DK + c] * K.value[i * G * DK + c];
    qn = std::fmax(qn, a), kn = std::fmax(kn, b);
  }
  double vmax = 0, wmax = 0;
  for (double v : V.value) vmax = std::fmax(vmax, std::fabs(v));
  for (float w : wo) wmax = std::fmax(wmax, std::fabs(double(w)));
  const double beyond = std::fmax(std::fmax(biggest, std::sqrt(qn * kn)), vmax * wmax * double(H * DV));
  if (!st.ok()) {
    FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range);
    FUZZ_REQUIRE(st.arg == "wq" || st.arg == "wk" || st.arg == "wv" || st.arg == "wo");
    FUZZ_REQUIRE(beyond >= 1e36);
    FUZZ_REQUIRE(untouched(out) && untouched(weights));
    return 0;
  }
  // Accepted: compare the output with the double reference, carrying the projections' error bounds.
  std::vector<double> concat(n * H * DV), concat_err(n * H * DV);
  const double scale = double(1.0f / std::sqrt(float(DK)));
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / (H / G);
    const auto head = ref::attention(ref::columns(Q.value, n, H * DK, h * DK, DK), ref::columns(Q.bound, n, H * DK, h * DK, DK),
                                     ref::columns(K.value, n, G * DK, g * DK, DK), ref::columns(K.bound, n, G * DK, g * DK, DK),
                                     ref::columns(V.value, n, G * DV, g * DV, DV), ref::columns(V.bound, n, G * DV, g * DV, DV), n, n, DK,
                                     DV, scale, causal, nullptr, !intermediates);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < DV; ++c) {
        concat[i * H * DV + h * DV + c] = head.out.value[i * DV + c];
        concat_err[i * H * DV + h * DV + c] = head.out.bound[i * DV + c];
      }
    if (intermediates)
      for (std::size_t e = 0; e < n * n; ++e) {
        const double w = head.weights.value[e], got = weights[h * n * n + e];
        if (!(std::fabs(got - w) <= head.weights.bound[e])) {
          std::fprintf(stderr, "head %zu weights[%zu] = %.9g, want %.9g ± %.3g\n", h, e, got, w, head.weights.bound[e]);
          fuzz::fail("weight outside the reference bound");
        }
      }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d_model; ++j) {
      double s = 0, sa = 0, prop = 0;
      for (std::size_t p = 0; p < H * DV; ++p) {
        const double c = concat[i * H * DV + p], w = wo[p * d_model + j];
        s += c * w, sa += std::fabs(c * w), prop += concat_err[i * H * DV + p] * std::fabs(w);
      }
      FUZZ_REQUIRE(std::fabs(double(out[i * d_model + j]) - s) <= ref::gamma(double(H * DV)) * sa + prop + double(H * DV) * ref::underflow);
    }
  return 0;
}
