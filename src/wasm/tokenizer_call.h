// The call descriptors of lab.loadTokenizer and the Tokenizer object (src/js/tokenizer.js): per call, one array
// of float64 written by the wrapper into wasm memory, one per field below, and its address is all that crosses.
// Inputs are addresses and lengths of bytes the wrapper placed (a length of -1: the file was not given);
// results are written back into the same descriptor by the engine (addresses of buffers the tokenizer owns,
// valid until its next call), and the call returns the error kind (0 = ok; lastStatus() has the message).
// The field order comes from here (tokenizerCallFields), so the two sides cannot disagree.
#pragma once
#include <cstddef>
#include <string>

namespace attnlab::wasm {

// Files in; the handle and what the wrapper keeps of the tokenizer out.
#define ATTNLAB_TOKENIZER_LOAD_CALL(X)                                                                        \
  X(tokenizer_json) X(tokenizer_json_len) X(tokenizer_config) X(tokenizer_config_len)                         \
  X(special_tokens_map) X(special_tokens_map_len) X(vocab_json) X(vocab_json_len) X(merges_txt) X(merges_txt_len) \
  X(handle) X(vocab_size) X(bos) X(eos) X(unk) X(pad) /* ids, -1 unknown */ X(cleanup) X(memory_bytes)

// encode: UTF-8 text in, ids out.
#define ATTNLAB_TOKENIZER_ENCODE_CALL(X) X(handle) X(text) X(text_len) X(add_special) X(ids) X(ids_len)

// decode (text out) and tokens (text out with ids_len + 1 uint32 offsets, one token after the other).
#define ATTNLAB_TOKENIZER_DECODE_CALL(X) \
  X(handle) X(ids) X(ids_len) X(skip_special) X(cleanup) X(text) X(text_len) X(offsets)

// idOf (text in, id out, -1 when none) and tokenOf (id in, text out, text_len -1 when none).
#define ATTNLAB_TOKENIZER_LOOKUP_CALL(X) X(handle) X(text) X(text_len) X(id)

#define ATTNLAB_FIELD(name) double name;
struct TokenizerLoadCall {
  ATTNLAB_TOKENIZER_LOAD_CALL(ATTNLAB_FIELD)
};
struct TokenizerEncodeCall {
  ATTNLAB_TOKENIZER_ENCODE_CALL(ATTNLAB_FIELD)
};
struct TokenizerDecodeCall {
  ATTNLAB_TOKENIZER_DECODE_CALL(ATTNLAB_FIELD)
};
struct TokenizerLookupCall {
  ATTNLAB_TOKENIZER_LOOKUP_CALL(ATTNLAB_FIELD)
};
#undef ATTNLAB_FIELD

// "tokenizer_json,tokenizer_json_len,…," for which = "load", "encode", "decode", "lookup".
inline std::string tokenizer_call_fields(const std::string& which) {
#define ATTNLAB_NAME(name) #name ","
  if (which == "load") return ATTNLAB_TOKENIZER_LOAD_CALL(ATTNLAB_NAME);
  if (which == "encode") return ATTNLAB_TOKENIZER_ENCODE_CALL(ATTNLAB_NAME);
  if (which == "decode") return ATTNLAB_TOKENIZER_DECODE_CALL(ATTNLAB_NAME);
  if (which == "lookup") return ATTNLAB_TOKENIZER_LOOKUP_CALL(ATTNLAB_NAME);
#undef ATTNLAB_NAME
  return "";
}

}  // namespace attnlab::wasm
