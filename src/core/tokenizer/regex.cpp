#include "regex.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "unicode.h"

namespace attnlab::tokenizer {

namespace {

enum Prop : std::uint8_t { kLetterProp = 1, kNumberProp = 2, kSpaceProp = 4 };

constexpr std::size_t kMaxInsts = 1 << 16;    // bounds the program (counted repetition multiplies its body)
constexpr std::size_t kMaxDepth = 64;         // nesting of groups
constexpr std::size_t kMaxLookahead = 64;     // characters a lookahead body may examine
constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
constexpr int kInfinite = -1;

struct Node {
  enum Kind { kEmpty, kClass, kConcat, kAlt, kRepeat, kAssert } kind = kEmpty;
  std::uint32_t index = 0;  // class or assertion index
  int min = 0, max = 0;
  bool greedy = true;
  std::vector<Node> kids;
};

}  // namespace

std::uint8_t Regex::props_of(char32_t c) {
  return static_cast<std::uint8_t>((is_letter(c) ? kLetterProp : 0) | (is_number(c) ? kNumberProp : 0) |
                                   (is_white_space(c) ? kSpaceProp : 0));
}

bool Regex::Class::matches(char32_t c, std::uint8_t props_of_c) const {
  bool in = (props & props_of_c) || (not_props & ~props_of_c);
  if (!in && !ranges.empty()) {
    const auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                                     [](char32_t v, const std::pair<char32_t, char32_t>& r) { return v < r.first; });
    in = it != ranges.begin() && c <= std::prev(it)->second;
  }
  return in != negated;
}

void Regex::build_closures() {
  const std::size_t n = insts_.size();
  closure_begin_.assign(n + 1, 0);
  closure_.clear();
  static_.assign(n, 0);
  std::vector<std::uint32_t> stack;
  std::vector<std::uint8_t> seen(n, 0);
  std::vector<std::uint32_t> touched;
  for (std::uint32_t pc = 0; pc < n; ++pc) {
    closure_begin_[pc] = static_cast<std::uint32_t>(closure_.size());
    bool ok = closure_.size() < (std::size_t{1} << 20);  // beyond that, closures are walked at run time
    stack.assign(1, pc);
    while (ok && !stack.empty()) {
      const std::uint32_t at = stack.back();
      stack.pop_back();
      if (seen[at]) continue;
      seen[at] = 1, touched.push_back(at);
      const Inst& in = insts_[at];
      if (in.op == Inst::kJmp) stack.push_back(in.x);
      else if (in.op == Inst::kSplit) stack.push_back(in.y), stack.push_back(in.x);
      else if (in.op == Inst::kAssert) ok = false;
      else closure_.push_back(at);
    }
    for (std::uint32_t t : touched) seen[t] = 0;
    touched.clear();
    if (ok) static_[pc] = 1;
    else closure_.resize(closure_begin_[pc]);
  }
  closure_begin_[n] = static_cast<std::uint32_t>(closure_.size());
}

// Parser and code generator. Errors name the construct and the byte offset in the pattern.
class RegexCompiler {
 public:
  RegexCompiler(std::string_view p, Regex& re) : p_(p), re_(re) {}

  bool run(std::string& error) {
    Node root;
    bool ok = alternation(root, 0);
    if (ok && pos_ < p_.size()) ok = syntax("an unmatched ')'");
    if (ok) {
      re_.matches_empty_ = min_width(root) == 0;
      re_.main_ = static_cast<std::uint32_t>(re_.insts_.size());
      ok = emit(root) && push({Regex::Inst::kMatch});
    }
    // Lookahead bodies follow the main program, each ending in its own kMatch.
    for (std::size_t i = 0; ok && i < lookaheads_.size(); ++i) {
      re_.assertions_[lookaheads_[i].first].start = static_cast<std::uint32_t>(re_.insts_.size());
      ok = emit(*lookaheads_[i].second) && push({Regex::Inst::kMatch});
    }
    if (ok) re_.build_closures();
    if (!ok) error = error_;
    return ok;
  }

 private:
  std::string_view p_;
  Regex& re_;
  std::size_t pos_ = 0;
  bool icase_ = false;
  std::string error_;
  std::vector<std::pair<std::uint32_t, std::unique_ptr<Node>>> lookaheads_;

  bool fail(const std::string& what, std::size_t at = std::string::npos) {
    if (error_.empty())
      error_ = what + " at byte " + std::to_string(at == std::string::npos ? pos_ : at) + " is not supported";
    return false;
  }
  bool syntax(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(pos_);
    return false;
  }
  bool more() const { return pos_ < p_.size(); }
  char peek() const { return more() ? p_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || !more()) return false;
    ++pos_;
    return true;
  }
  char32_t next_cp() {
    std::size_t i = pos_;
    const char32_t c = utf8_next(p_, i);
    pos_ = i;
    return c;
  }

  std::uint32_t add_class(Regex::Class c) {
    // Sort and merge the ranges, then the ASCII bitmap (negation included) for the fast path.
    auto& r = c.ranges;
    // Sorted as packed 64-bit keys: one std::sort instantiation serves the whole tokenizer.
    std::vector<std::uint64_t> keys;
    keys.reserve(r.size());
    for (const auto& x : r) keys.push_back((std::uint64_t{x.first} << 32) | x.second);
    std::sort(keys.begin(), keys.end());
    std::vector<std::pair<char32_t, char32_t>> merged;
    for (std::uint64_t k : keys) {
      const std::pair<char32_t, char32_t> x{static_cast<char32_t>(k >> 32), static_cast<char32_t>(k & 0xFFFFFFFF)};
      if (!merged.empty() && x.first <= merged.back().second + 1) merged.back().second = std::max(merged.back().second, x.second);
      else merged.push_back(x);
    }
    r = std::move(merged);
    Regex::Class probe = c;
    probe.ascii[0] = probe.ascii[1] = probe.ascii[2] = probe.ascii[3] = 0;
    for (char32_t ch = 0; ch < 128; ++ch) {
      bool in = std::any_of(r.begin(), r.end(), [&](const auto& x) { return ch >= x.first && ch <= x.second; });
      if (!in && (c.props & Regex::props_of(ch))) in = true;
      if (!in && (c.not_props & ~Regex::props_of(ch))) in = true;
      if (in != c.negated) c.ascii[ch >> 5] |= 1u << (ch & 31);
    }
    re_.classes_.push_back(std::move(c));
    return static_cast<std::uint32_t>(re_.classes_.size() - 1);
  }

  // Adds code point c (with its case-fold equivalents under (?i)) to a class's ranges.
  void add_char(Regex::Class& cls, char32_t c) {
    if (!icase_) {
      cls.ranges.push_back({c, c});
      return;
    }
    std::vector<char32_t> eq;
    fold_equivalents(c, eq);
    for (char32_t e : eq) cls.ranges.push_back({e, e});
  }

  void literal(Node& n, char32_t c) {
    Regex::Class cls;
    add_char(cls, c);
    n.kind = Node::kClass;
    n.index = add_class(std::move(cls));
  }

  bool alternation(Node& out, std::size_t depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64 groups");
    Node first;
    if (!sequence(first, depth)) return false;
    if (peek() != '|') return out = std::move(first), true;
    out.kind = Node::kAlt;
    out.kids.push_back(std::move(first));
    while (eat('|')) {
      Node alt;
      if (!sequence(alt, depth)) return false;
      out.kids.push_back(std::move(alt));
    }
    return true;
  }

  bool sequence(Node& out, std::size_t depth) {
    out.kind = Node::kConcat;
    while (more() && peek() != '|' && peek() != ')') {
      Node atom;
      if (!this->atom(atom, depth) || !quantifiers(atom)) return false;
      out.kids.push_back(std::move(atom));
    }
    if (out.kids.size() == 1) {
      Node only = std::move(out.kids[0]);
      out = std::move(only);
    }
    return true;
  }

  // {m}, {m,}, {,n}, {m,n} at pos_ (just past '{'); false (pos_ unchanged) when it is not one, since Oniguruma
  // then reads the brace as a literal.
  bool interval(int& lo, int& hi) {
    const std::size_t save = pos_;
    auto number = [&](int& v) {
      const std::size_t s = pos_;
      long long x = 0;
      while (more() && peek() >= '0' && peek() <= '9') {
        x = x * 10 + (peek() - '0');
        if (x > 100000) x = 100000;
        ++pos_;
      }
      v = static_cast<int>(x);
      return pos_ > s;
    };
    const bool has_lo = number(lo);
    if (!has_lo) lo = 0;
    if (eat('}')) {
      if (has_lo) return hi = lo, true;
      pos_ = save;
      return false;
    }
    if (!eat(',')) return pos_ = save, false;
    const bool has_hi = number(hi);
    if (!has_hi) hi = kInfinite;
    if (!eat('}') || (!has_lo && !has_hi)) return pos_ = save, false;
    return true;
  }

  bool quantifiers(Node& atom) {
    bool quantified = false;
    for (;;) {
      const std::size_t at = pos_;
      int lo, hi;
      if (eat('*')) lo = 0, hi = kInfinite;
      else if (eat('+')) lo = 1, hi = kInfinite;
      else if (eat('?')) lo = 0, hi = 1;
      else if (peek() == '{') {
        ++pos_;
        if (!interval(lo, hi)) {
          pos_ = at;
          return true;  // a literal '{', read by the next atom
        }
      } else {
        return true;
      }
      if (quantified) return fail("a quantifier directly after a quantifier", at);
      if (hi != kInfinite && lo > hi) return syntax("an interval {m,n} with m > n");
      if (lo > 1000 || hi > 1000) return fail("a repetition count above 1000", at);
      if (atom.kind == Node::kAssert) return fail("a quantifier on an assertion", at);
      bool greedy = true;
      if (eat('?')) greedy = false;
      else if (peek() == '+') return fail("a possessive quantifier (atomic repetition)", pos_);
      Node rep;
      rep.kind = Node::kRepeat;
      rep.min = lo, rep.max = hi, rep.greedy = greedy;
      rep.kids.push_back(std::move(atom));
      atom = std::move(rep);
      quantified = true;
    }
  }

  bool assertion(Node& n, Regex::Assertion::Kind kind, bool negate = false) {
    re_.assertions_.push_back({kind, negate, 0});
    n.kind = Node::kAssert;
    n.index = static_cast<std::uint32_t>(re_.assertions_.size() - 1);
    return true;
  }

  bool group(Node& n, std::size_t depth) {
    const std::size_t at = pos_ - 1;
    const bool saved_icase = icase_;
    bool lookahead = false, negate = false;
    if (eat('?')) {
      if (eat(':')) {
      } else if (eat('=')) {
        lookahead = true;
      } else if (eat('!')) {
        lookahead = negate = true;
      } else if (p_.substr(pos_, 2) == "i:") {
        pos_ += 2;
        icase_ = true;
      } else if (p_.substr(pos_, 3) == "-i:") {
        pos_ += 3;
        icase_ = false;
      } else if (peek() == '<' && (p_.substr(pos_, 2) == "<=" || p_.substr(pos_, 2) == "<!")) {
        return fail("lookbehind (?" + std::string(p_.substr(pos_, 2)) + "…)", at);
      } else if (peek() == '>') {
        return fail("an atomic group (?>…)", at);
      } else if (peek() == '#') {
        return fail("a comment group (?#…)", at);
      } else if (peek() == '<' || peek() == 'P' || peek() == '\'') {
        // Named groups capture like plain ones; only the name's syntax differs.
        const char close = peek() == '\'' ? '\'' : '>';
        if (peek() == 'P') ++pos_;
        if (!eat('<') && !eat('\'')) return fail("the group (?P…", at);
        while (more() && peek() != close) ++pos_;
        if (!eat(close)) return syntax("an unterminated group name");
      } else {
        return fail("the group option (?" + std::string(p_.substr(pos_, 1)) + "…", at);
      }
    }
    Node body;
    if (!alternation(body, depth + 1)) return false;
    if (!eat(')')) return syntax("a missing ')' for the group opened at byte " + std::to_string(at));
    icase_ = saved_icase;
    if (!lookahead) return n = std::move(body), true;
    const std::size_t width = max_width(body);
    if (width == kUnbounded || width > kMaxLookahead)
      return fail(std::string("a lookahead (?") + (negate ? "!" : "=") + "…) whose body can be longer than 64 characters", at);
    assertion(n, Regex::Assertion::kLookahead, negate);
    lookaheads_.push_back({n.index, std::make_unique<Node>(std::move(body))});
    return true;
  }

  static std::size_t min_width(const Node& n) {
    switch (n.kind) {
      case Node::kEmpty:
      case Node::kAssert: return 0;
      case Node::kClass: return 1;
      case Node::kConcat: {
        std::size_t s = 0;
        for (const auto& k : n.kids) s += min_width(k);
        return s;
      }
      case Node::kAlt: {
        std::size_t m = kUnbounded;
        for (const auto& k : n.kids) m = std::min(m, min_width(k));
        return m;
      }
      case Node::kRepeat: return static_cast<std::size_t>(n.min) * min_width(n.kids[0]);
    }
    return 0;
  }

  static std::size_t max_width(const Node& n) {
    switch (n.kind) {
      case Node::kEmpty:
      case Node::kAssert: return 0;
      case Node::kClass: return 1;
      case Node::kConcat: {
        std::size_t s = 0;
        for (const auto& k : n.kids) {
          const std::size_t w = max_width(k);
          if (w == kUnbounded) return kUnbounded;
          s += w;
        }
        return s;
      }
      case Node::kAlt: {
        std::size_t m = 0;
        for (const auto& k : n.kids) m = std::max(m, max_width(k));
        return m;
      }
      case Node::kRepeat: {
        const std::size_t w = max_width(n.kids[0]);
        if (w == 0) return 0;
        if (w == kUnbounded || n.max == kInfinite) return kUnbounded;
        return w * static_cast<std::size_t>(n.max);
      }
    }
    return 0;
  }

  // A hexadecimal escape's digits: exactly `count` of them, or up to 8 inside braces.
  bool hex(char32_t& c, std::size_t count) {
    auto digit = [](char ch) {
      return ch >= '0' && ch <= '9' ? ch - '0' : (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f' ? (ch | 0x20) - 'a' + 10 : -1;
    };
    std::uint32_t v = 0;
    if (count == 0) {
      std::size_t n = 0;
      while (more() && peek() != '}' && n < 8) {
        const int d = digit(peek());
        if (d < 0) return syntax("a bad hexadecimal escape");
        v = v * 16 + static_cast<std::uint32_t>(d), ++pos_, ++n;
      }
      if (!n || !eat('}')) return syntax("a bad \\x{…} escape");
    } else {
      for (std::size_t n = 0; n < count; ++n) {
        const int d = digit(peek());
        if (!more() || d < 0) return syntax("a bad hexadecimal escape");
        v = v * 16 + static_cast<std::uint32_t>(d), ++pos_;
      }
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return syntax("an escape of a code point that is not a character");
    c = v;
    return true;
  }

  // \p{…}, \P{…}, \pL…: the property letter's bit, with `negated` for \P and \p{^…}.
  bool property(bool upper, std::uint8_t& bit, bool& negated) {
    const std::size_t at = pos_ - 2;
    std::string name;
    if (eat('{')) {
      while (more() && peek() != '}') name += p_[pos_++];
      if (!eat('}')) return syntax("an unterminated \\p{…}");
    } else if (more()) {
      name = std::string(1, p_[pos_++]);
    }
    negated = upper;
    if (!name.empty() && name[0] == '^') negated = !negated, name.erase(0, 1);
    if (name == "L" || name == "Letter") bit = kLetterProp;
    else if (name == "N" || name == "Number") bit = kNumberProp;
    else return fail("the property \\" + std::string(upper ? "P" : "p") + "{" + name + "} (only L and N are)", at);
    // Under (?i) Oniguruma matches a character when any case variant has the property: U+0345 (a mark) folds
    // to the letter ι. Numbers have no such variants outside N.
    if (icase_ && bit == kLetterProp) return fail("\\p{L} inside (?i…)", at);
    return true;
  }

  // An escape after '\': a code point (single), or a class (set into cls, when `cls_out`).
  // kind: 0 literal code point in `c`; 1 class bits merged into `cls`.
  bool escape(char32_t& c, Regex::Class& cls, int& kind, bool in_class) {
    const std::size_t at = pos_ - 1;
    if (!more()) return syntax("a pattern ending in '\\'");
    const char e = p_[pos_++];
    kind = 0;
    switch (e) {
      case 't': c = '\t'; return true;
      case 'n': c = '\n'; return true;
      case 'r': c = '\r'; return true;
      case 'f': c = '\f'; return true;
      case 'v': c = '\v'; return true;
      case 'a': c = 0x07; return true;
      case 'e': c = 0x1B; return true;
      case 'x': return eat('{') ? hex(c, 0) : hex(c, 2);
      case 'u': return hex(c, 4);
      case 's':
      case 'S': {
        kind = 1;
        if (e == 's') cls.props |= kSpaceProp;
        else cls.not_props |= kSpaceProp;
        return true;
      }
      case 'p':
      case 'P': {
        std::uint8_t bit = 0;
        bool negated = false;
        if (!property(e == 'P', bit, negated)) return false;
        kind = 1;
        if (negated) cls.not_props |= bit;
        else cls.props |= bit;
        return true;
      }
      default: break;
    }
    const auto u = static_cast<unsigned char>(e);
    if (u < 0x80 && !((e >= '0' && e <= '9') || ((e | 0x20) >= 'a' && (e | 0x20) <= 'z'))) {
      c = u;  // escaped punctuation stands for itself
      return true;
    }
    if (u >= 0x80) {
      pos_ = at + 1;
      c = next_cp();
      return true;
    }
    return fail(std::string("the escape \\") + e + (in_class ? " inside a class" : ""), at);
  }

  bool char_class(Node& n) {
    const std::size_t at = pos_ - 1;
    Regex::Class cls;
    if (eat('^')) cls.negated = true;
    bool first = true;
    while (more() && (peek() != ']' || first)) {
      first = false;
      if (peek() == '[') return fail("a nested class or POSIX bracket [[…]]", pos_);
      if (p_.substr(pos_, 2) == "&&") return fail("a class intersection &&", pos_);
      char32_t lo;
      int kind = 0;
      if (eat('\\')) {
        if (!escape(lo, cls, kind, true)) return false;
        if (kind == 1) continue;
      } else {
        lo = next_cp();
      }
      if (peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        ++pos_;
        char32_t hi;
        if (eat('\\')) {
          Regex::Class ignored;
          if (!escape(hi, ignored, kind, true)) return false;
          if (kind == 1) return fail("a range ending in a class escape", pos_ - 2);
        } else {
          hi = next_cp();
        }
        if (hi < lo) return syntax("a class range out of order");
        if (icase_) {
          if (hi - lo > 0x1000) return fail("a class range wider than 4096 characters inside (?i…)", at);
          for (char32_t ch = lo; ch <= hi; ++ch) add_char(cls, ch);
        } else {
          cls.ranges.push_back({lo, hi});
        }
      } else {
        add_char(cls, lo);
      }
    }
    if (!eat(']')) return syntax("an unterminated class opened at byte " + std::to_string(at));
    n.kind = Node::kClass;
    n.index = add_class(std::move(cls));
    return true;
  }

  bool atom(Node& n, std::size_t depth) {
    const std::size_t at = pos_;
    const char c = peek();
    switch (c) {
      case '(': ++pos_; return group(n, depth);
      case '[': ++pos_; return char_class(n);
      case '.': {
        ++pos_;
        Regex::Class cls;
        cls.negated = true;
        cls.ranges.push_back({'\n', '\n'});
        n.kind = Node::kClass;
        n.index = add_class(std::move(cls));
        return true;
      }
      case '^': ++pos_; return assertion(n, Regex::Assertion::kLineStart);
      case '$': ++pos_; return assertion(n, Regex::Assertion::kLineEnd);
      case '*': case '+': case '?': return syntax("a quantifier with nothing to repeat");
      case '\\': {
        ++pos_;
        if (peek() == 'A') return ++pos_, assertion(n, Regex::Assertion::kTextStart);
        if (peek() == 'z') return ++pos_, assertion(n, Regex::Assertion::kTextEnd);
        if (peek() >= '1' && peek() <= '9') return fail("a backreference", at);
        char32_t cp;
        Regex::Class cls;
        int kind;
        if (!escape(cp, cls, kind, false)) return false;
        if (kind == 1) {
          n.kind = Node::kClass;
          n.index = add_class(std::move(cls));
        } else {
          literal(n, cp);
        }
        return true;
      }
      default: literal(n, next_cp()); return true;
    }
  }

  bool push(Regex::Inst i) {
    if (re_.insts_.size() >= kMaxInsts) return fail("a pattern of more than 65536 instructions (long counted repetitions)", 0);
    re_.insts_.push_back(i);
    return true;
  }
  std::uint32_t here() const { return static_cast<std::uint32_t>(re_.insts_.size()); }

  bool emit(const Node& n) {
    using I = Regex::Inst;
    switch (n.kind) {
      case Node::kEmpty: return true;
      case Node::kClass: return push({I::kClass, n.index, 0});
      case Node::kAssert: return push({I::kAssert, n.index, 0});
      case Node::kConcat:
        for (const auto& k : n.kids)
          if (!emit(k)) return false;
        return true;
      case Node::kAlt: {
        std::vector<std::uint32_t> jumps;
        for (std::size_t i = 0; i < n.kids.size(); ++i) {
          std::uint32_t split = 0;
          if (i + 1 < n.kids.size()) {
            split = here();
            if (!push({I::kSplit, split + 1, 0})) return false;
          }
          if (!emit(n.kids[i])) return false;
          if (i + 1 < n.kids.size()) {
            jumps.push_back(here());
            if (!push({I::kJmp, 0, 0})) return false;
            re_.insts_[split].y = here();
          }
        }
        for (std::uint32_t j : jumps) re_.insts_[j].x = here();
        return true;
      }
      case Node::kRepeat: {
        for (int i = 0; i < n.min; ++i)
          if (!emit(n.kids[0])) return false;
        if (n.max == kInfinite) {
          const std::uint32_t loop = here();
          if (!push({I::kSplit, 0, 0}) || !emit(n.kids[0]) || !push({I::kJmp, loop, 0})) return false;
          set_split(loop, loop + 1, here(), n.greedy);
          return true;
        }
        std::vector<std::uint32_t> splits;
        for (int i = n.min; i < n.max; ++i) {
          splits.push_back(here());
          if (!push({I::kSplit, 0, 0}) || !emit(n.kids[0])) return false;
        }
        for (std::uint32_t s : splits) set_split(s, s + 1, here(), n.greedy);
        return true;
      }
    }
    return true;
  }

  void set_split(std::uint32_t at, std::uint32_t body, std::uint32_t out, bool greedy) {
    re_.insts_[at].x = greedy ? body : out;
    re_.insts_[at].y = greedy ? out : body;
  }
};

bool Regex::compile(std::string_view pattern, std::string& error) {
  insts_.clear(), classes_.clear(), assertions_.clear();
  if (utf8_invalid_at(pattern) != pattern.size()) {
    error = "the pattern is not valid UTF-8";
    return false;
  }
  RegexCompiler c(pattern, *this);
  return c.run(error);
}

// The Pike VM: threads ordered by priority, one list per text position, each program counter at most once per
// list (the first — highest-priority — arrival wins, which is what makes the result leftmost-first).
class RegexVm {
 public:
  RegexVm(const Regex& re, std::string_view text) : re_(re), text_(text), memo_(re.assertions_.size(), {kNone, false}) {
    const std::size_t n = re.insts_.size();
    for (auto* l : {&a_, &b_}) l->reset(n);
  }

  std::size_t steps = 0;

  // Leftmost-first match at or after `from` of the program at `start_pc`; anchored: only at `from`.
  bool search(std::uint32_t start_pc, std::size_t from, bool anchored, std::size_t& ms, std::size_t& me,
              std::size_t budget, bool& exhausted) {
    List* cur = &a_;
    List* nxt = &b_;
    cur->clear();
    bool matched = false;
    for (std::size_t pos = from;;) {
      if (!matched && (!anchored || pos == from)) add(*cur, start_pc, pos, pos);
      if (cur->runs.empty()) {
        if (matched || anchored || pos >= text_.size()) break;
      }
      char32_t c = 0;
      std::size_t next = pos;
      if (pos < text_.size()) c = utf8_next(text_, next);
      // A character's properties are looked up once per position, not once per thread.
      const std::uint8_t props = c >= 128 ? Regex::props_of(c) : 0;
      nxt->clear();
      for (const auto& t : cur->runs) {
        if (++steps > budget) return exhausted = true, false;
        const Regex::Inst& in = re_.insts_[t.pc];
        if (in.op == Regex::Inst::kMatch) {
          matched = true, ms = t.start, me = pos;
          break;  // lower-priority threads are cut
        }
        if (pos >= text_.size()) continue;
        const Regex::Class& cls = re_.classes_[in.x];
        if (c < 128 ? (cls.ascii[c >> 5] >> (c & 31)) & 1 : cls.matches(c, props)) add(*nxt, t.pc + 1, t.start, next);
      }
      std::swap(cur, nxt);
      if (pos >= text_.size()) break;
      pos = next;
    }
    return matched;
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  struct Thread {
    std::uint32_t pc;
    std::size_t start;
  };
  struct List {
    std::vector<std::uint32_t> sparse, dense;  // the set of visited program counters
    std::vector<Thread> runs;                   // runnable threads (kClass, kMatch), in priority order
    void reset(std::size_t n) { sparse.assign(n, 0), dense.clear(), dense.reserve(n), runs.reserve(n); }
    void clear() { dense.clear(), runs.clear(); }
    bool insert(std::uint32_t pc) {
      const std::uint32_t i = sparse[pc];
      if (i < dense.size() && dense[i] == pc) return false;
      sparse[pc] = static_cast<std::uint32_t>(dense.size());
      dense.push_back(pc);
      return true;
    }
  };

  const Regex& re_;
  std::string_view text_;
  List a_, b_;
  std::vector<Thread> stack_;
  std::vector<std::pair<std::size_t, bool>> memo_;  // per assertion: the last position evaluated and the result
  std::unique_ptr<RegexVm> sub_;                    // runs lookahead bodies (kept: their lists are reused)

  bool holds(std::uint32_t index, std::size_t pos) {
    const Regex::Assertion& a = re_.assertions_[index];
    bool r = false;
    switch (a.kind) {
      case Regex::Assertion::kLineStart: r = pos == 0 || text_[pos - 1] == '\n'; break;
      case Regex::Assertion::kLineEnd: r = pos == text_.size() || text_[pos] == '\n'; break;
      case Regex::Assertion::kTextStart: r = pos == 0; break;
      case Regex::Assertion::kTextEnd: r = pos == text_.size(); break;
      case Regex::Assertion::kLookahead: {
        if (memo_[index].first == pos) return memo_[index].second;
        // The body's width is bounded, so this anchored run costs at most 64 steps per instruction.
        if (!sub_) sub_ = std::make_unique<RegexVm>(re_, text_);
        std::size_t s, e, before = sub_->steps;
        bool exhausted = false;
        r = sub_->search(a.start, pos, true, s, e, kNone, exhausted) != a.negate;
        steps += sub_->steps - before;
        memo_[index] = {pos, r};
        return r;
      }
    }
    return r != a.negate;
  }

  // Adds the thread at pc and everything reachable without consuming a character, in priority order.
  void add(List& l, std::uint32_t pc, std::size_t start, std::size_t pos) {
    if (re_.static_[pc]) {
      // No assertion on the way: the closure is the same at every position.
      for (std::uint32_t k = re_.closure_begin_[pc], end = re_.closure_begin_[pc + 1]; k < end; ++k) {
        const std::uint32_t r = re_.closure_[k];
        ++steps;
        if (l.insert(r)) l.runs.push_back({r, start});
      }
      return;
    }
    stack_.push_back({pc, start});
    while (!stack_.empty()) {
      const Thread t = stack_.back();
      stack_.pop_back();
      if (!l.insert(t.pc)) continue;
      ++steps;
      const Regex::Inst& in = re_.insts_[t.pc];
      switch (in.op) {
        case Regex::Inst::kJmp: stack_.push_back({in.x, t.start}); break;
        case Regex::Inst::kSplit:
          stack_.push_back({in.y, t.start});
          stack_.push_back({in.x, t.start});
          break;
        case Regex::Inst::kAssert:
          if (holds(in.x, pos)) stack_.push_back({t.pc + 1, t.start});
          break;
        default: l.runs.push_back(t);
      }
    }
  }
};

bool Regex::find(std::string_view text, std::size_t from, std::size_t& start, std::size_t& end, std::size_t& steps,
                 std::size_t budget, bool& exhausted) const {
  RegexVm vm(*this, text);
  exhausted = false;
  const bool found = vm.search(main_, from, false, start, end, budget, exhausted);
  steps += vm.steps;
  return found && !exhausted;
}

bool Regex::find_all(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& matches,
                     std::string& error) const {
  matches.clear();
  // Linear patterns on any text stay far below this (each character is stepped by each instruction a few
  // times); a pattern that rescans the text may rescan short ones (2^24 steps, some tens of milliseconds).
  const std::size_t budget = std::max<std::size_t>((text.size() + 16) * (insts_.size() + 4) * 64, std::size_t{1} << 24);
  RegexVm vm(*this, text);
  std::size_t from = 0, last_end = std::numeric_limits<std::size_t>::max();
  while (from <= text.size()) {
    std::size_t s, e;
    bool exhausted = false;
    // Pre-tokenizer patterns match at almost every position: a search anchored where the last match ended
    // follows one start's threads instead of one per position, and gives the same match whenever one starts
    // there (threads from the earliest start outrank all others). Only when none does is the text searched on.
    bool found = vm.search(main_, from, true, s, e, budget, exhausted);
    if (!found && !exhausted) found = vm.search(main_, from, false, s, e, budget, exhausted);
    if (!found) {
      if (exhausted) {
        error = "the pattern needs more than " + std::to_string(budget) + " steps on this text (it rescans it)";
        return false;
      }
      break;
    }
    if (s == e && e == last_end) {
      // An empty match where the previous match ended: try again one character further.
      if (from >= text.size()) break;
      from += utf8_length(static_cast<unsigned char>(text[from]));
      continue;
    }
    matches.push_back({s, e});
    last_end = e;
    from = e;
  }
  return true;
}

}  // namespace attnlab::tokenizer
