#include "components.h"

#include <algorithm>
#include <array>

#include "unicode.h"

namespace attnlab::tokenizer {

// --- Patterns and split behaviors ---

bool Pattern::find_matches(std::string_view text, std::vector<Span>& out, std::string& error) const {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return true;
  }
  std::size_t prev = 0;
  auto add = [&](std::size_t s, std::size_t e) {
    if (prev != s) out.push_back({prev, s, false});
    out.push_back({s, e, true});
    prev = e;
  };
  if (regex) {
    std::vector<std::pair<std::size_t, std::size_t>> m;
    if (!regex->find_all(text, m, error)) return false;
    for (const auto& [s, e] : m) add(s, e);
  } else if (!literal.empty()) {
    for (std::size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + literal.size()))
      add(at, at + literal.size());
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
  return true;
}

void apply_behavior(std::vector<Pattern::Span>& spans, SplitBehavior behavior, bool invert) {
  if (invert)
    for (auto& s : spans) s.match = !s.match;
  std::vector<Pattern::Span> out;
  out.reserve(spans.size());
  bool previous = false;
  switch (behavior) {
    case SplitBehavior::kIsolated: out = spans; break;
    case SplitBehavior::kRemoved:
      for (const auto& s : spans)
        if (!s.match) out.push_back(s);
      break;
    case SplitBehavior::kContiguous:
      for (const auto& s : spans) {
        if (s.match == previous && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        previous = s.match;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& s : spans) {
        if (s.match && !previous && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        previous = s.match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->match && !previous && !out.empty()) out.back().begin = it->begin;
        else out.push_back(*it);
        previous = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  spans = std::move(out);
}

namespace {

// Replaces every match of `p` in `text` with `content`.
bool replace(const Pattern& p, const std::string& content, std::string& text, std::string& error) {
  std::vector<Pattern::Span> spans;
  if (!p.find_matches(text, spans, error)) return false;
  if (std::none_of(spans.begin(), spans.end(), [](const Pattern::Span& s) { return s.match; })) return true;
  std::string out;
  out.reserve(text.size());
  for (const auto& s : spans) {
    if (s.match) out += content;
    else out.append(text, s.begin, s.end - s.begin);
  }
  text = std::move(out);
  return true;
}

// Splits each piece that is not an added token by the spans `cut` gives it, dropping empty parts; a part keeps
// at_start when it begins where its piece did.
template <class Cut>
bool split_pieces(std::vector<Piece>& pieces, Cut&& cut, std::string& error) {
  std::vector<Piece> out;
  out.reserve(pieces.size());
  std::vector<Pattern::Span> spans;
  for (auto& p : pieces) {
    if (p.id >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    if (!cut(p, spans, error)) return false;
    for (const auto& s : spans)
      if (s.end > s.begin) out.push_back({p.text.substr(s.begin, s.end - s.begin), p.at_start && s.begin == 0, -1});
  }
  pieces = std::move(out);
  return true;
}

// Spans cutting before and after each character that `is_cut` picks (HF's pattern of a char predicate).
template <class F>
void char_spans(std::string_view text, F&& is_cut, std::vector<Pattern::Span>& spans) {
  spans.clear();
  if (text.empty()) return spans.push_back({0, 0, false});
  std::size_t last = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t at = i;
    const char32_t c = utf8_next(text, i);
    if (is_cut(c)) {
      if (last < at) spans.push_back({last, at, false});
      spans.push_back({at, i, true});
      last = i;
    }
  }
  if (last < text.size()) spans.push_back({last, text.size(), false});
}

bool is_white_space_char(char32_t c) { return is_white_space(c); }

}  // namespace

// --- Normalizers ---

bool normalize(const Normalizer& n, std::string& text, std::string& error) {
  switch (n.kind) {
    case Normalizer::Kind::kSequence:
      for (const auto& c : n.children)
        if (!normalize(c, text, error)) return false;
      return true;
    case Normalizer::Kind::kPrepend:
      if (!text.empty()) text.insert(0, n.text);
      return true;
    case Normalizer::Kind::kAppend:
      if (!text.empty()) text += n.text;
      return true;
    case Normalizer::Kind::kReplace: return replace(n.pattern, n.text, text, error);
    case Normalizer::Kind::kNfc: text = nfc(text); return true;
    case Normalizer::Kind::kNfd: text = nfd(text); return true;
    case Normalizer::Kind::kStrip: {
      std::size_t begin = 0, end = text.size();
      if (n.left)
        while (begin < end) {
          std::size_t i = begin;
          if (!is_white_space_char(utf8_next(text, i))) break;
          begin = i;
        }
      if (n.right)
        while (end > begin) {
          std::size_t s = end - 1;
          while (s > begin && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
          std::size_t i = s;
          if (!is_white_space_char(utf8_next(text, i))) break;
          end = s;
        }
      text = text.substr(begin, end - begin);
      return true;
    }
  }
  return true;
}

// --- Byte level ---

const char32_t* byte_level_chars() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table.data();
}

int byte_level_byte(char32_t c) {
  static const std::array<std::int16_t, 324> inverse = [] {
    std::array<std::int16_t, 324> t;
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[byte_level_chars()[b]] = static_cast<std::int16_t>(b);
    return t;
  }();
  return c < inverse.size() ? inverse[c] : -1;
}

const Regex& gpt2_regex() {
  static const Regex re = [] {
    Regex r;
    std::string error;
    r.compile("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", error);
    return r;
  }();
  return re;
}

namespace {

std::string byte_level_map(std::string_view s) {
  // Each byte becomes its character: bytes below 0x80 that stand for themselves stay one byte.
  static const std::array<std::string, 256> utf8 = [] {
    std::array<std::string, 256> t;
    for (int b = 0; b < 256; ++b) utf8_append(t[static_cast<std::size_t>(b)], byte_level_chars()[b]);
    return t;
  }();
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char b : s) out += utf8[b];
  return out;
}

}  // namespace

// --- Pre-tokenizers ---

bool pre_tokenize(const PreTokenizer& p, std::vector<Piece>& pieces, std::string& error) {
  switch (p.kind) {
    case PreTokenizer::Kind::kSequence:
      for (const auto& c : p.children)
        if (!pre_tokenize(c, pieces, error)) return false;
      return true;
    case PreTokenizer::Kind::kByteLevel: {
      if (p.add_prefix_space)
        for (auto& piece : pieces)
          if (piece.id < 0 && (piece.text.empty() || piece.text[0] != ' ')) piece.text.insert(piece.text.begin(), ' ');
      if (p.use_regex) {
        Pattern gpt2;
        gpt2.regex = std::shared_ptr<const Regex>(&gpt2_regex(), [](const Regex*) {});
        if (!split_pieces(pieces, [&](const Piece& piece, std::vector<Pattern::Span>& spans, std::string& err) {
              return gpt2.find_matches(piece.text, spans, err);
            }, error))
          return false;
      }
      for (auto& piece : pieces)
        if (piece.id < 0) piece.text = byte_level_map(piece.text);
      return true;
    }
    case PreTokenizer::Kind::kSplit:
      return split_pieces(pieces, [&](const Piece& piece, std::vector<Pattern::Span>& spans, std::string& err) {
        if (!p.pattern.find_matches(piece.text, spans, err)) return false;
        apply_behavior(spans, p.behavior, p.invert);
        return true;
      }, error);
    case PreTokenizer::Kind::kMetaspace: {
      for (auto& piece : pieces) {
        if (piece.id >= 0) continue;
        std::string out;
        out.reserve(piece.text.size() + p.replacement.size());
        for (char c : piece.text) {
          if (c == ' ') out += p.replacement;
          else out += c;
        }
        const bool prepend = p.prepend == PreTokenizer::Prepend::kAlways ||
                             (p.prepend == PreTokenizer::Prepend::kFirst && piece.at_start);
        if (prepend && out.compare(0, p.replacement.size(), p.replacement) != 0) out.insert(0, p.replacement);
        piece.text = std::move(out);
      }
      if (!p.split) return true;
      std::size_t i = 0;
      const char32_t mark = p.replacement.empty() ? 0 : utf8_next(p.replacement, i);
      return split_pieces(pieces, [&](const Piece& piece, std::vector<Pattern::Span>& spans, std::string&) {
        char_spans(piece.text, [&](char32_t c) { return c == mark; }, spans);
        apply_behavior(spans, SplitBehavior::kMergedWithNext, false);
        return true;
      }, error);
    }
    case PreTokenizer::Kind::kDigits:
      return split_pieces(pieces, [&](const Piece& piece, std::vector<Pattern::Span>& spans, std::string&) {
        char_spans(piece.text, is_number, spans);
        apply_behavior(spans, p.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false);
        return true;
      }, error);
  }
  return true;
}

// --- Post-processors ---

void post_process(const PostProcessor& p, std::vector<std::int32_t>& ids) {
  switch (p.kind) {
    case PostProcessor::Kind::kSequence:
      for (const auto& c : p.children) post_process(c, ids);
      return;
    case PostProcessor::Kind::kByteLevel: return;
    case PostProcessor::Kind::kTemplate:
    case PostProcessor::Kind::kWrap:
      ids.insert(ids.begin(), p.before.begin(), p.before.end());
      ids.insert(ids.end(), p.after.begin(), p.after.end());
      return;
  }
}

// --- Decoders ---

namespace {

// The byte a "<0xAB>" token stands for, or -1 (hexadecimal of either case, and a leading '+' as Rust's
// u8::from_str_radix takes it).
int byte_fallback_byte(std::string_view t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
  };
  if (t[3] == '+') return digit(t[4]);
  const int hi = digit(t[3]), lo = digit(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace

bool decode_chain(const Decoder& d, std::vector<std::string>& tokens, std::string& error) {
  switch (d.kind) {
    case Decoder::Kind::kSequence:
      for (const auto& c : d.children)
        if (!decode_chain(c, tokens, error)) return false;
      return true;
    case Decoder::Kind::kByteLevel: {
      std::string bytes;
      for (const auto& t : tokens) {
        const std::size_t mark = bytes.size();
        bool all = true;
        for (std::size_t i = 0; i < t.size();) {
          const int b = byte_level_byte(utf8_next(t, i));
          if (b < 0) {
            all = false;
            break;
          }
          bytes += static_cast<char>(b);
        }
        if (!all) bytes.resize(mark), bytes += t;  // a token outside the byte alphabet stays as it is
      }
      tokens.assign(1, utf8_lossy(bytes));
      return true;
    }
    case Decoder::Kind::kReplace:
      for (auto& t : tokens)
        if (!replace(d.pattern, d.text, t, error)) return false;
      return true;
    case Decoder::Kind::kByteFallback: {
      std::vector<std::string> out;
      std::string pending;
      auto flush = [&] {
        if (pending.empty()) return;
        if (utf8_invalid_at(pending) == pending.size()) out.push_back(pending);
        else out.insert(out.end(), pending.size(), "\xEF\xBF\xBD");  // one U+FFFD per byte
        pending.clear();
      };
      for (auto& t : tokens) {
        const int b = byte_fallback_byte(t);
        if (b >= 0) {
          pending += static_cast<char>(b);
          continue;
        }
        flush();
        out.push_back(std::move(t));
      }
      flush();
      tokens = std::move(out);
      return true;
    }
    case Decoder::Kind::kFuse: {
      std::string all;
      for (const auto& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      return true;
    }
    case Decoder::Kind::kStrip: {
      std::size_t k = 0;
      const char32_t content = d.text.empty() ? 0 : utf8_next(d.text, k);
      for (auto& t : tokens) {
        std::u32string chars;
        for (std::size_t i = 0; i < t.size();) chars += utf8_next(t, i);
        std::size_t start = 0;
        for (std::size_t i = 0; i < d.start && i < chars.size() && chars[i] == content; ++i) start = i + 1;
        std::size_t stop = chars.size();
        for (std::size_t i = 0; i < d.stop && i < chars.size() - start; ++i) {
          const std::size_t index = chars.size() - i - 1;
          if (chars[index] != content) break;
          stop = index;
        }
        std::string out;
        for (std::size_t i = start; i < stop; ++i) utf8_append(out, chars[i]);
        t = std::move(out);
      }
      return true;
    }
    case Decoder::Kind::kMetaspace: {
      std::size_t k = 0;
      const char32_t mark = d.text.empty() ? 0 : utf8_next(d.text, k);
      for (std::size_t n = 0; n < tokens.size(); ++n) {
        std::string out;
        const std::string& t = tokens[n];
        for (std::size_t i = 0; i < t.size();) {
          const std::size_t at = i;
          const char32_t c = utf8_next(t, i);
          if (c != mark) out.append(t, at, i - at);
          else if (!(n == 0 && d.strip_first)) out += ' ';
        }
        tokens[n] = std::move(out);
      }
      return true;
    }
  }
  return true;
}

std::string token_bytes(const Decoder& d, std::string token) {
  // Stages that read characters leave a token alone once an earlier one made it raw bytes.
  const bool text = utf8_invalid_at(token) == token.size();
  switch (d.kind) {
    case Decoder::Kind::kSequence:
      for (const auto& c : d.children) token = token_bytes(c, std::move(token));
      return token;
    case Decoder::Kind::kByteLevel: {
      if (!text) return token;
      std::string bytes;
      for (std::size_t i = 0; i < token.size();) {
        const int b = byte_level_byte(utf8_next(token, i));
        if (b < 0) return token;
        bytes += static_cast<char>(b);
      }
      return bytes;
    }
    case Decoder::Kind::kReplace: {
      if (!text) return token;
      std::string error;
      std::string copy = token;
      return replace(d.pattern, d.text, copy, error) ? copy : token;
    }
    case Decoder::Kind::kByteFallback: {
      const int b = byte_fallback_byte(token);
      return b < 0 ? token : std::string(1, static_cast<char>(b));
    }
    case Decoder::Kind::kMetaspace: {
      if (!text) return token;
      std::size_t k = 0;
      const char32_t mark = d.text.empty() ? 0 : utf8_next(d.text, k);
      std::string out;
      for (std::size_t i = 0; i < token.size();) {
        const std::size_t at = i;
        if (utf8_next(token, i) == mark) out += ' ';
        else out.append(token, at, i - at);
      }
      return out;
    }
    case Decoder::Kind::kFuse:
    case Decoder::Kind::kStrip: return token;
  }
  return token;
}

}  // namespace attnlab::tokenizer
