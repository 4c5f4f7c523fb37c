// libFuzzer: RoPE with random shapes, layouts, pairings, partial rotary_dim, every form of positions (some
// negative, some near 2³¹, some past the tables), given tables or computed angles, bases from 1 to 1e300 and
// invalid ones. Valid input → matches the bounded long double reference; invalid input → a range error naming
// the argument, and the output untouched.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "../native/rope_reference.h"
#include "fuzz_input.h"
#include "rope.h"

namespace {

std::int32_t position(fuzz::Input& in) {
  const std::uint8_t kind = in.byte(), v = in.byte();
  switch (kind % 8) {
    case 0: return -std::int32_t(v % 4) - 1;                             // negative
    case 1: return std::numeric_limits<std::int32_t>::max() - v % 8;  // near 2³¹
    case 2: return std::int32_t(v) << 12;                               // up to ~10⁶
    default: return v % 64;                                              // small: inside small tables
  }
}

std::vector<std::int32_t> positions(fuzz::Input& in, std::size_t n) {
  std::vector<std::int32_t> p(n);
  for (auto& x : p) x = position(in);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::size_t batch = in.size(3), heads = in.size(3), half = in.size(9), seq = in.size(5);
  const std::size_t dk = 2 * half + in.size(2);  // odd sometimes
  const std::size_t rotary_dim = in.flag() ? in.size(dk + 1) : 0;
  const bool bshd = in.flag(), interleaved = in.flag(), inverse = in.flag();
  const long x_delta = in.delta(), out_delta = in.delta();

  attnlab::RopeArgs a;
  a.batch = batch, a.heads = heads, a.dk = dk, a.rotary_dim = rotary_dim, a.interleaved = interleaved, a.inverse = inverse;
  a.layout = bshd ? attnlab::RopeLayout::bshd : attnlab::RopeLayout::bhsd;
  const std::size_t rotary = rotary_dim ? rotary_dim : dk, r_half = rotary / 2;

  // Positions: none, [seq], [batch·seq], one offset, an offset per item (or a count off by one), or both forms.
  std::vector<std::int32_t> pos, off;
  const std::uint8_t form = in.byte() % 8;
  if (form == 1 || form == 7) pos = positions(in, fuzz::adjust(seq, in.delta()));
  if (form == 2) pos = positions(in, fuzz::adjust(batch * seq, in.delta()));
  if (form == 3 || form == 7) off = positions(in, 1);
  if (form == 4) off = positions(in, fuzz::adjust(batch, in.delta()));
  a.positions = pos, a.offset = off;

  // Tables (rows of r_half) or computed angles with a base, sometimes both.
  std::vector<float> cos, sin;
  const std::uint8_t table_kind = in.byte() % 4;
  if (table_kind == 1) {
    const std::size_t rows = in.size(70);
    cos = in.values(fuzz::adjust(rows * r_half, in.delta()));
    sin = in.values(fuzz::adjust(cos.size(), in.delta()));
    if (in.byte() % 8 == 0) sin.clear();  // one table only
  }
  a.cos = cos, a.sin = sin;
  const std::uint8_t base_kind = in.byte();
  if (table_kind != 1 || base_kind % 16 == 0) {
    constexpr double bases[] = {10000, 1, 500000, 1e6, 1e300, 1.5, 0.5, 0, NAN, INFINITY, -10000};
    if (base_kind % 4 != 0) a.base = bases[base_kind / 4 % std::size(bases)];
  }

  const std::size_t per_token = batch * heads * dk;
  const auto x = in.values(fuzz::adjust(per_token * seq, x_delta));
  a.x = x;
  std::vector<float> out(fuzz::adjust(x.size(), out_delta), 4242.0f);
  const auto st = attnlab::rope(a, out);

  // The contract, stated independently of the engine's code.
  const std::size_t s = per_token && !x.empty() && x.size() % per_token == 0 ? x.size() / per_token : 0;
  const bool tables = !cos.empty() || !sin.empty();
  const std::int64_t max_position = tables && r_half ? std::int64_t(cos.size() / r_half) : 0;
  const std::int64_t limit = tables ? max_position - 1 : std::numeric_limits<std::int32_t>::max();
  bool positions_ok = !(!pos.empty() && !off.empty());
  if (!pos.empty()) {
    positions_ok = positions_ok && (pos.size() == s || pos.size() == batch * s);
    for (auto p : pos) positions_ok = positions_ok && p >= 0 && p <= limit;
  } else if (!off.empty()) {
    positions_ok = positions_ok && (off.size() == 1 || off.size() == batch);
    for (auto o : off) positions_ok = positions_ok && o >= 0 && std::int64_t(o) + std::int64_t(s) - 1 <= limit;
  } else {
    positions_ok = std::int64_t(s) - 1 <= limit;
  }
  // No rotated value may overflow: max|x|·(|cos| + |sin|) ≤ 1e38, with √2 for computed angles.
  auto max_abs = [](const std::vector<float>& v) {
    double m = 0;
    for (float f : v) m = std::fmax(m, std::fabs(double(f)));
    return m;
  };
  const double spread = tables ? max_abs(cos) + max_abs(sin) : std::sqrt(2.0);
  const bool no_overflow = max_abs(x) * spread <= 1e38;
  const double base = a.base.value_or(10000.0);
  const bool valid = batch >= 1 && heads >= 1 && dk >= 1 && rotary % 2 == 0 && rotary >= 2 && rotary <= dk && s >= 1 &&
                     out.size() == x.size() && fuzz::all_finite(x, false) && positions_ok &&
                     (tables ? !cos.empty() && !sin.empty() && cos.size() % r_half == 0 && sin.size() == cos.size() &&
                                   !a.base && fuzz::all_finite(cos, false) && fuzz::all_finite(sin, false)
                             : base >= 1 && std::isfinite(base)) &&
                     no_overflow;
  if (!valid) {
    FUZZ_REQUIRE(!st.ok() && st.kind == attnlab::ErrorKind::range && !st.arg.empty());
    FUZZ_REQUIRE(st.message.find(st.arg) != std::string::npos);
    for (float v : out) FUZZ_REQUIRE(v == 4242.0f);
    return 0;
  }
  FUZZ_REQUIRE(st.ok());
  ref::RopeCase rc;
  rc.x = &x, rc.batch = batch, rc.heads = heads, rc.seq = s, rc.dk = dk, rc.rotary_dim = rotary;
  rc.bshd = bshd, rc.interleaved = interleaved, rc.inverse = inverse, rc.base = base;
  if (tables) rc.cos = &cos, rc.sin = &sin;
  rc.position = [&](std::size_t b, std::size_t t) -> std::int64_t {
    if (!pos.empty()) return pos[(pos.size() == s ? 0 : b * s) + t];
    if (!off.empty()) return std::int64_t(off[off.size() == 1 ? 0 : b]) + std::int64_t(t);
    return std::int64_t(t);
  };
  const auto want = ref::rope(rc);
  for (std::size_t i = 0; i < out.size(); ++i) FUZZ_REQUIRE(ref::within(out[i], want.value[i], want.bound[i]));
  return 0;
}
