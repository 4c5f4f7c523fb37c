// Which files make a tokenizer, the top level of tokenizer.json (read in dependency order, whatever the order of
// its keys), GPT-2's vocab.json + merges.txt, and the special tokens of tokenizer_config.json and
// special_tokens_map.json.
#include <algorithm>
#include <iterator>

#include "loader.h"
#include "unicode.h"

namespace attnlab::tokenizer {

namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 120)) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

}  // namespace

Status TokenizerLoader::tokenizer_json() {
  Reader r(text_);
  struct Span {
    std::string key;
    std::size_t begin, end;
  };
  std::vector<Span> spans;  // the top-level members (a handful)
  const bool ok = r.object([&](std::string_view key) {
    Span s{std::string(key), 0, 0};
    if (!r.skip(s.begin, s.end)) return path_.push_back(s.key), false;  // a syntax error inside this member
    spans.push_back(std::move(s));
    return true;
  });
  if (!ok || !r.end()) return syntax(r), status_;
  auto find = [&](std::string_view key) -> const Span* {
    for (const auto& s : spans)
      if (s.key == key) return &s;
    return nullptr;
  };
  // A value recorded above, read now; absent and null are both "none".
  auto value = [&](std::string_view key, auto&& read) {
    const Span* s = find(key);
    if (!s) return true;
    Reader v(text_, text_.substr(s->begin, s->end - s->begin), s->begin);
    if (v.type() == Reader::Type::null) return true;
    return at(std::string(key), [&] { return read(v); });
  };
  for (const char* key : {"truncation", "padding"})
    if (!value(key, [&](Reader&) { return fail("is not supported (encode returns every id; only null is)"); })) return status_;
  if (!find("model")) return fail("there is no \"model\""), status_;
  if (!value("model", [&](Reader& v) { return model(v); })) return status_;
  Normalizer norm;
  bool has_normalizer = false;
  if (!value("normalizer", [&](Reader& v) { return has_normalizer = true, normalizer(v, norm); })) return status_;
  if (has_normalizer) t_.normalizer_ = std::move(norm);
  if (!value("added_tokens", [&](Reader& v) { return added_tokens(v); })) return status_;
  // Tokens matched on normalized text are matched by their own normalized form.
  std::vector<std::string> normalized;
  for (const auto& t : t_.added_.tokens) {
    std::string s = t.content, error;
    if (t.normalized && t_.normalizer_ && !normalize(*t_.normalizer_, s, error))
      return fail("the normalizer fails on the added token " + quoted(t.content) + ": " + error), status_;
    normalized.push_back(std::move(s));
  }
  t_.added_.build(normalized);
  PreTokenizer pre;
  bool has_pre = false;
  if (!value("pre_tokenizer", [&](Reader& v) { return has_pre = true, pre_tokenizer(v, pre); })) return status_;
  if (has_pre) t_.pre_tokenizer_ = std::move(pre);
  PostProcessor post;
  bool has_post = false;
  if (!value("post_processor", [&](Reader& v) { return has_post = true, post_processor(v, post); })) return status_;
  if (has_post) t_.post_processor_ = std::move(post);
  Decoder dec;
  bool has_dec = false;
  if (!value("decoder", [&](Reader& v) { return has_dec = true, decoder(v, dec); })) return status_;
  if (has_dec) t_.decoder_ = std::move(dec);
  return status_;
}

Status TokenizerLoader::gpt2_files(std::string_view vocab_json, std::string_view merges_txt) {
  // What transformers builds from these two files for GPT-2: byte-level pre-tokenizer and decoder.
  Reader r(vocab_json);
  if (!vocab(r)) return status_;
  if (!r.end()) return syntax(r), status_;
  t_.bpe_.index_tokens();
  file_ = "merges.txt";
  if (utf8_invalid_at(merges_txt) != merges_txt.size())
    return fail("is not UTF-8 text (at byte " + std::to_string(utf8_invalid_at(merges_txt)) + ")"), status_;
  if (!merges_text(merges_txt)) return status_;
  PreTokenizer pre;
  pre.kind = PreTokenizer::Kind::kByteLevel;
  pre.add_prefix_space = false;
  t_.pre_tokenizer_ = pre;
  Decoder dec;
  dec.kind = Decoder::Kind::kByteLevel;
  t_.decoder_ = dec;
  // GPT-2's one special token, when the vocabulary has it.
  const std::uint32_t eot = t_.bpe_.vocab.find("<|endoftext|>");
  if (eot != Vocab::kNone) {
    AddedToken t;
    t.content = "<|endoftext|>", t.id = eot, t.special = true;
    t_.added_.tokens.push_back(t);
    t_.added_.build({t.content});
    t_.special_ids.bos = t_.special_ids.eos = t_.special_ids.unk = static_cast<std::int32_t>(eot);
  }
  return status_;
}

Status TokenizerLoader::config() {
  Reader r(text_);
  if (r.type() != Reader::Type::object) return fail("expected an object"), status_;
  const std::pair<std::string_view, std::int32_t*> named[] = {{"bos_token", &t_.special_ids.bos}, {"eos_token", &t_.special_ids.eos},
                                                              {"unk_token", &t_.special_ids.unk}, {"pad_token", &t_.special_ids.pad}};
  const bool ok = r.object([&](std::string_view key) {
    const std::string k(key);
    if (k == "clean_up_tokenization_spaces")
      return at(k, [&] { return read_bool(r, t_.cleanup_default); });
    const auto* slot = std::find_if(std::begin(named), std::end(named), [&](const auto& n) { return n.first == k; });
    if (slot == std::end(named)) return r.skip() || syntax(r);
    return at(k, [&] {
      // A token's text, or {"content": text, …} (an AddedToken), or null.
      if (r.type() == Reader::Type::null) return r.null() || syntax(r);
      std::string content;
      if (r.type() == Reader::Type::object) {
        bool has = false;
        if (!r.object([&](std::string_view f) {
              if (f != "content") return r.skip();
              has = true;
              return at("content", [&] { return read_string(r, content); });
            }))
          return status_.ok() && syntax(r);
        if (!has) return fail("expected a token or an object with \"content\"");
      } else if (!read_string(r, content)) {
        return false;
      }
      const std::int64_t id = t_.id_of(content);
      if (id < 0) return fail(quoted(content) + " is not a token of the tokenizer");
      *slot->second = static_cast<std::int32_t>(id);
      return true;
    });
  });
  if (!ok) return (status_.ok() && syntax(r)), status_;
  if (!r.end()) return syntax(r), status_;
  return status_;
}

Status Tokenizer::load(const TokenizerFiles& files, std::unique_ptr<Tokenizer>& out) {
  auto t = std::make_unique<Tokenizer>();
  if (files.tokenizer_json) {
    TokenizerLoader l(*t, "tokenizer.json", *files.tokenizer_json);
    if (Status s = l.tokenizer_json(); !s.ok()) return s;
  } else if (files.vocab_json && files.merges_txt) {
    TokenizerLoader l(*t, "vocab.json", *files.vocab_json);
    if (Status s = l.gpt2_files(*files.vocab_json, *files.merges_txt); !s.ok()) return s;
  } else {
    return Status::range_error("files", std::string("a tokenizer needs tokenizer.json, or vocab.json and merges.txt; got ") +
                                            (files.vocab_json ? "vocab.json without merges.txt" : files.merges_txt ? "merges.txt without vocab.json" : "neither"));
  }
  // Names from the model, then the configuration files (later ones win).
  if (t->bpe_.unk != Vocab::kNone && t->special_ids.unk < 0) t->special_ids.unk = static_cast<std::int32_t>(t->bpe_.unk);
  if (t->post_processor_ && t->post_processor_->kind == PostProcessor::Kind::kTemplate) {
    if (t->post_processor_->before.size() == 1) t->special_ids.bos = t->post_processor_->before[0];
    if (t->post_processor_->after.size() == 1) t->special_ids.eos = t->post_processor_->after[0];
  }
  for (auto [name, file] : {std::pair{"special_tokens_map.json", files.special_tokens_map}, {"tokenizer_config.json", files.tokenizer_config}}) {
    if (!file) continue;
    TokenizerLoader l(*t, name, *file);
    if (Status s = l.config(); !s.ok()) return s;
  }
  out = std::move(t);
  return Status::success();
}

}  // namespace attnlab::tokenizer
