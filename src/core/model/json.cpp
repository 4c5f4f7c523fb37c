#include "json.h"

#include <cstdlib>
#include <cstring>

namespace attnlab::model::json {

const Value* Value::find(std::string_view key) const noexcept {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &members[i];
  return nullptr;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  bool document(Value& out, std::string& error) {
    ws();
    bool ok = value(out, 0);
    if (ok) ws();
    if (ok && pos_ != t_.size()) ok = fail("unexpected text after the JSON value");
    if (!ok) {
      error = "at byte " + std::to_string(pos_) + ": " + error_;
      return false;
    }
    return true;
  }

 private:
  std::string_view t_;
  std::size_t pos_ = 0, values_ = 0;
  std::string error_;

  bool fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }
  bool at_end() const noexcept { return pos_ >= t_.size(); }
  unsigned char peek() const noexcept { return at_end() ? 0 : static_cast<unsigned char>(t_[pos_]); }
  void ws() noexcept {
    while (!at_end() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  bool literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (t_.substr(pos_, n) != word) return fail("invalid literal");
    pos_ += n;
    return true;
  }

  bool value(Value& v, std::size_t depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64 levels");
    if (++values_ > kMaxValues) return fail("more than 262144 values");
    switch (peek()) {
      case '{': return object(v, depth);
      case '[': return array(v, depth);
      case '"': v.type = Value::Type::string; return string(v.string);
      case 't': v.type = Value::Type::boolean, v.boolean = true; return literal("true");
      case 'f': v.type = Value::Type::boolean, v.boolean = false; return literal("false");
      case 'n': v.type = Value::Type::null; return literal("null");
      default: return number(v);
    }
  }

  bool object(Value& v, std::size_t depth) {
    v.type = Value::Type::object;
    ++pos_;  // {
    ws();
    if (peek() == '}') return ++pos_, true;
    for (;;) {
      ws();
      if (peek() != '"') return fail("expected a string key");
      std::string key;
      if (!string(key)) return false;
      for (const auto& k : v.keys)
        if (k == key) return fail("duplicate key");
      ws();
      if (peek() != ':') return fail("expected ':'");
      ++pos_;
      ws();
      v.keys.push_back(std::move(key));
      v.members.emplace_back();
      if (!value(v.members.back(), depth + 1)) return false;
      ws();
      if (peek() == ',') { ++pos_; continue; }
      if (peek() == '}') return ++pos_, true;
      return fail("expected ',' or '}'");
    }
  }

  bool array(Value& v, std::size_t depth) {
    v.type = Value::Type::array;
    ++pos_;  // [
    ws();
    if (peek() == ']') return ++pos_, true;
    for (;;) {
      ws();
      v.array.emplace_back();
      if (!value(v.array.back(), depth + 1)) return false;
      ws();
      if (peek() == ',') { ++pos_; continue; }
      if (peek() == ']') return ++pos_, true;
      return fail("expected ',' or ']'");
    }
  }

  static int hex(unsigned char c) noexcept {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  }
  bool hex4(std::uint32_t& cp) {
    if (t_.size() - pos_ < 4) return fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = hex(static_cast<unsigned char>(t_[pos_ + std::size_t(i)]));
      if (h < 0) return fail("invalid \\u escape");
      cp = cp * 16 + std::uint32_t(h);
    }
    pos_ += 4;
    return true;
  }
  static void utf8(std::uint32_t cp, std::string& out) {
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) out += char(0xc0 | (cp >> 6)), out += char(0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out += char(0xe0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3f)), out += char(0x80 | (cp & 0x3f));
    else
      out += char(0xf0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3f)), out += char(0x80 | ((cp >> 6) & 0x3f)),
          out += char(0x80 | (cp & 0x3f));
  }
  // One UTF-8 sequence starting at pos_ (already known ≥ 0x80): well-formed per RFC 3629, copied through.
  bool raw_utf8(std::string& out) {
    const unsigned char c = peek();
    std::size_t n;
    std::uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07, min = 0x10000;
    else return fail("invalid UTF-8");
    if (t_.size() - pos_ < n) return fail("truncated UTF-8");
    for (std::size_t i = 1; i < n; ++i) {
      const unsigned char cc = static_cast<unsigned char>(t_[pos_ + i]);
      if ((cc & 0xc0) != 0x80) return fail("invalid UTF-8");
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return fail("invalid UTF-8");
    out.append(t_.substr(pos_, n));
    pos_ += n;
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    for (;;) {
      if (at_end()) return fail("unterminated string");
      const unsigned char c = peek();
      if (c == '"') return ++pos_, true;
      if (c < 0x20) return fail("control character in a string");
      if (c >= 0x80) {
        if (!raw_utf8(out)) return false;
        continue;
      }
      if (c != '\\') {
        out += char(c), ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) return fail("unterminated escape");
      const char e = t_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp;
          if (!hex4(cp)) return false;
          if (cp >= 0xdc00 && cp <= 0xdfff) return fail("lone low surrogate");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            std::uint32_t lo;
            if (t_.substr(pos_, 2) != "\\u") return fail("lone high surrogate");
            pos_ += 2;
            if (!hex4(lo)) return false;
            if (lo < 0xdc00 || lo > 0xdfff) return fail("invalid surrogate pair");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          utf8(cp, out);
          break;
        }
        default: return fail("invalid escape");
      }
    }
  }

  static bool digit(unsigned char c) noexcept { return c >= '0' && c <= '9'; }
  bool number(Value& v) {
    const std::size_t start = pos_;
    bool negative = false, fraction = false, exponent = false;
    if (peek() == '-') negative = true, ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digit(peek())) {
      while (digit(peek())) ++pos_;
    } else {
      return fail(negative ? "invalid number" : "unexpected character");
    }
    if (peek() == '.') {
      fraction = true, ++pos_;
      if (!digit(peek())) return fail("invalid number");
      while (digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      exponent = true, ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digit(peek())) return fail("invalid number");
      while (digit(peek())) ++pos_;
    }
    const std::string_view text = t_.substr(start, pos_ - start);
    v.type = Value::Type::number;
    if (!negative && !fraction && !exponent && text.size() <= 16) {  // < 10¹⁶: exact in uint64, checked below 2⁵³
      std::uint64_t x = 0;
      for (char ch : text) x = x * 10 + std::uint64_t(ch - '0');
      if (x < (std::uint64_t(1) << 53)) v.is_index = true, v.index = x;
    }
    const std::string copy(text);  // strtod needs a terminated string; JSON's grammar is a subset of strtod's
    v.number = std::strtod(copy.c_str(), nullptr);
    return true;
  }
};

}  // namespace

bool parse(std::string_view text, Value& out, std::string& error) {
  out = Value{};
  return Parser(text).document(out, error);
}

std::string quote(std::string_view s) {
  std::string r = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') r += '\\', r += ch;
    else if (c < 0x20) {
      static const char* digits = "0123456789abcdef";
      r += "\\u00", r += digits[c >> 4], r += digits[c & 15];
    } else r += ch;
  }
  return r + "\"";
}

}  // namespace attnlab::model::json
