// A small regex engine for the pre-tokenizer and Replace patterns of tokenizer.json files, with the semantics
// huggingface/tokenizers gets from Oniguruma (leftmost-first alternation, greedy and lazy quantifiers, Unicode
// classes) and a guarantee against catastrophic backtracking: patterns compile to a Pike VM (Thompson NFA
// simulated with thread priorities), so one search is O(text × pattern), and lookahead bodies must have a bounded
// width. A search over a whole text also has a work budget, reached only by patterns written to rescan (an error,
// never a wrong split).
//
// Supported: literals and escapes (\t \n \r \f \v \a \e \xHH \x{H…} \uHHHH, escaped punctuation), `.` (any but
// \n), classes [...] with ranges, negation, \s \S \p{L} \p{N} \P{…} (\p{Letter}, \p{Number}, \pL, \pN, \p{^L}),
// alternation, groups ( ), (?: ), (?i: ) with Unicode simple case folding, quantifiers * + ? {m} {m,} {,n} {m,n}
// and their lazy forms, lookahead (?= ) (?! ), anchors ^ $ (line starts and ends, as Oniguruma's) \A \z.
// Anything else — \d, \w, \b, backreferences, lookbehind, atomic groups, possessive quantifiers, other
// properties, class intersections — is refused with its name and position.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::tokenizer {

class Regex {
 public:
  /** Compiles a UTF-8 pattern; false with `error` naming the construct and its byte position. */
  bool compile(std::string_view pattern, std::string& error);

  /**
   * The leftmost-first match starting at or after `from` in valid UTF-8 `text` (whose whole length lookahead
   * may see): true with [start, end), or false when there is none. `steps` counts the VM's work (thread
   * steps); the search stops and returns false with `exhausted` set once it passes `budget`.
   */
  bool find(std::string_view text, std::size_t from, std::size_t& start, std::size_t& end, std::size_t& steps,
            std::size_t budget, bool& exhausted) const;

  /**
   * Every match, as Oniguruma's find iterator gives them (a search resumes where the last match ended; an
   * empty match right where the previous one ended is skipped by advancing one character). false with `error`
   * when the work budget (64 × text × pattern steps, at least 2^24) runs out.
   */
  bool find_all(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& matches,
                std::string& error) const;

  /** Instructions in the compiled program (and its lookahead bodies). */
  std::size_t size() const { return insts_.size(); }
  /** Whether the pattern can match the empty string (ignoring assertions: conservative). */
  bool can_match_empty() const { return matches_empty_; }

  struct Class {
    std::vector<std::pair<char32_t, char32_t>> ranges;  // sorted, merged
    std::uint32_t ascii[4] = {0, 0, 0, 0};               // membership of 0…127, negation applied
    std::uint8_t props = 0, not_props = 0;               // kLetter… that a code point must (not) have to match
    bool negated = false;
    /** Whether c (not ASCII) is in the class, given its properties (props_of(c)). */
    bool matches(char32_t c, std::uint8_t props_of_c) const;
  };
  /** The kLetter… bits of a code point, which classes test. */
  static std::uint8_t props_of(char32_t c);
  struct Inst {
    enum Op : std::uint8_t { kClass, kSplit, kJmp, kMatch, kAssert } op;
    std::uint32_t x = 0, y = 0;  // class index / branch targets / assertion index
  };
  struct Assertion {
    enum Kind : std::uint8_t { kLookahead, kLineStart, kLineEnd, kTextStart, kTextEnd } kind;
    bool negate = false;
    std::uint32_t start = 0;  // the lookahead body's first instruction (it ends with its own kMatch)
  };

 private:
  std::vector<Inst> insts_;
  std::vector<Class> classes_;
  std::vector<Assertion> assertions_;
  std::uint32_t main_ = 0;  // the pattern's first instruction
  bool matches_empty_ = false;
  // Per instruction, the runnable instructions (kClass, kMatch) its epsilon closure reaches, in priority order,
  // when no assertion is on the way (static_[pc]); the VM then copies them instead of walking Splits and Jmps.
  std::vector<std::uint32_t> closure_begin_, closure_;
  std::vector<std::uint8_t> static_;
  void build_closures();

  friend class RegexCompiler;
  friend class RegexVm;
};

}  // namespace attnlab::tokenizer
