// The call descriptors of lab.loadModel and its Model (lm_bindings.cpp), as attention_call.h has them: the wrapper
// writes one float64 per field — JS numbers exactly as given — and passes the array's address. Field order comes
// from here (lmCallFields), so the two sides cannot disagree. Addresses are byte addresses (0 = none), lengths are
// element counts; the engine validates every value.
#pragma once
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "lm/model.h"
#include "marshal.h"
#include "validate.h"

namespace attnlab::wasm {

// lab.loadModel: the JSON files (UTF-8 bytes) that come before any weights; rank of ranks: the shard a worker
// holds (0 of 1: the whole model).
#define ATTNLAB_LM_LOADER_CALL(X) X(config) X(config_len) X(generation) X(generation_len) X(rank) X(ranks)
// model.forward: ids (int32) in, logits [n × vocab] and the attention weights [layers × heads × n × n] out (a
// shard's step: its vocabulary rows and its heads).
#define ATTNLAB_LM_FORWARD_CALL(X) X(model) X(ids) X(ids_len) X(logits) X(logits_len) X(attention) X(attention_len)
// model.generate / model.stream: the prompt (int32), the options, the stop ids (int32).
#define ATTNLAB_LM_GENERATE_CALL(X) \
  X(model) X(prompt) X(prompt_len) X(max_tokens) X(temperature) X(top_k) X(top_p) X(seed) X(stop) X(stop_len)

#define ATTNLAB_FIELD(name) double name;
struct LmLoaderCall {
  ATTNLAB_LM_LOADER_CALL(ATTNLAB_FIELD)
};
struct LmForwardCall {
  ATTNLAB_LM_FORWARD_CALL(ATTNLAB_FIELD)
};
struct LmGenerateCall {
  ATTNLAB_LM_GENERATE_CALL(ATTNLAB_FIELD)
};
#undef ATTNLAB_FIELD

// "loader:config,config_len,…;forward:…;generate:…": every descriptor's fields in order.
inline std::string lm_call_fields() {
#define ATTNLAB_NAME(name) #name ","
  return std::string("loader:") + ATTNLAB_LM_LOADER_CALL(ATTNLAB_NAME) + ";forward:" + ATTNLAB_LM_FORWARD_CALL(ATTNLAB_NAME) +
         ";generate:" + ATTNLAB_LM_GENERATE_CALL(ATTNLAB_NAME);
#undef ATTNLAB_NAME
}

inline std::size_t lm_whole(double x) { return static_cast<std::size_t>(x); }  // addresses and lengths the wrapper computed

template <class T>
std::span<const T> lm_in(double ptr, double len) {
  return ptr ? std::span<const T>(reinterpret_cast<const T*>(lm_whole(ptr)), lm_whole(len)) : std::span<const T>();
}

// The generation options as JS gave them: maxTokens an integer ≥ 1, topK an integer ≥ 0, seed an integer below 2⁵³,
// temperature and topP finite numbers (their ranges are the engine's to check, as float32).
inline Status read_generate_call(const LmGenerateCall& c, std::size_t& max_tokens, lm::Sampling& s) {
  if (auto st = detail::check_count("maxTokens", c.max_tokens, max_tokens); !st.ok()) return st;
  if (!(c.top_k >= 0 && c.top_k <= 2147483647.0 && c.top_k == std::floor(c.top_k)))
    return Status::range_error("topK", "topK must be an integer >= 0 (0: every token), got " + detail::fmt(c.top_k));
  if (!(c.seed >= 0 && c.seed <= 9007199254740991.0 && c.seed == std::floor(c.seed)))
    return Status::range_error("seed", "seed must be an integer from 0 to 2^53 - 1, got " + detail::fmt(c.seed));
  if (!std::isfinite(c.temperature) || c.temperature < 0)
    return Status::range_error("temperature", "temperature must be finite and >= 0 (0: greedy), got " + detail::fmt(c.temperature));
  const float t = static_cast<float>(c.temperature);
  if (c.temperature > 0 && !(t > 0 && std::isfinite(1.0f / t)))  // 1e-50 is not 0 (greedy)
    return Status::range_error("temperature", "temperature must be 0 or at least 3e-39, got " + detail::fmt(c.temperature));
  if (!(c.top_p > 0 && c.top_p <= 1)) return Status::range_error("topP", "topP must be in (0, 1], got " + detail::fmt(c.top_p));
  s.temperature = static_cast<float>(c.temperature);
  s.top_k = lm_whole(c.top_k);
  s.top_p = static_cast<float>(c.top_p);
  s.seed = static_cast<std::uint64_t>(c.seed);
  return Status::success();
}

}  // namespace attnlab::wasm
