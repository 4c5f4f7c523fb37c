// libFuzzer: softmax / log-softmax. Valid input → matches the bounded double reference;
// invalid input → a range error naming the argument, and the output untouched.
#include <cmath>

#include "../native/reference.h"
#include "fuzz_input.h"
#include "softmax.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t cols = in.size(40), rows = in.size(4);
  const long x_delta = in.delta(), out_delta = in.delta();
  const float temperature = in.flag() ? in.value() : 1.0f;
  const bool log = in.flag();
  const auto x = in.values(fuzz::adjust(rows * cols, x_delta));
  std::vector<float> out(fuzz::adjust(x.size(), out_delta), 4242.0f);

  const auto st = attnlab::softmax({x, cols, temperature, log}, out);
  const bool valid = cols >= 1 && !x.empty() && x.size() % cols == 0 && std::isfinite(temperature) &&
                     temperature > 0 && std::isfinite(1.0f / temperature) && out.size() == x.size() &&
                     fuzz::all_finite(x, true);
  if (!valid) {
    FUZZ_REQUIRE(!st.ok() && st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    for (float v : out) FUZZ_REQUIRE(v == 4242.0f);
    return 0;
  }
  FUZZ_REQUIRE(st.ok());
  const auto want = ref::softmax_rows(ref::widen(x), ref::zeros(x.size()), cols, double(1.0f / temperature), log);
  for (std::size_t i = 0; i < out.size(); ++i) FUZZ_REQUIRE(ref::within(out[i], want.value[i], want.bound[i]));
  return 0;
}
