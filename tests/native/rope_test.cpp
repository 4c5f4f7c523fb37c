// RoPE against the long double reference (rope_reference.h): both pairings, partial rotary_dim, both layouts,
// every form of positions, given cos/sin tables, the table accuracy at large positions, inverse ∘ forward,
// the inverse as the transpose, the relative-position identity, and every invalid argument.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/rope_kernels.h"
#include "rope.h"
#include "rope_math.h"
#include "rope_reference.h"
#include "testing.h"

using attnlab::ErrorKind;
using attnlab::rope;
using attnlab::RopeArgs;
using attnlab::RopeLayout;

namespace {

constexpr float kSentinel = 4242.0f;

std::vector<float> run(const RopeArgs& a) {
  std::vector<float> out(a.x.size(), kSentinel);
  const auto st = rope(a, out);
  INFO(st.message);
  REQUIRE(st.ok());
  return out;
}

// The engine's arguments and the reference's case for the same call.
struct Setup {
  std::vector<float> x;
  std::vector<std::int32_t> positions, offset;
  std::vector<float> cos, sin;
  RopeArgs args;
  ref::RopeCase rc;

  Setup(std::size_t batch, std::size_t heads, std::size_t seq, std::size_t dk, std::uint32_t seed) {
    x = testing::normal(batch * heads * seq * dk, seed);
    args.batch = batch, args.heads = heads, args.dk = dk;
    rc.batch = batch, rc.heads = heads, rc.seq = seq, rc.dk = dk;
    rc.position = [](std::size_t, std::size_t s) { return std::int64_t(s); };
  }
  Setup& layout(bool bshd) { args.layout = bshd ? RopeLayout::bshd : RopeLayout::bhsd, rc.bshd = bshd; return *this; }
  Setup& pairing(bool interleaved) { args.interleaved = rc.interleaved = interleaved; return *this; }
  Setup& rotary(std::size_t r) { args.rotary_dim = rc.rotary_dim = r; return *this; }
  Setup& inverse(bool inv) { args.inverse = rc.inverse = inv; return *this; }
  Setup& base(double b) { args.base = rc.base = b; return *this; }
  Setup& with_positions(std::vector<std::int32_t> p) {
    positions = std::move(p), offset.clear();
    const bool per_item = positions.size() != rc.seq;
    const auto* list = &positions;
    const std::size_t seq = rc.seq;
    rc.position = [list, per_item, seq](std::size_t b, std::size_t s) { return std::int64_t((*list)[(per_item ? b * seq : 0) + s]); };
    return *this;
  }
  Setup& with_offset(std::vector<std::int32_t> o) {
    offset = std::move(o), positions.clear();
    const auto* list = &offset;
    rc.position = [list](std::size_t b, std::size_t s) { return std::int64_t((*list)[list->size() == 1 ? 0 : b]) + std::int64_t(s); };
    return *this;
  }
  Setup& with_tables(std::vector<float> c, std::vector<float> s) {
    cos = std::move(c), sin = std::move(s);
    rc.cos = &cos, rc.sin = &sin;
    return *this;
  }
  RopeArgs call() {
    RopeArgs a = args;
    a.x = x, a.positions = positions, a.offset = offset, a.cos = cos, a.sin = sin;
    return a;
  }
  ref::Bounded reference() {
    rc.x = &x;
    return ref::rope(rc);
  }
};

// Pair counts below, at and above multiples of the vector width (4 pairs per step).
const std::vector<std::size_t> kHalves = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64};

}  // namespace

TEST_CASE("rope: a worked example, both pairings", "[rope]") {
  // One head of dk = 4 at position 1, base 100: pair 0 turns by 1 rad, pair 1 by 100^(−1/2) = 0.1 rad.
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<std::int32_t> pos = {1};
  RopeArgs a{x};
  a.dk = 4, a.base = 100, a.positions = pos;
  const double c0 = std::cos(1.0), s0 = std::sin(1.0), c1 = std::cos(0.1), s1 = std::sin(0.1);
  auto half = run(a);  // pairs (0, 2) and (1, 3)
  CHECK(half[0] == Approx(1 * c0 - 3 * s0).epsilon(1e-6));
  CHECK(half[2] == Approx(3 * c0 + 1 * s0).epsilon(1e-6));
  CHECK(half[1] == Approx(2 * c1 - 4 * s1).epsilon(1e-6));
  CHECK(half[3] == Approx(4 * c1 + 2 * s1).epsilon(1e-6));
  a.interleaved = true;  // pairs (0, 1) and (2, 3)
  auto inter = run(a);
  CHECK(inter[0] == Approx(1 * c0 - 2 * s0).epsilon(1e-6));
  CHECK(inter[1] == Approx(2 * c0 + 1 * s0).epsilon(1e-6));
  CHECK(inter[2] == Approx(3 * c1 - 4 * s1).epsilon(1e-6));
  CHECK(inter[3] == Approx(4 * c1 + 3 * s1).epsilon(1e-6));
  // Position 0 is the identity, exactly.
  pos[0] = 0;
  a.interleaved = false;
  CHECK(run(a) == x);
}

TEST_CASE("rope: pairings × layouts × partial rotary_dim × inverse over a size sweep", "[rope]") {
  std::uint32_t seed = 1;
  for (std::size_t half : kHalves)
    for (std::size_t extra : {0u, 1u, 3u}) {  // dk − rotary_dim: entries that pass through
      const std::size_t dk = 2 * half + extra;
      for (bool bshd : {false, true})
        for (bool interleaved : {false, true})
          for (bool inverse : {false, true}) {
            const std::size_t batch = 1 + seed % 2, heads = 1 + seed % 3, seq = 1 + seed % 6;
            Setup t(batch, heads, seq, dk, seed++);
            t.layout(bshd).pairing(interleaved).inverse(inverse).with_offset({std::int32_t(seed % 50)});
            if (extra) t.rotary(2 * half);
            INFO("half=" << half << " dk=" << dk << " bshd=" << bshd << " interleaved=" << interleaved << " inverse="
                         << inverse << " batch=" << batch << " heads=" << heads << " seq=" << seq);
            CHECK_BOUNDED(run(t.call()), t.reference());
          }
    }
}

TEST_CASE("rope: both kernel sets against the reference, in place and not", "[rope][kernels]") {
  namespace k = attnlab::kernels;
  for (std::size_t half : kHalves)
    for (bool interleaved : {false, true})
      for (bool inverse : {false, true}) {
        const auto x = testing::normal(2 * half, unsigned(half * 7 + interleaved));
        const auto c = testing::uniform(half, unsigned(half + 100)), s = testing::uniform(half, unsigned(half + 200));
        ref::Bounded want{std::vector<double>(2 * half), std::vector<double>(2 * half)};
        for (std::size_t i = 0; i < half; ++i) {
          const std::size_t ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + half;
          const double a = x[ia], b = x[ib], cs = c[i], sn = inverse ? -double(s[i]) : double(s[i]);
          want.value[ia] = a * cs - b * sn, want.value[ib] = b * cs + a * sn;
          want.bound[ia] = 2 * ref::u * (1 + ref::u) * (std::fabs(a * cs) + std::fabs(b * sn)) + 0x1p-148;
          want.bound[ib] = 2 * ref::u * (1 + ref::u) * (std::fabs(b * cs) + std::fabs(a * sn)) + 0x1p-148;
        }
        INFO("half=" << half << " interleaved=" << interleaved << " inverse=" << inverse);
        auto check = [&](auto fn) {
          std::vector<float> out(2 * half), in_place = x;
          fn(x.data(), out.data(), c.data(), s.data(), half, inverse);
          fn(in_place.data(), in_place.data(), c.data(), s.data(), half, inverse);
          CHECK_BOUNDED(out, want);
          CHECK(in_place == out);
        };
        check(interleaved ? k::scalar::rotate_interleaved : k::scalar::rotate_half);
#ifndef ATTNLAB_FORCE_SCALAR
        check(interleaved ? k::simd::rotate_interleaved : k::simd::rotate_half);
#endif
      }
}

TEST_CASE("rope: max_abs, both kernel sets: every length, NaN and ±inf anywhere", "[rope][kernels]") {
  namespace k = attnlab::kernels;
  auto check = [](auto fn) {
    for (std::size_t n = 0; n <= 37; ++n) {
      auto x = testing::normal(n, unsigned(n + 1));
      float want = 0;
      for (float v : x) want = std::fmax(want, std::fabs(v));
      INFO("n=" << n);
      CHECK(fn(x.data(), n) == want);
      for (std::size_t at = 0; at < n; ++at) {
        auto y = x;
        y[at] = -INFINITY;
        CHECK(fn(y.data(), n) == INFINITY);
        y[at] = NAN;
        CHECK(std::isnan(fn(y.data(), n)));
        if (at + 1 < n) {
          y[at + 1] = INFINITY;
          CHECK(std::isnan(fn(y.data(), n)));  // NaN then inf: still NaN
        }
      }
    }
  };
  check(k::scalar::max_abs);
#ifndef ATTNLAB_FORCE_SCALAR
  check(k::simd::max_abs);
#endif
}

TEST_CASE("rope: every form of positions gives the positions it names", "[rope]") {
  const std::size_t batch = 3, heads = 2, seq = 5, dk = 12;
  for (bool bshd : {false, true}) {
    INFO("bshd=" << bshd);
    Setup plain(batch, heads, seq, dk, 7);
    plain.layout(bshd);
    const auto default_positions = run(plain.call());
    CHECK_BOUNDED(default_positions, plain.reference());

    // [seq] positions shared by every item; the same as offset 0 when they are 0 … seq − 1.
    Setup shared = plain;
    shared.with_positions({0, 1, 2, 3, 4});
    CHECK(run(shared.call()) == default_positions);
    shared.with_positions({9, 0, 4, 4, 70});
    CHECK_BOUNDED(run(shared.call()), shared.reference());

    // [batch·seq]: left padding, each item its own row.
    Setup rows = plain;
    rows.with_positions({0, 1, 2, 3, 4, /**/ 1, 1, 1, 2, 3, /**/ 1, 1, 1, 1, 2});
    CHECK_BOUNDED(run(rows.call()), rows.reference());

    // One offset for every item, and one per item, each equal to the positions it stands for.
    Setup one = plain;
    one.with_offset({17});
    const auto by_offset = run(one.call());
    CHECK_BOUNDED(by_offset, one.reference());
    Setup as_list = plain;
    as_list.with_positions({17, 18, 19, 20, 21});
    CHECK(run(as_list.call()) == by_offset);

    Setup each = plain;
    each.with_offset({0, 40, 1000});
    const auto per_item = run(each.call());
    CHECK_BOUNDED(per_item, each.reference());
    Setup each_list = plain;
    std::vector<std::int32_t> p;
    for (std::int32_t o : {0, 40, 1000})
      for (std::int32_t s = 0; s < std::int32_t(seq); ++s) p.push_back(o + s);
    each_list.with_positions(p);
    CHECK(run(each_list.call()) == per_item);
  }
}

TEST_CASE("rope: a position's angles are the same bits in any call (prefill, then decode steps)", "[rope]") {
  const std::size_t heads = 2, dk = 64, seq = 200;
  Setup prefill(1, heads, seq, dk, 11);
  prefill.with_offset({1000});
  const auto all = run(prefill.call());
  for (std::size_t s : {0u, 1u, 23u, 24u, 87u, 150u, 199u}) {
    std::vector<float> token(heads * dk);
    for (std::size_t h = 0; h < heads; ++h)
      std::copy_n(prefill.x.begin() + std::ptrdiff_t((h * seq + s) * dk), dk, token.begin() + std::ptrdiff_t(h * dk));
    std::vector<std::int32_t> pos = {std::int32_t(1000 + s)};
    RopeArgs a{token};
    a.heads = heads, a.dk = dk, a.positions = pos;
    const auto one = run(a);
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t d = 0; d < dk; ++d) CHECK(one[h * dk + d] == all[(h * seq + s) * dk + d]);
  }
}

TEST_CASE("rope: given cos/sin tables are used as given (ONNX's cos_cache / sin_cache)", "[rope]") {
  for (std::size_t half : {3u, 4u, 8u, 9u})
    for (bool bshd : {false, true})
      for (bool interleaved : {false, true}) {
        const std::size_t max_position = 37, batch = 2, heads = 3, seq = 4;
        // Arbitrary finite tables, not unit rotations: YaRN-style caches carry a scale, and the op applies them as is.
        auto c = testing::uniform(max_position * half, unsigned(half * 3), -1.5f, 1.5f);
        auto s = testing::uniform(max_position * half, unsigned(half * 5), -1.5f, 1.5f);
        Setup t(batch, heads, seq, 2 * half + 2, unsigned(half + bshd * 10 + interleaved));
        t.layout(bshd).pairing(interleaved).rotary(2 * half).with_tables(c, s).with_positions({36, 0, 5, 5, 1, 2, 3, 35});
        INFO("half=" << half << " bshd=" << bshd << " interleaved=" << interleaved);
        CHECK_BOUNDED(run(t.call()), t.reference());
        t.inverse(true);
        CHECK_BOUNDED(run(t.call()), t.reference());
        t.inverse(false).with_offset({33});  // positions 33 … 36, the last rows
        CHECK_BOUNDED(run(t.call()), t.reference());
      }
}

TEST_CASE("rope: table accuracy at large positions (angles in double)", "[rope][accuracy]") {
  // Rotating the unit vector eᵢ returns its pair's table entries exactly (1·ĉ − 0·ŝ = ĉ, 0·ĉ + 1·ŝ = ŝ), so the
  // engine's cos/sin can be compared with long double ones: within float rounding, u·|exact|, plus η (rope.h).
  const std::size_t dk = 128, half = dk / 2;
  for (double base : {10000.0, 500000.0, 1e6})
    for (std::int32_t p : {0, 1, 63, 64, 65, 4095, 100000, 100003, 1000000, 16777217, 2147483647}) {
      std::vector<float> x(half * dk, 0.0f);
      for (std::size_t i = 0; i < half; ++i) x[i * dk + i] = 1.0f;  // token i holds eᵢ
      std::vector<std::int32_t> pos(half, p);
      RopeArgs a{x};
      a.dk = dk, a.base = base, a.positions = pos;
      const auto out = run(a);
      double worst = 0, worst_float_theta = 0;
      for (std::size_t i = 0; i < half; ++i) {
        const long double theta = ref::rope_angle(p, i, dk, base);
        const double c = double(std::cos(theta)), s = double(std::sin(theta)), eta = ref::rope_eta(theta, base);
        const float got_c = out[i * dk + i], got_s = out[i * dk + i + half];
        INFO("base=" << base << " p=" << p << " i=" << i);
        CHECK(std::fabs(got_c - c) <= ref::u * std::fabs(c) + eta);
        CHECK(std::fabs(got_s - s) <= ref::u * std::fabs(s) + eta);
        worst = std::fmax(worst, std::fmax(std::fabs(got_c - c), std::fabs(got_s - s)));
        // What θ in float32 would give (HF's inv_freq and position·inv_freq in float32).
        const float f = float(1.0 / std::pow(base, 2.0 * double(i) / double(dk))), theta32 = float(p) * f;
        worst_float_theta = std::fmax(worst_float_theta, std::fabs(std::cos(double(theta32)) - c));
      }
      // Up to 10⁶ the tables are the exact values rounded once (η ≪ u): within 2⁻²⁴ absolute.
      if (p <= 1000000) CHECK(worst <= 0x1p-24);
      if (p == 100000 && base == 10000.0) {
        INFO("float32 angles at p = 100000 err by " << worst_float_theta);
        CHECK(worst_float_theta > 1e-4);  // the accuracy test has teeth: float32 angles fail it by far
      }
    }
}

TEST_CASE("rope: inverse ∘ forward is the identity to float tolerance", "[rope]") {
  // Forward: R̂v + e₁ with R̂ = [[ĉ, −ŝ], [ŝ, ĉ]] per pair and ‖e₁‖ ≤ 2√2·u(1 + u)‖v‖·‖(ĉ, ŝ)‖ (each component ≤
  // 2u(1 + u)(|a·ĉ| + |b·ŝ|), Cauchy–Schwarz). The inverse applies R̂ᵀ (+ e₂, the same bound), and
  // R̂ᵀR̂ = (ĉ² + ŝ²)·I with |ĉ² + ŝ² − 1| ≤ 2u + 2√2·η + u². So per pair
  //   ‖v″ − v‖ ≤ (2u + 4√2·u + 2√2·η)‖v‖ (1 + 4u),   and each entry is within that.
  for (std::size_t half : {1u, 4u, 5u, 32u})
    for (bool interleaved : {false, true})
      for (bool bshd : {false, true}) {
        Setup t(2, 3, 7, 2 * half + 1, unsigned(half * 13 + interleaved));
        t.layout(bshd).pairing(interleaved).rotary(2 * half).with_offset({5, 90000});
        auto fwd = run(t.call());
        RopeArgs back = t.call();
        back.x = fwd, back.inverse = true;
        const auto again = run(back);
        t.rc.x = &t.x;
        const std::size_t dk = 2 * half + 1;
        for (std::size_t b = 0; b < 2; ++b)
          for (std::size_t h = 0; h < 3; ++h)
            for (std::size_t s = 0; s < 7; ++s) {
              const std::size_t at = ref::rope_index(t.rc, b, h, s);
              CHECK(again[at + dk - 1] == t.x[at + dk - 1]);  // the pass-through entry, exact
              for (std::size_t i = 0; i < half; ++i) {
                const std::size_t ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + half;
                const double norm = std::hypot(double(t.x[at + ia]), double(t.x[at + ib]));
                const double eta = ref::rope_eta(ref::rope_angle(t.rc.position(b, s), i, 2 * half, 10000.0), 10000.0);
                const double bound = (2 * ref::u + 4 * std::sqrt(2.0) * ref::u + 2 * std::sqrt(2.0) * eta) * norm * (1 + 4 * ref::u);
                INFO("half=" << half << " b=" << b << " h=" << h << " s=" << s << " i=" << i);
                CHECK(std::fabs(double(again[at + ia]) - t.x[at + ia]) <= bound);
                CHECK(std::fabs(double(again[at + ib]) - t.x[at + ib]) <= bound);
              }
            }
      }
}

TEST_CASE("rope: the inverse is the transpose (the backward of the rotation)", "[rope]") {
  // ⟨rope(x), y⟩ = ⟨x, rope⁻¹(y)⟩ exactly for the float tables R̂ (R̂ᵀ is what inverse applies); the two
  // rotations' own roundings e₁, e₂ move the sides by ≤ Σ_pairs 2√2·u(1 + u)·‖(ĉ, ŝ)‖·‖x_p‖·‖y_p‖ each, with
  // ‖(ĉ, ŝ)‖ ≤ 1 + u + √2·η. The sums themselves are taken in double (≤ 1e−16 relative).
  for (bool interleaved : {false, true}) {
    Setup t(2, 2, 9, 20, 21 + interleaved);
    t.pairing(interleaved).rotary(16).with_offset({3, 4000});
    auto y = testing::normal(t.x.size(), 99);
    const auto rx = run(t.call());
    RopeArgs inv = t.call();
    inv.x = y, inv.inverse = true;
    const auto ry = run(inv);
    double lhs = 0, rhs = 0, allowed = 0;
    for (std::size_t j = 0; j < t.x.size(); ++j) lhs += double(rx[j]) * y[j], rhs += double(t.x[j]) * ry[j];
    t.rc.x = &t.x;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t s = 0; s < 9; ++s) {
          const std::size_t at = ref::rope_index(t.rc, b, h, s);
          for (std::size_t i = 0; i < 8; ++i) {
            const std::size_t ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + 8;
            const double eta = ref::rope_eta(ref::rope_angle(t.rc.position(b, s), i, 16, 10000.0), 10000.0);
            allowed += 2 * 2 * std::sqrt(2.0) * ref::u * (1 + ref::u) * (1 + ref::u + std::sqrt(2.0) * eta) *
                       std::hypot(double(t.x[at + ia]), double(t.x[at + ib])) * std::hypot(double(y[at + ia]), double(y[at + ib]));
          }
        }
    INFO("⟨rope(x), y⟩ = " << lhs << ", ⟨x, rope⁻¹(y)⟩ = " << rhs << ", allowed " << allowed);
    CHECK(std::fabs(lhs - rhs) <= allowed + 1e-15 * std::fabs(lhs));
  }
}

TEST_CASE("rope: ⟨rope(q, m), rope(k, n)⟩ depends only on m − n", "[rope]") {
  // Exactly, ⟨R_m q, R_n k⟩ = ⟨q, R_{n−m} k⟩ (rotations in one plane commute). Computed, each rotated pair is
  // off from the exact rotation by ≤ ε‖v‖ with ε = u + √2·η + 2√2·u(1 + u)(1 + u + √2·η) (table error, then the
  // kernel's); so each dot product is within Σ_pairs (ε_q + ε_k + ε_q·ε_k)‖q_p‖‖k_p‖ of the exact value, which
  // is the same for every (m, n) with one difference, and two such products within the sum of their bounds.
  const std::size_t dk = 64;
  for (std::size_t rotary : {64u, 48u})
    for (bool interleaved : {false, true}) {
      const auto q = testing::normal(dk, 5), k = testing::normal(dk, 6);
      auto rotated = [&](const std::vector<float>& v, std::int32_t p) {
        std::vector<std::int32_t> pos = {p};
        RopeArgs a{v};
        a.dk = dk, a.rotary_dim = rotary, a.interleaved = interleaved, a.positions = pos;
        return run(a);
      };
      const std::size_t half = rotary / 2;
      for (std::int32_t diff : {0, 1, 5, 100}) {
        // The exact value, ⟨q, R_diff k⟩ in long double (pairs of the pairing in use; the tail as is).
        long double exact = 0;
        for (std::size_t d = rotary; d < dk; ++d) exact += (long double)q[d] * k[d];
        for (std::size_t i = 0; i < half; ++i) {
          const std::size_t ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + half;
          const long double th = ref::rope_angle(diff, i, rotary, 10000.0);
          exact += (long double)q[ia] * (k[ia] * std::cos(th) - k[ib] * std::sin(th)) +
                   (long double)q[ib] * (k[ib] * std::cos(th) + k[ia] * std::sin(th));
        }
        for (std::int32_t m : {0, 7, 64, 1000, 100000}) {
          const auto rq = rotated(q, m), rk = rotated(k, m + diff);
          double dot = 0, bound = 0;
          for (std::size_t d = 0; d < dk; ++d) dot += double(rq[d]) * rk[d];
          for (std::size_t i = 0; i < half; ++i) {
            const std::size_t ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + half;
            auto eps = [&](std::int32_t p) {
              const double eta = ref::rope_eta(ref::rope_angle(p, i, rotary, 10000.0), 10000.0);
              return ref::u + std::sqrt(2.0) * eta + 2 * std::sqrt(2.0) * ref::u * (1 + ref::u) * (1 + ref::u + std::sqrt(2.0) * eta);
            };
            const double eq = eps(m), ek = eps(m + diff);
            bound += (eq + ek + eq * ek) * std::hypot(double(q[ia]), double(q[ib])) * std::hypot(double(k[ia]), double(k[ib]));
          }
          INFO("rotary=" << rotary << " interleaved=" << interleaved << " m=" << m << " n=" << m + diff << ": "
                         << dot << " vs exact " << double(exact) << " ± " << bound);
          CHECK(std::fabs(dot - double(exact)) <= bound + 1e-15 * std::fabs(double(exact)));
        }
      }
    }
}

TEST_CASE("rope: invalid arguments name the argument and write nothing", "[rope][validation]") {
  std::vector<float> x(2 * 3 * 4 * 8, 0.5f), cos(10 * 4, 1.0f), sin(10 * 4, 0.0f);  // batch 2, heads 3, seq 4, dk 8
  std::vector<std::int32_t> pos4 = {0, 1, 2, 3};
  auto base_args = [&] {
    RopeArgs a{x};
    a.batch = 2, a.heads = 3, a.dk = 8;
    return a;
  };
  auto expect = [&](RopeArgs a, const std::string& arg, const std::string& fragment, std::size_t out_len = 0) {
    std::vector<float> out(out_len ? out_len : a.x.size(), kSentinel);
    const auto st = rope(a, out);
    INFO("expected " << arg << ", got " << st.arg << ": " << st.message);
    CHECK(st.kind == ErrorKind::range);
    CHECK(st.arg == arg);
    CHECK(st.message.find(arg) != std::string::npos);
    CHECK(st.message.find(fragment) != std::string::npos);
    CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == kSentinel; }));
  };
  {
    auto a = base_args();
    std::vector<float> ok(a.x.size());
    REQUIRE(rope(a, ok).ok());
  }
  auto a = base_args();
  a.batch = 0, expect(a, "batch", ">= 1");
  a = base_args(), a.heads = 0, expect(a, "heads", ">= 1");
  a = base_args(), a.dk = 0, expect(a, "dk", ">= 1");
  a = base_args(), a.rotary_dim = 5, expect(a, "rotaryDim", "even");
  a = base_args(), a.rotary_dim = 10, expect(a, "rotaryDim", "dk = 8, got 10");
  a = base_args(), a.dk = 7, a.x = std::span<const float>(x).first(2 * 3 * 7), expect(a, "dk", "odd");
  a = base_args(), a.x = {}, expect(a, "x", "positive multiple", 1);
  a = base_args(), a.x = std::span<const float>(x).first(50), expect(a, "x", "multiple of batch·heads·dk = 2·3·8 = 48");
  a = base_args(), expect(a, "out", "x.length = 192", 191);
  a = base_args(), a.base = 0, expect(a, "base", ">= 1");
  a = base_args(), a.base = 0.999, expect(a, "base", "got 0.999");
  a = base_args(), a.base = NAN, expect(a, "base", "NaN");
  a = base_args(), a.base = INFINITY, expect(a, "base", "Infinity");
  a = base_args(), a.cos = cos, expect(a, "sin", "both");
  a = base_args(), a.sin = sin, expect(a, "cos", "both");
  a = base_args(), a.cos = std::span<const float>(cos).first(39), a.sin = std::span<const float>(sin).first(39),
  expect(a, "cos", "multiple of rotaryDim/2 = 4");
  a = base_args(), a.cos = cos, a.sin = std::span<const float>(sin).first(36), expect(a, "sin", "length of cos = 40");
  {
    std::vector<float> bad = cos;
    bad[13] = NAN;
    a = base_args(), a.cos = bad, a.sin = sin, expect(a, "cos", "cos[13] is NaN");
    a = base_args(), a.cos = cos, a.sin = bad, expect(a, "sin", "sin[13] is NaN");
  }
  {
    std::vector<float> bad = x;
    bad[77] = INFINITY;
    a = base_args(), a.x = bad, expect(a, "x", "x[77] is Infinity");
    bad[77] = -INFINITY;
    expect(a, "x", "x[77] is -Infinity");
  }
  {
    std::vector<float> big = x;
    big[5] = 7.1e37f;  // × √2 > 1e38
    a = base_args(), a.x = big, expect(a, "x", "the limit is 1e38");
    big[5] = -7.0e37f;
    a = base_args(), a.x = big;
    std::vector<float> ok_out(big.size());
    CHECK(rope(a, ok_out).ok());
    std::vector<float> large = cos;
    large[3] = 1e36f;  // ordinary x times huge tables
    std::vector<float> x100(x.size(), 1000.0f);
    a = base_args(), a.x = x100, a.cos = large, a.sin = sin, a.positions = pos4, expect(a, "x", "max|cos| + max|sin|");
  }
  std::vector<std::int32_t> pos3 = {0, 1, 2}, neg = {0, 1, -2, 3}, big = {0, 1, 2, 10}, off = {7}, off3 = {1, 2, 3},
                            off_neg = {0, -1}, off_max = {2147483647 - 2};
  a = base_args(), a.positions = pos3, expect(a, "positions", "seq = 4 elements");
  a = base_args(), a.positions = neg, expect(a, "positions", "positions[2] is -2");
  a = base_args(), a.positions = pos4, a.offset = off, expect(a, "offset", "not both");
  a = base_args(), a.offset = off3, expect(a, "offset", "batch = 2 values");
  a = base_args(), a.offset = off_neg, expect(a, "offset", "offset[1] is -1");
  a = base_args(), a.offset = off_max, expect(a, "offset", "2147483648");
  // With tables: every position < maxPosition = 10.
  a = base_args(), a.cos = cos, a.sin = sin, a.positions = big, expect(a, "positions", "positions[3] is 10");
  a = base_args(), a.cos = cos, a.sin = sin, a.offset = off, expect(a, "offset", "maxPosition = 10");
  a = base_args(), a.cos = std::span<const float>(cos).first(12), a.sin = std::span<const float>(sin).first(12);
  expect(a, "positions", "maxPosition = 3");
  a.positions = pos4, a.cos = cos, a.sin = sin, a.base = 10000.0;
  expect(a, "base", "not both");  // the tables replace the angles base would set
  a.base.reset();
  std::vector<float> ok(a.x.size());
  CHECK(rope(a, ok).ok());
}

TEST_CASE("rope: the angle functions against long double (rope_math.h's bounds)", "[rope][accuracy]") {
  namespace rm = attnlab::rope_math;
  constexpr double e53 = 0x1p-53;
  std::mt19937_64 rng(42);
  double worst_log = 0, worst_exp = 0, worst_sincos = 0;  // in units of the bound, for the report below
  // ln v over v ≥ 1: bases in use (10 000, 500 000, 10⁶), powers of two and their neighbours, random magnitudes.
  std::vector<double> bases = {1, 2, 10000, 500000, 1e6, 1.4142135623730951, 1.4142135623730954, 0x1.fffffffffffffp1023};
  for (int i = 0; i < 20000; ++i) bases.push_back(std::exp2(std::uniform_real_distribution<double>(0, 1023)(rng)));
  for (double v : bases) {
    const long double want = std::log((long double)v);
    const double err = std::fabs(double(rm::log(v) - want)), bound = 2 * e53 * double(want) + e53;
    INFO("log(" << v << ")");
    CHECK(err <= bound);
    worst_log = std::fmax(worst_log, err / bound);
  }
  for (int i = 0; i < 20000; ++i) {
    const double x = i < 10 ? -double(i) : -std::uniform_real_distribution<double>(0, 708)(rng);
    const long double want = std::exp((long double)x);
    const double err = std::fabs(double((rm::exp(x) - want) / want)), bound = 3 * e53;
    INFO("exp(" << x << ")");
    CHECK(err <= bound);
    worst_exp = std::fmax(worst_exp, err / bound);
  }
  // sin/cos over [0, 2³¹): small angles, around multiples of π/4 (quadrant boundaries), random magnitudes.
  std::vector<double> angles = {0, 1e-300, 1e-8, 0.5, 0.7853981633974483, 1.5707963267948966, 3.141592653589793, 2147483647.0};
  for (int k = 1; k < 2000; ++k) {
    const double at = k * 0.7853981633974483 * (1 + 1e-6 * (k % 7));
    angles.push_back(at), angles.push_back(std::nextafter(at, 0.0)), angles.push_back(std::nextafter(at, 1e300));
  }
  for (int i = 0; i < 40000; ++i) angles.push_back(std::exp2(std::uniform_real_distribution<double>(-30, 30.99)(rng)));
  for (double t : angles) {
    const auto got = rm::sincos(t);
    const long double s = std::sin((long double)t), c = std::cos((long double)t);
    const double err = std::fmax(std::fabs(double(got.sin - s)), std::fabs(double(got.cos - c)));
    INFO("sincos(" << t << ")");
    CHECK(err <= 4 * e53);
    worst_sincos = std::fmax(worst_sincos, err / (4 * e53));
  }
  WARN("worst error / bound: log " << worst_log << ", exp " << worst_exp << ", sincos " << worst_sincos);
}
