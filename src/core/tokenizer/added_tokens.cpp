#include "added_tokens.h"

#include <algorithm>

#include "hash.h"
#include "unicode.h"

namespace attnlab::tokenizer {

AddedTokens::Trie AddedTokens::build_trie(const std::vector<std::pair<std::string, std::int32_t>>& patterns) {
  // Built with child lists, then flattened breadth-first into edge arrays sorted by byte.
  struct Temp {
    std::int32_t first_child = -1, next_sibling = -1, token = -1;
    unsigned char byte = 0;
  };
  std::vector<Temp> temp(1);
  for (const auto& [text, token] : patterns) {
    std::size_t n = 0;
    for (unsigned char b : text) {
      std::int32_t c = temp[n].first_child;
      while (c >= 0 && temp[static_cast<std::size_t>(c)].byte != b) c = temp[static_cast<std::size_t>(c)].next_sibling;
      if (c < 0) {
        c = static_cast<std::int32_t>(temp.size());
        temp.push_back({-1, temp[n].first_child, -1, b});
        temp[n].first_child = c;
      }
      n = static_cast<std::size_t>(c);
    }
    if (temp[n].token < 0) temp[n].token = token;  // the first token with this text wins
  }
  Trie t;
  t.nodes.resize(temp.size());
  std::vector<std::size_t> order{0}, index(temp.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t first = order.size();
    for (std::int32_t c = temp[order[i]].first_child; c >= 0; c = temp[static_cast<std::size_t>(c)].next_sibling)
      order.push_back(static_cast<std::size_t>(c));
    // Children by byte (insertion sort: at most 256 of them).
    for (std::size_t k = first + 1; k < order.size(); ++k)
      for (std::size_t m = k; m > first && temp[order[m - 1]].byte > temp[order[m]].byte; --m) std::swap(order[m - 1], order[m]);
    for (std::size_t k = first; k < order.size(); ++k) index[order[k]] = k;
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    Node& node = t.nodes[i];
    node.token = temp[order[i]].token;
    node.edges_begin = static_cast<std::uint32_t>(t.edges.size());
    std::vector<Edge> edges;
    for (std::int32_t c = temp[order[i]].first_child; c >= 0; c = temp[static_cast<std::size_t>(c)].next_sibling)
      edges.push_back({temp[static_cast<std::size_t>(c)].byte, static_cast<std::uint32_t>(index[static_cast<std::size_t>(c)])});
    for (std::size_t k = 1; k < edges.size(); ++k)
      for (std::size_t m = k; m > 0 && edges[m - 1].byte > edges[m].byte; --m) std::swap(edges[m - 1], edges[m]);
    t.edges.insert(t.edges.end(), edges.begin(), edges.end());
    node.edges_end = static_cast<std::uint32_t>(t.edges.size());
  }
  for (std::uint32_t e = t.nodes[0].edges_begin; e < t.nodes[0].edges_end; ++e) t.first_byte[t.edges[e].byte] = true;
  return t;
}

void AddedTokens::build(const std::vector<std::string>& normalized_content) {
  std::vector<std::pair<std::string, std::int32_t>> raw, normalized;
  by_id_.clear(), by_content_.clear();
  // Special tokens first: among equal texts the library's matcher finds the special one, listed first.
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].special != (pass == 0)) continue;
      const auto index = static_cast<std::int32_t>(i);
      if (tokens[i].normalized) normalized.push_back({normalized_content[i], index});
      else raw.push_back({tokens[i].content, index});
    }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    by_id_.push_back((std::uint64_t{tokens[i].id} << 32) | i);
    by_content_.push_back((hash_bytes(tokens[i].content) >> 32 << 32) | i);
  }
  std::sort(by_id_.begin(), by_id_.end());
  std::sort(by_content_.begin(), by_content_.end());
  tries_[0] = build_trie(raw);
  tries_[1] = build_trie(normalized);
}

const AddedToken* AddedTokens::by_id(std::uint32_t id) const {
  const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::uint64_t{id} << 32);
  return it != by_id_.end() && (*it >> 32) == id ? &tokens[*it & 0xFFFFFFFF] : nullptr;
}

std::size_t AddedTokens::index_of(std::string_view content) const {
  const std::uint64_t h = hash_bytes(content) >> 32;
  for (auto it = std::lower_bound(by_content_.begin(), by_content_.end(), h << 32); it != by_content_.end() && (*it >> 32) == h; ++it)
    if (tokens[*it & 0xFFFFFFFF].content == content) return *it & 0xFFFFFFFF;
  return tokens.size();
}

std::int64_t AddedTokens::find(std::string_view content) const {
  const std::size_t i = index_of(content);
  return i < tokens.size() ? std::int64_t{tokens[i].id} : -1;
}

bool AddedTokens::special_content(std::string_view content) const {
  const std::size_t i = index_of(content);
  return i < tokens.size() && tokens[i].special;
}

std::size_t AddedTokens::memory_bytes() const {
  std::size_t n = tokens.capacity() * sizeof(AddedToken);
  for (const auto& t : tokens) n += t.content.capacity();
  for (const auto& t : tries_) n += t.nodes.capacity() * sizeof(Node) + t.edges.capacity() * sizeof(Edge);
  return n + (by_id_.capacity() + by_content_.capacity()) * sizeof(std::uint64_t);
}

bool AddedTokens::next_match(const Trie& t, std::string_view text, std::size_t from, std::size_t& s, std::size_t& e,
                             std::int32_t& token) const {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (!t.first_byte[static_cast<unsigned char>(text[i])]) continue;
    std::uint32_t node = 0;
    std::int32_t best = -1;
    std::size_t best_end = 0;
    for (std::size_t j = i; j < text.size(); ++j) {
      const Node& n = t.nodes[node];
      const auto b = static_cast<unsigned char>(text[j]);
      const auto* first = t.edges.data() + n.edges_begin;
      const auto* last = t.edges.data() + n.edges_end;
      const auto* it = std::lower_bound(first, last, b, [](const Edge& edge, unsigned char v) { return edge.byte < v; });
      if (it == last || it->byte != b) break;
      node = it->child;
      if (t.nodes[node].token >= 0) best = t.nodes[node].token, best_end = j + 1;
    }
    if (best >= 0) {
      s = i, e = best_end, token = best;
      return true;
    }
  }
  return false;
}

namespace {

bool word_char_before(std::string_view text, std::size_t at) {
  if (at == 0) return false;
  std::size_t s = at - 1;
  while (s > 0 && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
  return is_word(utf8_next(text, s));
}

bool word_char_after(std::string_view text, std::size_t at) {
  return at < text.size() && is_word(utf8_next(text, at));
}

// Where the white space that ends text[0, at) begins.
std::size_t space_run_before(std::string_view text, std::size_t at) {
  while (at > 0) {
    std::size_t s = at - 1;
    while (s > 0 && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
    std::size_t i = s;
    if (!is_white_space(utf8_next(text, i))) break;
    at = s;
  }
  return at;
}

// Where the white space that starts text[at, …) ends.
std::size_t space_run_after(std::string_view text, std::size_t at) {
  while (at < text.size()) {
    std::size_t i = at;
    if (!is_white_space(utf8_next(text, i))) break;
    at = i;
  }
  return at;
}

}  // namespace

void AddedTokens::split(std::vector<Piece>& pieces, bool normalized) const {
  const Trie& trie = tries_[normalized ? 1 : 0];
  if (trie.nodes.empty() || trie.nodes[0].edges_end == 0) return;
  std::vector<Piece> out;
  out.reserve(pieces.size());
  for (auto& p : pieces) {
    if (p.id >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    const std::string_view text = p.text;
    std::size_t from = 0, done = 0;
    std::size_t s, e;
    std::int32_t index;
    while (from < text.size() && next_match(trie, text, from, s, e, index)) {
      from = e;  // the search goes on after the match, whatever is done with it
      const AddedToken& t = tokens[static_cast<std::size_t>(index)];
      if (t.single_word && (word_char_before(text, s) || word_char_after(text, e))) continue;
      std::size_t start = s, stop = e;
      if (t.lstrip) start = std::max(space_run_before(text, s), done);
      if (t.rstrip) stop = space_run_after(text, e);
      if (done < start) out.push_back({std::string(text.substr(done, start - done)), p.at_start && done == 0, -1});
      out.push_back({std::string(), false, static_cast<std::int32_t>(t.id)});
      done = stop;
    }
    if (done < text.size()) out.push_back({std::string(text.substr(done)), p.at_start && done == 0, -1});
  }
  pieces = std::move(out);
}

}  // namespace attnlab::tokenizer
