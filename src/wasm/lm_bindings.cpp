// lab.loadModel's binding: the loader and the model are engine objects owned by wasm memory, whose addresses JS
// holds as handles (the `loader` and `model` fields) and frees with lmLoaderFree / lmModelFree (dispose(), or its
// FinalizationRegistry). Every call crosses as a descriptor (call.h); the engine validates everything (lm/loader.h,
// lm/model.h).
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "call.h"
#include "format.h"
#include "lm/loader.h"
#include "lm/model.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

lm::Loader& loader_of(double h) { return *handle<lm::Loader>(h); }
lm::LmModel& model_of(double h) { return *handle<lm::LmModel>(h); }

std::string_view text(const Tensor& t) {
  const auto bytes = in<char>(t);
  return {bytes.data(), bytes.size()};
}

// An output that is a text the engine made: its length in a check, its bytes in the run.
Status text_out(bool check, Tensor& t, const std::string& s) {
  if (check) resolve(t, s.size());
  if (auto st = length_is("text", t.size(), s.size(), "its bytes"); !st.ok()) return st;
  if (!check && !s.empty()) std::memcpy(out<char>(t).data(), s.data(), s.size());
  return Status::success();
}

// ---- the loader: create (config.json, generation_config.json: UTF-8, the latter may be absent) → loader; the
// index of a sharded checkpoint; the files to send (names, one per line); each file's bytes between begin (its
// name) and end, in chunks of any size; finish → model. bytes: the weights' bytes so far ----
#define ATTNLAB_LM_LOADER_CREATE_CALL(N, O, T) N(loader) T(config, u8, in) T(generation, u8, in)
ATTNLAB_CALL_STRUCT(LoaderCreateCall, ATTNLAB_LM_LOADER_CREATE_CALL);

Status loader_create(LoaderCreateCall& c) {
  if (c.check) return Status::success();  // (the files are read to check anything)
  std::unique_ptr<lm::Loader> l;
  if (auto s = lm::Loader::create(text(c.config), text(c.generation), l); !s.ok()) return s;
  c.loader = handle_of(l.release());
  return Status::success();
}

#define ATTNLAB_LM_LOADER_BYTES_CALL(N, O, T) N(loader) T(bytes, u8, in)
ATTNLAB_CALL_STRUCT(LoaderBytesCall, ATTNLAB_LM_LOADER_BYTES_CALL);

Status loader_index(LoaderBytesCall& c) { return c.check ? Status::success() : loader_of(c.loader).set_index(text(c.bytes)); }
Status loader_begin(LoaderBytesCall& c) { return c.check ? Status::success() : loader_of(c.loader).begin_file(text(c.bytes)); }
Status loader_feed(LoaderBytesCall& c) {
  if (c.check) return Status::success();
  const auto bytes = in<std::uint8_t>(c.bytes);
  return loader_of(c.loader).feed(bytes.data(), bytes.size());
}

#define ATTNLAB_LM_LOADER_FILES_CALL(N, O, T) N(loader) T(names, u8, out)
ATTNLAB_CALL_STRUCT(LoaderFilesCall, ATTNLAB_LM_LOADER_FILES_CALL);

Status loader_files(LoaderFilesCall& c) {
  std::string names;
  for (const std::string& f : loader_of(c.loader).files()) names += f + "\n";
  return text_out(c.check != 0, c.names, names);
}

#define ATTNLAB_LM_LOADER_CALL(N, O, T) N(loader) N(model) N(bytes)
ATTNLAB_CALL_STRUCT(LoaderCall, ATTNLAB_LM_LOADER_CALL);

Status loader_end(LoaderCall& c) { return loader_of(c.loader).end_file(); }
Status loader_bytes(LoaderCall& c) {
  c.bytes = double(loader_of(c.loader).bytes());
  return Status::success();
}
Status loader_finish(LoaderCall& c) {
  std::unique_ptr<lm::LmModel> m;
  if (auto s = loader_of(c.loader).finish(m); !s.ok()) return s;
  c.model = handle_of(m.release());
  return Status::success();
}
Status loader_free(LoaderCall& c) {
  delete handle<lm::Loader>(c.loader);
  return Status::success();
}

// ---- the model: its configuration as JSON (config), its counts (info; active: a generation is in progress and
// will give another token), forward, a generation's begin and next token, the tokenizer's check, free ----
#define ATTNLAB_LM_MODEL_CALL(N, O, T) N(model) N(memory_bytes) N(weight_bytes) N(active) N(checksum)
ATTNLAB_CALL_STRUCT(ModelCall, ATTNLAB_LM_MODEL_CALL);

Status model_info(ModelCall& c) {
  const lm::LmModel& m = model_of(c.model);
  c.memory_bytes = double(m.memory_bytes()), c.weight_bytes = double(m.weight_bytes()), c.active = m.active();
  return Status::success();
}
// Reads every weight byte once, the plainest way (what a decode step must stream: bench/lm-decode.mjs).
Status model_read_weights(ModelCall& c) {
  c.checksum = double(model_of(c.model).read_weights());
  return Status::success();
}
Status model_free(ModelCall& c) {
  delete handle<lm::LmModel>(c.model);
  return Status::success();
}

#define ATTNLAB_LM_CONFIG_CALL(N, O, T) N(model) T(json, u8, out)
ATTNLAB_CALL_STRUCT(ConfigCall, ATTNLAB_LM_CONFIG_CALL);

Status model_config(ConfigCall& c) { return text_out(c.check != 0, c.json, lm::config_json(model_of(c.model).config())); }

// ids (int32) in; logits [n × vocab] and, with want_attention, the attention weights [layers × heads × n × n] out.
#define ATTNLAB_LM_FORWARD_CALL(N, O, T) N(model) N(want_attention) T(ids, i32, in) T(logits, f32, out) T(attention, f32, out)
ATTNLAB_CALL_STRUCT(ForwardCall, ATTNLAB_LM_FORWARD_CALL);

Status model_forward(ForwardCall& c) {
  lm::LmModel& m = model_of(c.model);
  if (c.check) {
    std::size_t logits, attention;
    if (auto s = m.forward_sizes(c.ids.size(), c.want_attention != 0, logits, attention); !s.ok()) return s;
    resolve(c.logits, logits), resolve(c.attention, attention);
    return Status::success();
  }
  return m.forward(in<std::int32_t>(c.ids), out<float>(c.logits), out<float>(c.attention));
}

// The prompt (int32), the options as JS gave them (maxTokens an integer ≥ 1, topK an integer ≥ 0, seed an integer
// below 2^53; temperature and topP the engine checks as float32), the stop ids (int32).
#define ATTNLAB_LM_BEGIN_CALL(N, O, T) \
  N(model) N(max_tokens) N(temperature) N(top_k) N(top_p) N(seed) T(prompt, i32, in) T(stop, i32, in)
ATTNLAB_CALL_STRUCT(BeginCall, ATTNLAB_LM_BEGIN_CALL);

Status model_begin(BeginCall& c) {
  std::size_t max_tokens = 0;
  if (!size_of(c.max_tokens, max_tokens)) return size_error("maxTokens", c.max_tokens);
  if (!(c.top_k >= 0 && c.top_k <= 2147483647.0 && c.top_k == std::floor(c.top_k)))
    return detail::range_errorf("topK", "topK must be an integer >= 0 (0: every token), got %s", detail::fmt(c.top_k).c_str());
  if (!(c.seed >= 0 && c.seed <= 9007199254740991.0 && c.seed == std::floor(c.seed)))
    return detail::range_errorf("seed", "seed must be an integer from 0 to 2^53 - 1, got %s", detail::fmt(c.seed).c_str());
  if (!std::isfinite(c.temperature) || c.temperature < 0)
    return detail::range_errorf("temperature", "temperature must be finite and >= 0 (0: greedy), got %s", detail::fmt(c.temperature).c_str());
  const float t = static_cast<float>(c.temperature);
  if (c.temperature > 0 && !(t > 0 && std::isfinite(1.0f / t)))  // 1e-50 is not 0 (greedy)
    return detail::range_errorf("temperature", "temperature must be 0 or at least 3e-39, got %s", detail::fmt(c.temperature).c_str());
  lm::Sampling s;
  s.temperature = t, s.top_k = whole(c.top_k), s.top_p = static_cast<float>(c.top_p), s.seed = static_cast<std::uint64_t>(c.seed);
  lm::LmModel& m = model_of(c.model);
  if (c.check) return m.check_begin(c.prompt.size(), max_tokens, s);
  return m.begin(in<std::int32_t>(c.prompt), max_tokens, s, in<std::int32_t>(c.stop));
}

// The next token (an error ends the generation); active: whether another will follow.
#define ATTNLAB_LM_NEXT_CALL(N, O, T) N(model) N(token) N(active)
ATTNLAB_CALL_STRUCT(NextCall, ATTNLAB_LM_NEXT_CALL);

Status model_next(NextCall& c) {
  lm::LmModel& m = model_of(c.model);
  std::int32_t token = -1;
  bool done = false;
  if (auto s = m.next(token, done); !s.ok()) return s;
  c.token = token, c.active = m.active();
  return Status::success();
}

// A tokenizer's largest id (-1: none) must be a row of the embedding; `file` names the tokenizer's file (UTF-8).
#define ATTNLAB_LM_VOCABULARY_CALL(N, O, T) N(model) N(largest) T(file, u8, in)
ATTNLAB_CALL_STRUCT(VocabularyCall, ATTNLAB_LM_VOCABULARY_CALL);

Status model_check_vocabulary(VocabularyCall& c) {
  if (c.check) return Status::success();
  const std::string file(text(c.file));
  return model_of(c.model).check_vocabulary(c.largest >= 0 ? whole(c.largest) : 0, file.c_str());
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_lm) {
  ATTNLAB_BIND_CALL("lmLoaderCreate", LoaderCreateCall, loader_create);
  ATTNLAB_BIND_CALL("lmLoaderIndex", LoaderBytesCall, loader_index);
  ATTNLAB_BIND_CALL("lmLoaderFiles", LoaderFilesCall, loader_files);
  ATTNLAB_BIND_CALL("lmLoaderBegin", LoaderBytesCall, loader_begin);
  ATTNLAB_BIND_CALL("lmLoaderFeed", LoaderBytesCall, loader_feed);
  ATTNLAB_BIND_CALL("lmLoaderEnd", LoaderCall, loader_end);
  ATTNLAB_BIND_CALL("lmLoaderBytes", LoaderCall, loader_bytes);
  ATTNLAB_BIND_CALL("lmLoaderFinish", LoaderCall, loader_finish);
  ATTNLAB_BIND_CALL("lmLoaderFree", LoaderCall, loader_free);
  ATTNLAB_BIND_CALL("lmModelConfig", ConfigCall, model_config);
  ATTNLAB_BIND_CALL("lmModelInfo", ModelCall, model_info);
  ATTNLAB_BIND_CALL("lmModelForward", ForwardCall, model_forward);
  ATTNLAB_BIND_CALL("lmModelBegin", BeginCall, model_begin);
  ATTNLAB_BIND_CALL("lmModelNext", NextCall, model_next);
  ATTNLAB_BIND_CALL("lmModelCheckVocabulary", VocabularyCall, model_check_vocabulary);
  ATTNLAB_BIND_CALL("lmModelReadWeights", ModelCall, model_read_weights);
  ATTNLAB_BIND_CALL("lmModelFree", ModelCall, model_free);
}
