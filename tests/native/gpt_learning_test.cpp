// The small GPT learns: it memorizes a fixed text and generate gives it back greedily; a 2-layer attention-only model
// learns in-context copying (induction heads) on random token blocks repeated once. Fixed seeds and step budgets,
// bounded time (seconds in release builds; the sanitizer builds run the same steps, slower).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "model/gpt.h"
#include "model/random.h"
#include "testing.h"

namespace m = attnlab::model;

TEST_CASE("gpt learns: a small model memorizes a text (loss near 0) and generate reproduces it greedily", "[gpt][learning]") {
  const std::string text = "attention is a soft dictionary lookup.";
  std::vector<std::int32_t> ids(text.begin(), text.end());
  m::GPTConfig c;
  c.vocab_size = 128, c.context = ids.size() - 1, c.d_model = 32, c.heads = 4, c.layers = 2, c.seed = 1;
  std::unique_ptr<m::GPT> g;
  REQUIRE(m::GPT::create(c, g).ok());
  const std::span<const std::int32_t> x(ids.data(), ids.size() - 1), y(ids.data() + 1, ids.size() - 1);
  m::TrainOptions o;
  o.lr = 3e-3f;
  float loss = 0, first = 0;
  int steps = 0;
  for (; steps < 400; ++steps) {
    REQUIRE(g->train_step(x, y, x.size(), o, loss).ok());
    if (steps == 0) first = loss;
    if (loss < 0.01f) break;
  }
  INFO("loss " << first << " → " << loss << " in " << steps + 1 << " steps");
  CHECK(std::fabs(first - std::log(128.0f)) < 0.1f);
  CHECK(loss < 0.01f);
  std::vector<std::int32_t> out(ids.size() - 1);
  m::GenerateOptions gen;
  gen.max_tokens = out.size(), gen.temperature = 0;
  REQUIRE(g->generate(std::span<const std::int32_t>(ids.data(), 1), gen, out).ok());
  CHECK(std::string(text.begin(), text.begin() + 1) + std::string(out.begin(), out.end()) == text);
}

// In-context copying, the task induction heads solve: each sequence is a random block of L tokens (L uniform in
// 2…32, so that no fixed offset solves it) repeated once, from position 0; positions after the second copy are
// padding whose targets are ignored. Predicting a repeated token's successor needs a head that finds the previous
// occurrence of the current token and copies the token after it: in a 2-layer attention-only model, a
// previous-token head in layer 1 composed with an induction head in layer 2. One head per layer: with several, the
// model also finds a shifted variant (two layer-1 heads at offsets −k−1 and −k, and layer 2 attending k positions
// after the token it copies, which it reads through layer 1) that solves the task without the attention pattern
// this test looks for. Rotary positions make "the previous position" one rotation everywhere; with them the
// circuit forms in a phase change after ~450 steps of this seed (the repeat loss falls from ~3.7 to ~1.2 within 100
// steps, and below a fifth of the first-occurrence loss ~50 steps later). The test checks both criteria every few
// steps, stops as soon as they hold and fails if they do not within the budget; CMakePresets.json's sanitizer test
// presets skip it.
TEST_CASE("gpt learns: induction heads — repeats become predictable, a layer-2 head attends to the token after the previous occurrence",
          "[gpt][learning][induction]") {
  constexpr std::size_t V = 64, T = 64, B = 32, Lmin = 2, Lmax = 32;
  m::GPTConfig c;
  c.vocab_size = V, c.context = T, c.d_model = 64, c.heads = 1, c.layers = 2, c.mlp = false;
  c.position = m::Position::rope, c.seed = 3;
  std::unique_ptr<m::GPT> g;
  REQUIRE(m::GPT::create(c, g).ok());
  // Training batches and evaluation batches from separate streams: the training data do not depend on how often
  // the criteria are checked, so they are checked often and training stops soon after they first hold.
  m::Rng train_rng(42), eval_rng(43);
  std::vector<std::int32_t> tokens(B * T), targets(B * T);
  std::vector<std::size_t> lengths(B);
  auto make_batch = [&](m::Rng& rng) {
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t L = Lmin + std::size_t(rng.next() % (Lmax - Lmin + 1));
      lengths[b] = L;
      for (std::size_t t = 0; t < T; ++t) tokens[b * T + t] = std::int32_t(rng.next() % V);
      for (std::size_t t = 0; t < L; ++t) tokens[b * T + L + t] = tokens[b * T + t];
      for (std::size_t t = 0; t < T; ++t) targets[b * T + t] = t + 1 < 2 * L ? tokens[b * T + t + 1] : -1;
    }
  };
  m::TrainOptions o;
  o.lr = 1e-3f, o.weight_decay = 0;
  double first = 0, repeat = 0, head = 0;
  std::size_t best_head = 0, steps = 0;
  bool learned = false;
  std::vector<float> logits(B * T * V), attention(c.layers * B * c.heads * T * T);
  constexpr std::size_t kCheckEvery = 10;  // an evaluation costs about a third of a training step
  for (; steps < 1500 && !learned; ++steps) {
    make_batch(train_rng);
    float loss;
    REQUIRE(g->train_step(tokens, targets, T, o, loss).ok());
    if ((steps + 1) % kCheckEvery != 0) continue;
    // On a fresh batch: the loss of first occurrences (inside the first copy, unpredictable) and of repeats, and
    // each layer-2 head's mean weight on the token after the previous occurrence (query t ≥ L sees block[t − L],
    // whose previous occurrence is t − L; the token after it, block[t − L + 1], sits at t − L + 1).
    make_batch(eval_rng);
    REQUIRE(g->forward(tokens, T, logits, attention).ok());
    double sum_first = 0, sum_repeat = 0;
    std::size_t n_first = 0, n_repeat = 0;
    std::vector<double> weight(c.heads, 0.0);
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t L = lengths[b];
      for (std::size_t t = 0; t + 1 < 2 * L; ++t) {
        const float* row = logits.data() + (b * T + t) * V;
        double mx = -INFINITY, z = 0;
        for (std::size_t v = 0; v < V; ++v) mx = std::fmax(mx, row[v]);
        for (std::size_t v = 0; v < V; ++v) z += std::exp(row[v] - mx);
        const double l = mx + std::log(z) - row[targets[b * T + t]];
        if (t + 1 < L) sum_first += l, ++n_first;
        if (t >= L) {
          sum_repeat += l, ++n_repeat;
          for (std::size_t h = 0; h < c.heads; ++h)
            weight[h] += attention[(((1 * B + b) * c.heads + h) * T + t) * T + (t - L + 1)];
        }
      }
    }
    first = sum_first / double(n_first), repeat = sum_repeat / double(n_repeat);
    best_head = std::size_t(std::max_element(weight.begin(), weight.end()) - weight.begin());
    head = weight[best_head] / double(n_repeat);
    learned = repeat < 0.2 * first && head > 0.5;
  }
  INFO("after " << steps << " steps: loss on first occurrences " << first << ", on repeats " << repeat
                << "; layer-2 head " << best_head << " puts " << head << " of its weight on the token after the previous occurrence");
  CHECK(first > 0.8 * std::log(double(V)));  // the first copy stays unpredictable (ln 64 = 4.16)
  CHECK(repeat < 0.2 * first);
  CHECK(head > 0.5);
}
