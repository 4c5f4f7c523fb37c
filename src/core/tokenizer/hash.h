// The tokenizer's one hash of byte strings (vocabulary, word cache, JSON keys).
#pragma once
#include <cstdint>
#include <string_view>

namespace attnlab::tokenizer {

inline std::uint64_t hash_bytes(std::string_view s) noexcept {
  // FNV-1a, then a multiply-xorshift so that the low bits (a slot index) and the high bits mix all of it.
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

}  // namespace attnlab::tokenizer
