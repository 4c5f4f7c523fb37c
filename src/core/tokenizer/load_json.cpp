// tokenizer.json's pipeline: normalizer, pre_tokenizer, post_processor, decoder and added_tokens, each checked
// field by field against what huggingface/tokenizers accepts and what this engine runs.
#include <algorithm>

#include "loader.h"
#include "unicode.h"

namespace attnlab::tokenizer {

namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 200)) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) out += "\\u00", out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
    else out += c;
  }
  if (s.size() > 200) out += "…";
  return out + "\"";
}

// A name's entry in a small table of {name, value}, or nullptr.
template <class V, std::size_t N>
const V* lookup(const std::pair<std::string_view, V> (&table)[N], std::string_view name) {
  for (const auto& [n, v] : table)
    if (n == name) return &v;
  return nullptr;
}

std::string list(const std::vector<std::string_view>& names) {
  std::string s;
  for (auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

bool TokenizerLoader::fail(const std::string& what) {
  if (status_.ok()) status_ = Status::range_error(file_, file_ + ": " + (path_.empty() ? "" : path() + ": ") + what);
  return false;
}

bool TokenizerLoader::syntax(const Reader& r) { return fail("invalid JSON " + r.error()); }

std::string TokenizerLoader::path() const {
  std::string p;
  for (const auto& s : path_) {
    if (!p.empty() && s[0] != '[') p += '.';
    p += s;
  }
  return p;
}

bool TokenizerLoader::read_string(Reader& r, std::string& out) {
  if (r.type() != Reader::Type::string) return fail("expected a string");
  std::string_view v;
  if (!r.string(v)) return syntax(r);
  out.assign(v);
  return true;
}

bool TokenizerLoader::read_bool(Reader& r, bool& out) {
  if (r.type() != Reader::Type::boolean) return fail("expected true or false");
  return r.boolean(out) || syntax(r);
}

bool TokenizerLoader::read_index(Reader& r, std::uint64_t& out, std::uint64_t max) {
  if (r.type() != Reader::Type::number) return fail("expected a non-negative integer");
  return r.integer(out, max) || syntax(r);
}

bool TokenizerLoader::read_object(Reader& r, const std::vector<std::string_view>& known,
                                  const std::function<bool(std::string_view)>& member) {
  if (r.type() != Reader::Type::object) return fail("expected an object");
  const bool ok = r.object([&](std::string_view key) {
    const std::string k(key);
    if (std::find(known.begin(), known.end(), k) == known.end())
      return at(k, [&] { return fail("unknown field (this engine reads " + list(known) + ")"); });
    return at(k, [&] { return member(k); });
  });
  // A member's own error is in status_ already; otherwise the reader's.
  return ok || (status_.ok() && syntax(r));
}

bool TokenizerLoader::peek_type(std::string_view object_text, std::size_t base, std::string& type) {
  Reader r(text_, object_text, base);
  type.clear();
  bool found = false, own_error = false;
  const bool ok = r.object([&](std::string_view key) {
    if (key != "type") return r.skip();
    found = true;
    if (r.type() != Reader::Type::string) return own_error = true, at("type", [&] { return fail("expected a string"); });
    std::string_view v;
    if (!r.string(v)) return false;
    type.assign(v);
    return true;
  });
  if (!ok) return own_error ? false : syntax(r);
  if (!found) return fail("the object has no \"type\"");
  return true;
}

bool TokenizerLoader::single_char(Reader& r, std::string& out) {
  if (!read_string(r, out)) return false;
  std::size_t i = 0;
  if (out.empty() || (utf8_next(out, i), i != out.size())) return fail("expected one character, got " + quoted(out));
  return true;
}

bool TokenizerLoader::pattern(Reader& r, Pattern& p, bool replace) {
  return read_object(r, {"String", "Regex"}, [&](std::string_view key) {
    std::string s;
    if (!read_string(r, s)) return false;
    if (key == "String") {
      p.literal = s;
      p.regex.reset();
      return true;
    }
    auto re = std::make_shared<Regex>();
    std::string error;
    if (!re->compile(s, error)) return fail(quoted(s) + ": " + error);
    if (replace && re->can_match_empty())
      return fail(quoted(s) + " can match the empty string: not supported in a Replace (huggingface/tokenizers fails on it)");
    p.regex = std::move(re);
    return true;
  });
}

// Each component: its span is read once to find "type", then its members by name.
#define ATTNLAB_COMPONENT_BEGIN(reader)                                                                         \
  if ((reader).type() == Reader::Type::null) return fail("null is not allowed here");                           \
  if ((reader).type() != Reader::Type::object) return fail("expected an object");                               \
  std::size_t begin_, end_;                                                                                     \
  if (!(reader).skip(begin_, end_)) return syntax(reader);                                                      \
  std::string type;                                                                                             \
  if (!peek_type(text_.substr(begin_, end_ - begin_), begin_, type)) return false;                              \
  Reader sub(text_, text_.substr(begin_, end_ - begin_), begin_);

bool TokenizerLoader::normalizer(Reader& r, Normalizer& n) {
  ATTNLAB_COMPONENT_BEGIN(r)
  using K = Normalizer::Kind;
  static const std::pair<std::string_view, K> kinds[] = {{"Sequence", K::kSequence}, {"Prepend", K::kPrepend},
      {"Append", K::kAppend}, {"Replace", K::kReplace}, {"NFC", K::kNfc}, {"NFD", K::kNfd}, {"Strip", K::kStrip}};
  const K* kind = lookup(kinds, type);
  if (!kind)
    return at("type", [&] { return fail(quoted(type) + " is not supported (normalizers: Sequence, Prepend, Append, Replace, NFC, NFD, Strip)"); });
  n.kind = *kind;
  bool has_pattern = false, has_content = false;
  std::vector<std::string_view> known{"type"};
  switch (n.kind) {
    case K::kSequence: known.push_back("normalizers"); break;
    case K::kPrepend: known.push_back("prepend"); break;
    case K::kAppend: known.push_back("append"); break;
    case K::kReplace: known.insert(known.end(), {"pattern", "content"}); break;
    case K::kStrip: known.insert(known.end(), {"strip_left", "strip_right"}); break;
    default: break;
  }
  if (!read_object(sub, known, [&](std::string_view key) {
        if (key == "type") return sub.skip() || syntax(sub);
        if (key == "normalizers") {
          if (sub.type() != Reader::Type::array) return fail("expected an array");
          return sub.array([&](std::size_t i) {
            n.children.emplace_back();
            return at(index(i), [&] { return normalizer(sub, n.children.back()); });
          }) || (status_.ok() && syntax(sub));
        }
        if (key == "prepend" || key == "append") return read_string(sub, n.text);
        if (key == "pattern") return has_pattern = true, pattern(sub, n.pattern, true);
        if (key == "content") return has_content = true, read_string(sub, n.text);
        if (key == "strip_left") return read_bool(sub, n.left);
        return read_bool(sub, n.right);
      }))
    return false;
  if (n.kind == K::kReplace && (!has_pattern || !has_content)) return fail("a Replace needs \"pattern\" and \"content\"");
  return true;
}

bool TokenizerLoader::pre_tokenizer(Reader& r, PreTokenizer& p) {
  ATTNLAB_COMPONENT_BEGIN(r)
  using K = PreTokenizer::Kind;
  static const std::pair<std::string_view, K> kinds[] = {{"Sequence", K::kSequence}, {"ByteLevel", K::kByteLevel},
      {"Split", K::kSplit}, {"Metaspace", K::kMetaspace}, {"Digits", K::kDigits}};
  const K* kind = lookup(kinds, type);
  if (!kind)
    return at("type", [&] { return fail(quoted(type) + " is not supported (pre-tokenizers: Sequence, ByteLevel, Split, Metaspace, Digits)"); });
  p.kind = *kind;
  std::vector<std::string_view> known{"type"};
  switch (p.kind) {
    case K::kSequence: known.push_back("pretokenizers"); break;
    case K::kByteLevel: known.insert(known.end(), {"add_prefix_space", "trim_offsets", "use_regex"}); break;
    case K::kSplit: known.insert(known.end(), {"pattern", "behavior", "invert"}); break;
    case K::kMetaspace: known.insert(known.end(), {"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"}); break;
    case K::kDigits: known.push_back("individual_digits"); break;
  }
  bool has_pattern = false, has_behavior = false, has_replacement = false;
  std::optional<bool> legacy_prefix;
  std::optional<PreTokenizer::Prepend> scheme;
  p.add_prefix_space = p.kind == K::kByteLevel;  // the library's defaults
  p.use_regex = true;
  if (!read_object(sub, known, [&](std::string_view key) {
        if (key == "type" || key == "trim_offsets" || key == "str_rep") return sub.skip() || syntax(sub);  // offsets only / derived
        if (key == "pretokenizers") {
          if (sub.type() != Reader::Type::array) return fail("expected an array");
          return sub.array([&](std::size_t i) {
            p.children.emplace_back();
            return at(index(i), [&] { return pre_tokenizer(sub, p.children.back()); });
          }) || (status_.ok() && syntax(sub));
        }
        if (key == "add_prefix_space") {
          if (p.kind == K::kByteLevel) return read_bool(sub, p.add_prefix_space);
          bool b;
          if (!read_bool(sub, b)) return false;
          legacy_prefix = b;
          return true;
        }
        if (key == "use_regex") return read_bool(sub, p.use_regex);
        if (key == "pattern") return has_pattern = true, pattern(sub, p.pattern);
        if (key == "behavior") {
          std::string b;
          if (!read_string(sub, b)) return false;
          static const std::pair<std::string_view, SplitBehavior> behaviors[] = {{"Removed", SplitBehavior::kRemoved},
              {"Isolated", SplitBehavior::kIsolated}, {"MergedWithPrevious", SplitBehavior::kMergedWithPrevious},
              {"MergedWithNext", SplitBehavior::kMergedWithNext}, {"Contiguous", SplitBehavior::kContiguous}};
          const SplitBehavior* it = lookup(behaviors, b);
          if (!it) return fail(quoted(b) + " is not a split behavior (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
          has_behavior = true;
          p.behavior = *it;
          return true;
        }
        if (key == "invert") return read_bool(sub, p.invert);
        if (key == "replacement") return has_replacement = true, single_char(sub, p.replacement);
        if (key == "prepend_scheme") {
          std::string s;
          if (!read_string(sub, s)) return false;
          if (s == "always") scheme = PreTokenizer::Prepend::kAlways;
          else if (s == "first") scheme = PreTokenizer::Prepend::kFirst;
          else if (s == "never") scheme = PreTokenizer::Prepend::kNever;
          else return fail(quoted(s) + " is not a prepend scheme (always, first, never)");
          return true;
        }
        if (key == "split") return read_bool(sub, p.split);
        return read_bool(sub, p.individual_digits);
      }))
    return false;
  if (p.kind == K::kSplit && (!has_pattern || !has_behavior)) return fail("a Split needs \"pattern\" and \"behavior\"");
  if (p.kind == K::kMetaspace) {
    if (!has_replacement) return fail("a Metaspace needs \"replacement\"");
    // The older form: add_prefix_space true = always, false = never.
    if (legacy_prefix == false && scheme && *scheme != PreTokenizer::Prepend::kNever)
      return fail("add_prefix_space false contradicts prepend_scheme");
    p.prepend = scheme ? *scheme : legacy_prefix == false ? PreTokenizer::Prepend::kNever : PreTokenizer::Prepend::kAlways;
  }
  return true;
}

bool TokenizerLoader::decoder(Reader& r, Decoder& d) {
  ATTNLAB_COMPONENT_BEGIN(r)
  using K = Decoder::Kind;
  static const std::pair<std::string_view, K> kinds[] = {{"Sequence", K::kSequence}, {"ByteLevel", K::kByteLevel},
      {"Replace", K::kReplace}, {"ByteFallback", K::kByteFallback}, {"Fuse", K::kFuse}, {"Strip", K::kStrip},
      {"Metaspace", K::kMetaspace}};
  const K* kind = lookup(kinds, type);
  if (!kind)
    return at("type", [&] { return fail(quoted(type) + " is not supported (decoders: Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace)"); });
  d.kind = *kind;
  std::vector<std::string_view> known{"type"};
  switch (d.kind) {
    case K::kSequence: known.push_back("decoders"); break;
    case K::kByteLevel: known.insert(known.end(), {"add_prefix_space", "trim_offsets", "use_regex"}); break;
    case K::kReplace: known.insert(known.end(), {"pattern", "content"}); break;
    case K::kStrip: known.insert(known.end(), {"content", "start", "stop"}); break;
    case K::kMetaspace: known.insert(known.end(), {"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"}); break;
    default: break;
  }
  bool has_pattern = false, has_content = false, has_replacement = false, legacy_prefix = true, has_scheme = false;
  std::uint64_t start = 0, stop = 0;
  if (!read_object(sub, known, [&](std::string_view key) {
        if (key == "type" || key == "trim_offsets" || key == "use_regex" || key == "split" || key == "str_rep")
          return sub.skip() || syntax(sub);  // offsets, or encode-side only
        if (key == "add_prefix_space") {
          if (d.kind == K::kByteLevel) return sub.skip() || syntax(sub);
          return read_bool(sub, legacy_prefix);
        }
        if (key == "decoders") {
          if (sub.type() != Reader::Type::array) return fail("expected an array");
          return sub.array([&](std::size_t i) {
            d.children.emplace_back();
            return at(index(i), [&] { return decoder(sub, d.children.back()); });
          }) || (status_.ok() && syntax(sub));
        }
        if (key == "pattern") return has_pattern = true, pattern(sub, d.pattern, true);
        if (key == "content") return has_content = true, d.kind == K::kStrip ? single_char(sub, d.text) : read_string(sub, d.text);
        if (key == "start") return read_index(sub, start, 1u << 20);
        if (key == "stop") return read_index(sub, stop, 1u << 20);
        if (key == "replacement") return has_replacement = true, single_char(sub, d.text);
        if (key == "prepend_scheme") {
          std::string s;
          if (!read_string(sub, s)) return false;
          if (s != "always" && s != "first" && s != "never") return fail(quoted(s) + " is not a prepend scheme (always, first, never)");
          has_scheme = true;
          d.strip_first = s != "never";
          return true;
        }
        return sub.skip() || syntax(sub);
      }))
    return false;
  d.start = static_cast<std::size_t>(start), d.stop = static_cast<std::size_t>(stop);  // both at most 2^20
  if (d.kind == K::kReplace && (!has_pattern || !has_content)) return fail("a Replace needs \"pattern\" and \"content\"");
  if (d.kind == K::kStrip && !has_content) return fail("a Strip needs \"content\"");
  if (d.kind == K::kMetaspace) {
    if (!has_replacement) return fail("a Metaspace needs \"replacement\"");
    if (!has_scheme) d.strip_first = legacy_prefix;
  }
  return true;
}

bool TokenizerLoader::post_processor(Reader& r, PostProcessor& p) {
  ATTNLAB_COMPONENT_BEGIN(r)
  using K = PostProcessor::Kind;
  if (type == "Sequence") {
    p.kind = K::kSequence;
    return read_object(sub, {"type", "processors"}, [&](std::string_view key) {
      if (key == "type") return sub.skip() || syntax(sub);
      if (sub.type() != Reader::Type::array) return fail("expected an array");
      return sub.array([&](std::size_t i) {
        p.children.emplace_back();
        return at(index(i), [&] { return post_processor(sub, p.children.back()); });
      }) || (status_.ok() && syntax(sub));
    });
  }
  if (type == "ByteLevel") {
    p.kind = K::kByteLevel;
    return read_object(sub, {"type", "add_prefix_space", "trim_offsets", "use_regex"}, [&](std::string_view) {
      return sub.skip() || syntax(sub);  // offsets only
    });
  }
  const std::uint64_t max_id = t_.size_ ? t_.size_ - 1 : 0;
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    // [CLS] $A [SEP] for one sequence: "cls" and "sep" as [token, id].
    p.kind = K::kWrap;
    std::vector<std::string_view> known{"type", "sep", "cls"};
    if (type == "RobertaProcessing") known.insert(known.end(), {"trim_offsets", "add_prefix_space"});
    bool has_sep = false, has_cls = false;
    if (!read_object(sub, known, [&](std::string_view key) {
          if (key != "sep" && key != "cls") return sub.skip() || syntax(sub);
          std::uint64_t id = 0;
          std::size_t n = 0;
          if (sub.type() != Reader::Type::array) return fail("expected [token, id]");
          if (!sub.array([&](std::size_t i) {
                ++n;
                if (i == 0) return sub.skip();
                return i == 1 && at("[1]", [&] { return read_index(sub, id, max_id); });
              }))
            return status_.ok() && syntax(sub);
          if (n != 2) return fail("expected [token, id]");
          (key == "sep" ? p.after : p.before).push_back(static_cast<std::int32_t>(id));
          (key == "sep" ? has_sep : has_cls) = true;
          return true;
        }))
      return false;
    if (!has_sep || !has_cls) return fail("a " + type + " needs \"sep\" and \"cls\"");
    return true;
  }
  if (type != "TemplateProcessing")
    return at("type", [&] { return fail(quoted(type) + " is not supported (post-processors: TemplateProcessing, ByteLevel, Sequence, RobertaProcessing, BertProcessing)"); });
  p.kind = K::kTemplate;
  // single: [{"SpecialToken": {"id": "<s>", …}} | {"Sequence": {"id": "A", …}}]; special_tokens gives the ids.
  std::vector<std::pair<std::string, bool>> single;  // (special token name, after the sequence)
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> specials;
  bool has_single = false, has_specials = false;
  if (!read_object(sub, {"type", "single", "pair", "special_tokens"}, [&](std::string_view key) {
        if (key == "type") return sub.skip() || syntax(sub);
        if (key == "pair") {
          if (sub.type() != Reader::Type::array) return fail("expected an array");
          return sub.skip() || syntax(sub);  // pairs of sequences are not encoded here
        }
        if (key == "single") {
          has_single = true;
          if (sub.type() != Reader::Type::array) return fail("expected an array (a template given as a string is not supported)");
          int sequences = 0;
          if (!sub.array([&](std::size_t i) {
                return at(index(i), [&] {
                  return read_object(sub, {"SpecialToken", "Sequence"}, [&](std::string_view kind) {
                    std::string id;
                    if (!read_object(sub, {"id", "type_id"}, [&](std::string_view k) {
                          if (k == "type_id") return sub.skip() || syntax(sub);
                          return read_string(sub, id);
                        }))
                      return false;
                    if (kind == "Sequence") {
                      if (id != "A") return at("id", [&] { return fail(quoted(id) + ": a single-sequence template holds only sequence A"); });
                      ++sequences;
                    } else {
                      single.push_back({id, sequences > 0});
                    }
                    return true;
                  });
                });
              }))
            return status_.ok() && syntax(sub);
          if (sequences != 1) return fail("the template must hold sequence A exactly once");
          return true;
        }
        has_specials = true;
        if (sub.type() != Reader::Type::object) return fail("expected an object");
        return sub.object([&](std::string_view name) {
          const std::string n(name);
          return at("[" + quoted(n) + "]", [&] {
            std::vector<std::int32_t> ids;
            if (!read_object(sub, {"id", "ids", "tokens"}, [&](std::string_view k) {
                  if (k != "ids") return sub.skip() || syntax(sub);
                  if (sub.type() != Reader::Type::array) return fail("expected an array");
                  return sub.array([&](std::size_t i) {
                    return at(index(i), [&] {
                      std::uint64_t v;
                      if (!read_index(sub, v, max_id)) return false;
                      ids.push_back(static_cast<std::int32_t>(v));
                      return true;
                    });
                  }) || (status_.ok() && syntax(sub));
                }))
              return false;
            specials.push_back({n, std::move(ids)});
            return true;
          });
        }) || (status_.ok() && syntax(sub));
      }))
    return false;
  if (!has_single) return fail("a TemplateProcessing needs \"single\"");
  for (const auto& item : single) {
    const std::string& name = item.first;
    const bool after = item.second;
    const auto it = std::find_if(specials.begin(), specials.end(), [&](const auto& s) { return s.first == name; });
    if (it == specials.end())
      return fail("the template's special token " + quoted(name) + " is not in \"special_tokens\"" + (has_specials ? "" : " (there is none)"));
    auto& dest = after ? p.after : p.before;
    dest.insert(dest.end(), it->second.begin(), it->second.end());
  }
  return true;
}

}  // namespace attnlab::tokenizer
