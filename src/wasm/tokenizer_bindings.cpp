// lab.loadTokenizer's binding: marshalling only. A tokenizer is an engine object in wasm memory, with the buffers its
// results are returned in; JS holds its address as a handle (the `tokenizer` field) and frees it with tokenizerFree
// (dispose(), or the wrapper's FinalizationRegistry). Every call crosses as a descriptor (call.h); the engine
// parses and validates the files and names the file and field at fault (tokenizer/).
//
// A result whose length only the work itself tells (encode's ids, decode's text) is not a T field the caller
// sizes in the check: it is left in the tokenizer's own buffer, and the run writes its address and length back
// into N fields (ids_at, ids_len, …), which the wrapper reads before the tokenizer's next call. The checks of these
// calls therefore find nothing to refuse but a size past wasm memory (call.h).
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "call.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;
using attnlab::tokenizer::Tokenizer;

// A tokenizer and the buffers its last call's results are in.
struct Held {
  std::unique_ptr<Tokenizer> t;
  std::vector<std::int32_t> ids;
  std::string text;
  std::vector<std::uint32_t> offsets;
  std::size_t memory_bytes() const {
    return sizeof(*this) + t->memory_bytes() + ids.capacity() * sizeof(std::int32_t) + text.capacity() +
           offsets.capacity() * sizeof(std::uint32_t);
  }
};

Held& held(double h) { return *handle<Held>(h); }

std::string_view text_of(const Tensor& t) {
  const auto bytes = in<char>(t);
  return {bytes.data(), bytes.size()};
}

// ---- load: the files' bytes in (each named for its file, '.' as '_'; *_given: whether the file was given at all,
// an empty file being a file), the handle and what the wrapper keeps of the tokenizer out (special ids: -1 where
// the files name none) ----
#define ATTNLAB_TOKENIZER_LOAD_CALL(N, O, T)                                                                     \
  N(tokenizer) N(vocab_size) N(bos) N(eos) N(unk) N(pad) N(cleanup) N(memory_bytes)                               \
  N(tokenizer_json_given) N(tokenizer_config_json_given) N(special_tokens_map_json_given) N(vocab_json_given)         \
  N(merges_txt_given) T(tokenizer_json, u8, in) T(tokenizer_config_json, u8, in) T(special_tokens_map_json, u8, in)  \
  T(vocab_json, u8, in) T(merges_txt, u8, in)
ATTNLAB_CALL_STRUCT(LoadCall, ATTNLAB_TOKENIZER_LOAD_CALL);

std::optional<std::string_view> file(double given, const Tensor& t) {
  if (given == 0) return std::nullopt;
  return text_of(t);
}

Status load(LoadCall& c) {
  if (c.check) return Status::success();  // (the files are read to check anything)
  tokenizer::TokenizerFiles f;
  f.tokenizer_json = file(c.tokenizer_json_given, c.tokenizer_json);
  f.tokenizer_config = file(c.tokenizer_config_json_given, c.tokenizer_config_json);
  f.special_tokens_map = file(c.special_tokens_map_json_given, c.special_tokens_map_json);
  f.vocab_json = file(c.vocab_json_given, c.vocab_json);
  f.merges_txt = file(c.merges_txt_given, c.merges_txt);
  auto h = std::make_unique<Held>();
  if (auto s = Tokenizer::load(f, h->t); !s.ok()) return s;
  const Tokenizer& t = *h->t;
  c.vocab_size = t.vocab_size();
  c.bos = t.special_ids.bos, c.eos = t.special_ids.eos, c.unk = t.special_ids.unk, c.pad = t.special_ids.pad;
  c.cleanup = t.cleanup_default;
  c.memory_bytes = static_cast<double>(h->memory_bytes());
  c.tokenizer = handle_of(h.release());
  return Status::success();
}

// ---- encode: UTF-8 text in, the ids (int32) in the tokenizer's buffer ----
#define ATTNLAB_TOKENIZER_ENCODE_CALL(N, O, T) N(tokenizer) N(add_special) N(ids_at) N(ids_len) T(text, u8, in)
ATTNLAB_CALL_STRUCT(EncodeCall, ATTNLAB_TOKENIZER_ENCODE_CALL);

Status encode(EncodeCall& c) {
  if (c.check) return Status::success();
  Held& h = held(c.tokenizer);
  if (auto s = h.t->encode(text_of(c.text), c.add_special != 0, h.ids); !s.ok()) return s;
  c.ids_at = handle_of(h.ids.data()), c.ids_len = static_cast<double>(h.ids.size());
  return Status::success();
}

// ---- decode (the text) and tokens (the text of each id, one after the other, with ids + 1 uint32 offsets) ----
#define ATTNLAB_TOKENIZER_DECODE_CALL(N, O, T) \
  N(tokenizer) N(skip_special) N(cleanup) N(text_at) N(text_len) N(offsets_at) T(ids, i32, in)
ATTNLAB_CALL_STRUCT(DecodeCall, ATTNLAB_TOKENIZER_DECODE_CALL);

Status decode(DecodeCall& c) {
  if (c.check) return Status::success();  // (every id is checked against the vocabulary: values)
  Held& h = held(c.tokenizer);
  if (auto s = h.t->decode(in<std::int32_t>(c.ids), c.skip_special != 0, c.cleanup != 0, h.text); !s.ok()) return s;
  c.text_at = handle_of(h.text.data()), c.text_len = static_cast<double>(h.text.size());
  return Status::success();
}

Status tokens(DecodeCall& c) {
  if (c.check) return Status::success();
  Held& h = held(c.tokenizer);
  if (auto s = h.t->display(in<std::int32_t>(c.ids), h.text, h.offsets); !s.ok()) return s;
  c.text_at = handle_of(h.text.data()), c.text_len = static_cast<double>(h.text.size());
  c.offsets_at = handle_of(h.offsets.data());
  return Status::success();
}

// ---- idOf: a token's text in, its id out (-1: none) ----
#define ATTNLAB_TOKENIZER_ID_CALL(N, O, T) N(tokenizer) N(id) T(token, u8, in)
ATTNLAB_CALL_STRUCT(IdCall, ATTNLAB_TOKENIZER_ID_CALL);

Status id_of(IdCall& c) {
  if (c.check) return Status::success();
  c.id = static_cast<double>(held(c.tokenizer).t->id_of(text_of(c.token)));
  return Status::success();
}

// ---- tokenOf: an id in, its token's text in the tokenizer's buffer out (text_len -1: no such id) ----
#define ATTNLAB_TOKENIZER_TOKEN_CALL(N, O, T) N(tokenizer) N(id) N(text_at) N(text_len)
ATTNLAB_CALL_STRUCT(TokenCall, ATTNLAB_TOKENIZER_TOKEN_CALL);

Status token_of(TokenCall& c) {
  Held& h = held(c.tokenizer);
  const auto token = c.id >= 0 && c.id <= 4294967295.0 ? h.t->token_of(static_cast<std::uint32_t>(c.id)) : std::nullopt;
  if (!token) {
    c.text_len = -1;
    return Status::success();
  }
  h.text.assign(*token);
  c.text_at = handle_of(h.text.data()), c.text_len = static_cast<double>(h.text.size());
  return Status::success();
}

// ---- the bytes of wasm memory it holds; free ----
#define ATTNLAB_TOKENIZER_CALL(N, O, T) N(tokenizer) N(memory_bytes)
ATTNLAB_CALL_STRUCT(TokenizerCall, ATTNLAB_TOKENIZER_CALL);

Status info(TokenizerCall& c) {
  c.memory_bytes = static_cast<double>(held(c.tokenizer).memory_bytes());
  return Status::success();
}
Status free_tokenizer(TokenizerCall& c) {
  delete handle<Held>(c.tokenizer);
  return Status::success();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_tokenizer) {
  ATTNLAB_BIND_CALL("tokenizerLoad", LoadCall, load);
  ATTNLAB_BIND_CALL("tokenizerEncode", EncodeCall, encode);
  ATTNLAB_BIND_CALL("tokenizerDecode", DecodeCall, decode);
  ATTNLAB_BIND_CALL("tokenizerTokens", DecodeCall, tokens);
  ATTNLAB_BIND_CALL("tokenizerIdOf", IdCall, id_of);
  ATTNLAB_BIND_CALL("tokenizerTokenOf", TokenCall, token_of);
  ATTNLAB_BIND_CALL("tokenizerInfo", TokenizerCall, info);
  ATTNLAB_BIND_CALL("tokenizerFree", TokenizerCall, free_tokenizer);
}
