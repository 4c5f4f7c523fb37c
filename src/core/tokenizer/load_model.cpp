// The BPE model: its vocabulary ({token: id}, ids 0…n-1 each once), its merges ("a b" strings or [a, b] pairs, or
// the lines of merges.txt) resolved against it, its options; and the added tokens, whose ids must be the ones the
// library gives them (a token of the vocabulary keeps its id, the others take the next ids in order).
#include <algorithm>

#include "loader.h"
#include "unicode.h"

namespace attnlab::tokenizer {

namespace {

constexpr std::uint64_t kMaxId = 0x7FFFFFFF;

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 120)) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += '?';
    else out += c;
  }
  return out + (s.size() > 120 ? "…\"" : "\"");
}

}  // namespace

bool TokenizerLoader::vocab(Reader& r) {
  if (r.type() != Reader::Type::object) return fail("expected an object of {token: id}");
  struct Entry {
    std::uint32_t id, offset, length;
  };
  std::vector<Entry> entries;
  std::string bytes;
  const bool ok = r.object([&](std::string_view token) {
    const std::uint32_t offset = static_cast<std::uint32_t>(bytes.size());
    bytes.append(token);  // `token` is valid until the next string: copied before the id is read
    std::uint64_t id;
    if (r.type() != Reader::Type::number || !r.integer(id, kMaxId)) {
      path_.push_back("[" + quoted(std::string_view(bytes).substr(offset)) + "]");
      return r.type() != Reader::Type::number ? fail("expected an id (a non-negative integer)") : syntax(r);
    }
    entries.push_back({static_cast<std::uint32_t>(id), offset, static_cast<std::uint32_t>(token.size())});
    return true;
  }, /*unique_keys_checked_by_caller=*/true);
  if (!ok) return status_.ok() && syntax(r);
  const std::size_t n = entries.size();
  if (n == 0) return fail("the vocabulary is empty");
  std::vector<std::uint32_t> owner(n, Vocab::kNone);
  for (std::size_t i = 0; i < n; ++i) {
    const Entry& e = entries[i];
    const std::string_view token = std::string_view(bytes).substr(e.offset, e.length);
    if (e.id >= n)
      return fail(quoted(token) + " has id " + std::to_string(e.id) + ", out of range: a vocabulary of " + std::to_string(n) +
                  " tokens has ids 0 to " + std::to_string(n - 1) + ", each once");
    if (owner[e.id] != Vocab::kNone)
      return fail("id " + std::to_string(e.id) + " is given to both " +
                  quoted(std::string_view(bytes).substr(entries[owner[e.id]].offset, entries[owner[e.id]].length)) + " and " + quoted(token));
    owner[e.id] = static_cast<std::uint32_t>(i);
  }
  t_.bpe_.vocab.reset(n, bytes.size());
  for (const Entry& e : entries) {
    const std::string_view token = std::string_view(bytes).substr(e.offset, e.length);
    std::uint32_t existing;
    if (!t_.bpe_.vocab.set(e.id, token, existing))
      return fail("the token " + quoted(token) + " is given twice (ids " + std::to_string(existing) + " and " + std::to_string(e.id) + ")");
  }
  t_.size_ = static_cast<std::uint32_t>(n);
  return true;
}

bool TokenizerLoader::merge(std::string_view a, std::string_view b, std::uint32_t rank, std::string& error) {
  Vocab& v = t_.bpe_.vocab;
  const std::uint32_t left = v.find(a), right = v.find(b);
  if (left == Vocab::kNone || right == Vocab::kNone) {
    error = "the token " + quoted(left == Vocab::kNone ? a : b) + " is not in the vocabulary";
    return false;
  }
  joined_.assign(a).append(b);
  const std::uint32_t id = v.find(joined_);
  if (id == Vocab::kNone) {
    error = "the merged token " + quoted(joined_) + " is not in the vocabulary";
    return false;
  }
  t_.bpe_.merges.insert(left, right, rank, id);
  return true;
}

bool TokenizerLoader::merges_array(Reader& r) {
  if (r.type() != Reader::Type::array) return fail("expected an array of merges");
  std::uint32_t rank = 0;
  std::string error;
  // The path names a merge only when it is wrong: 580k path strings would cost more than the merges.
  const bool ok = r.array([&](std::size_t i) {
    auto here = [&] { return path_.push_back(index(i)), true; };
    if (r.type() == Reader::Type::string) {
      std::string_view s;
      if (!r.string(s)) return here() && syntax(r);
      if (s.substr(0, 8) == "#version") return true;  // a merges.txt header carried over: not a merge
      const std::size_t space = s.find(' ');
      if (space == std::string_view::npos || s.find(' ', space + 1) != std::string_view::npos)
        return here() && fail(quoted(s) + " is not two tokens separated by one space");
      if (merge(s.substr(0, space), s.substr(space + 1), rank++, error)) return true;
      return here() && fail(quoted(s) + ": " + error);
    }
    here();
    if (r.type() != Reader::Type::array) return fail("expected \"a b\" or [\"a\", \"b\"]");
    std::string parts[2];
    std::size_t n = 0;
    if (!r.array([&](std::size_t k) {
          ++n;
          return k < 2 && at(index(k), [&] { return read_string(r, parts[k]); });
        }))
      return status_.ok() && (n > 2 ? fail("expected a pair [\"a\", \"b\"]") : syntax(r));
    if (n != 2) return fail("expected a pair [\"a\", \"b\"]");
    if (!merge(parts[0], parts[1], rank++, error)) return fail("[" + quoted(parts[0]) + ", " + quoted(parts[1]) + "]: " + error);
    path_.pop_back();
    return true;
  });
  return ok || (status_.ok() && syntax(r));
}

bool TokenizerLoader::merges_text(std::string_view text) {
  // merges.txt: one "a b" per line; "#version" lines are not merges; a last newline ends the last line.
  std::uint32_t rank = 0;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 8) == "#version") continue;
    path_.assign(1, "line " + std::to_string(line_no));
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
      return fail(quoted(line) + " is not two tokens separated by one space");
    std::string error;
    if (!merge(line.substr(0, space), line.substr(space + 1), rank++, error)) return fail(quoted(line) + ": " + error);
  }
  path_.clear();
  return true;
}

bool TokenizerLoader::model(Reader& r) {
  if (r.type() != Reader::Type::object) return fail("expected an object");
  std::string type, unk;
  bool has_unk = false;
  std::size_t vocab_span[2] = {0, 0}, merges_span[2] = {0, 0};
  bool has_vocab = false, has_merges = false;
  Bpe& bpe = t_.bpe_;
  if (!read_object(r, {"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
                       "byte_fallback", "ignore_merges", "vocab", "merges"},
                   [&](std::string_view key) {
                     if (key == "type") return read_string(r, type);
                     if (key == "vocab") return has_vocab = true, r.skip(vocab_span[0], vocab_span[1]) || syntax(r);
                     if (key == "merges") return has_merges = true, r.skip(merges_span[0], merges_span[1]) || syntax(r);
                     if (key == "fuse_unk") return read_bool(r, bpe.fuse_unk);
                     if (key == "byte_fallback") return read_bool(r, bpe.byte_fallback);
                     if (key == "ignore_merges") return read_bool(r, bpe.ignore_merges);
                     if (r.type() == Reader::Type::null) return r.null() || syntax(r);
                     if (key == "dropout") {
                       if (r.type() != Reader::Type::number) return fail("expected null or a number");
                       std::string_view d;
                       if (!r.number(d)) return syntax(r);
                       // Zero whatever its spelling (0, 0.0, -0e5): every digit before the exponent is 0.
                       const std::string_view mantissa = d.substr(0, d.find_first_of("eE"));
                       if (mantissa.find_first_of("123456789") == std::string_view::npos) return true;
                       return fail(std::string(d) + " is not supported (dropout makes encoding random; only null or 0 is)");
                     }
                     std::string s;
                     if (!read_string(r, s)) return false;
                     if (key == "unk_token") return unk = s, has_unk = true;
                     return s.empty() || fail(quoted(s) + " is not supported (only null or \"\")");
                   }))
    return false;
  if (type.empty() && has_merges) type = "BPE";  // files written before models were tagged
  if (type != "BPE")
    return at("type", [&] { return fail((type.empty() ? std::string("missing") : quoted(type)) + ": only BPE models are supported"); });
  if (!has_vocab) return fail("the model has no \"vocab\"");
  if (!has_merges) return fail("the model has no \"merges\"");
  Reader vr(text_, text_.substr(vocab_span[0], vocab_span[1] - vocab_span[0]), vocab_span[0]);
  if (!at("vocab", [&] { return vocab(vr); })) return false;
  if (has_unk) {
    bpe.unk = bpe.vocab.find(unk);
    if (bpe.unk == Vocab::kNone) return at("unk_token", [&] { return fail(quoted(unk) + " is not in the vocabulary"); });
  }
  bpe.index_tokens();
  Reader mr(text_, text_.substr(merges_span[0], merges_span[1] - merges_span[0]), merges_span[0]);
  return at("merges", [&] { return merges_array(mr); });
}

bool TokenizerLoader::added_tokens(Reader& r) {
  if (r.type() != Reader::Type::array) return fail("expected an array");
  auto& tokens = t_.added_.tokens;
  std::uint32_t next = t_.size_;  // the next id a token outside the vocabulary gets
  const bool ok = r.array([&](std::size_t i) {
    return at(index(i), [&] {
      AddedToken t;
      std::uint64_t id = 0;
      bool has_id = false, has_content = false, has_normalized = false;
      if (!read_object(r, {"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}, [&](std::string_view key) {
            if (key == "id") return has_id = true, read_index(r, id, kMaxId);
            if (key == "content") return has_content = true, read_string(r, t.content);
            if (key == "single_word") return read_bool(r, t.single_word);
            if (key == "lstrip") return read_bool(r, t.lstrip);
            if (key == "rstrip") return read_bool(r, t.rstrip);
            if (key == "normalized") return has_normalized = true, read_bool(r, t.normalized);
            return read_bool(r, t.special);
          }))
        return false;
      if (!has_id || !has_content) return fail("an added token needs \"id\" and \"content\"");
      if (!has_normalized) t.normalized = !t.special;  // the library's default
      if (t.content.empty()) return at("content", [&] { return fail("an added token must not be empty"); });
      for (const auto& other : tokens)
        if (other.content == t.content) return at("content", [&] { return fail(quoted(t.content) + " is added twice"); });
      const std::uint32_t in_vocab = t_.bpe_.vocab.find(t.content);
      const std::uint32_t expected = in_vocab != Vocab::kNone ? in_vocab : next;
      if (id != expected)
        return at("id", [&] {
          return fail(quoted(t.content) + " has id " + std::to_string(id) + ", but the library gives it " + std::to_string(expected) +
                      (in_vocab != Vocab::kNone ? " (its id in the vocabulary)" : " (the next id after the vocabulary and the added tokens before it)"));
        });
      if (in_vocab == Vocab::kNone) ++next;
      t.id = static_cast<std::uint32_t>(id);
      tokens.push_back(std::move(t));
      return true;
    });
  });
  if (!ok) return status_.ok() && syntax(r);
  t_.size_ = next;
  return true;
}

}  // namespace attnlab::tokenizer
