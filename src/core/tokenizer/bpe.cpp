#include "bpe.h"

#include <algorithm>

#include "unicode.h"

namespace attnlab::tokenizer {

namespace {
constexpr std::size_t kCacheWordBytes = 256;    // longer words are not cached
constexpr std::size_t kCacheSlots = 1 << 14;     // at most half of them used: 8192 words
constexpr std::size_t kCacheBytes = 1 << 19;     // and about 512 KiB of their bytes and ids
}  // namespace

const Bpe::CacheEntry* Bpe::cache_find(std::string_view word, std::uint64_t hash) const {
  if (cache_.empty()) return nullptr;
  for (std::size_t i = hash & (kCacheSlots - 1);; i = (i + 1) & (kCacheSlots - 1)) {
    const CacheEntry& e = cache_[i];
    if (!e.used) return nullptr;
    if (e.hash == hash && std::string_view(cache_words_).substr(e.word_at, e.word_len) == word) return &e;
  }
}

void Bpe::cache_insert(std::string_view word, std::uint64_t hash, const std::int32_t* ids, std::size_t n) {
  if (cache_.empty() || cache_count_ * 2 >= kCacheSlots || cache_words_.size() + cache_ids_.size() * 4 > kCacheBytes) {
    cache_.assign(kCacheSlots, CacheEntry{});
    cache_words_.clear(), cache_ids_.clear(), cache_count_ = 0;
  }
  std::size_t i = hash & (kCacheSlots - 1);
  while (cache_[i].used) i = (i + 1) & (kCacheSlots - 1);
  cache_[i] = {hash, static_cast<std::uint32_t>(cache_words_.size()), static_cast<std::uint32_t>(word.size()),
               static_cast<std::uint32_t>(cache_ids_.size()), static_cast<std::uint32_t>(n), true};
  cache_words_.append(word);
  cache_ids_.insert(cache_ids_.end(), ids, ids + n);
  ++cache_count_;
}

void Bpe::index_tokens() {
  static const char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
    byte_tokens_[b] = vocab.find(std::string_view(name, 6));
  }
  cut_before_.assign(0x10000 / 64, 0);
  for (std::uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view t = vocab.token(id);
    if (utf8_invalid_at(t) != t.size()) continue;
    std::size_t i = 0;
    const char32_t first = utf8_next(t, i);
    if (i == t.size() && first < 0x10000) cut_before_[first >> 6] |= std::uint64_t{1} << (first & 63);
  }
  for (std::uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view t = vocab.token(id);
    if (utf8_invalid_at(t) != t.size()) continue;
    std::size_t i = 0;
    char32_t prev = utf8_next(t, i);
    while (i < t.size()) {
      const char32_t c = utf8_next(t, i);
      if (c != prev && c < 0x10000) cut_before_[c >> 6] &= ~(std::uint64_t{1} << (c & 63));
      prev = c;
    }
  }
  char_tokens_.assign(0x800, Vocab::kNone);
  char_cache_.fill({0, Vocab::kNone});  // code point 0 is in the table, never looked up here
  std::string ch;
  for (char32_t c = 0; c < 0x800; ++c) {
    ch.clear();
    utf8_append(ch, c);
    char_tokens_[c] = vocab.find(ch);
  }
}

std::size_t Bpe::memory_bytes() const {
  return vocab.memory_bytes() + merges.memory_bytes() + char_tokens_.capacity() * sizeof(std::uint32_t) +
         cut_before_.capacity() * sizeof(std::uint64_t) + cache_.capacity() * sizeof(CacheEntry) + cache_words_.capacity() +
         cache_ids_.capacity() * sizeof(std::int32_t) + symbols_.capacity() * sizeof(Symbol) + heap_.capacity() * sizeof(Candidate);
}

void Bpe::tokenize(std::string_view word, std::vector<std::int32_t>& out) {
  if (ignore_merges) {
    const std::uint32_t id = vocab.find(word);
    if (id != Vocab::kNone) return out.push_back(static_cast<std::int32_t>(id));
  }
  if (word.size() < kCacheWordBytes || cut_before_.empty()) return tokenize_part(word, out);
  // A long word: merged part by part, cut where no merge can reach across (see cut_before_).
  std::size_t start = 0, i = 0;
  char32_t prev = 0;
  while (i < word.size()) {
    const std::size_t at = i;
    const char32_t c = utf8_next(word, i);
    if (at > start && c != prev && c < 0x10000 && ((cut_before_[c >> 6] >> (c & 63)) & 1)) {
      tokenize_part(word.substr(start, at - start), out);
      start = at;
    }
    prev = c;
  }
  tokenize_part(word.substr(start), out);
}

void Bpe::tokenize_part(std::string_view word, std::vector<std::int32_t>& out) {
  const bool cached = word.size() < kCacheWordBytes;
  const std::uint64_t hash = cached ? hash_bytes(word) : 0;
  if (cached)
    if (const CacheEntry* e = cache_find(word, hash)) {
      out.insert(out.end(), cache_ids_.begin() + e->ids_at, cache_ids_.begin() + e->ids_at + e->ids_len);
      return;
    }
  const std::size_t first = out.size();
  merge_word(word, out);
  if (cached) cache_insert(word, hash, out.data() + first, out.size() - first);
}

// A 4-ary min-heap of candidates by (rank, position): shallower than a binary one, and its children share a
// cache line (the library uses a quaternary heap too; the order of equal keys does not matter, as candidates
// with equal rank and position are the same merge).
void Bpe::heap_push(Candidate c) {
  std::size_t i = heap_.size();
  heap_.push_back(c);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(c, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = c;
}

Bpe::Candidate Bpe::heap_pop() {
  const Candidate top = heap_[0];
  const Candidate last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    for (std::size_t k = first + 1; k < first + 4 && k < n; ++k)
      if (before(heap_[k], heap_[best])) best = k;
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

std::uint32_t Bpe::char_id(std::string_view ch) {
  std::size_t k = 0;
  const char32_t c = utf8_next(ch, k);
  if (c < 0x800) return char_tokens_[c];
  // Characters beyond the table (CJK, ▁…): a small direct-mapped cache in front of the hash table.
  auto& slot = char_cache_[c & (kCharCache - 1)];
  if (slot.first != c) slot = {c, vocab.find(ch)};
  return slot.second;
}

void Bpe::merge_word(std::string_view word, std::vector<std::int32_t>& out) {
  symbols_.clear();
  auto add = [&](std::uint32_t id, std::size_t len) {
    const auto n = static_cast<std::int32_t>(symbols_.size());
    if (n) symbols_.back().next = n;
    symbols_.push_back({id, n - 1, -1, static_cast<std::uint32_t>(len)});
  };
  // An unknown character waits here until the next known one (fused with other unknown ones when fuse_unk).
  bool pending_unk = false;
  std::size_t unk_len = 0;
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t at = i;
    i += utf8_length(static_cast<unsigned char>(word[i]));
    const std::string_view ch = word.substr(at, i - at);
    const std::uint32_t id = char_id(ch);
    if (id != Vocab::kNone) {
      if (pending_unk) add(unk, unk_len), pending_unk = false;
      add(id, ch.size());
      continue;
    }
    if (byte_fallback &&
        std::all_of(ch.begin(), ch.end(), [&](char b) { return byte_tokens_[static_cast<unsigned char>(b)] != Vocab::kNone; })) {
      for (char b : ch) add(byte_tokens_[static_cast<unsigned char>(b)], 1);
      continue;
    }
    if (unk == Vocab::kNone) continue;  // no unknown token: the character is dropped, as the library does
    if (pending_unk && fuse_unk) {
      unk_len += ch.size();
    } else {
      if (pending_unk) add(unk, unk_len);
      pending_unk = true, unk_len = ch.size();
    }
  }
  if (pending_unk) add(unk, unk_len);

  heap_.clear();
  for (std::size_t p = 0; p + 1 < symbols_.size(); ++p)
    if (const auto* m = merges.find(symbols_[p].id, symbols_[p + 1].id)) heap_push({m->rank, static_cast<std::uint32_t>(p), m->id});
  while (!heap_.empty()) {
    const Candidate top = heap_pop();
    Symbol& s = symbols_[top.pos];
    if (s.len == 0 || s.next < 0) continue;
    const Symbol right = symbols_[static_cast<std::size_t>(s.next)];
    // A candidate is stale unless its pair still merges into the same token.
    const auto* m = merges.find(s.id, right.id);
    if (!m || m->id != top.id) continue;
    symbols_[static_cast<std::size_t>(s.next)].len = 0;
    s.id = top.id;
    s.len += right.len;
    s.next = right.next;
    if (right.next >= 0) symbols_[static_cast<std::size_t>(right.next)].prev = static_cast<std::int32_t>(top.pos);
    if (s.prev >= 0)
      if (const auto* pm = merges.find(symbols_[static_cast<std::size_t>(s.prev)].id, s.id))
        heap_push({pm->rank, static_cast<std::uint32_t>(s.prev), pm->id});
    if (s.next >= 0)
      if (const auto* nm = merges.find(s.id, symbols_[static_cast<std::size_t>(s.next)].id)) heap_push({nm->rank, top.pos, nm->id});
  }
  for (const Symbol& s : symbols_)
    if (s.len) out.push_back(static_cast<std::int32_t>(s.id));
}

}  // namespace attnlab::tokenizer
