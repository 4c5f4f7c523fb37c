// The pipeline of a tokenizer.json, as huggingface/tokenizers runs it: normalizer -> pre-tokenizer -> model
// (bpe.h) -> post-processor on encode, decoder on decode. Each stage is a small tagged struct built by the loader
// (load_json.cpp) and run by the functions declared here; the semantics of each follow the library's
// (normalizers/, pre_tokenizers/, processors/, decoders/ in huggingface/tokenizers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "regex.h"

namespace attnlab::tokenizer {

/** A part of the text between pipeline stages. `at_start`: it begins at offset 0 of the original text
 *  (Metaspace's prepend_scheme "first" prepends only there). `id` >= 0: an added token, which no later
 *  stage touches. */
struct Piece {
  std::string text;
  bool at_start = false;
  std::int32_t id = -1;
};

/** A Split / Replace pattern: a literal string (matched as Oniguruma matches an escaped one) or a regex. */
struct Pattern {
  std::string literal;
  std::shared_ptr<const Regex> regex;
  struct Span {
    std::size_t begin, end;
    bool match;
  };
  /** The text cut into matches and the parts between, covering it in order (empty text: one empty part). */
  bool find_matches(std::string_view text, std::vector<Span>& out, std::string& error) const;
};

enum class SplitBehavior : std::uint8_t { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/** The pieces `spans` (from find_matches, inverted when asked) form under a split behavior, as [begin, end). */
void apply_behavior(std::vector<Pattern::Span>& spans, SplitBehavior behavior, bool invert);

struct Normalizer {
  enum class Kind : std::uint8_t { kSequence, kPrepend, kAppend, kReplace, kNfc, kNfd, kStrip } kind;
  std::string text;  // Prepend / Append / Replace content
  Pattern pattern;   // Replace
  bool left = false, right = false;  // Strip
  std::vector<Normalizer> children;  // Sequence
};

struct PreTokenizer {
  enum class Kind : std::uint8_t { kSequence, kByteLevel, kSplit, kMetaspace, kDigits } kind;
  bool add_prefix_space = false, use_regex = true;  // ByteLevel
  Pattern pattern;                                   // Split
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  std::string replacement;                      // Metaspace
  enum class Prepend : std::uint8_t { kAlways, kFirst, kNever } prepend = Prepend::kAlways;
  bool split = true;
  bool individual_digits = false;               // Digits
  std::vector<PreTokenizer> children;           // Sequence
};

struct Decoder {
  enum class Kind : std::uint8_t { kSequence, kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace } kind;
  Pattern pattern;  // Replace
  std::string text;  // Replace content, Strip content (one character), Metaspace replacement
  std::size_t start = 0, stop = 0;  // Strip
  bool strip_first = true;          // Metaspace: the first token's replacements are dropped (prepend_scheme != never)
  std::vector<Decoder> children;    // Sequence
};

struct PostProcessor {
  enum class Kind : std::uint8_t { kSequence, kTemplate, kByteLevel, kWrap } kind;
  // Template (and Roberta/Bert, as the same shape): ids before and after the sequence.
  std::vector<std::int32_t> before, after;
  std::vector<PostProcessor> children;  // Sequence
};

/** GPT-2's byte-to-character table (printable bytes stand for themselves, the others for U+0100…). */
const char32_t* byte_level_chars();
/** The byte a byte-level character stands for, or -1. */
int byte_level_byte(char32_t c);
/** The GPT-2 pre-tokenization regex (ByteLevel with use_regex). */
const Regex& gpt2_regex();

bool normalize(const Normalizer& n, std::string& text, std::string& error);
bool pre_tokenize(const PreTokenizer& p, std::vector<Piece>& pieces, std::string& error);
void post_process(const PostProcessor& p, std::vector<std::int32_t>& ids);
bool decode_chain(const Decoder& d, std::vector<std::string>& tokens, std::string& error);
/** What one model token stands for, as bytes: the decoders' per-token mappings (byte-level characters, Replace,
 *  <0xAB> byte tokens, Metaspace's mark as a space) without what joins or trims a sequence (Fuse, Strip, the first
 *  token's stripped space). */
std::string token_bytes(const Decoder& d, std::string token);

}  // namespace attnlab::tokenizer
