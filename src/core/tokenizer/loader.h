// Reading tokenizer.json and its companions into a Tokenizer: the shared machinery of load_json.cpp (the
// pipeline's components), load_model.cpp (vocabularies and merges, in either format) and load.cpp (what files
// to read, special tokens). Every error names the file and the JSON path of the field, and quotes the value.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "json_reader.h"
#include "status.h"
#include "tokenizer.h"

namespace attnlab::tokenizer {

class TokenizerLoader {
 public:
  TokenizerLoader(Tokenizer& t, std::string_view file, std::string_view text) : t_(t), file_(file), text_(text) {}

  Status tokenizer_json();
  Status gpt2_files(std::string_view vocab_json, std::string_view merges_txt);
  /** tokenizer_config.json or special_tokens_map.json: special token names, clean_up_tokenization_spaces. */
  Status config();

  // --- for the parts (load_json.cpp, load_model.cpp) ---
  using Reader = JsonReader;
  Tokenizer& t_;
  std::string file_;
  std::string_view text_;
  std::vector<std::string> path_;
  Status status_;  // the first error

  /** An error at the current path: "tokenizer.json: model.merges[3]: <what>". */
  bool fail(const std::string& what);
  /** The reader's syntax error, at the current path. */
  bool syntax(const Reader& r);
  std::string path() const;
  /** A path segment "[i]". */
  static std::string index(std::size_t i) {
    std::string s(1, '[');
    s += std::to_string(i);
    s += ']';
    return s;
  }
  /** Runs f with `segment` appended to the path ("model", "[3]", ".Regex"…). */
  template <class F>
  bool at(const std::string& segment, F&& f) {
    path_.push_back(segment);
    const bool ok = f();
    if (ok) path_.pop_back();  // on error the path stays: it names the field at fault
    return ok;
  }

  // Typed reads at the current path (a wrong type is an error naming what was expected).
  bool read_string(Reader& r, std::string& out);
  bool read_bool(Reader& r, bool& out);
  bool read_index(Reader& r, std::uint64_t& out, std::uint64_t max);
  /** An object whose members are handled by name; a name not in `known` is an error ("unknown field"). */
  bool read_object(Reader& r, const std::vector<std::string_view>& known,
                   const std::function<bool(std::string_view key)>& member);
  /** An object's "type" string, read ahead of its other members (JSON objects are unordered). */
  bool peek_type(std::string_view object_text, std::size_t base, std::string& type);

  // The pipeline's components (load_json.cpp).
  bool normalizer(Reader& r, Normalizer& n);
  bool pre_tokenizer(Reader& r, PreTokenizer& p);
  bool post_processor(Reader& r, PostProcessor& p);
  bool decoder(Reader& r, Decoder& d);
  /** A Split or Replace pattern; `replace`: refuse a regex that can match the empty string (the library fails
   *  on that Replace). */
  bool pattern(Reader& r, Pattern& p, bool replace = false);
  bool added_tokens(Reader& r);
  bool single_char(Reader& r, std::string& out);

  // The model (load_model.cpp).
  bool model(Reader& r);
  bool vocab(Reader& r);
  /** One merge resolved against the vocabulary and added with `rank`; false with `error` (no path) if it
   *  names a token the vocabulary lacks. */
  bool merge(std::string_view a, std::string_view b, std::uint32_t rank, std::string& error);
  std::string joined_;
  bool merges_array(Reader& r);
  bool merges_text(std::string_view text);
};

}  // namespace attnlab::tokenizer
