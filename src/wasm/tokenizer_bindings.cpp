// lab.loadTokenizer's binding: marshalling only. A tokenizer lives in wasm memory with the buffers its results are
// returned in; JS holds its address as a handle and frees it with tokenizerFree (dispose(), or the wrapper's
// FinalizationRegistry). Each call takes one descriptor (tokenizer_call.h).
#include <emscripten/bind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "marshal.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_call.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;
using attnlab::tokenizer::Tokenizer;

// A tokenizer and the buffers its last call's results are in.
struct Handle {
  std::unique_ptr<Tokenizer> t;
  std::vector<std::int32_t> ids;
  std::string text;
  std::vector<std::uint32_t> offsets;
  std::size_t memory_bytes() const {
    return sizeof(*this) + t->memory_bytes() + ids.capacity() * sizeof(std::int32_t) + text.capacity() +
           offsets.capacity() * sizeof(std::uint32_t);
  }
};

template <class C>
C& call_at(std::uintptr_t at) {
  return *reinterpret_cast<C*>(at);
}
Handle& handle(double h) { return *reinterpret_cast<Handle*>(static_cast<std::uintptr_t>(h)); }
double address(const void* p) { return static_cast<double>(reinterpret_cast<std::uintptr_t>(p)); }

std::string_view bytes(double at, double len) {
  return len > 0 ? std::string_view(reinterpret_cast<const char*>(static_cast<std::uintptr_t>(at)), static_cast<std::size_t>(len))
                 : std::string_view();
}
std::optional<std::string_view> file(double at, double len) {
  if (len < 0) return std::nullopt;
  return bytes(at, len);
}
std::span<const std::int32_t> ids_in(double at, double len) {
  return len > 0 ? std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(static_cast<std::uintptr_t>(at)), static_cast<std::size_t>(len))
                 : std::span<const std::int32_t>();
}

int load_js(std::uintptr_t at) {
  auto& c = call_at<TokenizerLoadCall>(at);
  tokenizer::TokenizerFiles f;
  f.tokenizer_json = file(c.tokenizer_json, c.tokenizer_json_len);
  f.tokenizer_config = file(c.tokenizer_config, c.tokenizer_config_len);
  f.special_tokens_map = file(c.special_tokens_map, c.special_tokens_map_len);
  f.vocab_json = file(c.vocab_json, c.vocab_json_len);
  f.merges_txt = file(c.merges_txt, c.merges_txt_len);
  auto h = std::make_unique<Handle>();
  if (const int kind = keep(Tokenizer::load(f, h->t))) return kind;
  const Tokenizer& t = *h->t;
  c.vocab_size = t.vocab_size();
  c.bos = t.special_ids.bos, c.eos = t.special_ids.eos, c.unk = t.special_ids.unk, c.pad = t.special_ids.pad;
  c.cleanup = t.cleanup_default;
  c.memory_bytes = static_cast<double>(h->memory_bytes());
  c.handle = address(h.release());
  return 0;
}

int encode_js(std::uintptr_t at) {
  auto& c = call_at<TokenizerEncodeCall>(at);
  Handle& h = handle(c.handle);
  if (const int kind = keep(h.t->encode(bytes(c.text, c.text_len), c.add_special != 0, h.ids))) return kind;
  c.ids = address(h.ids.data());
  c.ids_len = static_cast<double>(h.ids.size());
  return 0;
}

int decode_js(std::uintptr_t at) {
  auto& c = call_at<TokenizerDecodeCall>(at);
  Handle& h = handle(c.handle);
  if (const int kind = keep(h.t->decode(ids_in(c.ids, c.ids_len), c.skip_special != 0, c.cleanup != 0, h.text))) return kind;
  c.text = address(h.text.data());
  c.text_len = static_cast<double>(h.text.size());
  return 0;
}

int tokens_js(std::uintptr_t at) {
  auto& c = call_at<TokenizerDecodeCall>(at);
  Handle& h = handle(c.handle);
  if (const int kind = keep(h.t->display(ids_in(c.ids, c.ids_len), h.text, h.offsets))) return kind;
  c.text = address(h.text.data());
  c.text_len = static_cast<double>(h.text.size());
  c.offsets = address(h.offsets.data());
  return 0;
}

void id_of_js(std::uintptr_t at) {
  auto& c = call_at<TokenizerLookupCall>(at);
  c.id = static_cast<double>(handle(c.handle).t->id_of(bytes(c.text, c.text_len)));
}

void token_of_js(std::uintptr_t at) {
  auto& c = call_at<TokenizerLookupCall>(at);
  Handle& h = handle(c.handle);
  const auto token = c.id >= 0 && c.id <= 4294967295.0 ? h.t->token_of(static_cast<std::uint32_t>(c.id)) : std::nullopt;
  if (!token) {
    c.text_len = -1;
    return;
  }
  h.text.assign(*token);
  c.text = address(h.text.data());
  c.text_len = static_cast<double>(h.text.size());
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_tokenizer) {
  using namespace emscripten;
  function("tokenizerCallFields", &tokenizer_call_fields);
  function("tokenizerLoad", &load_js);
  function("tokenizerEncode", &encode_js);
  function("tokenizerDecode", &decode_js);
  function("tokenizerTokens", &tokens_js);
  function("tokenizerIdOf", &id_of_js);
  function("tokenizerTokenOf", &token_of_js);
  function("tokenizerMemoryBytes", +[](double h) { return static_cast<double>(handle(h).memory_bytes()); });
  function("tokenizerFree", +[](double h) { delete &handle(h); });
}
