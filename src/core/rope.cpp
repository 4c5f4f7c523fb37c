#include "rope.h"

#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "kernels/rope_kernels.h"
#include "rope_math.h"
#include "scratch.h"
#include "size_math.h"
#include "validate.h"

namespace attnlab {
namespace {

constexpr std::int64_t kMaxPosition = std::numeric_limits<std::int32_t>::max();
// Largest max|x|·(|cos| + |sin|) accepted: rotated values stay finite with room for rounding (FLT_MAX ≈ 3.4e38).
constexpr double kValueLimit = 1e38;

// Where the positions come from, resolved once: pos(b, s) for item b, token s.
struct Positions {
  const std::int32_t* list = nullptr;  // positions, or null
  const std::int32_t* offset = nullptr;  // offsets, or null (then list, or 0 … seq − 1)
  bool per_item = false;                 // one row (or offset) per batch item, else one shared by all
  std::size_t seq = 0;

  std::int64_t operator()(std::size_t b, std::size_t s) const noexcept {
    const std::size_t item = per_item ? b : 0;
    if (list) return list[item * seq + s];
    return (offset ? std::int64_t(offset[item]) : 0) + std::int64_t(s);
  }
  // Items whose positions can differ (the angle tables hold seq rows for each).
  std::size_t table_items(std::size_t batch) const noexcept { return per_item ? batch : 1; }
};

// Double-precision scratch that reports failure (the wasm build has no exceptions).
class Doubles {
 public:
  explicit Doubles(std::size_t n) noexcept
      : p_(n <= SIZE_MAX / sizeof(double) ? static_cast<double*>(std::malloc(n * sizeof(double))) : nullptr) {}
  Doubles(const Doubles&) = delete;
  Doubles& operator=(const Doubles&) = delete;
  ~Doubles() { std::free(p_); }
  double* data() noexcept { return p_; }

 private:
  double* p_;
};

// cos and sin of p·fᵢ for every i (one copy of the polynomials in the module: it is called from two places).
[[gnu::noinline]] void sincos_row(double p, const double* freq, std::size_t half, double* cos_out, double* sin_out) {
  for (std::size_t i = 0; i < half; ++i) {
    const auto t = rope_math::sincos(p * freq[i]);
    cos_out[i] = t.cos, sin_out[i] = t.sin;
  }
}

// cos/sin of θ = p·fᵢ, fᵢ = base^(−2i/rotary_dim) = e^(−(2i/rotary_dim)·ln base), for `rows` positions into
// [rows × half] float tables, in double until the final rounding (rope_math.h's functions; the error is in
// rope.h). Each angle is split as p = 64·q + l, and cos/sin(A + B), A = 64q·fᵢ, B = l·fᵢ, come from the
// angle-sum formulas: the 64 rows of B are computed when first needed, the row of A once per run of positions
// sharing q, so contiguous positions take 1/32 of the sin/cos evaluations of one per entry (measured:
// docs/performance.md#kernel-and-engine-choices-measured).
// A + B is p·fᵢ up to the rounding a direct product would have; every position always takes this route, so
// its entries are the same bits whichever call computes them.
template <class PositionOfRow>
bool angle_tables(std::size_t rows, PositionOfRow position, std::size_t half, double base, float* cos_t, float* sin_t) {
  constexpr std::int64_t kLow = 64;
  Doubles buf(sat_mul(half, 3 + 2 * kLow));
  if (!buf.data()) return false;
  double* freq = buf.data();
  double* low_cos = freq + half;  // [kLow × half], row l filled when first used
  double* low_sin = low_cos + kLow * half;
  double* high_cos = low_sin + kLow * half;  // [half]: the current q's row
  double* high_sin = high_cos + half;
  const double ln_base = rope_math::log(base), rotary_dim = 2.0 * double(half);
  for (std::size_t i = 0; i < half; ++i) freq[i] = rope_math::exp(-(2.0 * double(i) / rotary_dim) * ln_base);
  std::uint64_t low_ready = 0;
  std::int64_t high_q = -1;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t p = position(r), q = p / kLow, l = p % kLow;
    if (!(low_ready >> l & 1u)) {
      sincos_row(double(l), freq, half, low_cos + l * half, low_sin + l * half);
      low_ready |= std::uint64_t(1) << l;
    }
    if (q != high_q) {
      sincos_row(double(q * kLow), freq, half, high_cos, high_sin);
      high_q = q;
    }
    const double* lc = low_cos + l * half;
    const double* ls = low_sin + l * half;
    for (std::size_t i = 0; i < half; ++i) {
      cos_t[r * half + i] = float(high_cos[i] * lc[i] - high_sin[i] * ls[i]);
      sin_t[r * half + i] = float(high_sin[i] * lc[i] + high_cos[i] * ls[i]);
    }
  }
  return true;
}

// A range error whose message is printf-formatted: one call per message keeps the wasm small (string
// concatenation inlines a few hundred bytes per `+`).
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noinline))
#endif
Status range(const char* arg, const char* format, ...) {
  char buf[320];
  std::va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return Status::range_error(arg, buf);
}

using ll = long long;

// What a call's sizes resolve to.
struct RopeShape {
  std::size_t seq = 0, rotary = 0, half = 0;
  bool tables = false;
  double base = 10000.0;
  std::int64_t max_position = 0;  // the tables' rows; 0 = no table bounds the positions
};

// The positions' lengths, and `pos` pointing at them.
Status position_lengths(const RopeArgs& a, std::size_t seq, Positions& pos) {
  pos.seq = seq;
  if (!a.positions.empty() && !a.offset.empty()) return range("offset", "give positions or offset, not both");
  if (!a.positions.empty()) {
    if (a.positions.size() != seq && a.positions.size() != sat_mul(a.batch, seq))
      return a.batch > 1 ? range("positions", "positions must have seq = %zu elements (shared by every item) or batch·seq = %zu·%zu = %zu (a row per item), got %zu",
                                 seq, a.batch, seq, a.batch * seq, a.positions.size())
                         : range("positions", "positions must have seq = %zu elements, got %zu", seq, a.positions.size());
    pos.list = a.positions.data();
    pos.per_item = a.positions.size() != seq;
  } else if (!a.offset.empty()) {
    if (a.offset.size() != 1 && a.offset.size() != a.batch)
      return range("offset", "offset must hold 1 value or batch = %zu values (one per item), got %zu", a.batch, a.offset.size());
    pos.offset = a.offset.data();
    pos.per_item = a.offset.size() != 1;
  }
  return Status::success();
}

// The positions' values: integers ≥ 0, each below the tables' rows (max_position; 0 = no tables).
Status position_values(const RopeArgs& a, std::size_t seq, std::int64_t max_position) {
  char bound[96];
  if (max_position)
    std::snprintf(bound, sizeof bound, "must be < maxPosition = %lld (the rows of cos and sin)", ll(max_position));
  else
    std::snprintf(bound, sizeof bound, "must be <= 2147483647");
  const std::int64_t limit = max_position ? max_position - 1 : kMaxPosition;
  if (!a.positions.empty()) {
    for (std::size_t i = 0; i < a.positions.size(); ++i) {
      const ll p = a.positions[i];
      if (p < 0) return range("positions", "positions[%zu] is %lld; positions must be integers >= 0", i, p);
      if (p > limit) return range("positions", "positions[%zu] is %lld; positions %s", i, p, bound);
    }
    return Status::success();
  }
  if (!a.offset.empty()) {
    for (std::size_t b = 0; b < a.offset.size(); ++b) {
      const ll o = a.offset[b], last = o + ll(seq) - 1;
      char name[32];
      std::snprintf(name, sizeof name, a.offset.size() == 1 ? "offset" : "offset[%zu]", b);
      if (o < 0) return range("offset", "%s is %lld; offsets must be integers >= 0", name, o);
      if (last > limit) return range("offset", "%s is %lld: its last position, %s + seq - 1 = %lld, %s", name, o, name, last, bound);
    }
    return Status::success();
  }
  if (ll(seq) - 1 > limit)
    return range("positions", "the default positions 0 … seq - 1 = %zu %s; pass positions or offset", seq - 1, bound);
  return Status::success();
}

// Every check that reads no value: sizes, lengths, options.
Status rope_shape(const RopeArgs& a, std::size_t out_size, RopeShape& r, Positions& pos) {
  using namespace detail;
  for (auto [name, value] : {std::pair{"batch", a.batch}, {"heads", a.heads}, {"dk", a.dk}})
    if (!value) return check_size(name, value);
  r.rotary = a.rotary_dim ? a.rotary_dim : a.dk;
  if (a.rotary_dim && (r.rotary % 2 || r.rotary > a.dk))
    return range("rotaryDim", "rotaryDim must be an even integer from 2 to dk = %zu, got %zu", a.dk, r.rotary);
  if (r.rotary % 2)
    return range("dk", "dk = %zu is odd: rotation needs pairs (give an even rotaryDim < dk to rotate part of each head)", a.dk);
  r.half = r.rotary / 2;

  std::size_t per_token = 0, x_row = 0;
  if (!checked_mul(a.batch, a.heads, per_token)) return check_product("batch·heads·dk", a.batch, a.heads, per_token);
  if (!checked_mul(per_token, a.dk, x_row)) return check_product("batch·heads·dk", per_token, a.dk, x_row);
  if (a.x.empty() || a.x.size() % x_row)
    return range("x", "x.length must be a positive multiple of batch·heads·dk = %zu·%zu·%zu = %zu (seq tokens), got %zu",
                 a.batch, a.heads, a.dk, x_row, a.x.size());
  r.seq = a.x.size() / x_row;
  if (out_size != a.x.size()) return check_length("out", out_size, a.x.size(), "x.length");

  r.tables = !a.cos.empty() || !a.sin.empty();
  r.base = a.base.value_or(10000.0);
  if (r.tables) {
    if (a.cos.empty()) return range("cos", "cos must be given with sin (both tables or neither)");
    if (a.sin.empty()) return range("sin", "sin must be given with cos (both tables or neither)");
    if (a.cos.size() % r.half)
      return range("cos", "cos.length must be a multiple of rotaryDim/2 = %zu ([maxPosition, rotaryDim/2]), got %zu", r.half, a.cos.size());
    if (a.sin.size() != a.cos.size())
      return range("sin", "sin must have the length of cos = %zu elements, got %zu", a.cos.size(), a.sin.size());
    if (a.base)
      return range("base", "base sets the computed angles, which cos and sin replace: give base or the tables, not both");
    const std::size_t rows = a.cos.size() / r.half;
    r.max_position = rows > std::size_t(kMaxPosition) ? kMaxPosition + 1 : std::int64_t(rows);
  } else if (!(r.base >= 1 && std::isfinite(r.base))) {  // fᵢ ≤ 1 keeps every angle below 2³¹ (rope_math.h)
    return range("base", "base must be finite and >= 1 (the frequencies base^(-2i/rotaryDim) are <= 1), got %s", detail::fmt(r.base).c_str());
  }
  return position_lengths(a, r.seq, pos);
}

}  // namespace

Status check_rope(const RopeArgs& a, std::size_t out_size) {
  RopeShape r;
  Positions pos;
  return rope_shape(a, out_size, r, pos);
}

Status rope(const RopeArgs& a, std::span<float> out) {
  using namespace detail;
  RopeShape r;
  Positions pos;
  if (auto s = rope_shape(a, out.size(), r, pos); !s.ok()) return s;
  if (auto s = position_values(a, r.seq, r.max_position); !s.ok()) return s;
  const std::size_t seq = r.seq, rotary = r.rotary, half = r.half;
  const bool tables = r.tables;
  const double base = r.base;
  // Values: finite, and small enough that no rotated value overflows: |a·c − b·s| ≤ max|x|·(|c| + |s|), where
  // |c| + |s| ≤ √2 for computed angles (each ≤ 1 in float, c² + s² = 1) and max|cos| + max|sin| for given tables.
  namespace k = kernels::rope_active;
  const float x_max = k::max_abs(a.x.data(), a.x.size());
  if (!(x_max <= FLT_MAX)) return check_values("x", a.x, false);  // names the first NaN or ±Infinity
  double spread = 1.4142135623730951;
  if (tables) {
    const float c_max = k::max_abs(a.cos.data(), a.cos.size()), s_max = k::max_abs(a.sin.data(), a.sin.size());
    if (!(c_max <= FLT_MAX)) return check_values("cos", a.cos, false);
    if (!(s_max <= FLT_MAX)) return check_values("sin", a.sin, false);
    spread = double(c_max) + double(s_max);
  }
  if (double(x_max) * spread > kValueLimit)
    return range("x", "x is too large: max|x| = %s times %s = %s could overflow float32 rotated values; the limit is 1e38",
                 detail::fmt(x_max).c_str(), tables ? "max|cos| + max|sin|" : "sqrt(2)", detail::fmt(double(x_max) * spread).c_str());

  // The angle tables, one row per (item, token) whose position can differ; with cos/sin given, their rows.
  const std::size_t table_rows = pos.table_items(a.batch) * seq;
  Scratch computed(tables ? 0 : sat_mul(2 * half, table_rows));
  if (!computed.ok_for(tables ? 0 : sat_mul(2 * half, table_rows))) return Status::no_memory("the RoPE angle tables");
  float* cos_t = computed.data();
  float* sin_t = tables ? nullptr : cos_t + half * table_rows;
  if (!tables && !angle_tables(table_rows, [&](std::size_t row) { return pos(row / seq, row % seq); }, half, base, cos_t, sin_t))
    return Status::no_memory("the RoPE angle tables");

  const auto rotate = a.interleaved ? k::rotate_interleaved : k::rotate_half;
  const bool bhsd = a.layout == RopeLayout::bhsd;
  const std::size_t stride_b = a.heads * seq * a.dk;
  const std::size_t stride_s = bhsd ? a.dk : a.heads * a.dk, stride_h = bhsd ? seq * a.dk : a.dk;
  const bool copy_tail = out.data() != a.x.data() && rotary < a.dk;
  auto apply = [&](std::size_t b, std::size_t h, std::size_t s) {
    const std::size_t at = b * stride_b + h * stride_h + s * stride_s;
    const float *c, *sn;
    if (tables) {
      const std::size_t p = std::size_t(pos(b, s));
      c = a.cos.data() + p * half, sn = a.sin.data() + p * half;
    } else {
      const std::size_t row = (pos.per_item ? b * seq : 0) + s;
      c = cos_t + row * half, sn = sin_t + row * half;
    }
    rotate(a.x.data() + at, out.data() + at, c, sn, half, a.inverse);
    if (copy_tail)
      for (std::size_t d = rotary; d < a.dk; ++d) out[at + d] = a.x[at + d];
  };
  // Walk x in memory order.
  for (std::size_t b = 0; b < a.batch; ++b) {
    if (bhsd) {
      for (std::size_t h = 0; h < a.heads; ++h)
        for (std::size_t s = 0; s < seq; ++s) apply(b, h, s);
    } else {
      for (std::size_t s = 0; s < seq; ++s)
        for (std::size_t h = 0; h < a.heads; ++h) apply(b, h, s);
    }
  }
  return Status::success();
}

}  // namespace attnlab
