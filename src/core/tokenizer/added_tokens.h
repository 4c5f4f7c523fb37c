// Added tokens (tokenizer.json's "added_tokens"): special or not, they are cut out of the text before the model
// sees it — those with "normalized": false from the raw text, the others from each normalized part — by the
// leftmost-longest match among them, with single_word, lstrip and rstrip as huggingface/tokenizers applies them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "components.h"

namespace attnlab::tokenizer {

struct AddedToken {
  std::string content;
  std::uint32_t id = 0;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = false;
};

class AddedTokens {
 public:
  std::vector<AddedToken> tokens;

  /** Builds the two matchers; `normalized_content[i]` is token i's content after the normalizer. */
  void build(const std::vector<std::string>& normalized_content);
  /** Cuts the added tokens with `normalized` == the flag out of every piece that is not a token yet. */
  void split(std::vector<Piece>& pieces, bool normalized) const;
  bool any(bool normalized) const { return !tries_[normalized ? 1 : 0].nodes.empty() && tries_[normalized ? 1 : 0].nodes[0].edges_end > 0; }

  /** The token with this id, or nullptr. */
  const AddedToken* by_id(std::uint32_t id) const;
  /** The id of the token with this content, or -1. */
  std::int64_t find(std::string_view content) const;
  /** Whether this content is a special token's (the library skips tokens by their text). */
  bool special_content(std::string_view content) const;
  std::size_t memory_bytes() const;

 private:
  struct Node {
    std::uint32_t edges_begin = 0, edges_end = 0;
    std::int32_t token = -1;  // index in `tokens` of the pattern ending here
  };
  struct Edge {
    unsigned char byte;
    std::uint32_t child;
  };
  struct Trie {
    std::vector<Node> nodes;
    std::vector<Edge> edges;
    bool first_byte[256] = {};
  };
  Trie tries_[2];  // [0]: matched on the raw text, [1]: on normalized text
  std::vector<std::uint64_t> by_id_;       // id << 32 | index, sorted
  std::vector<std::uint64_t> by_content_;  // content hash (high 32 bits) << 32 | index, sorted
  std::size_t index_of(std::string_view content) const;

  static Trie build_trie(const std::vector<std::pair<std::string, std::int32_t>>& patterns);
  /** The leftmost-longest match at or after `from`: true with [s, e) and the token index. */
  bool next_match(const Trie& t, std::string_view text, std::size_t from, std::size_t& s, std::size_t& e,
                  std::int32_t& token) const;
};

}  // namespace attnlab::tokenizer
