// libFuzzer: matmul, both layouts of b. Invalid input (a size of 0, a buffer one element off, NaN or ±inf) →
// a range error naming the argument and the output untouched. Valid input → within the bounded double reference
// (ref::gemm), or refused only when the norm guard really applies (max ‖row of a‖·‖column of b‖ > 1e37).
#include <cmath>
#include <cstdint>
#include <string>

#include "../native/reference.h"
#include "fuzz_input.h"
#include "matmul.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  // Mostly small shapes around the vector width and the 4×8 register block; a flag adds 240 terms or 124
  // columns, to cross the op's 256-deep and 128-column blocks (with at most 3 rows then, to keep runs fast).
  const std::size_t m0 = in.size(9);
  const bool deep = in.flag(), wide = in.flag();
  const std::size_t k = in.size(20) + (deep ? 240 : 0), n = in.size(12) + (wide ? 124 : 0);
  const std::size_t m = deep || wide ? m0 % 4 : m0;
  const bool transpose_b = in.flag();
  const long da = in.delta(), db = in.delta(), dout = in.delta();
  // Values from the input, or (for shapes larger than an input can describe) seeded ordinary numbers: multiples of
  // 2⁻²¹ in [−4, 4) from the top 24 bits of a 32-bit LCG (Numerical Recipes' constants), one state for a and b. Not
  // std::mt19937 with uniform_real_distribution: libstdc++'s generate_canonical takes a long-double log per number,
  // and their loops, compiled here, carry the fuzzer's comparison hooks: together most of a run's time.
  const bool generated = in.flag();
  std::uint32_t state = in.byte();
  auto values = [&](std::size_t count) {
    if (!generated) return in.values(count);
    std::vector<float> v(count);
    for (auto& x : v) {
      state = state * 1664525u + 1013904223u;
      x = float(std::int32_t(state >> 8) - (1 << 23)) * 0x1p-21f;
    }
    return v;
  };
  const auto a = values(fuzz::adjust(m * k, da));
  const auto b = values(fuzz::adjust(k * n, db));
  std::vector<float> out(fuzz::adjust(m * n, dout), 4242.0f);

  const auto st = attnlab::matmul({a, b, m, k, n, transpose_b}, out);
  const bool valid = m && k && n && a.size() == m * k && b.size() == k * n && out.size() == m * n &&
                     fuzz::all_finite(a, false) && fuzz::all_finite(b, false);
  if (!valid) {
    FUZZ_REQUIRE(!st.ok() && st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    for (float v : out) FUZZ_REQUIRE(v == 4242.0f);
    return 0;
  }
  // The guard's bound, in double; b's columns are its rows when transposed.
  double arow = 0, bcol = 0;
  for (std::size_t i = 0; i < m; ++i) {
    double s = 0;
    for (std::size_t p = 0; p < k; ++p) s += double(a[i * k + p]) * double(a[i * k + p]);
    arow = std::fmax(arow, s);
  }
  for (std::size_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::size_t p = 0; p < k; ++p) {
      const double v = transpose_b ? b[j * k + p] : b[p * n + j];
      s += v * v;
    }
    bcol = std::fmax(bcol, s);
  }
  const double bound = std::sqrt(arow) * std::sqrt(bcol);
  if (!st.ok()) {
    FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range && st.arg == "a" && bound > 1e37 * (1 - 1e-12));
    for (float v : out) FUZZ_REQUIRE(v == 4242.0f);
    return 0;
  }
  FUZZ_REQUIRE(bound <= 1e37 * (1 + 1e-12));
  std::vector<float> bkn(b);  // b as [k×n] for the reference
  if (transpose_b)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t p = 0; p < k; ++p) bkn[p * n + j] = b[j * k + p];
  const auto want = ref::gemm(a, bkn, m, n, k);
  for (std::size_t i = 0; i < out.size(); ++i) FUZZ_REQUIRE(ref::within(out[i], want.value[i], want.bound[i]));
  return 0;
}
