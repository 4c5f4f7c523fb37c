#include "json_reader.h"

#include "unicode.h"

namespace attnlab::tokenizer {

bool JsonReader::fail(const std::string& what) {
  if (!error_.empty()) return false;
  // Line and column of the cursor in the whole document, for a reader of a recorded value too.
  const std::size_t at = offset() < whole_.size() ? offset() : whole_.size();
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < at; ++i) {
    if (whole_[i] == '\n') ++line, column = 1;
    else if ((static_cast<unsigned char>(whole_[i]) & 0xC0) != 0x80) ++column;
  }
  error_ = "at byte " + std::to_string(at) + " (line " + std::to_string(line) + ", column " + std::to_string(column) +
           "): " + what;
  return false;
}

bool JsonReader::expect(char c, const char* what) {
  if (peek() != c || pos_ >= t_.size()) return fail(pos_ >= t_.size() ? std::string("the text ends where ") + what + " was expected" : std::string("expected ") + what);
  ++pos_;
  return true;
}

bool JsonReader::enter() {
  if (++depth_ > kMaxDepth) return fail("nesting deeper than 64 levels");
  return true;
}

JsonReader::Type JsonReader::type() {
  ws();
  switch (peek()) {
    case 'n': return Type::null;
    case 't':
    case 'f': return Type::boolean;
    case '"': return Type::string;
    case '[': return Type::array;
    case '{': return Type::object;
    case '-':
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
      return Type::number;
    default: return Type::invalid;
  }
}

bool JsonReader::literal(std::string_view word) {
  if (t_.substr(pos_, word.size()) != word) return fail("an invalid literal (expected " + std::string(word) + ")");
  pos_ += word.size();
  return true;
}

bool JsonReader::null() {
  if (type() != Type::null) return fail("expected null");
  return literal("null");
}

bool JsonReader::boolean(bool& v) {
  if (type() != Type::boolean) return fail("expected true or false");
  v = peek() == 't';
  return literal(v ? "true" : "false");
}

bool JsonReader::number_span(std::size_t& begin, bool& integral) {
  ws();
  begin = pos_;
  integral = true;
  auto digits = [&] {
    const std::size_t s = pos_;
    while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') ++pos_;
    return pos_ > s;
  };
  if (peek() == '-') ++pos_, integral = false;
  if (peek() == '0') {
    ++pos_;
  } else if (!digits()) {
    return fail("an invalid number");
  }
  if (peek() == '.') {
    ++pos_, integral = false;
    if (!digits()) return fail("an invalid number (digits must follow '.')");
  }
  if (peek() == 'e' || peek() == 'E') {
    ++pos_, integral = false;
    if (peek() == '+' || peek() == '-') ++pos_;
    if (!digits()) return fail("an invalid number (digits must follow the exponent)");
  }
  return true;
}

bool JsonReader::number(std::string_view& literal) {
  if (type() != Type::number) return fail("expected a number");
  std::size_t begin;
  bool integral;
  if (!number_span(begin, integral)) return false;
  literal = t_.substr(begin, pos_ - begin);
  return true;
}

bool JsonReader::integer(std::uint64_t& v, std::uint64_t max) {
  if (type() != Type::number) return fail("expected a non-negative integer");
  const std::size_t at = pos_;
  std::size_t begin;
  bool integral;
  if (!number_span(begin, integral)) return false;
  if (!integral) return pos_ = at, fail("expected a non-negative integer without fraction or exponent, got " + std::string(t_.substr(begin, pos_ - begin)));
  v = 0;
  for (std::size_t i = begin; i < pos_; ++i) {
    v = v * 10 + static_cast<std::uint64_t>(t_[i] - '0');
    if (v > max) return pos_ = at, fail("an integer above " + std::to_string(max) + ": " + std::string(t_.substr(begin, pos_ - begin)));
  }
  return true;
}

bool JsonReader::key(std::string_view& k) {
  if (peek() != '"') return fail(pos_ >= t_.size() ? "the text ends where a key was expected" : "expected a string key");
  return string(k);
}

bool JsonReader::string(std::string_view& v) {
  if (type() != Type::string) return fail("expected a string");
  const std::size_t open = pos_++;
  const std::size_t begin = pos_;
  bool escaped = false;
  // First pass: find the end, checking bytes; strings without escapes are returned in place.
  while (pos_ < t_.size() && t_[pos_] != '"') {
    const auto c = static_cast<unsigned char>(t_[pos_]);
    if (c < 0x20) return fail("a control character inside a string (it must be escaped)");
    if (c == '\\') {
      escaped = true;
      pos_ += 2;
      continue;
    }
    if (c < 0x80) {
      ++pos_;
      continue;
    }
    const std::size_t n = utf8_sequence(t_, pos_);
    if (!n) return fail("a string that is not valid UTF-8");
    pos_ += n;
  }
  if (pos_ >= t_.size()) return pos_ = open, fail("an unterminated string");
  const std::size_t close = pos_++;
  if (!escaped) {
    v = t_.substr(begin, close - begin);
    return true;
  }
  scratch_.clear();
  auto hex4 = [&](std::size_t at, std::uint32_t& u) {
    if (at + 4 > close) return false;
    u = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
      const char h = t_[k];
      const int d = h >= '0' && h <= '9' ? h - '0' : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1;
      if (d < 0) return false;
      u = u * 16 + static_cast<std::uint32_t>(d);
    }
    return true;
  };
  for (std::size_t i = begin; i < close;) {
    if (t_[i] != '\\') {
      scratch_ += t_[i++];
      continue;
    }
    const std::size_t at = i;
    if (i + 1 >= close) return pos_ = at, fail("a '\\' at the end of a string");
    const char e = t_[i + 1];
    i += 2;
    switch (e) {
      case '"': scratch_ += '"'; break;
      case '\\': scratch_ += '\\'; break;
      case '/': scratch_ += '/'; break;
      case 'b': scratch_ += '\b'; break;
      case 'f': scratch_ += '\f'; break;
      case 'n': scratch_ += '\n'; break;
      case 'r': scratch_ += '\r'; break;
      case 't': scratch_ += '\t'; break;
      case 'u': {
        std::uint32_t u;
        if (!hex4(i, u)) return pos_ = at, fail("a bad \\u escape (four hexadecimal digits expected)");
        i += 4;
        if (u >= 0xDC00 && u <= 0xDFFF) return pos_ = at, fail("a lone trailing surrogate \\u" + std::string(t_.substr(at + 2, 4)));
        if (u >= 0xD800 && u <= 0xDBFF) {
          std::uint32_t low;
          if (i + 1 >= close || t_[i] != '\\' || t_[i + 1] != 'u' || !hex4(i + 2, low) || low < 0xDC00 || low > 0xDFFF)
            return pos_ = at, fail("a lone leading surrogate \\u" + std::string(t_.substr(at + 2, 4)));
          i += 6;
          u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
        }
        utf8_append(scratch_, u);
        break;
      }
      default: return pos_ = at, fail(std::string("an invalid escape \\") + e);
    }
  }
  v = scratch_;
  return true;
}

bool JsonReader::skip(std::size_t& begin, std::size_t& end) {
  ws();
  begin = offset();
  bool ok = true;
  switch (type()) {
    case Type::null: ok = null(); break;
    case Type::boolean: {
      bool b;
      ok = boolean(b);
      break;
    }
    case Type::number: {
      std::size_t s;
      bool integral;
      ok = number_span(s, integral);
      break;
    }
    case Type::string: {
      std::string_view s;
      ok = string(s);
      break;
    }
    case Type::array: ok = array([&](std::size_t) { return skip(); }); break;
    // Duplicate keys matter where a value is read, and every value that is read is read by object(): a skipped
    // one is only checked for syntax (a vocabulary of 256k keys would otherwise be hashed twice).
    case Type::object: ok = object([&](std::string_view) { return skip(); }, true); break;
    case Type::invalid:
      ok = fail(pos_ >= t_.size() ? "the text ends where a value was expected" : "expected a value");
      break;
  }
  end = offset();
  return ok;
}

bool JsonReader::end() {
  ws();
  if (pos_ != t_.size()) return fail("unexpected text after the JSON value");
  return true;
}

}  // namespace attnlab::tokenizer
