// The tokenizer on tiny hand-made tokenizer.json files, where every expected id can be worked out by hand: BPE's
// merge order (ranks, ties, a merge given twice), byte fallback, unknown tokens fused or not, ignore_merges; added
// tokens with lstrip / rstrip / single_word / normalized; normalizers, split behaviours, Metaspace's prepend
// schemes, Digits; post-processors; decoders and the display of tokens; GPT-2's vocab.json + merges.txt; and
// malformed or unsupported files, each an error naming the file, the field and the value.
// (The real tokenizer files are compared with Hugging Face's own tokenizers in the JS suite.)
#include <memory>
#include <string>
#include <vector>

#include "testing.h"
#include "tokenizer/components.h"
#include "tokenizer/json_reader.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace t = attnlab::tokenizer;
using Ids = std::vector<std::int32_t>;

namespace {

std::string q(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      o += "\\u00", o += hex[c >> 4], o += hex[c & 15];
    } else o += static_cast<char>(c);
  }
  return o + "\"";
}

// A BPE tokenizer.json: `vocab` in id order, merges as "a b" strings, the other top-level parts as JSON text.
std::string json(const std::vector<std::string>& vocab, const std::vector<std::string>& merges, const std::string& model_options = "",
                 const std::string& rest = "") {
  std::string v, m;
  for (std::size_t i = 0; i < vocab.size(); ++i) v += (i ? "," : "") + q(vocab[i]) + ":" + std::to_string(i);
  for (std::size_t i = 0; i < merges.size(); ++i) m += (i ? "," : "") + q(merges[i]);
  return "{" + rest + (rest.empty() ? "" : ",") + "\"model\":{\"type\":\"BPE\"" + model_options + ",\"vocab\":{" + v + "},\"merges\":[" + m + "]}}";
}

// GPT-2's 256 byte-level characters (ids 0…255 in byte order), then `extra`.
std::vector<std::string> byte_vocab(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    t::utf8_append(s, t::byte_level_chars()[b]);
    v.push_back(s);
  }
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

std::unique_ptr<t::Tokenizer> load(const std::string& tokenizer_json) {
  t::TokenizerFiles f;
  f.tokenizer_json = tokenizer_json;
  std::unique_ptr<t::Tokenizer> tk;
  const auto s = t::Tokenizer::load(f, tk);
  INFO(s.message);
  REQUIRE(s.ok());
  return tk;
}

std::string load_error(const std::string& tokenizer_json) {
  t::TokenizerFiles f;
  f.tokenizer_json = tokenizer_json;
  std::unique_ptr<t::Tokenizer> tk;
  const auto s = t::Tokenizer::load(f, tk);
  CHECK_FALSE(s.ok());
  CHECK(s.arg == "tokenizer.json");
  CHECK(tk == nullptr);
  return s.message;
}

Ids enc(t::Tokenizer& tk, std::string_view text, bool special = false) {
  Ids ids;
  const auto s = tk.encode(text, special, ids);
  INFO(s.message);
  REQUIRE(s.ok());
  return ids;
}

std::string dec(const t::Tokenizer& tk, const Ids& ids, bool skip = false) {
  std::string out;
  REQUIRE(tk.decode(ids, skip, false, out).ok());
  return out;
}

std::vector<std::string> shown(const t::Tokenizer& tk, const Ids& ids) {
  std::string bytes;
  std::vector<std::uint32_t> off;
  REQUIRE(tk.display(ids, bytes, off).ok());
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < off.size(); ++i) out.push_back(bytes.substr(off[i], off[i + 1] - off[i]));
  return out;
}

bool has(const std::string& message, const std::string& part) {
  INFO(message);
  return message.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("tokenizer BPE: the lowest rank merges first, leftmost among equal ranks; a merge given twice keeps its later rank", "[tokenizer]") {
  const std::vector<std::string> v = {"a", "b", "c", "ab", "bc", "abc", "aa"};
  // (b, c) ranks before (a, b): "abc" -> a + bc -> abc.
  CHECK(enc(*load(json(v, {"b c", "a b", "a bc"})), "abc") == Ids{5});
  // (a, b) first: ab + c, and no merge "ab c": two tokens.
  CHECK(enc(*load(json(v, {"a b", "b c", "a bc"})), "abc") == Ids{3, 2});
  // The same pair twice: its second rank (2) counts, so (b, c) at rank 1 wins.
  CHECK(enc(*load(json(v, {"a b", "b c", "a b"})), "abc") == Ids{0, 4});
  // Overlapping equal ranks: the leftmost pair merges first.
  CHECK(enc(*load(json(v, {"a a"})), "aaa") == Ids{6, 0});
  CHECK(enc(*load(json(v, {"a a"})), "aaaa") == Ids{6, 6});
  // Merges as [a, b] pairs are read the same.
  std::string pairs = json(v, {});
  pairs.replace(pairs.find("\"merges\":[]"), 11, R"("merges":[["b","c"],["a","b"],["a","bc"]])");
  CHECK(enc(*load(pairs), "abc") == Ids{5});
}

TEST_CASE("tokenizer BPE: byte fallback, unknown tokens (fused or not), dropped characters, ignore_merges", "[tokenizer]") {
  const std::vector<std::string> v = {"<unk>", "a", "<0xC3>", "<0xA9>", "b", "ab", "abab"};
  auto fb = load(json(v, {"a b"}, R"(,"unk_token":"<unk>","byte_fallback":true)"));
  CHECK(enc(*fb, "aé") == Ids{1, 2, 3});  // é (C3 A9) from its byte tokens
  CHECK(enc(*fb, "a€") == Ids{1, 0});      // € has no byte tokens here (E2 82 AC): unknown
  auto fused = load(json(v, {}, R"(,"unk_token":"<unk>","fuse_unk":true)"));
  CHECK(enc(*fused, "xyaz") == Ids{0, 1, 0});
  auto unfused = load(json(v, {}, R"(,"unk_token":"<unk>","fuse_unk":false)"));
  CHECK(enc(*unfused, "xyaz") == Ids{0, 0, 1, 0});
  // Without an unknown token the library drops a character it cannot spell.
  CHECK(enc(*load(json(v, {})), "xay") == Ids{1});
  // ignore_merges: a word that is a token is that token, merges or not.
  CHECK(enc(*load(json(v, {"a b"})), "abab") == Ids{5, 5});
  CHECK(enc(*load(json(v, {"a b"}, R"(,"ignore_merges":true)")), "abab") == Ids{6});
}

TEST_CASE("tokenizer BPE: a long word is merged in parts only where no merge can reach across", "[tokenizer]") {
  // SentencePiece-style text is one word; it is cut before a ▁ that follows another character, unless some
  // token holds ▁ right after another character (here "a▁"), when a merge may span the cut.
  std::string text;
  for (int i = 0; i < 200; ++i) text += "a\xe2\x96\x81" "b";  // "a▁b" * 200: 1000 bytes, one word
  auto cut = load(json({"\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "b", "ab"}, {"\xe2\x96\x81 b", "a b"}));
  Ids want;
  for (int i = 0; i < 200; ++i) want.insert(want.end(), {1, 3});
  CHECK(enc(*cut, text) == want);
  auto span = load(json({"\xe2\x96\x81", "a", "b", "a\xe2\x96\x81", "\xe2\x96\x81" "b"}, {"a \xe2\x96\x81", "\xe2\x96\x81 b"}));
  want.clear();
  for (int i = 0; i < 200; ++i) want.insert(want.end(), {3, 2});
  CHECK(enc(*span, text) == want);
}

TEST_CASE("tokenizer added tokens: cut out before the model, leftmost-longest, with lstrip, rstrip, single_word and normalized", "[tokenizer]") {
  const auto vocab = byte_vocab({"<s>"});
  auto added = [](const std::string& content, int id, const std::string& flags) {
    return "{\"id\":" + std::to_string(id) + ",\"content\":" + q(content) + "," + flags + "}";
  };
  const std::string tokens = "\"added_tokens\":[" + added("<s>", 256, R"("special":true,"normalized":false)") + "," +
                             added("<mask>", 257, R"("special":true,"normalized":false,"lstrip":true,"rstrip":true)") + "," +
                             added("ony", 258, R"("special":false,"normalized":false,"single_word":true)") + "," +
                             added("<s>x", 259, R"("special":false,"normalized":false)") + "]";
  auto tk = load(json(vocab, {}, "", tokens + R"(,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":false})"));
  CHECK(tk->vocab_size() == 260);
  // Longest at the leftmost position: "<s>x" over "<s>".
  CHECK(enc(*tk, "a<s>xb<s>") == Ids{'a', 259, 'b', 256});
  // lstrip and rstrip take the white space around <mask> (Unicode White_Space: U+3000 too).
  CHECK(enc(*tk, "a \t<mask>\u3000 b") == Ids{'a', 257, 'b'});
  // single_word: only where no word character touches it.
  CHECK(enc(*tk, "ony Anthony") == Ids{258, ' ', 'A', 'n', 't', 'h', 'o', 'n', 'y'});
  CHECK(enc(*tk, "ony,") == Ids{258, ','});
  // Normalized tokens match the normalized text: with Replace("x" -> "y"), content "yz" matches "xz".
  const std::string norm = R"("normalizer":{"type":"Replace","pattern":{"String":"x"},"content":"y"},"added_tokens":[)" +
                           added("xz", 257, R"("special":false,"normalized":true)") + "]";
  auto n = load(json(byte_vocab({"yz"}), {}, "", norm));
  CHECK(enc(*n, "axzb") == Ids{'a', 257, 'b'});
  CHECK(enc(*n, "ayzb") == Ids{'a', 257, 'b'});
  // Special tokens are skipped on request, by their text (a vocabulary token with the same text too). Without
  // a decoder the library joins tokens with spaces.
  CHECK(dec(*tk, {'a', 256, 'b'}) == "a <s> b");
  CHECK(dec(*tk, {'a', 256, 'b'}, true) == "a b");
}

TEST_CASE("tokenizer normalizers and pre-tokenizers: Sequence, Prepend, Replace, NFC, Strip; Split behaviours, Digits, Metaspace", "[tokenizer]") {
  std::vector<t::Pattern::Span> spans = {{0, 3, false}, {3, 4, true}, {4, 9, false}, {9, 10, true}, {10, 11, true}, {11, 20, false}};
  auto cut = [&](t::SplitBehavior b, bool invert = false) {
    auto s = spans;
    t::apply_behavior(s, b, invert);
    std::vector<std::pair<std::size_t, std::size_t>> r;
    for (auto x : s) r.push_back({x.begin, x.end});
    return r;
  };
  using P = std::vector<std::pair<std::size_t, std::size_t>>;
  // "the-final--countdown" cut at '-', as the library documents it.
  CHECK(cut(t::SplitBehavior::kRemoved) == P{{0, 3}, {4, 9}, {11, 20}});
  CHECK(cut(t::SplitBehavior::kIsolated) == P{{0, 3}, {3, 4}, {4, 9}, {9, 10}, {10, 11}, {11, 20}});
  CHECK(cut(t::SplitBehavior::kMergedWithPrevious) == P{{0, 4}, {4, 10}, {10, 11}, {11, 20}});
  CHECK(cut(t::SplitBehavior::kMergedWithNext) == P{{0, 3}, {3, 9}, {9, 10}, {10, 20}});
  CHECK(cut(t::SplitBehavior::kContiguous) == P{{0, 3}, {3, 4}, {4, 9}, {9, 11}, {11, 20}});
  CHECK(cut(t::SplitBehavior::kRemoved, true) == P{{3, 4}, {9, 10}, {10, 11}});

  const auto vocab = byte_vocab();
  const std::string byte_level = R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":false})";
  auto run = [&](const std::string& parts, std::string_view text) {
    return enc(*load(json(vocab, {}, "", parts + (parts.find("pre_tokenizer") == std::string::npos ? "," + byte_level : ""))), text);
  };
  // Prepend only to non-empty text, then Replace; NFC composes e + U+0301.
  CHECK(run(R"("normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"_"},{"type":"Replace","pattern":{"Regex":"b+"},"content":"B"}]})", "abbb") ==
        Ids{'_', 'a', 'B'});
  CHECK(run(R"("normalizer":{"type":"Prepend","prepend":"_"})", "").empty());
  CHECK(run(R"("normalizer":{"type":"NFC"})", "e\xcc\x81") == Ids{0xC3, 0xA9});
  CHECK(run(R"("normalizer":{"type":"Strip","strip_left":true,"strip_right":false})", " \u3000a ") == Ids{'a', ' '});
  // Digits: each digit alone, or runs; \p{N} digits too.
  const std::string digits = R"("pre_tokenizer":{"type":"Digits","individual_digits":true})";
  auto d = load(json(byte_vocab({"12", "ab"}), {"1 2", "a b"}, "", digits));
  CHECK(enc(*d, "ab12") == Ids{257, '1', '2'});
  auto dc = load(json(byte_vocab({"12", "ab"}), {"1 2", "a b"}, "", R"("pre_tokenizer":{"type":"Digits","individual_digits":false})"));
  CHECK(enc(*dc, "ab12") == Ids{257, 256});
  // ByteLevel with add_prefix_space: a space before each part that does not start with one.
  CHECK(run(R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true,"use_regex":false})", "ab") == Ids{' ', 'a', 'b'});
}

TEST_CASE("tokenizer Metaspace: the replacement, prepend_scheme always / first / never, split, and its decoder", "[tokenizer]") {
  const std::vector<std::string> v = {"<s>", "\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "a", "\xe2\x96\x81" "b"};
  const std::string added = R"("added_tokens":[{"id":0,"content":"<s>","special":true,"normalized":false}])";
  auto with = [&](const std::string& scheme, const std::string& split) {
    return load(json(v, {"\xe2\x96\x81 a", "\xe2\x96\x81 b"}, "",
                     added + R"(,"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":")" + scheme +
                         R"(","split":)" + split + R"(},"decoder":{"type":"Metaspace","replacement":"▁","prepend_scheme":")" + scheme + "\"}"));
  };
  CHECK(enc(*with("always", "true"), "a b") == Ids{4, 5});
  CHECK(enc(*with("always", "true"), "<s>a") == Ids{0, 4});     // every part gets the mark
  CHECK(enc(*with("first", "true"), "<s>a") == Ids{0, 2});      // only the part at the start of the text
  CHECK(enc(*with("first", "true"), "a<s>a") == Ids{4, 0, 2});
  CHECK(enc(*with("never", "true"), "a b") == Ids{2, 5});
  CHECK(enc(*with("always", "false"), "a b") == Ids{4, 5});
  CHECK(dec(*with("always", "true"), {4, 5}) == "a b");        // the first token's mark is dropped
  CHECK(dec(*with("never", "true"), {4, 5}) == " a b");
  // The older form: add_prefix_space.
  auto legacy = load(json(v, {"\xe2\x96\x81 a"}, "", R"("pre_tokenizer":{"type":"Metaspace","replacement":"▁","add_prefix_space":false})"));
  CHECK(enc(*legacy, "a") == Ids{2});
}

TEST_CASE("tokenizer post-processors and decoders: TemplateProcessing, Sequence; ByteFallback, Fuse, Strip, Replace, ByteLevel", "[tokenizer]") {
  const std::vector<std::string> v = {"<s>", "</s>", "▁", "a", "<0xE2>", "<0x82>", "<0xAC>", "<0x41>", "▁a"};
  const std::string llama = R"("added_tokens":[{"id":0,"content":"<s>","special":true,"normalized":false},{"id":1,"content":"</s>","special":true,"normalized":false}],)"
      R"("normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},)"
      R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}}],)"
      R"("pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[0],"tokens":["<s>"]},"</s>":{"id":"</s>","ids":[1],"tokens":["</s>"]}}},)"
      R"("decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]})";
  auto tk = load(json(v, {"▁ a"}, R"(,"byte_fallback":true)", llama));
  CHECK(enc(*tk, "a€", true) == Ids{0, 8, 4, 5, 6, 1});
  CHECK(enc(*tk, "a€", false) == Ids{8, 4, 5, 6});
  CHECK(enc(*tk, "", true) == Ids{0, 1});
  CHECK(tk->special_ids.bos == 0);
  CHECK(tk->special_ids.eos == 1);
  CHECK(dec(*tk, {8, 4, 5, 6, 2, 3}) == "a€ a");
  CHECK(dec(*tk, {0, 8, 1}) == "<s> a</s>");
  CHECK(dec(*tk, {0, 8, 1}, true) == "a");
  CHECK(dec(*tk, {4, 3}) == "\xef\xbf\xbd" "a");               // a lone byte: one U+FFFD per byte
  CHECK(dec(*tk, {4, 5, 3}) == "\xef\xbf\xbd\xef\xbf\xbd" "a");
  // Display: ▁ as a space, byte tokens as their byte where it is text, <0xAB> where it is not.
  CHECK(shown(*tk, {8, 7, 4, 5, 6, 0}) == std::vector<std::string>{" a", "A", "<0xE2>", "<0x82>", "<0xAC>", "<s>"});
  // Ids that are not tokens are errors naming their index.
  std::string out;
  const auto s = tk->decode(Ids{3, 9}, false, false, out);
  CHECK_FALSE(s.ok());
  CHECK(has(s.message, "ids[1] = 9 is not a token id"));
  CHECK_FALSE(tk->decode(Ids{-1}, false, false, out).ok());
  // transformers' clean-up of spaces, when asked.
  auto bl = load(json(byte_vocab(), {}, "", R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false},"decoder":{"type":"ByteLevel"})"));
  const Ids ids = enc(*bl, "Hi , I do n't .");
  REQUIRE(bl->decode(ids, false, true, out).ok());
  CHECK(out == "Hi, I don't.");
  CHECK(dec(*bl, ids) == "Hi , I do n't .");
  CHECK(shown(*bl, {0xC4 - 0x80 + 0x80, 'a'}).size() == 2);
}

TEST_CASE("tokenizer GPT-2 files: vocab.json + merges.txt, byte-level, <|endoftext|> special", "[tokenizer]") {
  auto vocab = byte_vocab({"Ġw", "or", "Ġwor", "<|endoftext|>"});
  std::string v = "{";
  for (std::size_t i = 0; i < vocab.size(); ++i) v += (i ? "," : "") + q(vocab[i]) + ":" + std::to_string(i);
  v += "}";
  const std::string merges = "#version: 0.2\nĠ w\no r\r\nĠw or\n";
  t::TokenizerFiles f;
  f.vocab_json = v;
  f.merges_txt = merges;
  std::unique_ptr<t::Tokenizer> tk;
  REQUIRE(t::Tokenizer::load(f, tk).ok());
  CHECK(enc(*tk, "a wor<|endoftext|>") == Ids{'a', 258, 259});
  CHECK(tk->special_ids.eos == 259);
  CHECK(shown(*tk, {258}) == std::vector<std::string>{" wor"});
  CHECK(tk->id_of("Ġwor") == 258);
  CHECK(tk->id_of("<|endoftext|>") == 259);
  CHECK(tk->id_of("nope") == -1);
  CHECK(tk->token_of(258) == "Ġwor");
  CHECK_FALSE(tk->token_of(260));
  CHECK(tk->vocab_size() == 260);
  const std::string bad_merges = "Ġ w\nx y z\n";  // the view must outlive the load
  f.merges_txt = bad_merges;
  const auto s = t::Tokenizer::load(f, tk);
  CHECK(s.arg == "merges.txt");
  CHECK(has(s.message, "merges.txt: line 2: \"x y z\" is not two tokens separated by one space"));
  f.merges_txt.reset();
  CHECK(has(t::Tokenizer::load(f, tk).message, "vocab.json without merges.txt"));
}

TEST_CASE("tokenizer errors: malformed and unsupported files name the file, the field and the value", "[tokenizer]") {
  const std::vector<std::string> v = {"a", "b", "ab"};
  const std::string good = json(v, {"a b"});
  CHECK(has(load_error(good.substr(0, good.size() / 2)), "tokenizer.json: model: invalid JSON at byte"));
  CHECK(has(load_error("{\"model\": 5}"), "tokenizer.json: model: expected an object"));
  CHECK(has(load_error(R"({"model":{"type":"BPE","vocab":[],"merges":[]}})"), "model.vocab: expected an object"));
  CHECK(has(load_error(R"({"model":{"type":"BPE","vocab":{"a":0,"a":1},"merges":[]}})"), "model.vocab: the token \"a\" is given twice"));
  CHECK(has(load_error(R"({"model":{"type":"BPE","vocab":{"a":0,"b":5},"merges":[]}})"), "model.vocab: \"b\" has id 5, out of range"));
  CHECK(has(load_error(R"({"model":{"type":"BPE","vocab":{"a":0,"b":0},"merges":[]}})"), "id 0 is given to both \"a\" and \"b\""));
  CHECK(has(load_error(R"({"model":{"type":"BPE","vocab":{"a":"x"},"merges":[]}})"), "model.vocab[\"a\"]: expected an id"));
  CHECK(has(load_error(json(v, {"a b", "a c"})), "model.merges[1]: \"a c\": the token \"c\" is not in the vocabulary"));
  CHECK(has(load_error(json({"a", "b"}, {"a b"})), "model.merges[0]: \"a b\": the merged token \"ab\" is not in the vocabulary"));
  CHECK(has(load_error(json(v, {"a  b"})), "model.merges[0]: \"a  b\" is not two tokens separated by one space"));
  CHECK(has(load_error(json(v, {}, "", R"("model":1)")), "duplicate key \"model\""));
  CHECK(has(load_error(R"({"model":{"type":"Unigram","vocab":[]}})"), "model.type: \"Unigram\": only BPE models are supported"));
  CHECK(has(load_error(json(v, {}, R"(,"dropout":0.1)")), "model.dropout: 0.1"));
  CHECK(has(load_error(json(v, {}, R"(,"continuing_subword_prefix":"##")")), "model.continuing_subword_prefix: \"##\" is not supported"));
  CHECK(has(load_error(json(v, {}, R"(,"unk_token":"<unk>")")), "model.unk_token: \"<unk>\" is not in the vocabulary"));
  CHECK(has(load_error(json(v, {}, R"(,"fancy":true)")), "model.fancy: unknown field"));
  CHECK(has(load_error(json(v, {}, "", R"("truncation":{"max_length":5})")), "tokenizer.json: truncation: is not supported"));
  CHECK(has(load_error(json(v, {}, "", R"("pre_tokenizer":{"type":"Whitespace"})")), "pre_tokenizer.type: \"Whitespace\" is not supported"));
  CHECK(has(load_error(json(v, {}, "", R"("normalizer":{"type":"Lowercase"})")), "normalizer.type: \"Lowercase\" is not supported"));
  CHECK(has(load_error(json(v, {}, "", R"("decoder":{"type":"WordPiece"})")), "decoder.type: \"WordPiece\" is not supported"));
  CHECK(has(load_error(json(v, {}, "", R"("pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\d+"},"behavior":"Isolated","invert":false}]})")),
            "pre_tokenizer.pretokenizers[0].pattern.Regex: \"\\\\d+\": the escape \\d at byte 0 is not supported"));
  CHECK(has(load_error(json(v, {}, "", R"("pre_tokenizer":{"type":"Split","pattern":{"Regex":"a"},"behavior":"Sideways"})")), "pre_tokenizer.behavior: \"Sideways\" is not a split behavior"));
  CHECK(has(load_error(json(v, {}, "", R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":"yes"})")), "pre_tokenizer.add_prefix_space: expected true or false"));
  CHECK(has(load_error(json(v, {}, "", R"("normalizer":{"type":"Replace","pattern":{"Regex":"x*"},"content":"-"})")),
            "normalizer.pattern.Regex: \"x*\" can match the empty string"));
  CHECK(has(load_error(json(v, {}, "", R"("added_tokens":[{"id":7,"content":"<x>","special":true}])")),
            "added_tokens[0].id: \"<x>\" has id 7, but the library gives it 3"));
  CHECK(has(load_error(json(v, {}, "", R"("added_tokens":[{"id":1,"content":"a","special":true}])")), "but the library gives it 0 (its id in the vocabulary)"));
  CHECK(has(load_error(json(v, {}, "", R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{}})")),
            "post_processor: the template's special token \"<s>\" is not in \"special_tokens\""));
  CHECK(has(load_error(json(v, {}, "", R"("post_processor":{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"x":{"id":"x","ids":[9],"tokens":["x"]}}})")),
            "post_processor.special_tokens[\"x\"].ids[0]: invalid JSON at byte"));
  // Text that is not UTF-8 is the caller's error, named "text".
  auto tk = load(good);
  Ids ids;
  const auto s = tk->encode("a\xff", false, ids);
  CHECK(s.arg == "text");
  CHECK(has(s.message, "not valid UTF-8 (at byte 1)"));
}

TEST_CASE("tokenizer JSON reader: strings, numbers, nesting and positions", "[tokenizer]") {
  auto read_string = [](std::string text, std::string& error) {
    t::JsonReader r(text);
    std::string_view v;
    const bool ok = r.string(v) && r.end();
    error = r.error();
    return ok ? std::string(v) : std::string("!");
  };
  std::string e;
  CHECK(read_string(R"("a\"b\\c\/\n\t\u00e9\ud83d\ude00")", e) == "a\"b\\c/\n\t\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(read_string(R"("\ud83d")", e) == "!");
  CHECK(has(e, "lone leading surrogate"));
  CHECK(read_string(R"("\ude00")", e) == "!");
  CHECK(has(e, "lone trailing surrogate"));
  CHECK(read_string("\"a\nb\"", e) == "!");
  CHECK(has(e, "control character"));
  CHECK(read_string("\"\xc3\x28\"", e) == "!");
  CHECK(has(e, "not valid UTF-8"));
  CHECK(read_string(R"("abc)", e) == "!");
  CHECK(has(e, "unterminated string"));
  CHECK(read_string(R"("a" x)", e) == "!");
  CHECK(has(e, "at byte 4 (line 1, column 5): unexpected text"));
  std::uint64_t n;
  t::JsonReader r1("12345");
  CHECK((r1.integer(n, 99999) && n == 12345));
  t::JsonReader r2("123456");
  CHECK_FALSE(r2.integer(n, 99999));
  t::JsonReader r3("1.5");
  CHECK_FALSE(r3.integer(n, 99999));
  t::JsonReader r4("-0.5e+3");
  std::string_view d;
  CHECK((r4.number(d) && d == "-0.5e+3"));
  for (const char* bad : {"01", "1.", "-", ".5", "1e", "+1"}) {
    t::JsonReader r(bad);
    CHECK_FALSE((r.number(d) && r.end()));
  }
  const std::string deep = std::string(70, '[') + std::string(70, ']');
  t::JsonReader r5(deep);
  CHECK_FALSE(r5.skip());
  CHECK(has(r5.error(), "nesting deeper than 64"));
  t::JsonReader r6("{\n  \"a\": 1,\n  \"a\": 2}");
  CHECK_FALSE(r6.object([&](std::string_view) { return r6.skip(); }));
  CHECK(has(r6.error(), "line 3, column 3): duplicate key \"a\""));
}
