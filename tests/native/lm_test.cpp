// Real checkpoints in the engine (src/core/lm/): random-weight checkpoints in Hugging Face's exact layouts, written
// with their float64 reference and its bounds by tests/lm/checkpoints.py (at build time, into
// ATTNLAB_LM_CHECKPOINTS): GPT-2 (F32 with the transformer. prefix and buffers, F16 without), Llama (tied BF16 with
// GQA, untied F32 in three shards with biases and head_dim ≠ hidden/heads), Qwen2 (biases, F16, two shards),
// Mistral (a sliding window over 136 tokens). Loaded through the streaming loader in chunks of several sizes,
// their logits and attention weights must lie within the reference's bounds, and greedy generation with the KV
// cache must give the reference's 32 tokens (decided at every step: tests/lm/checkpoints.py) — which are also the
// argmax of the engine's own full forward.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "kernels/lm_kernels.h"
#include "lm/loader.h"
#include "lm/model.h"
#include "lm_testing.h"

namespace lm = attnlab::lm;
using attnlab::Status;
using namespace lm_testing;

namespace {

// The folder's files through the loader, each cut into chunks of `chunk` bytes.
Status load(const std::string& name, std::size_t chunk, std::unique_ptr<lm::LmModel>& out) {
  const std::string dir = kRoot + "/" + name + "/";
  const std::string generation = exists(dir + "generation_config.json") ? text(dir + "generation_config.json") : "";
  std::unique_ptr<lm::Loader> l;
  if (auto s = lm::Loader::create(text(dir + "config.json"), generation, l); !s.ok()) return s;
  if (exists(dir + "model.safetensors.index.json"))
    if (auto s = l->set_index(text(dir + "model.safetensors.index.json")); !s.ok()) return s;
  for (const std::string& f : l->files()) {
    const Bytes b = read(dir + f);
    if (auto s = l->begin_file(f); !s.ok()) return s;
    for (std::size_t at = 0; at < b.size(); at += chunk)
      if (auto s = l->feed(b.data() + at, std::min(chunk, b.size() - at)); !s.ok()) return s;
    if (auto s = l->end_file(); !s.ok()) return s;
  }
  return l->finish(out);
}

std::unique_ptr<lm::LmModel> loaded(const std::string& name, std::size_t chunk = 1 << 16) {
  std::unique_ptr<lm::LmModel> m;
  const Status s = load(name, chunk, m);
  INFO(name << ": " << s.message);
  REQUIRE(s.ok());
  return m;
}

std::size_t argmax(const float* x, std::size_t n) { return std::size_t(std::max_element(x, x + n) - x); }

// Logits of a forward over the first n ids, against the reference's rows below n; returns the worst
// |engine − reference| / bound.
double check_logits(lm::LmModel& m, const Reference& r, std::size_t n) {
  const std::size_t V = r.vocab;
  std::vector<float> logits(n * V);
  const Status s = m.forward({r.ids.data(), n}, logits, {});
  INFO(s.message);
  REQUIRE(s.ok());
  double worst = 0;
  for (std::size_t k = 0; k < r.logit_rows.size(); ++k) {
    const std::size_t row = std::size_t(r.logit_rows[k]);
    if (row >= n) continue;
    for (std::size_t j = 0; j < V; ++j) {
      const double got = logits[row * V + j], want = r.logits[k * V + j], bound = r.logits_bound[k * V + j];
      INFO("n = " << n << ", row " << row << ", token " << j << ": engine " << got << ", reference " << want << " ± " << bound);
      REQUIRE(std::fabs(got - want) <= bound);
      worst = std::max(worst, std::fabs(got - want) / bound);
    }
  }
  return worst;
}

void check_case(const std::string& name) {
  const Reference r = reference(name);
  // Chunks of 1 byte (every value split across calls), 7 (values of any width split at every offset) and 64 KiB.
  for (std::size_t chunk : {std::size_t(1), std::size_t(7), std::size_t(1) << 16}) {
    auto m = loaded(name, chunk);
    REQUIRE(m->config().vocab == r.vocab);
    // Whole sequence, and prefixes across the SIMD width (4), the panels (8) and the GEMM's 4-row threshold.
    double worst = 0;
    for (std::size_t n : {r.ids.size(), std::size_t(1), std::size_t(3), std::size_t(4), std::size_t(5), std::size_t(9)})
      if (n <= r.ids.size()) worst = std::max(worst, check_logits(*m, r, n));
    std::printf("%s (chunks of %zu bytes): logits within %.3f of their bounds at worst\n", name.c_str(), chunk, worst);
    if (chunk != 1) continue;

    // Attention weights [layers][heads][n][n] over the first attention_tokens ids.
    const std::size_t n = r.attention_tokens, L = r.layers, H = r.heads;
    std::vector<float> logits(n * r.vocab), maps(L * H * n * n);
    REQUIRE(m->forward({r.ids.data(), n}, logits, maps).ok());
    double aworst = 0;
    for (std::size_t i = 0; i < maps.size(); ++i) {
      INFO("attention[" << i / (H * n * n) << "][" << i / (n * n) % H << "][" << i / n % n << "][" << i % n << "]");
      REQUIRE(std::fabs(maps[i] - r.attention[i]) <= r.attention_bound[i]);
      aworst = std::max(aworst, std::fabs(maps[i] - r.attention[i]) / r.attention_bound[i]);
    }
    std::printf("%s: attention weights within %.3f of their bounds at worst\n", name.c_str(), aworst);

    // Greedy with the KV cache: the reference's tokens, and the argmax of the engine's own full forward.
    REQUIRE(m->begin(r.prompt, r.greedy.size(), lm::Sampling{}, {}).ok());
    std::vector<std::int32_t> all = r.prompt;
    for (std::size_t step = 0; step < r.greedy.size(); ++step) {
      std::int32_t token = -1;
      bool done = false;
      REQUIRE(m->next(token, done).ok());
      INFO("step " << step);
      CHECK(token == r.greedy[step]);
      CHECK(done == (step + 1 == r.greedy.size()));
      all.push_back(token);
    }
    std::vector<float> full(all.size() * r.vocab);
    REQUIRE(m->forward(all, full, {}).ok());
    for (std::size_t step = 0; step < r.greedy.size(); ++step)
      CHECK(std::int32_t(argmax(&full[(r.prompt.size() + step - 1) * r.vocab], r.vocab)) == all[r.prompt.size() + step]);
  }
}

}  // namespace

TEST_CASE("lm: GPT-2, F32 with the transformer. prefix and attention buffers", "[lm]") { check_case("gpt2-f32"); }
TEST_CASE("lm: GPT-2, F16, three layers, n_inner given", "[lm]") { check_case("gpt2-f16"); }
TEST_CASE("lm: Llama, tied BF16 with grouped-query attention", "[lm]") { check_case("llama-tied-bf16"); }
TEST_CASE("lm: Llama, untied F32 in three shards, biases, head_dim apart from hidden_size", "[lm]") {
  check_case("llama-untied-sharded");
}
TEST_CASE("lm: Qwen2, q/k/v biases, F16 in two shards", "[lm]") { check_case("qwen2-f16"); }
TEST_CASE("lm: Mistral, a sliding window over 136 tokens", "[lm]") { check_case("mistral-window"); }
TEST_CASE("lm: GPT-2 with the exact GELU (activation_function \"gelu\")", "[lm]") { check_case("gpt2-gelu"); }
