// What the language-model tests share: the checkpoints tests/lm/checkpoints.py wrote (ATTNLAB_LM_CHECKPOINTS) and
// their float64 reference.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/json.h"
#include "testing.h"

namespace lm_testing {

namespace json = attnlab::model::json;
using Bytes = std::vector<std::uint8_t>;

inline const std::string kRoot = ATTNLAB_LM_CHECKPOINTS;

inline Bytes read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INFO(path);
  REQUIRE(f.good());
  return Bytes(std::istreambuf_iterator<char>(f), {});
}
inline std::string text(const std::string& path) {
  const Bytes b = read(path);
  return std::string(b.begin(), b.end());
}
inline bool exists(const std::string& path) { return std::ifstream(path).good(); }

inline std::vector<double> f64(const std::string& path) {
  const Bytes b = read(path);
  std::vector<double> v(b.size() / 8);
  std::memcpy(v.data(), b.data(), v.size() * 8);
  return v;
}

struct Reference {
  std::vector<std::int32_t> ids, logit_rows, prompt, greedy;
  std::size_t vocab = 0, layers = 0, heads = 0, attention_tokens = 0;
  std::vector<double> logits, logits_bound, attention, attention_bound;
};

inline std::vector<std::int32_t> ints(const json::Value& v) {
  std::vector<std::int32_t> r;
  for (const json::Value& x : v.array) r.push_back(std::int32_t(x.number));
  return r;
}

inline Reference reference(const std::string& name) {
  const std::string dir = kRoot + "/" + name + "/";
  json::Value root;
  std::string error;
  REQUIRE(json::parse(text(dir + "reference.json"), root, error));
  Reference r;
  r.ids = ints(*root.find("ids"));
  r.logit_rows = ints(*root.find("logit_rows"));
  r.prompt = ints(*root.find("prompt"));
  r.greedy = ints(*root.find("greedy"));
  r.vocab = std::size_t(root.find("vocab")->number);
  r.layers = std::size_t(root.find("layers")->number);
  r.heads = std::size_t(root.find("heads")->number);
  r.attention_tokens = std::size_t(root.find("attention_tokens")->number);
  r.logits = f64(dir + "logits.f64"), r.logits_bound = f64(dir + "logits_bound.f64");
  r.attention = f64(dir + "attention.f64"), r.attention_bound = f64(dir + "attention_bound.f64");
  return r;
}

}  // namespace lm_testing
