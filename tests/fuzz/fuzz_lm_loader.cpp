// libFuzzer: the language-model loader (lm/loader.h) on arbitrary bytes. The first byte picks what they are:
//   0: config.json, then (after a NUL) generation_config.json;
//   1: model.safetensors for a fixed small GPT-2 config, fed in chunks whose sizes come from the input;
//   2: model.safetensors.index.json for a fixed small Llama config;
//   3: model.safetensors for one shard (of 2; the first byte's bit 2 picks the rank) of the GPT-2 config: the
//      file's bytes until its header is read, then the rest as the bytes routed to the shard (lm/loader.h),
//      whatever their count; a model that loads runs a step alone (the other shard's parts taken as zeros).
// Never a crash, an out-of-bounds read or an allocation beyond what the config justifies; every refusal is a range
// error (or out of memory) naming the file; after any error the loader holds nothing; a model that loads runs.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "lm/loader.h"

namespace {

constexpr const char* kGpt2 =
    R"({"architectures":["GPT2LMHeadModel"],"model_type":"gpt2","vocab_size":5,"n_positions":4,"n_embd":4,"n_layer":1,"n_head":2,"n_inner":8})";
constexpr const char* kLlama =
    R"({"architectures":["LlamaForCausalLM"],"vocab_size":5,"hidden_size":4,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2,"max_position_embeddings":4})";

bool names_a_file(const attnlab::Status& s) {
  return s.arg == "config.json" || s.arg == "generation_config.json" || s.arg == "model.safetensors" ||
         s.arg == "model.safetensors.index.json" || s.arg.ends_with(".safetensors") || s.arg == "bytes";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace lm = attnlab::lm;
  using attnlab::ErrorKind;
  if (size == 0) return 0;
  const std::uint8_t mode = data[0] % 4;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::unique_ptr<lm::Loader> l;
  // A small memory limit: whatever a config claims, nothing larger than this is ever allocated for weights.
  constexpr std::size_t kLimit = 1 << 20;
  if (mode == 0) {
    const std::size_t nul = rest.find('\0');
    const auto st = lm::Loader::create(rest.substr(0, nul), nul == std::string_view::npos ? "" : rest.substr(nul + 1), l, kLimit);
    if (!st.ok()) {
      FUZZ_REQUIRE(st.kind == ErrorKind::range && names_a_file(st) && !l);
      return 0;
    }
    FUZZ_REQUIRE(!lm::config_json(l->config()).empty());
    return 0;
  }
  if (mode == 3) {
    fuzz::Input in(data + 1, std::min<std::size_t>(size - 1, 4));
    const std::size_t rank = data[0] / 4 % 2;  // not a byte of the file: a seed's header length does not pick it
    FUZZ_REQUIRE(lm::Loader::create(kGpt2, "", l, kLimit, rank, 2).ok());
    attnlab::Status st = l->begin_file("model.safetensors");
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(rest.data());
    std::size_t at = 0;
    while (st.ok() && at < rest.size() && !l->header_done()) st = l->feed(bytes + at++, 1);  // the header, byte by byte
    for (; st.ok() && at < rest.size();) {  // then anything, as routed bytes
      const std::size_t n = std::min<std::size_t>(1 + in.byte() % 64 * 7, rest.size() - at);
      st = l->feed(bytes + at, n);
      at += n;
    }
    // The file's length as the header describes it, or one byte off either way, or what the input held (the
    // input's length picks which).
    const int off = int((rest.size() + 1) % 4) - 1;
    if (st.ok()) st = l->end_file(l->header_done() && off < 2 ? l->described_size() + std::uint64_t(std::int64_t(off)) : rest.size());
    std::unique_ptr<lm::LmModel> m;
    if (st.ok()) st = l->finish(m);
    if (!st.ok()) {
      FUZZ_REQUIRE((st.kind == ErrorKind::range || st.kind == ErrorKind::out_of_memory) && names_a_file(st));
      FUZZ_REQUIRE(l->bytes() == 0);
      return 0;
    }
    const std::int32_t ids[3] = {1, 2, 3};
    std::vector<float> logits(3 * m->shard().vocab.size());
    FUZZ_REQUIRE(m->step_forward(ids, logits, {}).ok());
    attnlab::Status f;
    for (std::size_t p = 0; f.ok() && p <= m->last_phase(); ++p) {
      f = m->phase(p);
      const std::size_t count = m->rows() * 4;  // d_model 4
      if (p < m->last_phase()) std::fill(m->parts() + (1 - rank) * count, m->parts() + (2 - rank) * count, 0.0f);
    }
    FUZZ_REQUIRE(f.ok() || f.kind == ErrorKind::numerical);
    return 0;
  }
  FUZZ_REQUIRE(lm::Loader::create(mode == 1 ? kGpt2 : kLlama, "", l, kLimit).ok());
  attnlab::Status st;
  if (mode == 2) {
    st = l->set_index(rest);
  } else {
    fuzz::Input in(data + 1, std::min<std::size_t>(size - 1, 4));
    st = l->begin_file("model.safetensors");
    for (std::size_t at = 0; st.ok() && at < rest.size();) {
      const std::size_t chunk = 1 + in.byte() % 64 * 7;
      const std::size_t n = std::min(chunk, rest.size() - at);
      st = l->feed(reinterpret_cast<const std::uint8_t*>(rest.data() + at), n);
      at += n;
    }
    if (st.ok()) st = l->end_file();
    std::unique_ptr<lm::LmModel> m;
    if (st.ok()) st = l->finish(m);
    if (st.ok()) {
      const std::int32_t ids[3] = {1, 2, 3};
      std::vector<float> logits(3 * 5);
      const auto f = m->forward(ids, logits, {});
      FUZZ_REQUIRE(f.ok() || f.kind == ErrorKind::numerical);
      return 0;
    }
  }
  if (!st.ok()) {
    FUZZ_REQUIRE((st.kind == ErrorKind::range || st.kind == ErrorKind::out_of_memory) && names_a_file(st));
    FUZZ_REQUIRE(l->bytes() == 0);
  }
  return 0;
}
