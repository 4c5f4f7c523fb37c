// Multi-head attention against a double reference whose bounds carry the projection errors through
// (reference.h), plus the structural identities: heads = 1 is plain attention, GQA is MHA with repeated K/V.
#include <cmath>
#include <vector>

#include "attention.h"
#include "multihead.h"
#include "testing.h"

using attnlab::MultiHeadArgs;
using attnlab::MultiHeadOutputs;

namespace {

struct Net {
  std::size_t n, d_model, heads, kv_heads, dk, dv;
  bool causal;
  std::vector<float> x, wq, wk, wv, wo;
};

Net make_net(std::size_t n, std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t dk,
             std::size_t dv, bool causal, unsigned seed) {
  // Weights ~ N(0, 1/d_model) keep projections at unit scale, as in a trained layer.
  const float w_sd = 1.0f / std::sqrt(float(d_model));
  return {n, d_model, heads, kv_heads, dk, dv, causal,
          testing::normal(n * d_model, seed), testing::normal(d_model * heads * dk, seed + 1, w_sd),
          testing::normal(d_model * kv_heads * dk, seed + 2, w_sd), testing::normal(d_model * kv_heads * dv, seed + 3, w_sd),
          testing::normal(heads * dv * d_model, seed + 4, 1.0f / std::sqrt(float(heads * dv)))};
}

MultiHeadArgs args_of(const Net& m) {
  return {m.x, m.n, m.d_model, m.heads, m.kv_heads, m.dk, m.dv, m.wq, m.wk, m.wv, m.wo, std::nullopt, m.causal, {}};
}

struct MhaRef {
  ref::Bounded q, k, v, concat, out;
  std::vector<ref::AttentionRef> heads;
};

MhaRef reference(const Net& m, bool streaming) {
  MhaRef r;
  const std::size_t qw = m.heads * m.dk, kw = m.kv_heads * m.dk, vw = m.kv_heads * m.dv, ow = m.heads * m.dv;
  r.q = ref::gemm(m.x, m.wq, m.n, qw, m.d_model);
  r.k = ref::gemm(m.x, m.wk, m.n, kw, m.d_model);
  r.v = ref::gemm(m.x, m.wv, m.n, vw, m.d_model);
  r.concat = {std::vector<double>(m.n * ow), std::vector<double>(m.n * ow)};
  const double scale = double(1.0f / std::sqrt(float(m.dk)));
  for (std::size_t h = 0; h < m.heads; ++h) {
    const std::size_t g = h / (m.heads / m.kv_heads);
    r.heads.push_back(ref::attention(ref::columns(r.q.value, m.n, qw, h * m.dk, m.dk), ref::columns(r.q.bound, m.n, qw, h * m.dk, m.dk),
                                     ref::columns(r.k.value, m.n, kw, g * m.dk, m.dk), ref::columns(r.k.bound, m.n, kw, g * m.dk, m.dk),
                                     ref::columns(r.v.value, m.n, vw, g * m.dv, m.dv), ref::columns(r.v.bound, m.n, vw, g * m.dv, m.dv),
                                     m.n, m.n, m.dk, m.dv, scale, m.causal, nullptr, streaming));
    for (std::size_t i = 0; i < m.n; ++i)
      for (std::size_t c = 0; c < m.dv; ++c) {
        r.concat.value[i * ow + h * m.dv + c] = r.heads[h].out.value[i * m.dv + c];
        r.concat.bound[i * ow + h * m.dv + c] = r.heads[h].out.bound[i * m.dv + c];
      }
  }
  r.out = {std::vector<double>(m.n * m.d_model), std::vector<double>(m.n * m.d_model)};
  for (std::size_t i = 0; i < m.n; ++i)
    for (std::size_t j = 0; j < m.d_model; ++j) {
      double s = 0, sa = 0, prop = 0;
      for (std::size_t p = 0; p < ow; ++p) {
        const double c = r.concat.value[i * ow + p], w = m.wo[p * m.d_model + j];
        s += c * w, sa += std::fabs(c * w), prop += r.concat.bound[i * ow + p] * std::fabs(w);
      }
      r.out.value[i * m.d_model + j] = s;
      r.out.bound[i * m.d_model + j] = ref::gamma(double(ow)) * sa + prop + double(ow) * ref::underflow;
    }
  return r;
}

void check_net(const Net& m) {
  INFO("n=" << m.n << " dModel=" << m.d_model << " heads=" << m.heads << " kvHeads=" << m.kv_heads << " dk=" << m.dk
            << " dv=" << m.dv << " causal=" << m.causal);
  const std::size_t nn = m.n * m.n;
  std::vector<float> out(m.n * m.d_model), q(m.n * m.heads * m.dk), k(m.n * m.kv_heads * m.dk),
      v(m.n * m.kv_heads * m.dv), scores(m.heads * nn), weights(m.heads * nn), concat(m.n * m.heads * m.dv);
  auto st = attnlab::multi_head_attention(args_of(m), MultiHeadOutputs{out, q, k, v, scores, weights, concat});
  INFO(st.message);
  REQUIRE(st.ok());
  const auto want = reference(m, false);
  CHECK_BOUNDED(out, want.out);
  CHECK_BOUNDED(q, want.q);
  CHECK_BOUNDED(k, want.k);
  CHECK_BOUNDED(v, want.v);
  CHECK_BOUNDED(concat, want.concat);
  for (std::size_t h = 0; h < m.heads; ++h) {
    CHECK_BOUNDED(std::vector<float>(weights.begin() + long(h * nn), weights.begin() + long((h + 1) * nn)), want.heads[h].weights);
    CHECK_BOUNDED(std::vector<float>(scores.begin() + long(h * nn), scores.begin() + long((h + 1) * nn)), want.heads[h].scores);
  }
  // Without intermediates the heads stream; same result within the streaming bounds.
  std::vector<float> out_stream(out.size());
  REQUIRE(attnlab::multi_head_attention(args_of(m), MultiHeadOutputs{out_stream}).ok());
  CHECK_BOUNDED(out_stream, reference(m, true).out);
}

}  // namespace

TEST_CASE("multi-head: against the double reference", "[multihead]") {
  check_net(make_net(5, 8, 2, 2, 4, 4, false, 1));      // the explorer's scale
  check_net(make_net(7, 12, 3, 3, 4, 4, true, 2));
  check_net(make_net(32, 64, 4, 4, 16, 16, true, 3));   // the explorer's largest default
  check_net(make_net(9, 10, 2, 1, 3, 7, false, 4));     // multi-query, dk ≠ dv, d_model not heads·dk
  check_net(make_net(17, 24, 6, 2, 4, 5, true, 5));     // grouped-query
  check_net(make_net(70, 16, 8, 4, 2, 2, false, 6));
}

TEST_CASE("multi-head: heads = 1 equals attention on the projections", "[multihead]") {
  const auto m = make_net(11, 6, 1, 1, 5, 3, true, 7);
  std::vector<float> q(11 * 5), k(11 * 5), v(11 * 3), concat(11 * 3), out(11 * 6);
  REQUIRE(attnlab::multi_head_attention(args_of(m), MultiHeadOutputs{out, q, k, v, {}, {}, concat}).ok());
  std::vector<float> direct(11 * 3);
  attnlab::AttentionArgs a{q, k, v, 11, 11, 5, 3, std::nullopt, true};
  REQUIRE(attnlab::attention(a, attnlab::AttentionOutputs{direct}).ok());
  CHECK(direct == concat);
}

TEST_CASE("multi-head: grouped-query equals full MHA with each K/V head repeated", "[multihead]") {
  const std::size_t n = 13, d_model = 12, heads = 6, kv_heads = 2, dk = 3, dv = 4, group = heads / kv_heads;
  const auto gqa = make_net(n, d_model, heads, kv_heads, dk, dv, true, 8);
  Net mha = gqa;
  mha.kv_heads = heads;
  // Repeat kv head g's columns for each of its query heads: W[:, h·dk …] = W_gqa[:, (h / group)·dk …]
  auto repeat = [&](const std::vector<float>& w, std::size_t width) {
    std::vector<float> r(d_model * heads * width);
    for (std::size_t row = 0; row < d_model; ++row)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t c = 0; c < width; ++c)
          r[row * heads * width + h * width + c] = w[row * kv_heads * width + (h / group) * width + c];
    return r;
  };
  mha.wk = repeat(gqa.wk, dk);
  mha.wv = repeat(gqa.wv, dv);
  std::vector<float> a(n * d_model), b(n * d_model);
  REQUIRE(attnlab::multi_head_attention(args_of(gqa), MultiHeadOutputs{a}).ok());
  REQUIRE(attnlab::multi_head_attention(args_of(mha), MultiHeadOutputs{b}).ok());
  CHECK(a == b);  // identical arithmetic on identical numbers
}
