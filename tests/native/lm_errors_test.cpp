// Bad checkpoints and bad calls: every one a clear error naming the file and the field (or the argument), and
// nothing left behind — after an error the loader holds no weights, and a model keeps working.
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "lm/loader.h"
#include "lm/model.h"
#include "testing.h"

namespace lm = attnlab::lm;
using attnlab::ErrorKind;
using attnlab::Status;
using Bytes = std::vector<std::uint8_t>;

namespace {

const std::string kRoot = ATTNLAB_LM_CHECKPOINTS;

std::string text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), {});
}
Bytes bytes(const std::string& path) {
  const std::string s = text(path);
  return Bytes(s.begin(), s.end());
}

// A folder in memory: file name → contents.
struct Folder {
  std::string config, generation, index;
  std::vector<std::pair<std::string, Bytes>> files;
};

Folder folder(const std::string& name) {
  const std::string dir = kRoot + "/" + name + "/";
  Folder f;
  f.config = text(dir + "config.json");
  if (std::ifstream(dir + "generation_config.json").good()) f.generation = text(dir + "generation_config.json");
  if (std::ifstream(dir + "model.safetensors.index.json").good()) f.index = text(dir + "model.safetensors.index.json");
  for (const char* shard : {"model.safetensors", "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                            "model-00003-of-00003.safetensors", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
    if (std::ifstream(dir + shard).good()) f.files.emplace_back(shard, bytes(dir + shard));
  return f;
}

// Loads a folder; on error, also checks that the loader then holds nothing.
Status load(const Folder& f, std::unique_ptr<lm::LmModel>* out = nullptr, std::size_t limit = lm::kDefaultMemoryLimit) {
  std::unique_ptr<lm::Loader> l;
  if (auto s = lm::Loader::create(f.config, f.generation, l, limit); !s.ok()) return s;
  auto failed = [&](Status s) {
    CHECK(l->bytes() == 0);  // freed at the error, before the loader itself goes
    return s;
  };
  if (!f.index.empty())
    if (auto s = l->set_index(f.index); !s.ok()) return failed(s);
  for (const auto& [name, b] : f.files) {
    if (auto s = l->begin_file(name); !s.ok()) return failed(s);
    for (std::size_t at = 0; at < b.size(); at += 4096)
      if (auto s = l->feed(b.data() + at, std::min<std::size_t>(4096, b.size() - at)); !s.ok()) return failed(s);
    if (auto s = l->end_file(); !s.ok()) return failed(s);
  }
  std::unique_ptr<lm::LmModel> m;
  if (auto s = l->finish(m); !s.ok()) return failed(s);
  if (out) *out = std::move(m);
  return Status::success();
}

void expect(const Status& s, const std::string& arg, const std::string& words, ErrorKind kind = ErrorKind::range) {
  INFO("message: " << s.message);
  CHECK(s.kind == kind);
  CHECK(s.arg == arg);
  CHECK(s.message.find(words) != std::string::npos);
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// A safetensors file from a header's JSON and its data.
Bytes file(std::string header, const Bytes& data) {
  header.resize((header.size() + 7) / 8 * 8, ' ');
  Bytes b(8 + header.size());
  for (int i = 0; i < 8; ++i) b[std::size_t(i)] = std::uint8_t(std::uint64_t(header.size()) >> (8 * i));
  std::memcpy(b.data() + 8, header.data(), header.size());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
std::string header_of(const Bytes& b) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[std::size_t(i)];
  return std::string(b.begin() + 8, b.begin() + 8 + std::ptrdiff_t(n));
}
Bytes data_of(const Bytes& b) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[std::size_t(i)];
  return Bytes(b.begin() + 8 + std::ptrdiff_t(n), b.end());
}

}  // namespace

TEST_CASE("lm errors: config.json", "[lm][errors]") {
  const Folder good = folder("gpt2-f16");
  REQUIRE(load(good).ok());
  auto with = [&](const std::string& config) {
    Folder f = good;
    f.config = config;
    return load(f);
  };
  expect(with("{\"architectures\": [\"GPT2LMHeadModel\"], "), "config.json", "config.json is not valid JSON");
  expect(with("[1, 2]"), "config.json", "must hold a JSON object");
  expect(with(replace(good.config, "\"GPT2LMHeadModel\"", "\"BertModel\"")), "config.json", "architectures[0] = \"BertModel\" is not supported");
  expect(with(replace(good.config, "\"model_type\": \"gpt2\"", "\"model_type\": \"llama\"")), "config.json",
         "model_type = \"llama\" does not match architectures[0] = \"GPT2LMHeadModel\"");
  expect(with(replace(good.config, "\"n_head\": 2", "\"n_head\": 3")), "config.json", "n_embd = 16 must be a multiple of n_head = 3");
  expect(with(replace(good.config, "\"n_head\": 2", "\"n_head\": 0")), "config.json", "n_head = 0 must be an integer from 1");
  expect(with(replace(good.config, "\"n_head\": 2", "\"n_head\": 2.5")), "config.json", "n_head = 2.5 must be an integer");
  expect(with(replace(good.config, "\"n_layer\": 3,", "")), "config.json", "n_layer is missing (a GPT2LMHeadModel needs it)");
  expect(with(replace(good.config, "\"gelu_new\"", "\"relu\"")), "config.json", "activation_function = \"relu\" is not supported");
  // Other functions than the two GELUs, though named like them: refused, with the names that are supported.
  const std::string supported = "(gelu or gelu_python: the exact GELU; gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_python_tanh or "
                                "gelu_accurate: its tanh form)";
  expect(with(replace(good.config, "\"gelu_new\"", "\"quick_gelu\"")), "config.json",
         "activation_function = \"quick_gelu\" is not supported " + supported);
  expect(with(replace(good.config, "\"gelu_new\"", "\"gelu_10\"")), "config.json", "activation_function = \"gelu_10\" is not supported");
  // transformers' names of the exact GELU and of its tanh form, each loaded as its function.
  for (const auto& [name, act] : {std::pair{"gelu", lm::Activation::gelu_erf}, std::pair{"gelu_python", lm::Activation::gelu_erf},
                                  std::pair{"gelu_pytorch_tanh", lm::Activation::gelu_tanh}, std::pair{"gelu_fast", lm::Activation::gelu_tanh},
                                  std::pair{"gelu_python_tanh", lm::Activation::gelu_tanh},
                                  std::pair{"gelu_accurate", lm::Activation::gelu_tanh}}) {
    std::unique_ptr<lm::LmModel> m;
    Folder f = good;
    f.config = replace(good.config, "\"gelu_new\"", std::string("\"") + name + "\"");
    INFO(name);
    REQUIRE(load(f, &m).ok());
    CHECK(m->config().activation == act);
  }
  expect(with(replace(good.config, "\"eos_token_id\": 1", "\"eos_token_id\": 50")), "config.json",
         "eos_token_id = 50 must be a token id from 0 to vocab_size - 1 = 49");
  // A model the memory cannot hold is refused from config.json alone, before anything is allocated.
  expect(with(replace(good.config, "\"vocab_size\": 50", "\"vocab_size\": 80000000")), "config.json",
         "more than the 2048 MiB of memory the engine can use");
  // GPT-2's positions are float32 vectors: 10⁸ × 16 of them, 6.4 GB, counted as such.
  expect(with(replace(good.config, "\"n_positions\": 48", "\"n_positions\": 100000000")), "config.json",
         "needs at least 6104 MiB for its weights (1600 million of them, the matrices at 16 bits)");

  const Folder llama = folder("llama-tied-bf16");
  auto llama_with = [&](const std::string& config) {
    Folder f = llama;
    f.config = config;
    return load(f);
  };
  REQUIRE(load(llama).ok());
  expect(llama_with(replace(llama.config, "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}")),
         "config.json", "rope_scaling = { rope_type: \"llama3\", … } is not supported");
  expect(llama_with(replace(llama.config, "\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}")),
         "config.json", "rope_scaling = { type: \"linear\", … } is not supported");
  expect(llama_with(replace(llama.config, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3")), "config.json",
         "num_key_value_heads = 3 must divide num_attention_heads = 4");
  expect(llama_with(replace(llama.config, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"")), "config.json",
         "hidden_act = \"gelu\" is not supported (the MLP is SwiGLU: \"silu\" or \"swish\")");
  {  // "swish": transformers' other name for SiLU
    std::unique_ptr<lm::LmModel> m;
    Folder f = llama;
    f.config = replace(llama.config, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"swish\"");
    REQUIRE(load(f, &m).ok());
    CHECK(m->config().activation == lm::Activation::silu);
  }
  expect(llama_with(replace(llama.config, "\"max_position_embeddings\": 64", "\"max_position_embeddings\": null")), "config.json",
         "max_position_embeddings is missing");

  Folder g = llama;
  g.generation = "{\"eos_token_id\": [1, 41]}";
  expect(load(g), "generation_config.json", "eos_token_id[1] = 41 must be a token id from 0 to vocab_size - 1 = 40");
  g.generation = "{\"top_p\": 1.5}";
  expect(load(g), "generation_config.json", "top_p = 1.5 must be a number in (0, 1]");
  g.generation = "{\"do_sample\": true";
  expect(load(g), "generation_config.json", "generation_config.json is not valid JSON");
}

TEST_CASE("lm errors: safetensors files", "[lm][errors]") {
  const Folder good = folder("gpt2-f16");
  const Bytes& st = good.files[0].second;
  auto with = [&](const Bytes& b) {
    Folder f = good;
    f.files[0].second = b;
    return load(f);
  };
  // Truncated anywhere: in the length, the header, the data.
  for (std::size_t cut : {std::size_t(5), std::size_t(40), st.size() - 1, st.size() / 2}) {
    INFO("cut at " << cut);
    expect(with(Bytes(st.begin(), st.begin() + std::ptrdiff_t(cut))), "model.safetensors", "model.safetensors is truncated");
  }
  Bytes longer = st;
  longer.push_back(0);
  expect(with(longer), "model.safetensors", "longer than its header describes");
  // A malformed header.
  expect(with(file("{\"a\": 1", {})), "model.safetensors", "not a usable safetensors file: the JSON header is malformed");
  Bytes huge = st;
  huge[7] = 1;  // a header length of 2⁵⁶ + …
  expect(with(huge), "model.safetensors", "the header length");
  const std::string h = header_of(st);
  const Bytes data = data_of(st);
  // A shape that disagrees with config.json.
  const std::string key = "\"h.0.mlp.c_fc.weight\":{\"dtype\":\"F16\",\"shape\":[16,44]";
  expect(with(file(replace(h, key, "\"h.0.mlp.c_fc.weight\":{\"dtype\":\"F16\",\"shape\":[44,16]"), data)), "model.safetensors",
         "h.0.mlp.c_fc.weight has shape [44, 16], but config.json's sizes need [16, 44]");
  // A quantized or 8-bit dtype, named with its tensor.
  expect(with(file(replace(h, key, "\"h.0.mlp.c_fc.weight\":{\"dtype\":\"I8\",\"shape\":[16,88]"), data)),
         "model.safetensors", "\"h.0.mlp.c_fc.weight\" has dtype \"I8\"; F32, F16 and BF16 weights are supported");
  // A tensor the architecture does not have, one missing, one given twice (a tensor renamed).
  expect(with(file(replace(h, "\"h.0.mlp.c_fc.weight\"", "\"h.0.mlp.c_fc2.weight\""), data)), "model.safetensors",
         "\"h.0.mlp.c_fc2.weight\" is not a tensor of a GPT2LMHeadModel");
  expect(with(file(replace(h, "\"h.0.mlp.c_fc.weight\"", "\"transformer.h.1.mlp.c_fc.weight\""), data)), "model.safetensors",
         "h.1.mlp.c_fc.weight is given twice");
  expect(with(file(replace(h, "\"h.0.mlp.c_fc.weight\"", "\"h.0.attn.bias\""), data)), "model.safetensors",
         "model.safetensors lacks h.0.mlp.c_fc.weight, which a GPT2LMHeadModel with this config.json has");
  // A weight that is not finite (F16 infinity), named with its element.
  Bytes inf = st;
  const std::size_t at = 8 + h.size() + 2 * 5;  // the 6th value of the first tensor in the data
  inf[at] = 0x00, inf[at + 1] = 0x7c;
  const Status s = with(inf);
  expect(s, "model.safetensors", "is not finite");
  // Files out of turn.
  Folder f = good;
  f.files[0].first = "other.safetensors";
  expect(load(f), "other.safetensors", "other.safetensors is not one of the checkpoint's files (model.safetensors)");
  // The weights past the memory given, at the header (before any data is placed): F32 weights take 51 KiB here,
  // while config.json alone promises 27 KiB at 16 bits.
  expect(load(folder("gpt2-f32"), nullptr, 40000), "model.safetensors", "MiB in memory with this file's, more than the 0.03815 MiB");
}

TEST_CASE("lm errors: sharded checkpoints", "[lm][errors]") {
  const Folder good = folder("llama-untied-sharded");
  REQUIRE(good.files.size() == 3);
  REQUIRE(load(good).ok());
  Folder f = good;
  f.files.pop_back();
  expect(load(f), "model-00003-of-00003.safetensors", "model-00003-of-00003.safetensors was not received");
  f = good;
  std::swap(f.files[0].first, f.files[1].first);  // the right bytes under the wrong names
  const Status s = load(f);
  CHECK(s.kind == ErrorKind::range);
  CHECK(s.message.find("which model.safetensors.index.json assigns to") != std::string::npos);
  f = good;
  f.index = replace(good.index, "\"model.norm.weight\"", "\"model.norm.weights\"");
  expect(load(f), "model.safetensors.index.json", "weight_map lists \"model.norm.weights\", which a LlamaForCausalLM (config.json) does not have");
  f.index = replace(good.index, "\"model-00001-of-00003.safetensors\"", "\"../model.safetensors\"");
  expect(load(f), "model.safetensors.index.json", "must be a file name ending in .safetensors (no path)");
  f.index = "{\"weight_map\": []}";
  expect(load(f), "model.safetensors.index.json", "weight_map must be an object");
}

TEST_CASE("lm errors: calls on a loaded model, which keeps working", "[lm][errors]") {
  std::unique_ptr<lm::LmModel> m;
  REQUIRE(load(folder("gpt2-f16"), &m).ok());  // vocab 50, context 48
  std::vector<float> logits(50 * 3);
  const std::vector<std::int32_t> ids = {3, 4, 5};
  REQUIRE(m->forward(ids, logits, {}).ok());
  const std::vector<float> before = logits;
  expect(m->forward(std::vector<std::int32_t>{3, 50, 5}, logits, {}), "ids",
         "ids[1] = 50 is not a token id: the vocabulary has ids 0 to 49 (config.json vocab_size = 50)");
  expect(m->forward(std::vector<std::int32_t>{-1}, logits, {}), "ids", "ids[0] = -1 is not a token id");
  expect(m->forward({}, logits, {}), "ids", "ids must hold at least one token id");
  std::vector<std::int32_t> long_ids(49, 3);
  std::vector<float> long_logits(49 * 50);
  expect(m->forward(long_ids, long_logits, {}), "ids", "more than the model's context of 48 positions (config.json n_positions)");
  std::vector<float> wrong(7);
  expect(m->forward(ids, {}, wrong), "logits", "logits");
  lm::Sampling greedy;
  expect(m->begin({}, 4, greedy, {}), "prompt", "prompt must hold at least one token id");
  expect(m->begin(ids, 46, greedy, {}), "maxTokens", "the prompt's 3 tokens and maxTokens = 46 make 49 positions, past the model's context of 48");
  expect(m->begin(std::vector<std::int32_t>{3}, 48, greedy, {}), "maxTokens", "the prompt's 1 token and maxTokens = 48 make 49 positions");
  expect(m->begin(ids, 0, greedy, {}), "maxTokens", "maxTokens must be at least 1");
  lm::Sampling bad = greedy;
  bad.temperature = -1;
  expect(m->begin(ids, 4, bad, {}), "temperature", "temperature must be finite and >= 0");
  bad = greedy, bad.top_p = 0;
  expect(m->begin(ids, 4, bad, {}), "topP", "topP must be in (0, 1]");
  expect(m->begin(ids, 4, greedy, std::vector<std::int32_t>{7, 99}), "stop", "stop[1] = 99 is not a token id");
  std::int32_t token;
  bool done;
  expect(m->next(token, done), "generate", "no generation in progress");
  expect(m->check_vocabulary(50, "tokenizer.json"), "tokenizer.json", "tokenizer.json has token id 50, but the embeddings have 50 rows");
  CHECK(m->check_vocabulary(49, "tokenizer.json").ok());
  // Still the same model: the same logits, and generation works.
  REQUIRE(m->forward(ids, logits, {}).ok());
  CHECK(logits == before);
  REQUIRE(m->begin(ids, 45, greedy, {}).ok());
  for (int i = 0; i < 45; ++i) REQUIRE(m->next(token, done).ok());
  CHECK(done);
  expect(m->next(token, done), "generate", "no generation in progress");
}

TEST_CASE("lm: sampling is deterministic for a seed, greedy at temperature 0, and stops at a stop id", "[lm]") {
  std::unique_ptr<lm::LmModel> m;
  REQUIRE(load(folder("llama-tied-bf16"), &m).ok());
  const std::vector<std::int32_t> prompt = {5, 6, 7};
  auto generate = [&](lm::Sampling s, std::size_t n, std::vector<std::int32_t> stop = {}) {
    std::vector<std::int32_t> out;
    REQUIRE(m->begin(prompt, n, s, stop).ok());
    bool done = false;
    while (!done) {
      std::int32_t t;
      REQUIRE(m->next(t, done).ok());
      out.push_back(t);
    }
    return out;
  };
  lm::Sampling s;
  s.temperature = 30.0f, s.top_k = 0, s.top_p = 1.0f, s.seed = 42;  // hot: this model is sure of itself
  const auto a = generate(s, 40), b = generate(s, 40);
  CHECK(a == b);
  s.seed = 43;
  CHECK(generate(s, 40) != a);
  // top_k = 1 and a tiny top_p are greedy whatever the temperature.
  lm::Sampling g;
  const auto want = generate(g, 20);
  s.top_k = 1;
  CHECK(generate(s, 20) == want);
  s.top_k = 0, s.top_p = 1e-6f;
  CHECK(generate(s, 20) == want);
  // Stopping: the first stop id ends it (returned as the last token).
  const auto stopped = generate(g, 20, {want[4]});
  const auto first = std::find(want.begin(), want.end(), want[4]);
  CHECK(stopped == std::vector<std::int32_t>(want.begin(), first + 1));
}
