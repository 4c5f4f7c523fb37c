// Every invalid input returns a Status naming the argument, and writes nothing.
#include <cfloat>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "attention_backward.h"
#include "attnlab.h"
#include "softmax_backward.h"
#include "testing.h"

using namespace attnlab;

namespace {

constexpr float kSentinel = 4242.0f;

bool untouched(const std::vector<float>& v) {
  for (float x : v)
    if (x != kSentinel) return false;
  return true;
}

void expect_error(const Status& st, const std::string& arg) {
  INFO("message: " << st.message);
  CHECK(st.kind == ErrorKind::range);
  CHECK(st.arg == arg);
  CHECK(st.message.find(arg) != std::string::npos);
}

}  // namespace

TEST_CASE("softmax: invalid arguments", "[validation]") {
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, out(6, kSentinel);
  auto call = [&](std::vector<float> xs, std::size_t cols, float t, std::size_t out_len = 0) {
    out.assign(out_len ? out_len : xs.size(), kSentinel);
    return softmax(SoftmaxArgs{xs, cols, t, false}, out);
  };
  expect_error(call(x, 0, 1.0f), "cols");
  expect_error(call(x, 4, 1.0f), "x");  // 6 is not a multiple of 4
  expect_error(call({}, 3, 1.0f, 3), "x");
  for (float t : {0.0f, -1.0f, NAN, INFINITY, -INFINITY, 1e-40f}) expect_error(call(x, 3, t), "temperature");
  expect_error(call(x, 3, 1.0f, 5), "out");
  for (float bad : {NAN, INFINITY}) {
    auto xs = x;
    xs[4] = bad;
    const auto st = call(xs, 3, 1.0f);
    expect_error(st, "x");
    CHECK(st.message.find("x[4]") != std::string::npos);
    // x given as a chunk starting at index 600 of the caller's array: the message counts from there.
    const auto chunk = softmax(SoftmaxArgs{xs, 3, 1.0f, false, 600}, out);
    expect_error(chunk, "x");
    CHECK(chunk.message.find("x[604]") != std::string::npos);
  }
  CHECK(untouched(out));
  // The next valid call works.
  out.assign(6, 0.0f);
  CHECK(softmax(SoftmaxArgs{x, 3, 1.0f, false}, out).ok());
}

TEST_CASE("attention: invalid arguments", "[validation]") {
  const std::size_t nq = 3, nk = 4, dk = 2, dv = 5;
  auto q = testing::normal(nq * dk, 1), k = testing::normal(nk * dk, 2), v = testing::normal(nk * dv, 3),
       mask = std::vector<float>(nq * nk, 0.0f);
  std::vector<float> out, w;
  auto call = [&](std::function<void(AttentionArgs&, AttentionOutputs&)> edit) {
    out.assign(nq * dv, kSentinel), w.assign(nq * nk, kSentinel);
    AttentionArgs a{q, k, v, nq, nk, dk, dv};
    AttentionOutputs o{out, {}, {}, w};
    edit(a, o);
    const auto st = attention(a, o);
    CHECK(untouched(out));
    CHECK(untouched(w));
    return st;
  };
  expect_error(call([](auto& a, auto&) { a.nq = 0; }), "nq");
  expect_error(call([](auto& a, auto&) { a.nk = 0; }), "nk");
  expect_error(call([](auto& a, auto&) { a.dk = 0; }), "dk");
  expect_error(call([](auto& a, auto&) { a.dv = 0; }), "dv");
  expect_error(call([](auto& a, auto&) { a.nq = 4; }), "q");
  expect_error(call([&](auto& a, auto&) { a.k = std::span<const float>(k).first(7); }), "k");
  expect_error(call([&](auto& a, auto&) { a.v = std::span<const float>(v).first(19); }), "v");
  expect_error(call([&](auto& a, auto&) { a.mask = std::span<const float>(mask).first(11); }), "mask");
  expect_error(call([&](auto&, auto& o) { o.out = std::span<float>(out).first(14); }), "out");
  expect_error(call([&](auto&, auto& o) { o.weights = std::span<float>(w).first(11); }), "weights");
  for (float s : {0.0f, -2.0f, NAN, INFINITY}) expect_error(call([&](auto& a, auto&) { a.scale = s; }), "scale");
  expect_error(call([](auto& a, auto&) { a.path = AttentionPath::streaming; }), "path");
  auto bad_q = q, bad_k = k, bad_v = v, bad_mask = mask;
  bad_q[1] = NAN, bad_k[2] = INFINITY, bad_v[3] = -INFINITY, bad_mask[5] = NAN;
  expect_error(call([&](auto& a, auto&) { a.q = bad_q; }), "q");
  expect_error(call([&](auto& a, auto&) { a.k = bad_k; }), "k");
  expect_error(call([&](auto& a, auto&) { a.v = bad_v; }), "v");
  expect_error(call([&](auto& a, auto&) { a.mask = bad_mask; }), "mask");
  auto huge = q;
  huge[0] = 3e30f;  // finite, but q·k could overflow float32
  auto huge_k = k;
  huge_k[0] = 3e30f;
  expect_error(call([&](auto& a, auto&) { a.q = huge, a.k = huge_k; }), "q");
  // A mask of -inf is allowed, and the module keeps working.
  out.assign(nq * dv, 0.0f);
  CHECK(attention(AttentionArgs{q, k, v, nq, nk, dk, dv}, AttentionOutputs{out}).ok());
}

TEST_CASE("multi-head: invalid arguments", "[validation]") {
  const std::size_t n = 4, dm = 6, h = 3;
  auto x = testing::normal(n * dm, 1), wq = testing::normal(dm * dm, 2), wk = testing::normal(dm * dm, 3),
       wv = testing::normal(dm * dm, 4), wo = testing::normal(dm * dm, 5);
  std::vector<float> out;
  auto call = [&](std::function<void(MultiHeadArgs&)> edit) {
    out.assign(n * dm, kSentinel);
    MultiHeadArgs a{x, n, dm, h, 0, 0, 0, wq, wk, wv, wo};
    edit(a);
    const auto st = multi_head_attention(a, MultiHeadOutputs{out});
    CHECK(untouched(out));
    return st;
  };
  expect_error(call([](auto& a) { a.n = 0; }), "n");
  expect_error(call([](auto& a) { a.d_model = 0; }), "dModel");
  expect_error(call([](auto& a) { a.heads = 0; }), "heads");
  expect_error(call([](auto& a) { a.kv_heads = 2; }), "kvHeads");  // 3 heads not divisible by 2
  expect_error(call([](auto& a) { a.kv_heads = 6; }), "kvHeads");
  expect_error(call([](auto& a) { a.heads = 4; }), "dk");          // 6 / 4 does not divide
  expect_error(call([&](auto& a) { a.x = std::span<const float>(x).first(20); }), "x");
  expect_error(call([&](auto& a) { a.wq = std::span<const float>(wq).first(30); }), "wq");
  expect_error(call([&](auto& a) { a.wk = std::span<const float>(wk).first(30); }), "wk");
  expect_error(call([&](auto& a) { a.wv = std::span<const float>(wv).first(30); }), "wv");
  expect_error(call([&](auto& a) { a.wo = std::span<const float>(wo).first(30); }), "wo");
  expect_error(call([](auto& a) { a.scale = -1.0f; }), "scale");
  auto bad = wv;
  bad[7] = NAN;
  expect_error(call([&](auto& a) { a.wv = bad; }), "wv");
  auto big = wq;
  for (auto& w : big) w = 1e37f;  // x·wq overflows float32
  expect_error(call([&](auto& a) { a.wq = big; }), "wq");
  out.assign(n * dm, 0.0f);
  CHECK(multi_head_attention(MultiHeadArgs{x, n, dm, h, 0, 0, 0, wq, wk, wv, wo}, MultiHeadOutputs{out}).ok());
}

TEST_CASE("sizes whose product overflows are rejected before any allocation", "[validation]") {
  const std::size_t big = std::size_t(1) << (sizeof(std::size_t) * 4 + 1);  // big·big overflows size_t
  std::vector<float> one(1), out(1, kSentinel);
  const auto st = attention(AttentionArgs{one, one, one, big, 1, big, 1}, AttentionOutputs{out});
  CHECK(st.kind == ErrorKind::range);
  CHECK(st.arg == "q");
  CHECK(untouched(out));
}

TEST_CASE("multi-head: an overflow in the output projection writes no intermediate either", "[validation]") {
  // Found by fuzz_multihead: the heads run fine, then concat·wo overflows float32.
  const std::size_t n = 2, dm = 2, h = 1;
  std::vector<float> x = {1, 2, 3, 4}, w = {1, 0, 0, 1}, wo = {3e38f, 3e38f, 3e38f, 3e38f};
  std::vector<float> out(n * dm, kSentinel), weights(h * n * n, kSentinel), concat(n * dm, kSentinel);
  MultiHeadOutputs o{out};
  o.weights = weights, o.concat = concat;
  const auto st = multi_head_attention(MultiHeadArgs{x, n, dm, h, 0, 0, 0, w, w, w, wo}, o);
  expect_error(st, "wo");
  CHECK(untouched(out));
  CHECK(untouched(weights));
  CHECK(untouched(concat));
}

TEST_CASE("attention (whole operator): invalid arguments name the argument, write nothing", "[validation]") {
  const std::size_t B = 2, H = 4, G = 2, nq = 3, nk = 8, dk = 2, dv = 3;
  auto q = testing::normal(B * H * nq * dk, 1), k = testing::normal(B * G * nk * dk, 2), v = testing::normal(B * G * nk * dv, 3);
  std::vector<float> out, lse, mask(nq * nk, 0.0f), slopes(H, 0.5f);
  std::vector<std::uint8_t> keep(B * nk, 1);
  std::vector<std::int32_t> lengths = {8, 5};
  std::vector<std::int64_t> shape = {B, 1, 1, nk};
  auto call = [&](std::function<void(AttentionArgs&, AttentionOutputs&)> edit) {
    out.assign(B * H * nq * dv, kSentinel), lse.assign(B * H * nq, kSentinel);
    AttentionArgs a{q, k, v, nq, nk, dk, dv};
    a.batch = B, a.heads = H, a.kv_heads = G;
    AttentionOutputs o{out, {}, {}, {}, lse};
    edit(a, o);
    const auto st = attention(a, o);
    CHECK(untouched(out));
    CHECK(untouched(lse));
    return st;
  };
  auto message = [](const Status& st) { return st.message; };
  expect_error(call([](auto& a, auto&) { a.batch = 0; }), "batch");
  expect_error(call([](auto& a, auto&) { a.heads = 0; }), "heads");
  expect_error(call([](auto& a, auto&) { a.kv_heads = 3; }), "kvHeads");
  expect_error(call([](auto& a, auto&) { a.kv_heads = 8; }), "kvHeads");
  const auto q_len = call([](auto& a, auto&) { a.heads = 2, a.kv_heads = 2; });
  expect_error(q_len, "q");
  CHECK(message(q_len) == "q must have batch·heads·nq·dk = 2·2·3·2 = 24 elements, got 48");
  expect_error(call([&](auto& a, auto&) { a.k = std::span<const float>(k).first(31); }), "k");
  expect_error(call([&](auto& a, auto&) { a.v = std::span<const float>(v).first(47); }), "v");
  expect_error(call([&](auto&, auto& o) { o.lse = std::span<float>(lse).first(23); }), "lse");
  // masks
  expect_error(call([&](auto& a, auto&) { a.mask = std::span<const float>(mask).first(23); }), "mask");
  expect_error(call([&](auto& a, auto&) { a.mask = mask, a.bool_mask = keep; }), "mask");
  expect_error(call([&](auto& a, auto&) { a.mask_shape = shape; }), "maskShape");
  const std::vector<std::int64_t> bad_heads = {2, 3, 1, 8}, too_long = {1, 9}, zero = {0, 8}, five = {1, 1, 1, 1, 8};
  const auto bh = call([&](auto& a, auto&) { a.bool_mask = std::span<const std::uint8_t>(keep).first(0), a.mask = mask, a.mask_shape = bad_heads; });
  expect_error(bh, "maskShape");
  CHECK(message(bh) == "maskShape [2, 3, 1, 8] does not broadcast to [batch, heads, nq, nk] = [2, 4, 3, 8]: dimension 3 must be 1 or heads = 4");
  const auto longer = call([&](auto& a, auto&) { a.mask = mask, a.mask_shape = too_long; });
  CHECK(message(longer) == "maskShape [1, 9] does not broadcast to [batch, heads, nq, nk] = [2, 4, 3, 8]: its last dimension 9 exceeds nk = 8");
  expect_error(call([&](auto& a, auto&) { a.mask = mask, a.mask_shape = zero; }), "maskShape");
  expect_error(call([&](auto& a, auto&) { a.mask = mask, a.mask_shape = five; }), "maskShape");
  const auto count = call([&](auto& a, auto&) { a.bool_mask = std::span<const std::uint8_t>(keep).first(15), a.mask_shape = shape; });
  CHECK(message(count) == "mask must have the product of maskShape [2, 1, 1, 8] = 16 elements, got 15");
  auto bad_mask = mask;
  bad_mask[4] = NAN;
  expect_error(call([&](auto& a, auto&) { a.mask = bad_mask; }), "mask");
  // key lengths, ALiBi, window, softcap, scale
  const std::vector<std::int32_t> nine = {8, 9}, negative = {-1, 2}, one = {3};
  CHECK(message(call([&](auto& a, auto&) { a.key_lengths = nine; })) == "keyLengths[1] = 9 exceeds nk = 8");
  expect_error(call([&](auto& a, auto&) { a.key_lengths = negative; }), "keyLengths");
  expect_error(call([&](auto& a, auto&) { a.key_lengths = one; }), "keyLengths");
  const std::vector<float> three = {1, 2, 3}, nan_slope = {0.5f, NAN, 0.5f, 0.5f}, huge = {1e36f, 0, 0, 0};
  expect_error(call([&](auto& a, auto&) { a.alibi_slopes = three; }), "alibiSlopes");
  expect_error(call([&](auto& a, auto&) { a.alibi_slopes = nan_slope; }), "alibiSlopes");
  expect_error(call([&](auto& a, auto&) { a.alibi_slopes = huge; }), "alibiSlopes");
  expect_error(call([](auto& a, auto&) { a.window = {-2, 3}; }), "window");
  expect_error(call([](auto& a, auto&) { a.window = {3, -7}; }), "window");
  for (double s : {0.0, -1.0, double(NAN), double(INFINITY), 1e-50, 1e39}) {
    expect_error(call([&](auto& a, auto&) { a.softcap = s; }), "softcap");
    expect_error(call([&](auto& a, auto&) { a.scale = s; }), "scale");
  }
  CHECK(message(call([](auto& a, auto&) { a.scale = 1e-50; })) == "scale must be within float32's range (1.4e-45 … 3.4e38), got 1e-50");
  // The same call with every option valid works.
  out.assign(B * H * nq * dv, 0.0f);
  AttentionArgs a{q, k, v, nq, nk, dk, dv};
  a.batch = B, a.heads = H, a.kv_heads = G, a.bool_mask = keep, a.mask_shape = shape, a.key_lengths = lengths;
  a.alibi_slopes = slopes, a.window = {2, 0}, a.softcap = 5.0, a.causal = Causal::top_left, a.layout = Layout::bshd;
  CHECK(attention(a, AttentionOutputs{out, {}, {}, {}, lse}).ok());
}

// The check_* functions: every check of their op that reads no tensor's values, for a caller that places the
// tensors only once a call is known to fit (the package checks each call before it allocates anything). Given
// tensors that carry their lengths alone (no data: a read would fault under the sanitizers), they accept what the
// op accepts on sizes, refuse with the op's own Status what it refuses on sizes, and report the resolved shapes.
namespace {

template <class T>
std::span<const T> lengths_only(std::size_t n) {
  return {static_cast<const T*>(nullptr), n};
}
template <class T>
std::span<T> outputs_only(std::size_t n) {
  return {static_cast<T*>(nullptr), n};
}

void same_status(const Status& got, const Status& want) {
  INFO("check: " << got.message << " / op: " << want.message);
  CHECK(!want.ok());
  CHECK(got.kind == want.kind);
  CHECK(got.arg == want.arg);
  CHECK(got.message == want.message);
}

}  // namespace

TEST_CASE("check functions: the sizes without the data, the op's own errors", "[validation]") {
  SECTION("softmax, softmaxBackward, matmul, rope") {
    std::vector<float> x = testing::normal(12, 4), out(12);
    CHECK(check_softmax({lengths_only<float>(12), 4, 0.5}, 12).ok());
    x[7] = NAN;  // a value: not the check's business
    CHECK(check_softmax({x, 4, 1.0}, 12).ok());
    for (auto [cols, t, out_len] : {std::tuple{5, 1.0, 12}, {4, 0.0, 12}, {4, 1.0, 11}})
      same_status(check_softmax({lengths_only<float>(12), std::size_t(cols), t}, std::size_t(out_len)),
                  softmax({x, std::size_t(cols), t}, std::span<float>(out).first(std::size_t(out_len))));
    CHECK(check_softmax_backward({lengths_only<float>(12), lengths_only<float>(12), 3}, 12).ok());
    same_status(check_softmax_backward({lengths_only<float>(12), lengths_only<float>(11), 3}, 12),
                softmax_backward({x, std::span<const float>(x).first(11), 3}, out));
    CHECK(check_matmul({lengths_only<float>(6), lengths_only<float>(8), 3, 2, 4}, 12).ok());
    same_status(check_matmul({lengths_only<float>(6), lengths_only<float>(7), 3, 2, 4}, 12),
                matmul({std::span<const float>(x).first(6), std::span<const float>(x).first(7), 3, 2, 4}, out));
    RopeArgs r;
    r.x = lengths_only<float>(12), r.dk = 4, r.positions = lengths_only<std::int32_t>(3);
    CHECK(check_rope(r, 12).ok());  // the positions' values are read only by rope()
    r.rotary_dim = 3;
    RopeArgs with_data = r;
    const std::vector<float> xs = testing::normal(12, 5);
    const std::vector<std::int32_t> positions = {0, 1, 2};
    with_data.x = xs, with_data.positions = positions;
    same_status(check_rope(r, 12), rope(with_data, out));
  }

  SECTION("attention and its backward: the shape resolved, the mask broadcast") {
    const std::size_t B = 2, H = 4, G = 2, nq = 3, nk = 8, dk = 2, dv = 5;
    AttentionArgs a;
    a.q = lengths_only<float>(B * H * nq * dk), a.k = lengths_only<float>(B * G * nk * dk), a.v = lengths_only<float>(B * G * nk * dv);
    a.batch = B, a.heads = H, a.kv_heads = G, a.nq = nq, a.nk = nk, a.dk = dk, a.dv = dv;
    const std::vector<std::int64_t> shape = {2, 1, 1, 8};
    a.bool_mask = lengths_only<std::uint8_t>(16), a.mask_shape = shape;
    a.key_lengths = lengths_only<std::int32_t>(B), a.alibi_slopes = lengths_only<float>(H);  // values unread
    AttentionShape s;
    REQUIRE(check_attention(a, {}, true, s).ok());
    CHECK(s.out == B * H * nq * dv);
    CHECK(s.matrix == B * H * nq * nk);
    CHECK(s.lse == B * H * nq);
    CHECK(s.q == B * H * nq * dk);
    CHECK(s.kv_heads == G);
    CHECK((s.mask[0] == 2 && s.mask[1] == 1 && s.mask[2] == 1 && s.mask[3] == 8));
    // A given output is checked; one the caller leaves empty is sized from the shape.
    same_status(check_attention(a, {outputs_only<float>(s.out - 1)}, false, s), [&] {
      const std::vector<float> q = testing::normal(B * H * nq * dk, 1), k = testing::normal(B * G * nk * dk, 2),
                               v = testing::normal(B * G * nk * dv, 3);
      const std::vector<std::uint8_t> keep(16, 1);
      std::vector<float> out(B * H * nq * dv - 1);
      AttentionArgs d = a;
      d.q = q, d.k = k, d.v = v, d.bool_mask = keep, d.key_lengths = {}, d.alibi_slopes = {};
      return attention(d, {out});
    }());
    AttentionSaved saved{lengths_only<float>(s.out), lengths_only<float>(s.lse), lengths_only<float>(s.out)};
    AttentionShape g;
    REQUIRE(check_attention_backward(a, saved, {}, g).ok());
    CHECK((g.q == s.q && g.k == B * G * nk * dk && g.v == B * G * nk * dv));
    saved.lse = lengths_only<float>(s.lse + 1);
    expect_error(check_attention_backward(a, saved, {}, g), "lse");
    a.heads = 3;  // does not divide into kvHeads
    expect_error(check_attention(a, {}, false, s), "kvHeads");
  }

  SECTION("multi-head attention and the KV cache") {
    MultiHeadArgs m;
    m.x = lengths_only<float>(3 * 8), m.n = 3, m.d_model = 8, m.heads = 2;
    m.wq = lengths_only<float>(64), m.wk = lengths_only<float>(64), m.wv = lengths_only<float>(64), m.wo = lengths_only<float>(64);
    MultiHeadDims dims{};
    MultiHeadLengths len{};
    REQUIRE(multi_head_lengths(m, true, dims, len).ok());
    CHECK((len.out == 24 && len.matrix == 2 * 3 * 3 && len.concat == 24 && dims.dk == 4));
    CHECK(check_multi_head_attention(m, {outputs_only<float>(24)}).ok());
    m.wo = lengths_only<float>(63);
    expect_error(check_multi_head_attention(m, {outputs_only<float>(24)}), "wo");

    std::unique_ptr<KvCache> cache;
    REQUIRE(KvCache::create({1, 1, 4, 4, 3}, cache).ok());
    KvAppendArgs ap{lengths_only<float>(8), lengths_only<float>(8)};
    CHECK(cache->check_append(ap).ok());
    ap.k = lengths_only<float>(16), ap.v = lengths_only<float>(16);
    expect_error(cache->check_append(ap), "capacity");
    KvRope rope;
    rope.rotary_dim = 3;
    ap.k = lengths_only<float>(4), ap.v = lengths_only<float>(4), ap.rope = &rope;
    const auto st = cache->check_append(ap);
    expect_error(st, "rotaryDim");
    CHECK(st.message.rfind("rope: ", 0) == 0);
    CHECK(cache->length(0) == 0);
    CHECK(cache->read_size(true) == 0);
  }
}
