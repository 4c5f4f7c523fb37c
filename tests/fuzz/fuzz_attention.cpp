// libFuzzer: scaled dot-product attention on both paths, with masks, causal, intermediates and
// wrong-length buffers. Valid input → within the bounded double reference; invalid → a range error
// naming the argument, every output untouched.
#include <cmath>
#include <optional>

#include "../native/reference.h"
#include "attention.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"

namespace {
double max_row_norm(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
  double best = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (std::size_t c = 0; c < cols; ++c) s += double(x[r * cols + c]) * x[r * cols + c];
    best = std::fmax(best, s);
  }
  return std::sqrt(best);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t nq = in.size(12), nk = in.size(12), dk = in.size(9), dv = in.size(9);
  const std::uint8_t flags = in.byte();
  const bool causal = flags & 1, mask_flag = flags & 2, has_scale = flags & 4, want_matrix = flags & 8;
  const auto path = attnlab::AttentionPath((flags >> 4) % 3);
  const long dq = in.delta(), dkk = in.delta(), dvv = in.delta(), dm = in.delta(), dout = in.delta(), dw = in.delta();
  const std::optional<float> scale = has_scale ? std::optional<float>(in.value()) : std::nullopt;
  const auto q = in.values(fuzz::adjust(nq * dk, dq)), k = in.values(fuzz::adjust(nk * dk, dkk)),
             v = in.values(fuzz::adjust(nk * dv, dvv));
  auto mask = mask_flag ? in.values(fuzz::adjust(nq * nk, dm)) : std::vector<float>{};
  const bool has_mask = !mask.empty();  // an empty span means no mask
  for (auto& m : mask) m = in.flag() ? -INFINITY : m;  // masks are mostly about -inf
  std::vector<float> out(fuzz::adjust(nq * dv, dout), fuzz::kUntouched);
  std::vector<float> weights(want_matrix ? fuzz::adjust(nq * nk, dw) : 0, fuzz::kUntouched);
  std::vector<float> scores(want_matrix ? nq * nk : 0, fuzz::kUntouched), raw(want_matrix ? nq * nk : 0, fuzz::kUntouched);

  const auto st = attnlab::attention({q, k, v, nq, nk, dk, dv, scale, causal, mask, path}, {out, raw, scores, weights});

  const float s = scale ? *scale : 1.0f / std::sqrt(float(dk));
  bool valid = nq && nk && dk && dv && q.size() == nq * dk && k.size() == nk * dk && v.size() == nk * dv &&
               (!has_mask || mask.size() == nq * nk) && out.size() == nq * dv &&
               (weights.empty() || weights.size() == nq * nk) /* empty = not requested */ && (!scale || (std::isfinite(*scale) && *scale > 0)) &&
               !(path == attnlab::AttentionPath::streaming && want_matrix) && fuzz::all_finite(q, false) &&
               fuzz::all_finite(k, false) && fuzz::all_finite(v, false) && fuzz::all_finite(mask, true);
  if (valid) {  // scores that could overflow float32 are refused (documented limit: ‖q‖·‖k‖·max(1, scale) ≤ 1e37)
    const double bound = max_row_norm(q, nq, dk) * max_row_norm(k, nk, dk);
    valid = bound <= 1e37 && bound * s <= 1e37;
  }
  if (!valid) {
    FUZZ_REQUIRE(!st.ok() && st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    FUZZ_REQUIRE(fuzz::untouched(out) && fuzz::untouched(weights) && fuzz::untouched(scores) && fuzz::untouched(raw));
    return 0;
  }
  FUZZ_REQUIRE(st.ok());
  const bool streaming = path == attnlab::AttentionPath::streaming ||
                         (path == attnlab::AttentionPath::automatic && !want_matrix);
  const auto want = ref::attention(ref::widen(q), ref::zeros(q.size()), ref::widen(k), ref::zeros(k.size()), ref::widen(v),
                                   ref::zeros(v.size()), nq, nk, dk, dv, double(s), causal, has_mask ? &mask : nullptr,
                                   streaming);
  fuzz::check_bounded("out", out, want.out);
  if (want_matrix) {
    fuzz::check_bounded("weights", weights, want.weights);
    fuzz::check_bounded("scores", scores, want.scores);
    fuzz::check_bounded("raw", raw, want.raw);
  }
  return 0;
}
