// A small JSON reader (RFC 8259) for safetensors headers, written for hostile input: every byte is checked, nesting
// is limited, numbers and strings are validated (UTF-8, escapes, surrogate pairs), duplicate keys are refused, and
// errors say where. No exceptions; nothing is read past the end of the text.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::model::json {

struct Value {
  enum class Type : unsigned char { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  double number = 0;
  bool is_index = false;      // a non-negative integer written without fraction or exponent, below 2⁵³
  std::uint64_t index = 0;    // its exact value
  std::string string;
  std::vector<Value> array;
  std::vector<std::string> keys;  // an object's keys and their values, in document order (vectors of the
  std::vector<Value> members;     // incomplete Value are allowed; pairs of it are not)

  const Value* find(std::string_view key) const noexcept;
};

inline constexpr std::size_t kMaxDepth = 64;
inline constexpr std::size_t kMaxValues = std::size_t{1} << 18;  // bounds the memory a hostile document can claim

// One document, whitespace around it allowed. false with `error` set ("at byte N: …") when it is not valid JSON.
bool parse(std::string_view text, Value& out, std::string& error);

// s as a JSON string literal, quotes included (control characters escaped).
std::string quote(std::string_view s);

}  // namespace attnlab::model::json
