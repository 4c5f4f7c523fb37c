#include "safetensors_header.h"

#include <algorithm>

#include "../format.h"
#include "json.h"

namespace attnlab::model {

std::string quoted_key(const std::string& key) { return json::quote(key.size() > 100 ? key.substr(0, 100) + "…" : key); }

bool parse_header(std::string_view text, Header& out, std::string& reason) {
  using Type = json::Value::Type;
  out = Header{};
  if (text.empty() || text[0] != '{') return reason = "the header must be a JSON object starting with '{'", false;
  json::Value root;
  std::string error;
  if (!json::parse(text, root, error)) return reason = detail::format("the JSON header is malformed (%s)", error.c_str()), false;
  if (root.type != Type::object) return reason = "the JSON header is not an object", false;
  for (std::size_t r = 0; r < root.keys.size(); ++r) {
    const std::string& key = root.keys[r];
    const json::Value& v = root.members[r];
    if (key == "__metadata__") {
      if (v.type != Type::object) return reason = "__metadata__ must be an object of strings", false;
      for (std::size_t i = 0; i < v.keys.size(); ++i) {
        if (v.members[i].type != Type::string)
          return reason = detail::format("__metadata__.%s must be a string", quoted_key(v.keys[i]).c_str()), false;
        out.meta.emplace_back(v.keys[i], v.members[i].string);
      }
      continue;
    }
    const char* q = nullptr;
    const std::string name = quoted_key(key);
    if (v.type != Type::object) return reason = detail::format("the entry for %s is not an object", name.c_str()), false;
    const json::Value *dt = v.find("dtype"), *sh = v.find("shape"), *off = v.find("data_offsets");
    if (!dt || dt->type != Type::string) q = "%s has no string dtype";
    else if (!sh || sh->type != Type::array || sh->array.size() > 8) q = "%s has no shape array (of at most 8 sizes)";
    else if (!off || off->type != Type::array || off->array.size() != 2 || !off->array[0].is_index || !off->array[1].is_index ||
             off->array[0].index > off->array[1].index)
      q = "%s has no data_offsets [begin, end] with begin <= end";
    if (q) return reason = detail::format(q, name.c_str()), false;
    HeaderEntry e{key, dt->string, {}, off->array[0].index, off->array[1].index};
    for (const json::Value& s : sh->array) {
      if (!s.is_index) return reason = detail::format("%s's shape holds something other than a size", name.c_str()), false;
      e.shape.push_back(s.index);
    }
    out.entries.push_back(std::move(e));
  }
  return true;
}

std::uint64_t element_count(const HeaderEntry& e) noexcept {
  std::uint64_t count = 1;
  for (std::uint64_t s : e.shape) count = s && count > (std::uint64_t(1) << 40) / s ? std::uint64_t(1) << 41 : count * s;
  return count;
}

std::uint64_t data_size(const Header& h) noexcept {
  std::uint64_t end = 0;
  for (const HeaderEntry& e : h.entries) end = e.end > end ? e.end : end;
  return end;
}

bool check_offsets(const Header& h, std::uint64_t data_size, std::size_t (*width_of)(const std::string&),
                   const char* supported, std::string& reason) {
  struct Span {
    std::uint64_t begin, end;
    const HeaderEntry* entry;
    bool operator<(const Span& o) const noexcept { return begin != o.begin ? begin < o.begin : end < o.end; }
  };
  std::vector<Span> spans;
  for (const HeaderEntry& e : h.entries) {
    const std::uint64_t width = width_of(e.dtype);
    const std::string name = quoted_key(e.name);
    if (!width)
      return reason = detail::format("%s has dtype %s; %s supported", name.c_str(), quoted_key(e.dtype).c_str(), supported), false;
    const std::uint64_t count = element_count(e);
    if (e.end > data_size)
      return reason = detail::format("%s's data_offsets end past the data (%llu bytes)", name.c_str(), (unsigned long long)data_size), false;
    if (e.end - e.begin != count * width)
      return reason = detail::format("%s spans %llu bytes but its dtype and shape need %llu", name.c_str(),
                                     (unsigned long long)(e.end - e.begin), (unsigned long long)(count * width)),
             false;
    if (e.end > e.begin) spans.push_back({e.begin, e.end, &e});
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t covered = 0;
  const Span* before = nullptr;
  for (const Span& span : spans) {
    const auto at = [](std::uint64_t b) { return static_cast<unsigned long long>(b); };
    if (span.begin < covered)
      return reason = detail::format("%s (bytes %llu to %llu) and %s (bytes %llu to %llu) overlap in the data",
                                     quoted_key(before->entry->name).c_str(), at(before->begin), at(before->end),
                                     quoted_key(span.entry->name).c_str(), at(span.begin), at(span.end)),
             false;
    // (a hole is most often a tensor taken out of the header: its neighbours say where)
    if (span.begin > covered)
      return reason = detail::format("the data's bytes %llu to %llu, %s, are in no tensor (is one missing from the header?)",
                                     at(covered), at(span.begin),
                                     (before ? "between " + quoted_key(before->entry->name) + " and " + quoted_key(span.entry->name)
                                             : "before " + quoted_key(span.entry->name)).c_str()),
             false;
    covered = span.end, before = &span;
  }
  if (covered != data_size)
    return reason = before ? detail::format("the data's last %llu bytes, after %s, are in no tensor (is one missing from the header?)",
                                            (unsigned long long)(data_size - covered), quoted_key(before->entry->name).c_str())
                           : detail::format("the data's %llu bytes are in no tensor (the header lists none with data)",
                                            (unsigned long long)data_size),
           false;
  return true;
}

}  // namespace attnlab::model
