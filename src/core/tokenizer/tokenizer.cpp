#include "tokenizer.h"

#include "unicode.h"

namespace attnlab::tokenizer {

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Status Tokenizer::encode(std::string_view text, bool add_special, std::vector<std::int32_t>& ids) {
  ids.clear();
  if (const std::size_t bad = utf8_invalid_at(text); bad != text.size())
    return Status::range_error("text", "text is not valid UTF-8 (at byte " + std::to_string(bad) + ")");
  std::string error;
  auto& pieces = pieces_;
  pieces.clear();
  if (!text.empty()) pieces.push_back({std::string(text), true, -1});
  // Added tokens matched on the raw text, then each other part normalized and searched for the normalized ones.
  added_.split(pieces, false);
  for (auto& p : pieces)
    if (p.id < 0 && normalizer_ && !normalize(*normalizer_, p.text, error))
      return Status::range_error("text", "the normalizer: " + error);
  added_.split(pieces, true);
  std::erase_if(pieces, [](const Piece& p) { return p.id < 0 && p.text.empty(); });
  if (pre_tokenizer_ && !pre_tokenize(*pre_tokenizer_, pieces, error))
    return Status::range_error("text", "the pre-tokenizer: " + error);
  for (const auto& p : pieces) {
    if (p.id >= 0) ids.push_back(p.id);
    else if (!p.text.empty()) bpe_.tokenize(p.text, ids);
  }
  if (add_special && post_processor_) post_process(*post_processor_, ids);
  return Status::success();
}

std::optional<std::string_view> Tokenizer::token_of(std::uint32_t id) const {
  if (const AddedToken* t = added_.by_id(id)) return std::string_view(t->content);
  if (bpe_.vocab.has(id)) return bpe_.vocab.token(id);
  return std::nullopt;
}

std::int64_t Tokenizer::id_of(std::string_view token) const {
  const std::int64_t added = added_.find(token);
  if (added >= 0) return added;
  const std::uint32_t id = bpe_.vocab.find(token);
  return id == Vocab::kNone ? -1 : std::int64_t{id};
}

namespace {

Status bad_id(std::span<const std::int32_t> ids, std::size_t i, std::uint32_t size) {
  return Status::range_error("ids", "ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                                        " is not a token id (the vocabulary has ids 0 to " + std::to_string(size - 1) + ")");
}

// transformers' clean_up_tokenization: no space before these punctuation marks and English contractions.
void clean_up(std::string& s) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    out.reserve(s.size());
    std::size_t at = 0;
    for (std::size_t f = s.find(from); f != std::string::npos; f = s.find(from, at)) {
      out.append(s, at, f - at);
      out += to;
      at = f + from.size();
    }
    out.append(s, at, std::string::npos);
    s = std::move(out);
  }
}

}  // namespace

Status Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special, bool cleanup, std::string& text) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto token = ids[i] < 0 ? std::nullopt : token_of(static_cast<std::uint32_t>(ids[i]));
    if (!token) return bad_id(ids, i, size_);
    if (skip_special && added_.special_content(*token)) continue;
    tokens.emplace_back(*token);
  }
  std::string error;
  text.clear();
  if (decoder_) {
    if (!decode_chain(*decoder_, tokens, error)) return Status::range_error("ids", "the decoder: " + error);
    for (const auto& t : tokens) text += t;
  } else {
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
  }
  if (cleanup) clean_up(text);
  return Status::success();
}

Status Tokenizer::display(std::span<const std::int32_t> ids, std::string& bytes, std::vector<std::uint32_t>& offsets) const {
  bytes.clear(), offsets.clear();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    offsets.push_back(static_cast<std::uint32_t>(bytes.size()));
    const std::uint32_t id = ids[i] < 0 ? Vocab::kNone : static_cast<std::uint32_t>(ids[i]);
    const auto token = ids[i] < 0 ? std::nullopt : token_of(id);
    if (!token) return bad_id(ids, i, size_);
    if (added_.by_id(id) || !decoder_) {
      bytes += *token;
      continue;
    }
    const std::string raw = token_bytes(*decoder_, std::string(*token));
    for (std::size_t k = 0; k < raw.size();) {
      if (const std::size_t n = utf8_sequence(raw, k)) {
        bytes.append(raw, k, n);
        k += n;
        continue;
      }
      static const char hex[] = "0123456789ABCDEF";
      const auto b = static_cast<unsigned char>(raw[k++]);
      bytes += "<0x";
      bytes += hex[b >> 4];
      bytes += hex[b & 15];
      bytes += '>';
    }
  }
  offsets.push_back(static_cast<std::uint32_t>(bytes.size()));
  return Status::success();
}

std::size_t Tokenizer::memory_bytes() const {
  return sizeof(*this) + bpe_.memory_bytes() + added_.memory_bytes();
}

}  // namespace attnlab::tokenizer
