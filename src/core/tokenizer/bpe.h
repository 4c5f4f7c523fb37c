// The BPE model of tokenizer.json ("type": "BPE"): a word's characters become symbols (its tokens, or the
// <0xAB> tokens of its bytes with byte_fallback, or the unknown token), then the lowest-ranked merge among
// adjacent symbols is applied until none applies — leftmost first among equal ranks, with the priority queue
// huggingface/tokenizers uses, so that ties resolve the same way.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vocab.h"

namespace attnlab::tokenizer {

class Bpe {
 public:
  Vocab vocab;        // the model's tokens, ids 0…n-1
  MergeTable merges;  // (left, right) -> (rank, merged)
  std::uint32_t unk = Vocab::kNone;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;

  /** Indexes the vocabulary once it is loaded: the <0x00>…<0xFF> tokens, and the one-character tokens below
   *  U+0800 (every byte-level character) in a table, so that most of a word's symbols are found without hashing. */
  void index_tokens();
  /** Appends the ids of one pre-tokenized word (valid UTF-8, not empty). */
  void tokenize(std::string_view word, std::vector<std::int32_t>& out);
  std::size_t memory_bytes() const;

 private:
  struct Symbol {
    std::uint32_t id;
    std::int32_t prev, next;
    std::uint32_t len;  // bytes; 0 once merged into its left neighbour
  };
  struct Candidate {
    std::uint32_t rank, pos, id;
  };
  std::uint32_t byte_tokens_[256];
  std::vector<std::uint32_t> char_tokens_;  // by code point below U+0800
  // Code points below U+10000 before which no merge can reach across (bit set): the character is a token and
  // no token holds it right after a different character. A long word (SentencePiece's whole text) is cut there
  // into parts that merge alone, to the same tokens, in O(part) heaps and through the word cache.
  std::vector<std::uint64_t> cut_before_;
  void tokenize_part(std::string_view part, std::vector<std::int32_t>& out);
  static constexpr std::size_t kCharCache = 1024;
  std::array<std::pair<char32_t, std::uint32_t>, kCharCache> char_cache_{};
  std::uint32_t char_id(std::string_view ch);
  static bool before(const Candidate& a, const Candidate& b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }
  void heap_push(Candidate c);
  Candidate heap_pop();
  std::vector<Symbol> symbols_;
  std::vector<Candidate> heap_;

  // Words seen recently and their ids (emptied when full): text repeats its words. Open addressing over
  // entries that point into two arenas.
  struct CacheEntry {
    std::uint64_t hash = 0;
    std::uint32_t word_at = 0, word_len = 0, ids_at = 0, ids_len = 0;
    bool used = false;
  };
  std::vector<CacheEntry> cache_;
  std::string cache_words_;
  std::vector<std::int32_t> cache_ids_;
  std::size_t cache_count_ = 0;
  const CacheEntry* cache_find(std::string_view word, std::uint64_t hash) const;
  void cache_insert(std::string_view word, std::uint64_t hash, const std::int32_t* ids, std::size_t n);

  void merge_word(std::string_view word, std::vector<std::int32_t>& out);
};

}  // namespace attnlab::tokenizer
