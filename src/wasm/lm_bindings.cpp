// lab.loadModel's binding: the loader and the model (or a worker's shard of it) as handles (addresses of engine objects) that the wrapper frees
// with lmLoaderFree / lmModelFree (dispose(), or its FinalizationRegistry). Marshalling only: the descriptors and
// their readers are in lm_call.h; the engine validates everything (lm/loader.h, lm/model.h).
#include <emscripten/bind.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "format.h"
#include "lm/loader.h"
#include "lm/model.h"
#include "lm_call.h"
#include "marshal.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

lm::Loader* loader(std::uintptr_t h) { return reinterpret_cast<lm::Loader*>(h); }
lm::LmModel* handle_of(std::uintptr_t h) { return reinterpret_cast<lm::LmModel*>(h); }

std::string_view bytes_at(double ptr, double len) {
  return ptr ? std::string_view(reinterpret_cast<const char*>(lm_whole(ptr)), lm_whole(len)) : std::string_view();
}

// A loader for config.json (and generation_config.json), of the whole model or of one shard; 0 when the status
// (lastStatus) says why not.
std::uintptr_t loader_create(std::uintptr_t call) {
  const LmLoaderCall& c = *reinterpret_cast<const LmLoaderCall*>(call);
  std::size_t rank = 0, ranks = 1;
  if (auto s = detail::check_count("ranks", c.ranks, ranks); !s.ok()) {
    keep(std::move(s));
    return 0;
  }
  if (!(c.rank >= 0 && c.rank == std::floor(c.rank) && c.rank < c.ranks)) {
    keep(Status::range_error("rank", "rank must be an integer from 0 to ranks - 1, got " + detail::fmt(c.rank)));
    return 0;
  }
  rank = lm_whole(c.rank);
  std::unique_ptr<lm::Loader> l;
  if (keep(lm::Loader::create(bytes_at(c.config, c.config_len), bytes_at(c.generation, c.generation_len), l,
                              lm::kDefaultMemoryLimit, rank, ranks)))
    return 0;
  return reinterpret_cast<std::uintptr_t>(l.release());
}

// The safetensors files to send, one name per line.
std::string loader_files(std::uintptr_t h) {
  std::string r;
  for (const std::string& f : loader(h)->files()) r += f + "\n";
  return r;
}

std::uintptr_t loader_finish(std::uintptr_t h) {
  std::unique_ptr<lm::LmModel> m;
  if (keep(loader(h)->finish(m))) return 0;
  return reinterpret_cast<std::uintptr_t>(m.release());
}

int model_forward(std::uintptr_t call) {
  const LmForwardCall& c = *reinterpret_cast<const LmForwardCall*>(call);
  return keep(handle_of(lm_whole(c.model))->forward(lm_in<std::int32_t>(c.ids, c.ids_len), out(lm_whole(c.logits), lm_whole(c.logits_len)),
                                                out(lm_whole(c.attention), lm_whole(c.attention_len))));
}

int model_begin(std::uintptr_t call) {
  const LmGenerateCall& c = *reinterpret_cast<const LmGenerateCall*>(call);
  std::size_t max_tokens = 0;
  lm::Sampling s;
  if (auto st = read_generate_call(c, max_tokens, s); !st.ok()) return keep(std::move(st));
  return keep(handle_of(lm_whole(c.model))->begin(lm_in<std::int32_t>(c.prompt, c.prompt_len), max_tokens, s,
                                              lm_in<std::int32_t>(c.stop, c.stop_len)));
}

// The next token (≥ 0), or −1 with the error in lastStatus. lmModelActive then says whether more will follow.
int model_next(std::uintptr_t h) {
  std::int32_t token = -1;
  bool done = false;
  if (keep(handle_of(h)->next(token, done))) return -1;
  return token;
}

// A shard's step: forward (the descriptor's logits and attention are its slices), or a generation's first step.
int shard_forward(std::uintptr_t call) {
  const LmForwardCall& c = *reinterpret_cast<const LmForwardCall*>(call);
  return keep(handle_of(lm_whole(c.model))->step_forward(lm_in<std::int32_t>(c.ids, c.ids_len), out(lm_whole(c.logits), lm_whole(c.logits_len)),
                                                     out(lm_whole(c.attention), lm_whole(c.attention_len))));
}

int shard_begin(std::uintptr_t call) {
  const LmGenerateCall& c = *reinterpret_cast<const LmGenerateCall*>(call);
  std::size_t max_tokens = 0;
  lm::Sampling s;
  if (auto st = read_generate_call(c, max_tokens, s); !st.ok()) return keep(std::move(st));
  return keep(handle_of(lm_whole(c.model))->step_begin(lm_in<std::int32_t>(c.prompt, c.prompt_len), max_tokens, s,
                                                   lm_in<std::int32_t>(c.stop, c.stop_len)));
}

// The shard's slices as JSON: {"rank":…,"ranks":…,"heads":[b,e],"kvHeads":[b,e],"ffn":[b,e],"vocab":[b,e],"positions":[b,e]}.
std::string shard_plan(std::uintptr_t h) {
  const lm::ShardPlan& p = handle_of(h)->shard();
  auto span = [](lm::Span s) { return detail::format("[%zu,%zu]", s.begin, s.end); };
  return detail::format("{\"rank\":%zu,\"ranks\":%zu,\"heads\":%s,\"kvHeads\":%s,\"ffn\":%s,\"vocab\":%s,\"positions\":%s}", p.rank,
                        p.ranks, span(p.heads).c_str(), span(p.kv_heads).c_str(), span(p.ffn).c_str(), span(p.vocab).c_str(),
                        span(p.positions).c_str());
}

// Greedy: this shard's best logit (float32) and its token id (int32) at `at`.
void shard_best(std::uintptr_t h, std::uintptr_t at) {
  float value;
  std::int32_t index;
  handle_of(h)->best(value, index);
  std::memcpy(reinterpret_cast<void*>(at), &value, 4);
  std::memcpy(reinterpret_cast<void*>(at + 4), &index, 4);
}

// 1 when the generation is done, 0 when another token follows, −1 on error (lastStatus).
int shard_accept(std::uintptr_t h, int token) {
  bool done = true;
  if (keep(handle_of(h)->accept(token, done))) return -1;
  return done ? 1 : 0;
}

int model_check_vocabulary(std::uintptr_t h, double largest, std::string file) {
  return keep(handle_of(h)->check_vocabulary(largest >= 0 ? lm_whole(largest) : 0, file.c_str()));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_lm) {
  using namespace emscripten;
  function("lmCallFields", &lm_call_fields);
  function("lmLoaderCreate", &loader_create);
  function("lmLoaderIndex", +[](std::uintptr_t h, std::uintptr_t p, std::size_t n) {
    return keep(loader(h)->set_index(std::string_view(reinterpret_cast<const char*>(p), n)));
  });
  function("lmLoaderFiles", &loader_files);
  function("lmLoaderBegin", +[](std::uintptr_t h, std::string name) { return keep(loader(h)->begin_file(name)); });
  function("lmLoaderFeed", +[](std::uintptr_t h, std::uintptr_t p, std::size_t n) {
    return keep(loader(h)->feed(reinterpret_cast<const std::uint8_t*>(p), n));
  });
  function("lmLoaderEnd", +[](std::uintptr_t h, double total) { return keep(loader(h)->end_file(total >= 0 ? std::uint64_t(total) : 0)); });
  // A shard's routes of the file being received, once its header is in: [begin, end) byte offsets as uint64 pairs.
  function("lmLoaderHeaderDone", +[](std::uintptr_t h) { return loader(h)->header_done(); });
  function("lmLoaderRoutes", +[](std::uintptr_t h) { return reinterpret_cast<std::uintptr_t>(loader(h)->routes().data()); });
  function("lmLoaderRouteCount", +[](std::uintptr_t h) { return double(loader(h)->routes().size()); });
  function("lmLoaderBytes", +[](std::uintptr_t h) { return double(loader(h)->bytes()); });
  function("lmLoaderFinish", &loader_finish);
  function("lmLoaderFree", +[](std::uintptr_t h) { delete loader(h); });
  function("lmModelConfig", +[](std::uintptr_t h) { return lm::config_json(handle_of(h)->config()); });
  function("lmModelMemory", +[](std::uintptr_t h) { return double(handle_of(h)->memory_bytes()); });
  function("lmModelWeightBytes", +[](std::uintptr_t h) { return double(handle_of(h)->weight_bytes()); });
  function("lmModelForward", &model_forward);
  function("lmModelBegin", &model_begin);
  function("lmModelNext", &model_next);
  function("lmModelActive", +[](std::uintptr_t h) { return handle_of(h)->active(); });
  function("lmModelCheckVocabulary", &model_check_vocabulary);
  function("lmModelReadWeights", +[](std::uintptr_t h) { return double(handle_of(h)->read_weights()); });
  function("lmModelFree", +[](std::uintptr_t h) { delete handle_of(h); });
  // A shard's step (lm/model.h): start it, run its phases with the partial sums exchanged between them, pick.
  function("lmShardPlan", &shard_plan);
  function("lmShardForward", &shard_forward);
  function("lmShardBegin", &shard_begin);
  function("lmShardNext", +[](std::uintptr_t h) { return keep(handle_of(h)->step_next()); });
  function("lmShardPhase", +[](std::uintptr_t h, int p) { return keep(handle_of(h)->phase(std::size_t(p))); });
  function("lmShardLastPhase", +[](std::uintptr_t h) { return int(handle_of(h)->last_phase()); });
  function("lmShardRows", +[](std::uintptr_t h) { return double(handle_of(h)->rows()); });
  function("lmShardParts", +[](std::uintptr_t h) { return reinterpret_cast<std::uintptr_t>(handle_of(h)->parts()); });
  function("lmShardLogits", +[](std::uintptr_t h) { return reinterpret_cast<std::uintptr_t>(handle_of(h)->step_logits()); });
  function("lmShardBest", &shard_best);
  function("lmShardVocabLogits", +[](std::uintptr_t h) { return reinterpret_cast<std::uintptr_t>(handle_of(h)->vocab_logits()); });
  function("lmShardSample", +[](std::uintptr_t h) { return int(handle_of(h)->sample()); });
  function("lmShardAccept", &shard_accept);
  function("lmModelPhases", +[](std::uintptr_t h) { return double(handle_of(h)->phases_run()); });
}
