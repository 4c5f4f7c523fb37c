// A pull reader for JSON (RFC 8259) that builds no tree: the caller walks objects and arrays with callbacks and
// reads each value where it stands, so a 17 MB tokenizer.json costs the tokenizer's own tables and nothing more.
// Written for hostile input like model/json.h: every byte checked, strings validated (UTF-8, escapes, surrogate
// pairs), nesting limited, duplicate keys refused, errors say where ("at byte N, line L, column C: …").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash.h"

namespace attnlab::tokenizer {

class JsonReader {
 public:
  enum class Type : unsigned char { null, boolean, number, string, array, object, invalid };

  /** Reads `text`; `base` is its offset in `whole` (a value recorded by skip() and read later). */
  explicit JsonReader(std::string_view text) : JsonReader(text, text, 0) {}
  JsonReader(std::string_view whole, std::string_view text, std::size_t base)
      : whole_(whole), t_(text), base_(base) {}

  /** The type of the value at the cursor (after white space), without consuming it. */
  Type type();
  bool null();
  bool boolean(bool& v);
  /** A number (any JSON number), as its literal text. */
  bool number(std::string_view& literal);
  /** A non-negative integer written without fraction or exponent, at most `max`. */
  bool integer(std::uint64_t& v, std::uint64_t max);
  /** A string, decoded: a view of the text when it has no escapes, else of a buffer valid until the next call. */
  bool string(std::string_view& v);
  /** Skips one value (checking its syntax; duplicate keys are left to whoever reads it), giving its extent
   *  [begin, end) in `whole`. */
  bool skip(std::size_t& begin, std::size_t& end);
  bool skip() {
    std::size_t b, e;
    return skip(b, e);
  }

  /**
   * `{ "key": value, … }`: calls on_key(key) for each member, which must consume the value (or return false to
   * stop with an error of its own); `key` is valid until the next string is read. Duplicate keys are refused
   * here unless `unique_keys_checked_by_caller` (a vocabulary checks its own, in its hash table).
   */
  template <class F>
  bool object(F&& on_key, bool unique_keys_checked_by_caller = false);
  /** `[ value, … ]`: calls on_element(index), which must consume the element. */
  template <class F>
  bool array(F&& on_element);

  /** Checks that only white space follows the value. */
  bool end();

  bool fail(const std::string& what);
  const std::string& error() const { return error_; }
  /** The absolute byte offset of the cursor in `whole`. */
  std::size_t offset() const { return base_ + pos_; }
  std::string_view whole() const { return whole_; }

 private:
  std::string_view whole_, t_;
  std::size_t base_ = 0, pos_ = 0, depth_ = 0;
  std::string error_, scratch_;

  static constexpr std::size_t kMaxDepth = 64;

  void ws() noexcept {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  char peek() const noexcept { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  bool expect(char c, const char* what);
  bool literal(std::string_view word);
  bool enter();
  bool number_span(std::size_t& begin, bool& integral);
  bool key(std::string_view& k);

  // The keys of one object: a short list searched in turn, hashed once it grows (objects of unknown fields can
  // be large).
  class KeySet {
   public:
    bool insert(std::string_view k) {
      if (list_.size() < 16) {
        for (const auto& s : list_)
          if (s == k) return false;
        list_.emplace_back(k);
        return true;
      }
      if (table_.size() < (list_.size() + 1) * 2) rehash();
      const std::size_t mask = table_.size() - 1;
      std::size_t i = hash_bytes(k) & mask;
      for (; table_[i] != kEmpty; i = (i + 1) & mask)
        if (list_[table_[i]] == k) return false;
      table_[i] = static_cast<std::uint32_t>(list_.size());
      list_.emplace_back(k);
      return true;
    }

   private:
    static constexpr std::uint32_t kEmpty = 0xFFFFFFFF;
    std::vector<std::string> list_;
    std::vector<std::uint32_t> table_;  // indices into list_ by hash
    void rehash() {
      table_.assign(table_.empty() ? 64 : table_.size() * 2, kEmpty);
      const std::size_t mask = table_.size() - 1;
      for (std::uint32_t n = 0; n < list_.size(); ++n) {
        std::size_t i = hash_bytes(list_[n]) & mask;
        while (table_[i] != kEmpty) i = (i + 1) & mask;
        table_[i] = n;
      }
    }
  };
};

template <class F>
bool JsonReader::object(F&& on_key, bool unique_keys_checked_by_caller) {
  if (type() != Type::object) return fail("expected an object");
  if (!enter()) return false;
  ++pos_;
  ws();
  KeySet seen;
  if (peek() == '}') return ++pos_, --depth_, true;
  for (;;) {
    ws();
    const std::size_t key_at = pos_;
    std::string_view k;
    if (!key(k)) return false;
    if (!unique_keys_checked_by_caller && !seen.insert(k))
      return pos_ = key_at, fail("duplicate key \"" + std::string(k) + "\"");
    ws();
    if (!expect(':', "':' after a key")) return false;
    ws();
    if (!on_key(k)) return false;
    ws();
    if (peek() == ',') {
      ++pos_;
      continue;
    }
    if (!expect('}', "',' or '}' after an object member")) return false;
    --depth_;
    return true;
  }
}

template <class F>
bool JsonReader::array(F&& on_element) {
  if (type() != Type::array) return fail("expected an array");
  if (!enter()) return false;
  ++pos_;
  ws();
  if (peek() == ']') return ++pos_, --depth_, true;
  for (std::size_t i = 0;; ++i) {
    ws();
    if (!on_element(i)) return false;
    ws();
    if (peek() == ',') {
      ++pos_;
      continue;
    }
    if (!expect(']', "',' or ']' after an array element")) return false;
    --depth_;
    return true;
  }
}

}  // namespace attnlab::tokenizer
