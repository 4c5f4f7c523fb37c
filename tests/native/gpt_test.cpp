// The small GPT as a whole: its gradient against finite differences of an independent double forward
// (gpt_reference.h), initialization, the state dict, generation with the KV cache, sampling, and every error
// path (the model unchanged after each). Learning itself is in gpt_learning_test.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "gpt_reference.h"
#include "gpt_testing.h"
#include "model/gpt.h"
#include "model/random.h"
#include "model/sampling.h"
#include "testing.h"

namespace m = attnlab::model;

namespace {

constexpr auto make = gpt_testing::make_gpt;

ref::StateDict state_dict(const m::GPT& g) {
  ref::StateDict sd;
  for (const auto& t : g.layout().tensors) {
    if (t.alias) continue;
    std::vector<float> buf(t.size());
    g.read_tensor(t, buf.data());
    sd[t.name] = ref::widen(buf);
  }
  return sd;
}

// A tensor of the gradient buffer in state_dict layout.
std::vector<float> gradient_of(const m::GPT& g, const m::TensorInfo& t) {
  std::vector<float> r(t.size());
  const float* src = g.gradients().data() + t.offset;
  for (std::size_t i = 0; i < t.rows; ++i)
    for (std::size_t j = 0; j < (t.cols ? t.cols : 1); ++j)
      r[i * (t.cols ? t.cols : 1) + j] = t.transposed ? src[j * t.rows + i] : src[i * (t.cols ? t.cols : 1) + j];
  return r;
}

ref::GPTShape shape(const m::GPTConfig& c) {
  return {c.vocab_size, c.context, c.d_model, c.heads, c.kv_heads ? c.kv_heads : c.heads, c.layers, c.mlp, c.bias, c.tied,
          c.position == m::Position::rope};
}

// Weights far from the initial N(0, 0.02): attention then has real patterns and every path carries gradient.
void randomize(m::GPT& g, unsigned seed) {
  std::vector<std::vector<float>> data;
  std::vector<m::NamedTensor> given;
  for (const auto& t : g.layout().tensors) {
    if (t.alias) continue;
    const bool ln = t.name.find("ln_") != std::string::npos;
    auto v = testing::normal(t.size(), seed++, ln ? 0.3f : 0.5f);
    if (ln && t.name.ends_with(".weight"))
      for (float& x : v) x += 1.0f;
    data.push_back(std::move(v));
  }
  std::size_t i = 0;
  for (const auto& t : g.layout().tensors)
    if (!t.alias) given.push_back({t.name, data[i++]});
  REQUIRE(g.set_weights(given).ok());
}

std::vector<float> snapshot(const m::GPT& g) { return {g.parameters().begin(), g.parameters().end()}; }

}  // namespace

TEST_CASE("gpt: the whole model's gradient equals finite differences of an independent double forward", "[gpt]") {
  m::GPTConfig a;  // GQA, MLP, biases, tied embeddings; sequences shorter than the context
  a.vocab_size = 11, a.context = 6, a.d_model = 6, a.heads = 2, a.kv_heads = 1, a.layers = 2, a.seed = 5;
  m::GPTConfig b = a;  // attention-only, no biases, a separate lm_head, three heads of width 2
  b.vocab_size = 9, b.context = 5, b.heads = 3, b.kv_heads = 3, b.mlp = false, b.bias = false, b.tied = false, b.seed = 6;
  m::GPTConfig r = a;  // rotary positions (no wpe), GQA, head width 4
  r.d_model = 8, r.position = m::Position::rope, r.seed = 7;
  for (const m::GPTConfig& c : {a, b, r}) {
    auto g = make(c);
    randomize(*g, 100);
    const std::size_t seq = 5;
    const std::vector<std::int32_t> tokens{1, 4, 1, 6, 0, 2, 2, 8, 5, 1};
    std::vector<std::int32_t> targets{4, 1, 6, 0, 3, 2, -1, 5, 1, 7};
    float loss = 0;
    REQUIRE(g->compute_gradients(tokens, targets, seq, loss).ok());
    ref::StateDict sd = state_dict(*g);
    const auto s = shape(c);
    const double want_loss = ref::gpt_loss(ref::gpt_logits(s, sd, tokens, seq), targets, c.vocab_size);
    CHECK(std::fabs(loss - want_loss) <= 1e-5 * std::fabs(want_loss));
    // Central differences in double, h = 1e-6: truncation and rounding errors ≲ 1e-9 relative here. The engine's
    // float32 gradient differs from the exact one by its accumulated rounding: each product and sum is within
    // γ(k)·Σ|terms| (k ≤ 4·dModel = 24), compounded through ~20 dependent layers of ops and the softmax/LayerNorm
    // amplifications (condition numbers of O(10) at these weights): a few thousand u at most. The bound below,
    // 2⁻¹⁴ ≈ 6e-5 of the tensor's largest gradient plus of each element, is that with margin.
    for (const auto& t : g->layout().tensors) {
      if (t.alias) continue;
      std::vector<double>& x = sd[t.name];
      const auto got = gradient_of(*g, t);
      std::vector<double> fd(x.size());
      double scale = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const auto loss = [&] { return ref::gpt_loss(ref::gpt_logits(s, sd, tokens, seq), targets, c.vocab_size); };
        fd[i] = testing::central_difference(x, i, loss, 1e-6);
        scale = std::fmax(scale, std::fabs(fd[i]));
      }
      std::size_t bad = 0, first = 0;
      double worst = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double err = std::fabs(got[i] - fd[i]), tol = 0x1p-14 * (scale + std::fabs(fd[i]));
        worst = std::fmax(worst, err / (scale + 1e-30));
        if (err > tol && bad++ == 0) first = i;
      }
      INFO(t.name << ": " << bad << " element(s) off; worst |err|/max|g| = " << worst << "; first " << first << ": engine "
                  << got[first] << ", finite differences " << fd[first]);
      CHECK(bad == 0);
      CHECK(scale > 0);  // every tensor carries gradient (a zero gradient would pass vacuously)
    }
  }
}

TEST_CASE("gpt: nanoGPT's initialization — N(0, 0.02), residual projections 0.02/√(2·layers), norms 1, biases 0",
          "[gpt]") {
  m::GPTConfig c;
  c.vocab_size = 300, c.context = 64, c.d_model = 64, c.heads = 4, c.layers = 3, c.seed = 9;
  auto g = make(c);
  for (const auto& t : g->layout().tensors) {
    if (t.alias) continue;
    std::vector<float> v(t.size());
    g->read_tensor(t, v.data());
    double mean = 0, sq = 0;
    for (float x : v) mean += x, sq += double(x) * x;
    mean /= double(v.size());
    const double sd = std::sqrt(sq / double(v.size()) - mean * mean);
    INFO(t.name << ": mean " << mean << ", sd " << sd);
    if (t.name.ends_with(".bias")) {
      CHECK(sq == 0.0);
    } else if (t.name.find("ln_") != std::string::npos) {
      CHECK(std::all_of(v.begin(), v.end(), [](float x) { return x == 1.0f; }));
    } else {
      const double want = t.name.ends_with("c_proj.weight") ? 0.02 / std::sqrt(6.0) : 0.02;
      // The sample sd of n normals is within 5·want/√(2n) of want with overwhelming probability (fixed seed anyway).
      CHECK(std::fabs(sd - want) <= 5 * want / std::sqrt(2.0 * double(v.size())));
      CHECK(std::fabs(mean) <= 5 * want / std::sqrt(double(v.size())));
    }
  }
  auto same = make(c);
  CHECK(snapshot(*same) == snapshot(*g));
  c.seed = 10;
  CHECK(snapshot(*make(c)) != snapshot(*g));
}

TEST_CASE("gpt: the state dict — names, shapes, nn.Linear [out, in], round trip, tied lm_head", "[gpt]") {
  m::GPTConfig c;
  c.vocab_size = 10, c.context = 8, c.d_model = 8, c.heads = 4, c.kv_heads = 2, c.layers = 2, c.seed = 1;
  auto g = make(c);
  std::vector<std::string> names;
  for (const auto& t : g->layout().tensors) names.push_back(t.name);
  const std::vector<std::string> want{
      "transformer.wte.weight", "transformer.wpe.weight",
      "transformer.h.0.ln_1.weight", "transformer.h.0.ln_1.bias", "transformer.h.0.attn.c_attn.weight",
      "transformer.h.0.attn.c_attn.bias", "transformer.h.0.attn.c_proj.weight", "transformer.h.0.attn.c_proj.bias",
      "transformer.h.0.ln_2.weight", "transformer.h.0.ln_2.bias", "transformer.h.0.mlp.c_fc.weight",
      "transformer.h.0.mlp.c_fc.bias", "transformer.h.0.mlp.c_proj.weight", "transformer.h.0.mlp.c_proj.bias",
      "transformer.h.1.ln_1.weight", "transformer.h.1.ln_1.bias", "transformer.h.1.attn.c_attn.weight",
      "transformer.h.1.attn.c_attn.bias", "transformer.h.1.attn.c_proj.weight", "transformer.h.1.attn.c_proj.bias",
      "transformer.h.1.ln_2.weight", "transformer.h.1.ln_2.bias", "transformer.h.1.mlp.c_fc.weight",
      "transformer.h.1.mlp.c_fc.bias", "transformer.h.1.mlp.c_proj.weight", "transformer.h.1.mlp.c_proj.bias",
      "transformer.ln_f.weight", "transformer.ln_f.bias", "lm_head.weight"};
  CHECK(names == want);
  const auto& attn = g->layout().tensors[4];
  CHECK(attn.rows == (4 + 2 * 2) * 2);  // (heads + 2·kvHeads)·headDim outputs
  CHECK(attn.cols == 8);
  CHECK(g->layout().tensors[10].rows == 32);  // c_fc [4·d, d]
  CHECK(g->layout().tensors[12].cols == 32);  // c_proj [d, 4·d]
  CHECK(g->layout().tensors.back().alias);

  // Round trip: set every tensor (in [out, in] layout), read it back bit for bit; c_attn is applied as x·Wᵀ.
  randomize(*g, 7);
  const auto before = state_dict(*g);
  std::vector<std::vector<float>> data;
  std::vector<m::NamedTensor> all;
  for (const auto& t : g->layout().tensors) {
    if (t.alias) continue;
    data.emplace_back(t.size());
    g->read_tensor(t, data.back().data());
  }
  auto h = make(c);
  std::size_t i = 0;
  for (const auto& t : g->layout().tensors)
    if (!t.alias) all.push_back({t.name, data[i++]});
  REQUIRE(h->set_weights(all).ok());
  CHECK(snapshot(*h) == snapshot(*g));
  // Logits agree with the double reference reading the same state dict (the layout means what PyTorch means).
  const std::vector<std::int32_t> tokens{3, 1, 4, 1, 5, 9, 2, 6};
  std::vector<float> logits(8 * 10);
  REQUIRE(h->forward(tokens, 8, logits, {}).ok());
  const auto want_logits = ref::gpt_logits(shape(c), before, tokens, 8);
  for (std::size_t k = 0; k < logits.size(); ++k) CHECK(std::fabs(logits[k] - want_logits[k]) <= 1e-4 * (1 + std::fabs(want_logits[k])));

  // lm_head.weight of a tied model sets the shared embedding; both given must agree.
  std::vector<float> emb(80, 0.25f), other(80, 0.5f);
  std::vector<m::NamedTensor> tied{{"lm_head.weight", emb}};
  REQUIRE(h->set_weights(tied).ok());
  std::vector<float> back(80);
  h->read_tensor(h->layout().tensors[0], back.data());
  CHECK(back == emb);
  const auto keep = snapshot(*h);
  std::vector<m::NamedTensor> clash{{"transformer.wte.weight", emb}, {"lm_head.weight", other}};
  const auto st = h->set_weights(clash);
  CHECK(st.arg == "lm_head.weight");
  CHECK(snapshot(*h) == keep);
}

TEST_CASE("gpt: setWeights errors name the tensor and change nothing", "[gpt]") {
  m::GPTConfig c;
  c.vocab_size = 6, c.context = 4, c.d_model = 4, c.heads = 2, c.layers = 1;
  auto g = make(c);
  const auto keep = snapshot(*g);
  std::vector<float> good(24, 0.1f), short_(23, 0.1f), nan(16, 0.1f), ln(4, 1.0f);
  nan[5] = NAN;
  auto expect = [&](std::vector<m::NamedTensor> given, const std::string& arg, const std::string& text) {
    const auto st = g->set_weights(given);
    INFO(st.message);
    CHECK(st.kind == attnlab::ErrorKind::range);
    CHECK(st.arg == arg);
    CHECK(st.message.find(text) != std::string::npos);
    CHECK(snapshot(*g) == keep);
  };
  expect({{"transformer.ln_f.weight", ln}, {"transformer.wte.weight", short_}}, "transformer.wte.weight",
         "transformer.wte.weight must have [6, 4] = 24 elements, got 23");
  expect({{"transformer.wte.weight", good}, {"transformer.h.0.attn.c_proj.weight", nan}}, "transformer.h.0.attn.c_proj.weight",
         "transformer.h.0.attn.c_proj.weight[5] is NaN");
  expect({{"transformer.h.3.ln_1.weight", ln}}, "transformer.h.3.ln_1.weight", "unknown weight");
  expect({{"transformer.ln_f.weight", ln}, {"transformer.ln_f.weight", ln}}, "transformer.ln_f.weight", "given twice");
}

TEST_CASE("gpt: config errors name the argument", "[gpt]") {
  auto expect = [](m::GPTConfig c, const char* arg, const char* text) {
    std::unique_ptr<m::GPT> g;
    const auto st = m::GPT::create(c, g);
    INFO(st.message);
    CHECK(st.kind == attnlab::ErrorKind::range);
    CHECK(st.arg == arg);
    CHECK(st.message.find(text) != std::string::npos);
    CHECK(!g);
  };
  m::GPTConfig ok;
  ok.vocab_size = 10, ok.context = 8, ok.d_model = 8, ok.heads = 2, ok.layers = 1;
  for (auto [field, name] : {std::pair{&m::GPTConfig::vocab_size, "vocabSize"}, {&m::GPTConfig::context, "context"},
                             {&m::GPTConfig::d_model, "dModel"}, {&m::GPTConfig::heads, "heads"}, {&m::GPTConfig::layers, "layers"}}) {
    m::GPTConfig c = ok;
    c.*field = 0;
    expect(c, name, "must be an integer >= 1, got 0");
  }
  m::GPTConfig c = ok;
  c.heads = 3;
  expect(c, "heads", "dModel = 8 must be a multiple of heads = 3");
  c = ok, c.kv_heads = 3;
  expect(c, "kvHeads", "kvHeads must divide heads = 2, got 3");
  c = ok, c.kv_heads = 4;
  expect(c, "kvHeads", "kvHeads must divide heads = 2, got 4");
  c = ok, c.context = std::size_t(1) << 28;
  expect(c, "context", "makes the model too large");
  c = ok, c.vocab_size = std::size_t(1) << 28;
  expect(c, "vocabSize", "makes the model too large");
  c = ok, c.d_model = std::size_t(1) << 20, c.heads = 1;
  expect(c, "dModel", "makes the model too large");
}

TEST_CASE("gpt: bad tokens, targets and options are range errors, the model unchanged and still training", "[gpt]") {
  m::GPTConfig c;
  c.vocab_size = 8, c.context = 4, c.d_model = 8, c.heads = 2, c.layers = 1, c.seed = 2;
  auto g = make(c);
  const auto keep = snapshot(*g);
  std::vector<std::int32_t> tokens{1, 2, 3, 4, 5, 6, 7, 0}, targets{2, 3, 4, 5, 6, 7, 0, 1};
  float loss = -1;
  auto expect = [&](std::span<const std::int32_t> tk, std::span<const std::int32_t> tg, m::TrainOptions o, const char* arg,
                    const char* text) {
    const auto st = g->train_step(tk, tg, 4, o, loss);
    INFO(st.message);
    CHECK(st.kind == attnlab::ErrorKind::range);
    CHECK(st.arg == arg);
    CHECK(st.message.find(text) != std::string::npos);
    CHECK(snapshot(*g) == keep);
    CHECK(g->steps() == 0);
  };
  std::vector<std::int32_t> bad = tokens;
  bad[5] = 8;
  expect(bad, targets, {}, "tokens", "tokens[5] = 8 is outside the vocabulary 0…7");
  bad[5] = -1;
  expect(bad, targets, {}, "tokens", "tokens[5] = -1");
  bad = targets, bad[2] = -2;
  expect(tokens, bad, {}, "targets", "targets[2] = -2 is outside the vocabulary 0…7 (or -1: ignored)");
  expect(tokens, std::span<const std::int32_t>(targets).first(7), {}, "targets", "targets must have tokens.length = 8");
  expect(std::span<const std::int32_t>(tokens).first(6), std::span<const std::int32_t>(targets).first(6), {}, "tokens",
         "multiple of the sequence length 4");
  std::vector<std::int32_t> ignored(8, -1);
  expect(tokens, ignored, {}, "targets", "targets are all -1 (ignored): the batch has nothing to learn from");
  for (auto [field, name] : {std::pair{&m::TrainOptions::lr, "lr"}, {&m::TrainOptions::weight_decay, "weightDecay"},
                             {&m::TrainOptions::beta1, "beta1"}, {&m::TrainOptions::beta2, "beta2"},
                             {&m::TrainOptions::eps, "eps"}, {&m::TrainOptions::grad_clip, "gradClip"}})
    for (float v : {NAN, INFINITY, -1.0f}) {
      m::TrainOptions o;
      o.*field = v;
      expect(tokens, targets, o, name, name);
    }
  m::TrainOptions o;
  o.beta2 = 1.0f;
  expect(tokens, targets, o, "beta2", "in [0, 1)");
  // Still usable: a good step works and changes the weights.
  REQUIRE(g->train_step(tokens, targets, 4, {}, loss).ok());
  CHECK(std::fabs(loss - std::log(8.0f)) < 0.1f);
  CHECK(snapshot(*g) != keep);
  CHECK(g->steps() == 1);
}

TEST_CASE("gpt: a NaN loss stops the step with a numerical error, weights, moments and step count intact", "[gpt]") {
  m::GPTConfig c;
  c.vocab_size = 8, c.context = 4, c.d_model = 8, c.heads = 2, c.layers = 1, c.seed = 2;
  auto g = make(c);
  std::vector<std::int32_t> tokens{1, 2, 3, 4}, targets{2, 3, 4, 5};
  float loss = 0;
  REQUIRE(g->train_step(tokens, targets, 4, {}, loss).ok());
  // Weights that overflow the logits: ln_f's gain at 3e38 makes them ±inf, the loss NaN.
  std::vector<float> huge(8, 3e38f);
  std::vector<m::NamedTensor> w{{"transformer.ln_f.weight", huge}};
  REQUIRE(g->set_weights(w).ok());
  const auto keep = snapshot(*g);
  const auto st = g->train_step(tokens, targets, 4, {}, loss);
  INFO(st.message);
  CHECK(st.kind == attnlab::ErrorKind::numerical);
  CHECK(st.message.find("the loss is NaN") != std::string::npos);
  CHECK(st.message.find("weights are unchanged") != std::string::npos);
  CHECK(snapshot(*g) == keep);
  CHECK(g->steps() == 1);
  // Repaired weights train again from the same optimizer state.
  std::vector<float> one(8, 1.0f);
  w = {{"transformer.ln_f.weight", one}};
  REQUIRE(g->set_weights(w).ok());
  REQUIRE(g->train_step(tokens, targets, 4, {}, loss).ok());
  CHECK(g->steps() == 2);
}

TEST_CASE("gpt: forward shapes, attention maps are causal rows that sum to 1, errors", "[gpt]") {
  m::GPTConfig c;
  c.vocab_size = 7, c.context = 6, c.d_model = 8, c.heads = 2, c.layers = 2, c.seed = 3;
  auto g = make(c);
  randomize(*g, 3);
  const std::vector<std::int32_t> tokens{1, 2, 3, 4, 5, 6, 0, 1};  // batch 2 × 4
  std::vector<float> logits(2 * 4 * 7), att(2 * 2 * 2 * 4 * 4, -1.0f), plain(logits.size());
  REQUIRE(g->forward(tokens, 4, logits, att).ok());
  REQUIRE(g->forward(tokens, 4, plain, {}).ok());
  for (std::size_t i = 0; i < logits.size(); ++i) CHECK(std::fabs(logits[i] - plain[i]) <= 1e-5f * (1 + std::fabs(plain[i])));
  for (std::size_t blk = 0; blk < 2 * 2 * 2; ++blk)
    for (std::size_t i = 0; i < 4; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < 4; ++j) {
        const float w = att[(blk * 4 + i) * 4 + j];
        if (j > i) CHECK(w == 0.0f);
        s += w;
      }
      CHECK(std::fabs(s - 1.0) < 1e-5);
    }
  const auto ref_logits = ref::gpt_logits(shape(c), state_dict(*g), tokens, 4);
  for (std::size_t i = 0; i < logits.size(); ++i) CHECK(std::fabs(logits[i] - ref_logits[i]) <= 1e-4 * (1 + std::fabs(ref_logits[i])));
  std::vector<float> wrong(5);
  CHECK(g->forward(tokens, 4, wrong, {}).arg == "logits");
  CHECK(g->forward(tokens, 4, logits, wrong).arg == "attention");
  std::vector<float> long_logits(8 * 7);
  CHECK(g->forward(tokens, 8, long_logits, {}).message.find("context = 6") != std::string::npos);
  std::vector<std::int32_t> bad = tokens;
  bad[3] = 7;
  CHECK(g->forward(bad, 4, logits, {}).arg == "tokens");
}

TEST_CASE("gpt: generate with the KV cache equals greedy decoding by full forwards, also past the context", "[gpt]") {
  for (m::Position position : {m::Position::learned, m::Position::rope}) {
  INFO("position " << m::position_name(position));
  m::GPTConfig c;
  c.vocab_size = 13, c.context = 8, c.d_model = 16, c.heads = 4, c.kv_heads = 2, c.layers = 2, c.seed = 4;
  c.position = position;
  auto g = make(c);
  randomize(*g, 11);  // strong weights: clear argmax margins, so rounding differences cannot flip a choice
  const std::vector<std::int32_t> prompt{3, 1, 4};
  std::vector<std::int32_t> out(20);
  m::GenerateOptions o;
  o.max_tokens = 20, o.temperature = 0;
  REQUIRE(g->generate(prompt, o, out).ok());
  std::vector<std::int32_t> seqv = prompt;
  double min_margin = INFINITY;
  for (std::size_t i = 0; i < 20; ++i) {
    const std::size_t n = std::min<std::size_t>(seqv.size(), 8);
    std::vector<std::int32_t> window(seqv.end() - std::ptrdiff_t(n), seqv.end());
    std::vector<float> logits(n * 13);
    REQUIRE(g->forward(window, n, logits, {}).ok());
    const float* last = logits.data() + (n - 1) * 13;
    const auto best = std::int32_t(std::max_element(last, last + 13) - last);
    std::vector<float> sorted(last, last + 13);
    std::sort(sorted.begin(), sorted.end());
    min_margin = std::min(min_margin, double(sorted[12] - sorted[11]));
    INFO("token " << i);
    CHECK(out[i] == best);
    seqv.push_back(best);
  }
  CHECK(min_margin > 1e-3);  // the comparison above is meaningful
  // Seeded sampling: equal seeds, equal tokens; topK 1 is greedy.
  std::vector<std::int32_t> s1(20), s2(20), greedy(20);
  o.temperature = 1.5f, o.seed = 77;
  REQUIRE(g->generate(prompt, o, s1).ok());
  REQUIRE(g->generate(prompt, o, s2).ok());
  CHECK(s1 == s2);
  o.top_k = 1;
  REQUIRE(g->generate(prompt, o, greedy).ok());
  CHECK(greedy == out);
  // A prompt longer than the context keeps its last `context` tokens.
  std::vector<std::int32_t> long_prompt{9, 9, 9, 9, 3, 1, 4, 1, 5, 9, 2}, a(5), b(5);
  o.top_k = 0, o.temperature = 0, o.max_tokens = 5;
  REQUIRE(g->generate(long_prompt, o, a).ok());
  REQUIRE(g->generate(std::span<const std::int32_t>(long_prompt).last(8), o, b).ok());
  CHECK(a == b);
  // Errors.
  CHECK(g->generate({}, o, a).arg == "prompt");
  std::vector<std::int32_t> bad{1, 13};
  CHECK(g->generate(bad, o, a).arg == "prompt");
  o.temperature = -1;
  CHECK(g->generate(prompt, o, a).arg == "temperature");
  }
}

TEST_CASE("sampling: first_max is std::max_element's index", "[gpt]") {
  m::Rng rng(29);
  // Lengths around the vector kernel's 8 per step; the largest anywhere, tied, -inf, and ±0 (equal, first wins).
  for (std::size_t n : {1u, 2u, 3u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 50257u})
    for (int shape = 0; shape < 5; ++shape)
      for (int rep = 0; rep < 4; ++rep) {
        std::vector<float> x(n);
        for (std::size_t i = 0; i < n; ++i) {
          const float u = float(rng.uniform() * 8 - 4);
          x[i] = shape == 0 ? u : shape == 1 ? std::round(u) : shape == 2 ? -INFINITY : shape == 3 ? (i % 2 ? 0.0f : -0.0f) : u;
        }
        if (shape == 4) x[std::size_t(rng.uniform() * double(n))] = -INFINITY, x[std::size_t(rng.uniform() * double(n))] = 9.0f;
        INFO("n=" << n << " shape=" << shape);
        REQUIRE(m::first_max(x.data(), n) == std::size_t(std::max_element(x.begin(), x.end()) - x.begin()));
      }
}

TEST_CASE("sampling: kth_largest is nth_element's k-th largest, bit for bit", "[gpt]") {
  m::Rng rng(23);
  for (std::size_t n : {1u, 2u, 7u, 300u, 50257u})
    for (int shape = 0; shape < 5; ++shape) {  // random, tied, ascending, descending, constant
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) {
        const float u = float(rng.uniform() * 20 - 10);
        x[i] = shape == 0 ? u : shape == 1 ? std::round(u) : shape == 2 ? float(i) * 0.5f : shape == 3 ? -float(i) : 1.5f;
      }
      for (std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{50}, n / 2, n - 1, n}) {
        if (k < 1 || k > n) continue;
        std::vector<float> sorted = x, heap(k);
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(k - 1), sorted.end(), [](float a, float b) { return a > b; });
        INFO("n=" << n << " shape=" << shape << " k=" << k);
        REQUIRE(std::bit_cast<std::uint32_t>(m::kth_largest(x.data(), n, k, heap.data())) == std::bit_cast<std::uint32_t>(sorted[k - 1]));
      }
    }
}

TEST_CASE("sampling: the nucleus's floor is a full sort's, bit for bit", "[gpt]") {
  // What nucleus_floor computes in pieces (selected, then sorted), over the whole vocabulary at once.
  const auto full_sort = [](const std::vector<float>& p, float top_p) {
    std::vector<std::uint32_t> order;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0.0f) order.push_back(std::uint32_t(i));
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    double before = 0.0;
    float last = 0.0f;
    for (std::size_t r = 0; r < order.size() && before < double(top_p); ++r) last = p[order[r]], before += p[order[r]];
    return last;
  };
  m::Rng rng(17);
  // Vocabularies below, at and past the first pieces (256, then 4096 more); flat, peaked and tied distributions,
  // some entries zero (masked by top k); nuclei from one token to nearly all.
  for (std::size_t vocab : {1u, 7u, 255u, 256u, 257u, 4352u, 4353u, 50257u})
    for (float sharpness : {0.0f, 0.5f, 4.0f, 30.0f})
      for (int ties : {0, 1}) {
        std::vector<double> w(vocab);
        double z = 0;
        for (std::size_t i = 0; i < vocab; ++i) {
          const double u = ties ? std::floor(rng.uniform() * 8) / 8 : rng.uniform();
          w[i] = rng.uniform() < 0.1 ? 0.0 : std::exp(sharpness * 10 * u);
          z += w[i];
        }
        std::vector<float> p(vocab);
        for (std::size_t i = 0; i < vocab; ++i) p[i] = z > 0 ? float(w[i] / z) : 0.0f;
        for (float top_p : {1e-6f, 0.1f, 0.5f, 0.9f, 0.95f, 0.999f}) {
          std::vector<std::uint32_t> order(vocab);
          std::vector<float> heap(vocab);
          const float got = m::nucleus_floor(p.data(), vocab, top_p, order.data(), heap.data()), want = full_sort(p, top_p);
          INFO("vocab=" << vocab << " sharpness=" << sharpness << " ties=" << ties << " top_p=" << top_p);
          REQUIRE(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want));
        }
      }
}

TEST_CASE("sampling: the nucleus keeps tokens while the mass before them is below top_p, ties with its last", "[gpt]") {
  // Dyadic probabilities, so that every sum is exact and a top_p can fall exactly on a boundary, which ends the nucleus.
  const std::vector<float> p{0.125f, 0.5f, 0.0f, 0.25f, 0.0625f, 0.0625f};
  std::vector<std::uint32_t> order(300);
  std::vector<float> heap(300);
  const std::pair<float, float> floors[] = {{1e-6f, 0.5f},  {0.5f, 0.5f},     {0.5000001f, 0.25f}, {0.75f, 0.25f},
                                            {0.875f, 0.125f}, {0.9f, 0.0625f}, {1.0f, 0.0625f}};
  for (auto [top_p, floor] : floors) {
    INFO("top_p=" << top_p);
    CHECK(m::nucleus_floor(p.data(), p.size(), top_p, order.data(), heap.data()) == floor);
  }
  const std::vector<float> zeros(5, 0.0f);
  CHECK(m::nucleus_floor(zeros.data(), zeros.size(), 0.5f, order.data(), heap.data()) == 0.0f);
  // Past the first sorted piece (256): (1000 + i)·2⁻²⁰ for i < 300, whose 256 largest sum to exactly 299904·2⁻²⁰.
  std::vector<float> q(300);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::ldexp(float(1000 + i), -20);
  CHECK(m::nucleus_floor(q.data(), q.size(), std::ldexp(299904.0f, -20), order.data(), heap.data()) == std::ldexp(1044.0f, -20));
  CHECK(m::nucleus_floor(q.data(), q.size(), std::ldexp(299905.0f, -20), order.data(), heap.data()) == std::ldexp(1043.0f, -20));
  // A nucleus of one token keeps the tokens tied with it: both 1.0s are drawn, nothing else.
  const std::vector<float> logits{0.0f, 1.0f, 1.0f, -1.0f};
  std::vector<float> scratch(3 * logits.size());
  m::Rng rng(9);
  std::vector<int> counts(logits.size());
  for (int i = 0; i < 200; ++i) ++counts[std::size_t(m::sample_token(logits.data(), logits.size(), 1.0f, 0, rng, scratch.data(), 1e-6f))];
  CHECK(counts[0] == 0);
  CHECK(counts[1] > 0);
  CHECK(counts[2] > 0);
  CHECK(counts[3] == 0);
}

TEST_CASE("sampling: frequencies follow softmax(logits / T) within the top k", "[gpt]") {
  const std::vector<float> logits{2.0f, 1.0f, 0.5f, -1.0f, 1.0f};
  std::vector<float> scratch(10);
  for (auto [temperature, top_k] : {std::pair{1.0f, 0u}, {0.5f, 0u}, {1.0f, 2u}, {2.0f, 3u}}) {
    m::Rng rng(5);
    std::vector<int> counts(5);
    const int draws = 20000;
    for (int i = 0; i < draws; ++i) ++counts[std::size_t(m::sample_token(logits.data(), 5, temperature, top_k, rng, scratch.data()))];
    // top_k 2 keeps 2.0 and both 1.0s (ties with the 2nd largest are kept); top_k 3 keeps the same three.
    std::vector<double> p(5);
    double z = 0;
    const float kth = top_k == 0 ? -INFINITY : 1.0f;
    for (std::size_t j = 0; j < 5; ++j) z += (p[j] = logits[j] >= kth ? std::exp(logits[j] / temperature) : 0.0);
    for (std::size_t j = 0; j < 5; ++j) {
      const double expect = draws * p[j] / z, sigma = std::sqrt(draws * (p[j] / z) * (1 - p[j] / z));
      INFO("T=" << temperature << " topK=" << top_k << " token " << j);
      CHECK(std::fabs(counts[j] - expect) <= 5 * sigma + (p[j] == 0 ? 0 : 1));
    }
  }
}
