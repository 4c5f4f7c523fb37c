#include "vocab.h"

namespace attnlab::tokenizer {

void Vocab::reset(std::size_t ids, std::size_t bytes) {
  bytes_.clear();
  bytes_.reserve(bytes);
  starts_.assign(ids, kNone);
  lengths_.assign(ids, 0);
  std::size_t cap = 16;
  while (cap < ids * 2) cap *= 2;  // load factor at most 1/2
  slots_.assign(cap, kEmpty);
  count_ = 0;
}

std::uint32_t Vocab::find(std::string_view token) const noexcept {
  if (slots_.empty()) return kNone;
  const std::uint64_t h = hash_bytes(token);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const std::uint64_t slot = slots_[i];
    if (slot == kEmpty) return kNone;
    const auto id = static_cast<std::uint32_t>(slot);
    if ((slot >> 32) == (h >> 32) && lengths_[id] == token.size() &&
        std::string_view(bytes_).substr(starts_[id], lengths_[id]) == token)
      return id;
  }
}

void Vocab::insert_slot(std::uint32_t id, std::uint64_t hash) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i] != kEmpty) i = (i + 1) & mask;
  slots_[i] = (hash >> 32 << 32) | id;
}

void Vocab::grow_slots() {
  std::vector<std::uint64_t> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, kEmpty);
  for (std::uint64_t slot : old)
    if (slot != kEmpty) insert_slot(static_cast<std::uint32_t>(slot), hash_bytes(token(static_cast<std::uint32_t>(slot))));
}

bool Vocab::set(std::uint32_t id, std::string_view token, std::uint32_t& existing) {
  existing = find(token);
  if (existing != kNone) return false;
  if ((count_ + 1) * 2 > slots_.size()) grow_slots();
  starts_[id] = static_cast<std::uint32_t>(bytes_.size());
  lengths_[id] = static_cast<std::uint32_t>(token.size());
  bytes_.append(token);
  insert_slot(id, hash_bytes(token));
  ++count_;
  return true;
}

std::size_t Vocab::memory_bytes() const noexcept {
  return bytes_.capacity() + (starts_.capacity() + lengths_.capacity()) * sizeof(std::uint32_t) +
         slots_.capacity() * sizeof(std::uint64_t);
}

std::size_t MergeTable::index(std::uint32_t left, std::uint32_t right) const noexcept {
  const std::uint64_t key = (std::uint64_t{left} << 32) | right;
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
}

void MergeTable::reserve(std::size_t merges) {
  std::size_t cap = 16;
  shift_ = 60;
  while (cap * 3 < merges * 4) cap *= 2, --shift_;  // load factor at most 3/4
  slots_.assign(cap, Slot{});
  count_ = 0;
}

void MergeTable::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{});
  --shift_;
  count_ = 0;
  for (const Slot& s : old)
    if (s.left != Vocab::kNone) insert(s.left, s.right, s.merge.rank, s.merge.id);
}

void MergeTable::insert(std::uint32_t left, std::uint32_t right, std::uint32_t rank, std::uint32_t id) {
  if (slots_.empty()) reserve(16);
  else if ((count_ + 1) * 4 > slots_.size() * 3) grow();
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = index(left, right);; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.left == Vocab::kNone) {
      s = Slot{left, right, {rank, id}};
      ++count_;
      return;
    }
    if (s.left == left && s.right == right) {
      s.merge = {rank, id};
      return;
    }
  }
}

const MergeTable::Merge* MergeTable::find(std::uint32_t left, std::uint32_t right) const noexcept {
  if (slots_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = index(left, right);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.left == Vocab::kNone) return nullptr;
    if (s.left == left && s.right == right) return &s.merge;
  }
}

}  // namespace attnlab::tokenizer
