// A model cut across shards (src/core/lm/shard.h), in one thread: every family's checkpoint loaded into 2 and 3
// shards, each shard's loader sent only its routes of every file (as the package's router sends them to the
// workers), the shards' steps run phase by phase in lockstep with their partial sums copied between them as the
// workers' exchange does. Logits and attention weights within the float64 reference's bounds — the bounds hold for
// any summation order (tests/lm/checkpoints.py), and cutting a model only reorders its sums — greedy tokens equal to
// the reference's 32, sampled tokens equal to the whole model's, every weight held by exactly one shard, and the
// loader's and the steps' errors as a whole model gives them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lm/loader.h"
#include "lm/model.h"
#include "lm_testing.h"

namespace lm = attnlab::lm;
using attnlab::ErrorKind;
using attnlab::Status;
using namespace lm_testing;

namespace {

using Shards = std::vector<std::unique_ptr<lm::LmModel>>;

const char* const kCases[] = {"gpt2-f32", "gpt2-f16", "llama-tied-bf16", "llama-untied-sharded", "qwen2-f16", "mistral-window"};

std::uint64_t header_end(const Bytes& b) {
  if (b.size() < 8) return b.size();
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[std::size_t(i)];
  return std::min<std::uint64_t>(b.size(), 8 + n);
}

Status feed(lm::Loader& l, const std::uint8_t* p, std::size_t n, std::size_t chunk) {
  for (std::size_t at = 0; at < n; at += chunk)
    if (auto s = l.feed(p + at, std::min(chunk, n - at)); !s.ok()) return s;
  return Status::success();
}

// One file to every shard's loader: its first 8 + header-length bytes to all, then each shard's routes of it laid
// end to end, in pieces of `chunk` bytes; `sent[r]` counts the bytes shard r got. `cut` ends the file early.
Status send_file(std::vector<std::unique_ptr<lm::Loader>>& loaders, const std::string& name, Bytes b, std::size_t chunk,
                 std::vector<std::size_t>* sent = nullptr, std::size_t cut = SIZE_MAX) {
  if (cut < b.size()) b.resize(cut);
  const std::size_t head = std::size_t(header_end(b));
  for (std::size_t r = 0; r < loaders.size(); ++r) {
    lm::Loader& l = *loaders[r];
    if (auto s = l.begin_file(name); !s.ok()) return s;
    if (auto s = feed(l, b.data(), head, chunk); !s.ok()) return s;
    Bytes mine;
    if (loaders.size() == 1) {  // a whole model: the rest of the file
      mine.assign(b.begin() + std::ptrdiff_t(head), b.end());
    } else if (l.header_done()) {
      const auto& routes = l.routes();
      for (std::size_t k = 0; k < routes.size(); k += 2) {
        const std::size_t from = std::min<std::size_t>(routes[k], b.size()), to = std::min<std::size_t>(routes[k + 1], b.size());
        mine.insert(mine.end(), b.begin() + std::ptrdiff_t(from), b.begin() + std::ptrdiff_t(to));
      }
    }
    if (sent) (*sent)[r] += head + mine.size();
    if (auto s = feed(l, mine.data(), mine.size(), chunk); !s.ok()) return s;
    if (auto s = l.end_file(b.size()); !s.ok()) return s;
  }
  return Status::success();
}

Status load(const std::string& name, std::size_t P, std::size_t chunk, Shards& out, std::vector<std::size_t>* sent = nullptr) {
  const std::string dir = kRoot + "/" + name + "/";
  const std::string generation = exists(dir + "generation_config.json") ? text(dir + "generation_config.json") : "";
  std::vector<std::unique_ptr<lm::Loader>> loaders(P);
  for (std::size_t r = 0; r < P; ++r) {
    if (auto s = lm::Loader::create(text(dir + "config.json"), generation, loaders[r], lm::kDefaultMemoryLimit, r, P); !s.ok()) return s;
    if (exists(dir + "model.safetensors.index.json"))
      if (auto s = loaders[r]->set_index(text(dir + "model.safetensors.index.json")); !s.ok()) return s;
  }
  if (sent) sent->assign(P, 0);
  for (const std::string& f : loaders[0]->files())
    if (auto s = send_file(loaders, f, read(dir + f), chunk, sent); !s.ok()) return s;
  out.clear();
  out.resize(P);
  for (std::size_t r = 0; r < P; ++r)
    if (auto s = loaders[r]->finish(out[r]); !s.ok()) return s;
  return Status::success();
}

Shards loaded(const std::string& name, std::size_t P, std::size_t chunk = 1 << 16) {
  Shards s;
  const Status st = load(name, P, chunk, s);
  INFO(name << " in " << P << " shards: " << st.message);
  REQUIRE(st.ok());
  return s;
}

// Every shard's partial sums into every other's parts(), then the next phase; all phases of a started step.
Status run_phases(Shards& s) {
  const std::size_t last = s[0]->last_phase(), d = s[0]->config().d_model;
  for (std::size_t p = 0; p <= last; ++p) {
    for (auto& m : s)
      if (auto st = m->phase(p); !st.ok()) return st;
    if (p == last) break;
    const std::size_t count = s[0]->rows() * d;
    for (std::size_t r = 0; r < s.size(); ++r)
      for (std::size_t q = 0; q < s.size(); ++q)
        if (q != r) std::memcpy(s[q]->parts() + r * count, s[r]->parts() + r * count, count * sizeof(float));
  }
  return Status::success();
}

// forward over ids: the whole logits [n × vocab] and attention weights [layers × heads × n × n], put together from
// the shards' slices.
void forward(Shards& s, const std::vector<std::int32_t>& ids, std::vector<float>& logits, std::vector<float>* maps) {
  const lm::LmConfig& c = s[0]->config();
  const std::size_t n = ids.size(), V = c.vocab, H = c.heads;
  std::vector<std::vector<float>> part_logits(s.size()), part_maps(s.size());
  for (std::size_t r = 0; r < s.size(); ++r) {
    const lm::ShardPlan& sp = s[r]->shard();
    part_logits[r].resize(n * sp.vocab.size());
    if (maps) part_maps[r].resize(c.layers * sp.heads.size() * n * n);
    const Status st = s[r]->step_forward(ids, part_logits[r], part_maps[r]);
    INFO(st.message);
    REQUIRE(st.ok());
  }
  const Status st = run_phases(s);
  INFO(st.message);
  REQUIRE(st.ok());
  logits.assign(n * V, NAN);
  if (maps) maps->assign(c.layers * H * n * n, NAN);
  for (std::size_t r = 0; r < s.size(); ++r) {
    const lm::ShardPlan& sp = s[r]->shard();
    for (std::size_t i = 0; i < n; ++i)
      std::copy_n(&part_logits[r][i * sp.vocab.size()], sp.vocab.size(), &logits[i * V + sp.vocab.begin]);
    if (maps)
      for (std::size_t l = 0; l < c.layers; ++l)
        for (std::size_t h = sp.heads.begin; h < sp.heads.end; ++h)
          std::copy_n(&part_maps[r][(l * sp.heads.size() + h - sp.heads.begin) * n * n], n * n, &(*maps)[(l * H + h) * n * n]);
  }
}

// The token every shard agrees on: greedy from each shard's best, or sampled from the logits gathered.
std::int32_t choose(Shards& s) {
  const std::size_t V = s[0]->config().vocab;
  if (s[0]->sampling().temperature == 0.0f) {
    float best = -INFINITY;
    std::int32_t token = -1;
    for (auto& m : s) {
      float v;
      std::int32_t i;
      m->best(v, i);
      if (i >= 0 && (token < 0 || v > best)) best = v, token = i;  // ties: the lower rank's, the lower id
    }
    return token;
  }
  for (auto& to : s) {
    float* all = to->vocab_logits();
    REQUIRE(all);
    for (auto& from : s) std::copy_n(from->step_logits(), from->shard().vocab.size(), all + from->shard().vocab.begin);
  }
  const std::int32_t token = s[0]->sample();
  for (std::size_t r = 1; r < s.size(); ++r) CHECK(s[r]->sample() == token);
  (void)V;
  return token;
}

std::vector<std::int32_t> generate(Shards& s, const std::vector<std::int32_t>& prompt, std::size_t max_tokens, const lm::Sampling& o) {
  std::vector<std::int32_t> tokens;
  for (auto& m : s) REQUIRE(m->step_begin(prompt, max_tokens, o, {}).ok());
  for (;;) {
    const Status st = run_phases(s);
    INFO(st.message);
    REQUIRE(st.ok());
    const std::int32_t token = choose(s);
    tokens.push_back(token);
    bool done = false;
    for (auto& m : s) REQUIRE(m->accept(token, done).ok());
    if (done) return tokens;
    for (auto& m : s) REQUIRE(m->step_next().ok());
  }
}

void check_case(const std::string& name, std::size_t P, std::size_t chunk) {
  const Reference r = reference(name);
  Shards s = loaded(name, P, chunk);
  const std::size_t V = r.vocab;
  double worst = 0;
  for (std::size_t n : {r.ids.size(), std::size_t(1), std::size_t(3), std::size_t(4), std::size_t(5), std::size_t(9)}) {
    if (n > r.ids.size()) continue;
    std::vector<float> logits;
    forward(s, {r.ids.begin(), r.ids.begin() + std::ptrdiff_t(n)}, logits, nullptr);
    for (std::size_t k = 0; k < r.logit_rows.size(); ++k) {
      const std::size_t row = std::size_t(r.logit_rows[k]);
      if (row >= n) continue;
      for (std::size_t j = 0; j < V; ++j) {
        const double got = logits[row * V + j], want = r.logits[k * V + j], bound = r.logits_bound[k * V + j];
        INFO(name << " in " << P << " shards, n = " << n << ", row " << row << ", token " << j << ": " << got << ", reference " << want << " ± " << bound);
        REQUIRE(std::fabs(got - want) <= bound);
        worst = std::max(worst, std::fabs(got - want) / bound);
      }
    }
  }
  const std::size_t n = r.attention_tokens;
  std::vector<float> logits, maps;
  forward(s, {r.ids.begin(), r.ids.begin() + std::ptrdiff_t(n)}, logits, &maps);
  double aworst = 0;
  for (std::size_t i = 0; i < maps.size(); ++i) {
    INFO(name << " in " << P << " shards: attention[" << i / (r.heads * n * n) << "][" << i / (n * n) % r.heads << "]");
    REQUIRE(std::fabs(maps[i] - r.attention[i]) <= r.attention_bound[i]);
    aworst = std::max(aworst, std::fabs(maps[i] - r.attention[i]) / r.attention_bound[i]);
  }
  std::printf("%s in %zu shards (chunks of %zu bytes): logits within %.3f, attention within %.3f of their bounds at worst\n",
              name.c_str(), P, chunk, worst, aworst);
  CHECK(generate(s, r.prompt, r.greedy.size(), lm::Sampling{}) == r.greedy);
}

}  // namespace

TEST_CASE("lm shards: every family in 2 and 3 shards within the reference's bounds, greedy tokens equal", "[lm][shard]") {
  for (const char* name : kCases)
    for (std::size_t P : {2, 3}) check_case(name, P, 1 << 16);
  // Routes fed a byte at a time and in 7-byte pieces: values split across calls at every offset.
  check_case("gpt2-f16", 3, 1);
  check_case("llama-untied-sharded", 2, 7);
}

TEST_CASE("lm shards: sampled tokens equal to the whole model's (same seed)", "[lm][shard]") {
  for (const char* name : {"llama-untied-sharded", "gpt2-f32", "qwen2-f16"}) {
    const Reference r = reference(name);
    Shards whole = loaded(name, 1);
    lm::Sampling o;
    o.temperature = 0.8f, o.top_k = 12, o.top_p = 0.9f, o.seed = 11;
    REQUIRE(whole[0]->begin(r.prompt, 24, o, {}).ok());
    std::vector<std::int32_t> want;
    for (bool done = false; !done;) {
      std::int32_t t;
      REQUIRE(whole[0]->next(t, done).ok());
      want.push_back(t);
    }
    for (std::size_t P : {2, 3}) {
      Shards s = loaded(name, P);
      INFO(name << " in " << P << " shards");
      CHECK(generate(s, r.prompt, 24, o) == want);
    }
  }
}

TEST_CASE("lm shards: every weight in exactly one shard, each shard sent only its bytes", "[lm][shard]") {
  for (const char* name : kCases) {
    Shards whole = loaded(name, 1);
    const lm::LmConfig& c = whole[0]->config();
    std::vector<std::size_t> sent;
    Shards s;
    REQUIRE(load(name, 3, 1 << 16, s, &sent).ok());
    // Matrix elements (rows × columns, padding apart): the shards' add up to the whole model's.
    auto elements = [&](const lm::LmModel& m) {
      const lm::ModelWeights& W = m.weights();
      std::size_t n = W.embed.rows * W.embed.cols + (c.tied ? 0 : W.head.rows * W.head.cols);
      for (const lm::LayerWeights& L : W.layers)
        for (const lm::Matrix* x : {&L.qkv, &L.q, &L.k, &L.v, &L.o, &L.fc, &L.proj, &L.gate, &L.up, &L.down}) n += x->rows * x->cols;
      return n;
    };
    std::size_t sum = 0;
    for (auto& m : s) sum += elements(*m);
    INFO(name);
    CHECK(sum == elements(*whole[0]));
    // Bytes sent: each shard its share of the files' data (and the headers, and the vectors every shard keeps), not
    // the whole files.
    std::size_t files = 0;
    const std::string dir = kRoot + "/" + name + "/";
    for (const std::string& f : {std::string("model.safetensors")})
      if (exists(dir + f)) files += read(dir + f).size();
    if (files)
      for (std::size_t r = 0; r < 3; ++r) CHECK(sent[r] < files);
    (void)c;
  }
}

TEST_CASE("lm shards: errors as a whole model's, and steps in order", "[lm][shard]") {
  const std::string dir = kRoot + "/gpt2-f16/";
  const Bytes file = read(dir + "model.safetensors");
  auto make = [&](std::size_t P) {
    std::vector<std::unique_ptr<lm::Loader>> loaders(P);
    for (std::size_t r = 0; r < P; ++r) REQUIRE(lm::Loader::create(text(dir + "config.json"), "", loaders[r], lm::kDefaultMemoryLimit, r, P).ok());
    return loaders;
  };
  // A truncated file, a longer one, one cut inside its header: the same message from a shard as from a whole model.
  const std::size_t head = std::size_t(header_end(file));
  for (std::size_t cut : {file.size() - 3, head + 10, head - 5, std::size_t(5)}) {
    auto whole = make(1);
    auto shards = make(3);
    const Status w = send_file(whole, "model.safetensors", file, 4096, nullptr, cut);
    const Status s = send_file(shards, "model.safetensors", file, 4096, nullptr, cut);
    INFO("cut at " << cut << ": " << w.message << " / " << s.message);
    CHECK(!w.ok());
    CHECK(s.message == w.message);
    CHECK(s.arg == w.arg);
    for (auto& l : shards) CHECK(l->bytes() == 0);  // nothing half-loaded stays
  }
  {
    Bytes longer = file;
    longer.push_back(0);
    auto whole = make(1);
    auto shards = make(2);
    const Status w = send_file(whole, "model.safetensors", longer, 4096);
    const Status s = send_file(shards, "model.safetensors", longer, 4096);
    CHECK(s.message == w.message);
    CHECK(s.message.find("is longer than its header describes") != std::string::npos);
  }
  {
    // A header of length 0 is complete with its length: a shard, sent those 8 bytes alone until it answers with its
    // routes, refuses it then, as a whole model does.
    const std::uint8_t zero[8] = {};
    auto whole = make(1);
    auto shards = make(2);
    REQUIRE(whole[0]->begin_file("model.safetensors").ok());
    const Status w = whole[0]->feed(zero, 8);
    CHECK(w.message.find("model.safetensors: not a usable safetensors file") == 0);
    for (auto& l : shards) {
      REQUIRE(l->begin_file("model.safetensors").ok());
      const Status s = l->feed(zero, 8);
      CHECK(s.message == w.message);
      CHECK(s.arg == w.arg);
    }
  }
  std::unique_ptr<lm::Loader> none;
  CHECK(lm::Loader::create(text(dir + "config.json"), "", none, lm::kDefaultMemoryLimit, 2, 2).arg == "rank");

  Shards s = loaded("gpt2-f16", 2);
  std::vector<std::int32_t> ids = {3, 4, 5};
  std::vector<float> logits(3 * s[0]->shard().vocab.size());
  CHECK(s[0]->forward(ids, logits, {}).message.find("one shard of a model cut across workers") != std::string::npos);
  REQUIRE(s[0]->step_forward(ids, logits, {}).ok());
  CHECK(s[0]->phase(1).arg == "phase");          // out of order
  CHECK(s[0]->phase(0).ok());
  bool done;
  CHECK(s[0]->accept(3, done).arg == "token");   // not a generation step
  CHECK(s[0]->step_next().arg == "generate");    // no generation
  // The same validation as a whole model's, with its messages.
  const Status e = s[1]->step_forward(std::vector<std::int32_t>{3, 50}, logits, {});
  CHECK(e.message.find("ids[1] = 50 is not a token id") != std::string::npos);
  // qkv: this shard's heads and K/V heads, every layer; another length is refused by name.
  std::vector<float> logits1(3 * s[1]->shard().vocab.size()), qkv(s[1]->config().layers * s[1]->qkv_floats(3) + 1);
  const Status q = s[1]->step_forward(ids, logits1, {}, qkv);
  CHECK(q.arg == "qkv");
  CHECK(q.message.find("layers·n·(heads + 2·kvHeads)·headDim") != std::string::npos);
  qkv.pop_back();
  CHECK(s[1]->step_forward(ids, logits1, {}, qkv).ok());
  CHECK(s[1]->step_begin(std::vector<std::int32_t>{3}, 0, lm::Sampling{}, {}).message == "maxTokens must be at least 1, got 0");
}
