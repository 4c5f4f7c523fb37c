// lab.loadModel's binding: the loader and the model (or a worker's shard of it, lm/shard.h) are engine objects owned
// by wasm memory, whose addresses JS holds as handles (the `loader` and `model` fields) and frees with lmLoaderFree /
// lmModelFree (dispose(), or its FinalizationRegistry). Every call crosses as a descriptor (call.h); the engine
// validates everything (lm/loader.h, lm/model.h).
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
// name) and end, in chunks of any size; finish → model. bytes: the weights' bytes so far. A worker's loader keeps
// shard `rank` of `ranks` (default 0 of 1: the whole model); it is sent each file's header, then only its ranges
// of the file (ranges), and end's total says how long the file was ----
#define ATTNLAB_LM_LOADER_CREATE_CALL(N, O, T) N(loader) O(rank) O(ranks) T(config, u8, in) T(generation, u8, in)
ATTNLAB_CALL_STRUCT(LoaderCreateCall, ATTNLAB_LM_LOADER_CREATE_CALL);

Status loader_create(LoaderCreateCall& c) {
  std::size_t ranks = 1, rank = 0;
  if (!size_of(c.ranks, 1, ranks)) return size_error("ranks", c.ranks);
  if (c.rank.given) {
    const double r = c.rank.value;
    if (!(r >= 0 && r <= 2147483647.0 && r == std::floor(r)))
      return detail::range_errorf("rank", "rank must be an integer from 0 to ranks - 1, got %s", detail::fmt(r).c_str());
    rank = whole(r);
  }
  if (auto s = lm::Loader::check_ranks(rank, ranks); !s.ok()) return s;
  if (c.check) return Status::success();  // (the files are read to check the rest)
  std::unique_ptr<lm::Loader> l;
  if (auto s = lm::Loader::create(text(c.config), text(c.generation), l, lm::kDefaultMemoryLimit, rank, ranks); !s.ok()) return s;
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

// total: a shard's, the bytes of the whole file (a whole model's loader counts them itself).
#define ATTNLAB_LM_LOADER_CALL(N, O, T) N(loader) N(model) N(bytes) N(total)
ATTNLAB_CALL_STRUCT(LoaderCall, ATTNLAB_LM_LOADER_CALL);

Status loader_end(LoaderCall& c) { return loader_of(c.loader).end_file(c.total > 0 ? std::uint64_t(c.total) : 0); }
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

// A shard's ranges of the file being received, once its header is in (header_done): [begin, end) byte offsets
// from the file's start, in order; none before the header (and for a whole model).
#define ATTNLAB_LM_LOADER_RANGES_CALL(N, O, T) N(loader) N(header_done) T(ranges, f64, out)
ATTNLAB_CALL_STRUCT(LoaderRangesCall, ATTNLAB_LM_LOADER_RANGES_CALL);

Status loader_ranges(LoaderRangesCall& c) {
  const lm::Loader& l = loader_of(c.loader);
  const std::size_t n = l.header_done() ? l.routes().size() : 0;
  c.header_done = l.header_done();
  if (c.check) resolve(c.ranges, n);
  if (auto s = length_is("ranges", c.ranges.size(), n, "the shard's ranges"); !s.ok()) return s;
  if (!c.check)
    for (std::size_t i = 0; i < n; ++i) out<double>(c.ranges)[i] = double(l.routes()[i]);
  return Status::success();
}

// ---- the model: its configuration as JSON (config), its counts (info; active: a generation is in progress and
// will give another token), forward, a generation's begin and next token, the tokenizer's check, free ----
// (phases: every phase of a step the model ran, lm/model.h)
#define ATTNLAB_LM_MODEL_CALL(N, O, T) N(model) N(memory_bytes) N(weight_bytes) N(active) N(phases) N(checksum)
ATTNLAB_CALL_STRUCT(ModelCall, ATTNLAB_LM_MODEL_CALL);

Status model_info(ModelCall& c) {
  const lm::LmModel& m = model_of(c.model);
  c.memory_bytes = double(m.memory_bytes()), c.weight_bytes = double(m.weight_bytes()), c.active = m.active();
  c.phases = double(m.phases_run());
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

// A shard's slices as JSON: {"rank":…,"ranks":…,"heads":[b,e],"kvHeads":[b,e],"ffn":[b,e],"vocab":[b,e],"positions":[b,e]}.
Status shard_plan(ConfigCall& c) {
  const lm::ShardPlan& p = model_of(c.model).shard();
  auto span = [](lm::Span s) { return detail::format("[%zu,%zu]", s.begin, s.end); };
  return text_out(c.check != 0, c.json,
                  detail::format("{\"rank\":%zu,\"ranks\":%zu,\"heads\":%s,\"kvHeads\":%s,\"ffn\":%s,\"vocab\":%s,\"positions\":%s}",
                                 p.rank, p.ranks, span(p.heads).c_str(), span(p.kv_heads).c_str(), span(p.ffn).c_str(),
                                 span(p.vocab).c_str(), span(p.positions).c_str()));
}

// ids (int32) in; logits [n × vocab] and, with want_attention, the attention weights [layers × heads × n × n] out;
// with want_qkv, every layer's queries, keys and values as the attention read them (lm/model.h: per layer
// q [n × heads × head_dim], k and v [n × kv_heads × head_dim]).
#define ATTNLAB_LM_FORWARD_CALL(N, O, T) \
  N(model) N(want_attention) N(want_qkv) T(ids, i32, in) T(logits, f32, out) T(attention, f32, out) T(qkv, f32, out)
ATTNLAB_CALL_STRUCT(ForwardCall, ATTNLAB_LM_FORWARD_CALL);

// The check of both forwards: the outputs' lengths.
Status forward_check(ForwardCall& c, const lm::LmModel& m) {
  std::size_t logits, attention, qkv;
  if (auto s = m.forward_sizes(c.ids.size(), c.want_attention != 0, c.want_qkv != 0, logits, attention, qkv); !s.ok()) return s;
  resolve(c.logits, logits), resolve(c.attention, attention), resolve(c.qkv, qkv);
  return Status::success();
}

Status model_forward(ForwardCall& c) {
  lm::LmModel& m = model_of(c.model);
  if (c.check) return forward_check(c, m);
  return m.forward(in<std::int32_t>(c.ids), out<float>(c.logits), out<float>(c.attention), out<float>(c.qkv));
}

// A shard's forward: the same descriptor, its logits, attention and qkv this shard's slices (its vocabulary rows,
// its heads and K/V heads); it starts the step, whose phases then run one call each (shard_phase).
Status shard_forward(ForwardCall& c) {
  lm::LmModel& m = model_of(c.model);
  if (c.check) return forward_check(c, m);
  return m.step_forward(in<std::int32_t>(c.ids), out<float>(c.logits), out<float>(c.attention), out<float>(c.qkv));
}

// The prompt (int32), the options as JS gave them (maxTokens an integer ≥ 1, topK an integer ≥ 0, seed an integer
// below 2^53; temperature and topP the engine checks as float32), the stop ids (int32).
#define ATTNLAB_LM_BEGIN_CALL(N, O, T) \
  N(model) N(max_tokens) N(temperature) N(top_k) N(top_p) N(seed) T(prompt, i32, in) T(stop, i32, in)
ATTNLAB_CALL_STRUCT(BeginCall, ATTNLAB_LM_BEGIN_CALL);

Status read_begin(const BeginCall& c, std::size_t& max_tokens, lm::Sampling& s) {
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
  s.temperature = t, s.top_k = whole(c.top_k), s.top_p = static_cast<float>(c.top_p), s.seed = static_cast<std::uint64_t>(c.seed);
  return Status::success();
}

Status model_begin(BeginCall& c) {
  std::size_t max_tokens = 0;
  lm::Sampling s;
  if (auto st = read_begin(c, max_tokens, s); !st.ok()) return st;
  lm::LmModel& m = model_of(c.model);
  if (c.check) return m.check_begin(c.prompt.size(), max_tokens, s);
  return m.begin(in<std::int32_t>(c.prompt), max_tokens, s, in<std::int32_t>(c.stop));
}

// A shard's generation: the same descriptor; the prompt's step starts (its phases follow, shard_phase).
Status shard_begin(BeginCall& c) {
  std::size_t max_tokens = 0;
  lm::Sampling s;
  if (auto st = read_begin(c, max_tokens, s); !st.ok()) return st;
  lm::LmModel& m = model_of(c.model);
  if (c.check) return m.check_begin(c.prompt.size(), max_tokens, s);
  return m.step_begin(in<std::int32_t>(c.prompt), max_tokens, s, in<std::int32_t>(c.stop));
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

// ---- a shard's step (lm/model.h): started by shard_forward, shard_begin or lmShardNext (the last token chosen),
// then phase 0 … last, one call each; between two phases every shard's partial sums are exchanged into the
// engine-owned buffer at `parts` (rank r's at parts + r·rows·d_model floats), which the call returns with the step's
// row count and the last phase's number ----
#define ATTNLAB_LM_PHASE_CALL(N, O, T) N(model) N(phase) N(last) N(rows) N(parts)
ATTNLAB_CALL_STRUCT(PhaseCall, ATTNLAB_LM_PHASE_CALL);

void phase_out(PhaseCall& c, lm::LmModel& m) {
  c.last = double(m.last_phase()), c.rows = double(m.rows()), c.parts = handle_of(m.parts());
}
Status shard_next(PhaseCall& c) {
  lm::LmModel& m = model_of(c.model);
  if (auto s = m.step_next(); !s.ok()) return s;
  phase_out(c, m);
  return Status::success();
}
Status shard_phase(PhaseCall& c) {
  lm::LmModel& m = model_of(c.model);
  // (a phase number the model refuses by name: out of order, or not a whole number)
  if (auto s = m.phase(c.phase >= 0 && c.phase <= 1e9 && c.phase == std::floor(c.phase) ? whole(c.phase) : std::size_t(-1)); !s.ok()) return s;
  phase_out(c, m);
  return Status::success();
}

// ---- a generation step's token, after the last phase: `accept` 0 looks — this shard's best logit (value) and its
// token id (greedy), the address of its logits (its vocabulary rows) and, when sampling, of room for the whole
// vocabulary's (vocab) that the exchange gathers into; `accept` 1 takes `token` (with `sample`: drawn first from
// the gathered logits, and written back) and ends the step (done: no other token follows) ----
#define ATTNLAB_LM_PICK_CALL(N, O, T) N(model) N(accept) N(sample) N(token) N(value) N(logits) N(vocab) N(done)
ATTNLAB_CALL_STRUCT(PickCall, ATTNLAB_LM_PICK_CALL);

Status shard_pick(PickCall& c) {
  lm::LmModel& m = model_of(c.model);
  if (!c.accept) {
    float value;
    std::int32_t index;
    m.best(value, index);
    c.value = value, c.token = index, c.logits = handle_of(m.step_logits()), c.vocab = 0;
    if (m.sampling().temperature > 0.0f) {
      float* all = m.vocab_logits();
      if (!all) return Status::no_memory("the model's sampling buffers");
      c.vocab = handle_of(all);
    }
    return Status::success();
  }
  std::int32_t token = -1;
  if (c.sample) token = m.sample();
  else if (c.token >= 0 && c.token <= 2147483647.0 && c.token == std::floor(c.token)) token = std::int32_t(c.token);
  bool done = true;
  if (auto s = m.accept(token, done); !s.ok()) return s;
  c.token = token, c.done = done;
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
  ATTNLAB_BIND_CALL("lmLoaderRanges", LoaderRangesCall, loader_ranges);
  ATTNLAB_BIND_CALL("lmModelConfig", ConfigCall, model_config);
  ATTNLAB_BIND_CALL("lmModelInfo", ModelCall, model_info);
  ATTNLAB_BIND_CALL("lmModelForward", ForwardCall, model_forward);
  ATTNLAB_BIND_CALL("lmModelBegin", BeginCall, model_begin);
  ATTNLAB_BIND_CALL("lmModelNext", NextCall, model_next);
  ATTNLAB_BIND_CALL("lmModelCheckVocabulary", VocabularyCall, model_check_vocabulary);
  ATTNLAB_BIND_CALL("lmModelReadWeights", ModelCall, model_read_weights);
  ATTNLAB_BIND_CALL("lmModelFree", ModelCall, model_free);
  ATTNLAB_BIND_CALL("lmShardPlan", ConfigCall, shard_plan);
  ATTNLAB_BIND_CALL("lmShardForward", ForwardCall, shard_forward);
  ATTNLAB_BIND_CALL("lmShardBegin", BeginCall, shard_begin);
  ATTNLAB_BIND_CALL("lmShardNext", PhaseCall, shard_next);
  ATTNLAB_BIND_CALL("lmShardPhase", PhaseCall, shard_phase);
  ATTNLAB_BIND_CALL("lmShardPick", PickCall, shard_pick);
}
