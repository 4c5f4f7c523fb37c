// The vocabulary (token bytes <-> id) and the BPE merge table, as flat arrays: one buffer of all token bytes, an
// offset per id, and open-addressing hash tables of 32-bit slots — a 256k-token vocabulary with 580k merges takes
// about 25 MB, a std::unordered_map of std::string several times that.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash.h"

namespace attnlab::tokenizer {

class Vocab {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  /** Room for `ids` ids (0…ids-1) and about `bytes` bytes of tokens. */
  void reset(std::size_t ids, std::size_t bytes);
  /** Sets the token of a free id; false if the token already has another id (the caller names both). */
  bool set(std::uint32_t id, std::string_view token, std::uint32_t& existing);
  /** The id of a token, or kNone. */
  std::uint32_t find(std::string_view token) const noexcept;
  /** The token of an id (empty and !has(id) when the id has none). */
  std::string_view token(std::uint32_t id) const noexcept {
    return has(id) ? std::string_view(bytes_).substr(starts_[id], lengths_[id]) : std::string_view();
  }
  bool has(std::uint32_t id) const noexcept { return id < size() && starts_[id] != kNone; }
  std::size_t size() const noexcept { return starts_.size(); }
  std::size_t memory_bytes() const noexcept;

 private:
  std::string bytes_;
  std::vector<std::uint32_t> starts_;   // per id: offset in bytes_, kNone when free
  std::vector<std::uint32_t> lengths_;  // per id
  // Open addressing: per slot the token's hash (high 32 bits) and id (low 32), ~0 when empty; the hash is
  // compared before the token's bytes are touched.
  std::vector<std::uint64_t> slots_;

  void insert_slot(std::uint32_t id, std::uint64_t hash);
  void grow_slots();
  std::size_t count_ = 0;
};

/** Merges: (left id, right id) -> (rank, merged id). A pair given twice keeps its later rank, as a hash map
 *  collected in order would. */
class MergeTable {
 public:
  struct Merge {
    std::uint32_t rank, id;
  };
  void reserve(std::size_t merges);
  void insert(std::uint32_t left, std::uint32_t right, std::uint32_t rank, std::uint32_t id);
  const Merge* find(std::uint32_t left, std::uint32_t right) const noexcept;
  std::size_t size() const noexcept { return count_; }
  std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    std::uint32_t left = Vocab::kNone, right = 0;
    Merge merge{0, 0};
  };
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
  unsigned shift_ = 60;  // 64 - log2(slots): the index is the top bits of the multiplied key
  std::size_t index(std::uint32_t left, std::uint32_t right) const noexcept;
  void grow();
};

}  // namespace attnlab::tokenizer
