// A Hugging Face tokenizer in the engine: loaded from tokenizer.json (huggingface/tokenizers' format, BPE models:
// byte-level as in GPT-2, SmolLM, Qwen2/3, Llama 3, and SentencePiece-style with byte fallback and the ▁ mark as in
// Llama 2, TinyLlama, Mistral, Gemma) or from GPT-2's vocab.json + merges.txt; encode and decode give the ids and
// text that library gives. Whatever a file asks for that is not supported is an error naming the file, the field
// (a JSON path) and the value — never a silently different tokenization.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "added_tokens.h"
#include "bpe.h"
#include "components.h"
#include "status.h"

namespace attnlab::tokenizer {

/** The files of a model folder the tokenizer reads; a file that was not given is std::nullopt. */
struct TokenizerFiles {
  std::optional<std::string_view> tokenizer_json, tokenizer_config, special_tokens_map, vocab_json, merges_txt;
};

/** The ids of the model's named special tokens, -1 where unknown. */
struct SpecialTokenIds {
  std::int32_t bos = -1, eos = -1, unk = -1, pad = -1;
};

class Tokenizer {
 public:
  /**
   * Loads tokenizer.json (tokenizer_config.json and special_tokens_map.json, when given, name the special tokens
   * and say whether decode cleans up spaces), or else vocab.json + merges.txt. A Status naming the file and the
   * field on error; `out` is set only on success.
   */
  static Status load(const TokenizerFiles& files, std::unique_ptr<Tokenizer>& out);
  Tokenizer();
  ~Tokenizer();  // out of line: the pipeline's destructors are large, and a binding needs them once

  /** The ids of UTF-8 `text` (an error naming "text" if it is not UTF-8); `add_special` applies the
   *  post-processor (Llama's <s>, …). */
  Status encode(std::string_view text, bool add_special, std::vector<std::int32_t>& ids);
  /** The text of `ids`: the decoders of the file, special tokens skipped when asked, and transformers'
   *  clean-up of spaces before punctuation when `cleanup`. An id with no token is an error naming it. */
  Status decode(std::span<const std::int32_t> ids, bool skip_special, bool cleanup, std::string& text) const;
  /** Each id's token as text for display: appended to `bytes`, with `offsets` (ids.size() + 1 entries) where
   *  each begins. Bytes that are not UTF-8 text on their own are shown as <0xAB>. */
  Status display(std::span<const std::int32_t> ids, std::string& bytes, std::vector<std::uint32_t>& offsets) const;

  /** Ids run from 0 to vocab_size() - 1 (model tokens, then added tokens). */
  std::uint32_t vocab_size() const { return size_; }
  /** The id of a token (added tokens first, then the model's), or -1. */
  std::int64_t id_of(std::string_view token) const;
  /** The token of an id as the vocabulary spells it ("Ġhave"), or nullopt. */
  std::optional<std::string_view> token_of(std::uint32_t id) const;

  SpecialTokenIds special_ids;
  /** tokenizer_config.json's clean_up_tokenization_spaces (false when not given). */
  bool cleanup_default = false;
  /** Bytes of memory the tokenizer holds. */
  std::size_t memory_bytes() const;

 private:
  friend class TokenizerLoader;
  Bpe bpe_;
  AddedTokens added_;
  std::optional<Normalizer> normalizer_;
  std::optional<PreTokenizer> pre_tokenizer_;
  std::optional<PostProcessor> post_processor_;
  std::optional<Decoder> decoder_;
  std::uint32_t size_ = 0;
  std::vector<Piece> pieces_;  // encode's scratch
};

}  // namespace attnlab::tokenizer
