// libFuzzer: encode and decode of arbitrary text with two fixed tokenizers: a byte-level one (Llama 3's split
// pattern, merges, an added special token), where decode(encode(text)) must give the text back byte for byte, and a
// SentencePiece-style one (Prepend/Replace normalizer, byte fallback, unknown tokens, added tokens with lstrip,
// rstrip, single_word and normalized). Text that is not UTF-8 is refused naming "text"; ids stay below the
// vocabulary's size; display gives one string per id.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_input.h"
#include "tokenizer/components.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

namespace t = attnlab::tokenizer;

std::string q(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c < 0x20) o += "\\u00", o += "0123456789abcdef"[c >> 4], o += "0123456789abcdef"[c & 15];
    else o += static_cast<char>(c);
  }
  return o + "\"";
}

std::string vocab_json(const std::vector<std::string>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + q(v[i]) + ":" + std::to_string(i);
  return s + "}";
}

std::unique_ptr<t::Tokenizer> load(const std::string& json) {
  t::TokenizerFiles f;
  f.tokenizer_json = json;
  std::unique_ptr<t::Tokenizer> tk;
  const auto s = t::Tokenizer::load(f, tk);
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message.c_str()), std::abort();
  return tk;
}

t::Tokenizer& byte_level() {
  static const std::unique_ptr<t::Tokenizer> tk = [] {
    std::vector<std::string> v;
    for (int b = 0; b < 256; ++b) {
      std::string c;
      t::utf8_append(c, t::byte_level_chars()[b]);
      v.push_back(c);
    }
    for (const char* m : {"Ġt", "he", "Ġthe", "in", "er", "Ġa", "ĠĠ", "ĊĊ", "Ã©"}) v.push_back(m);
    v.push_back("<|end|>");
    const std::string merges = R"(["Ġ t","h e","Ġt he","i n","e r","Ġ a","Ġ Ġ","Ċ Ċ","Ã ©"])";
    return load(R"({"added_tokens":[{"id":265,"content":"<|end|>","special":true,"normalized":false}],)"
                R"("pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":)" +
                q(R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)") +
                R"(},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]},)"
                R"("decoder":{"type":"ByteLevel"},"model":{"type":"BPE","ignore_merges":true,"vocab":)" + vocab_json(v) +
                R"(,"merges":)" + merges + "}}");
  }();
  return *tk;
}

t::Tokenizer& sentencepiece() {
  static const std::unique_ptr<t::Tokenizer> tk = [] {
    std::vector<std::string> v = {"<unk>", "<s>", "</s>"};
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 200; ++b) v.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");  // no byte above 0xC7
    for (const char* s : {"▁", "a", "b", "c", "é", "▁a", "ab", "▁ab", "<mask>", "x"}) v.push_back(s);
    return load(R"({"added_tokens":[{"id":0,"content":"<unk>","special":true,"normalized":false},)"
                R"({"id":1,"content":"<s>","special":true,"normalized":false},{"id":2,"content":"</s>","special":true,"normalized":false},)"
                R"({"id":211,"content":"<mask>","special":true,"normalized":false,"lstrip":true,"rstrip":true},)"
                R"({"id":212,"content":"x","special":false,"normalized":true,"single_word":true}],)"
                R"("normalizer":{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},)"
                R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],)"
                R"("special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}},)"
                R"("decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},)"
                R"("model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,"vocab":)" + vocab_json(v) +
                R"(,"merges":["▁ a","a b","▁a b"]}})");
  }();
  return *tk;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  const std::string_view text(reinterpret_cast<const char*>(data) + (size ? 1 : 0), size ? size - 1 : 0);
  t::Tokenizer& tk = mode & 1 ? sentencepiece() : byte_level();
  const bool special = mode & 2;
  std::vector<std::int32_t> ids;
  const auto e = tk.encode(text, special, ids);
  const bool utf8 = t::utf8_invalid_at(text) == text.size();
  if (!utf8) {
    FUZZ_REQUIRE(!e.ok() && e.arg == "text");
    return 0;
  }
  FUZZ_REQUIRE(e.ok());
  for (std::int32_t id : ids) FUZZ_REQUIRE(id >= 0 && std::uint32_t(id) < tk.vocab_size());
  std::string out, bytes;
  std::vector<std::uint32_t> offsets;
  FUZZ_REQUIRE(tk.decode(ids, mode & 4, mode & 8, out).ok());
  FUZZ_REQUIRE(t::utf8_invalid_at(out) == out.size());
  FUZZ_REQUIRE(tk.display(ids, bytes, offsets).ok());
  FUZZ_REQUIRE(offsets.size() == ids.size() + 1 && offsets.back() == bytes.size());
  if (!(mode & 1)) {
    // Byte-level with no normalizer loses nothing.
    FUZZ_REQUIRE(tk.decode(ids, false, false, out).ok());
    FUZZ_REQUIRE(out == text);
  }
  return 0;
}
