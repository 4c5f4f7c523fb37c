// The tokenizer's regex engine: every supported construct on hand-checked cases, random patterns against
// std::regex's ECMAScript engine (a backtracking engine with the same leftmost-first semantics on the constructs
// both have), the pre-tokenizer patterns of GPT-2, Llama 3 and Qwen on text whose splits are known, the names in
// its refusals, and its guarantee: the work of a search is bounded by text × pattern, even on the inputs that make
// backtracking engines take exponential time.
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "testing.h"
#include "tokenizer/regex.h"

namespace t = attnlab::tokenizer;

namespace {

t::Regex compiled(const std::string& pattern) {
  t::Regex re;
  std::string error;
  INFO(pattern << ": " << error);
  REQUIRE(re.compile(pattern, error));
  return re;
}

// All matches as strings, with the library's iteration.
std::vector<std::string> split(const std::string& pattern, const std::string& text) {
  const t::Regex re = compiled(pattern);
  std::vector<std::pair<std::size_t, std::size_t>> m;
  std::string error;
  REQUIRE(re.find_all(text, m, error));
  std::vector<std::string> out;
  for (auto [s, e] : m) out.push_back(text.substr(s, e - s));
  return out;
}

std::string refusal(const std::string& pattern) {
  t::Regex re;
  std::string error;
  CHECK_FALSE(re.compile(pattern, error));
  return error;
}

using V = std::vector<std::string>;

const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* kLlama3 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// A small random pattern over {a, b, c}: literals, classes, groups, alternation, greedy and lazy quantifiers
// (on bodies that cannot match empty: the two engines treat empty iterations differently), lookahead.
struct Gen {
  std::uint64_t s;
  unsigned next(unsigned n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<unsigned>((s >> 33) % n);
  }
  std::string atom(int depth, bool& nullable) {
    nullable = false;
    switch (next(depth > 2 ? 3 : 6)) {
      case 0: case 1: return std::string(1, static_cast<char>('a' + next(3)));
      case 2: {
        static const char* classes[] = {"[ab]", "[^a]", "[a-b]", "[^bc]", "[c]"};
        return classes[next(5)];
      }
      case 3: return "(?:" + alt(depth + 1, nullable) + ")";
      case 4: return "(" + seq(depth + 1, nullable) + ")";
      default: {
        bool n;
        const std::string body = seq(depth + 1, n);
        nullable = true;
        return std::string(next(2) ? "(?=" : "(?!") + (body.find_first_of("*+{") == std::string::npos ? body : "a") + ")";
      }
    }
  }
  std::string quantified(int depth, bool& nullable) {
    std::string a = atom(depth, nullable);
    if (nullable || next(3) == 0) return a;
    static const char* q[] = {"*", "+", "?", "{1,2}", "{2}", "{0,3}", "{2,}"};
    std::string s = a + q[next(7)];
    if (s.back() != '}' || next(2)) {
      if (next(3) == 0) s += "?";  // lazy
    }
    nullable = s.find_first_of("*?") != std::string::npos || s.find("{0") != std::string::npos;
    return s;
  }
  std::string seq(int depth, bool& nullable) {
    std::string s;
    nullable = true;
    for (unsigned i = 0, n = 1 + next(3); i < n; ++i) {
      bool nb;
      s += quantified(depth, nb);
      nullable = nullable && nb;
    }
    return s;
  }
  std::string alt(int depth, bool& nullable) {
    std::string s = seq(depth, nullable);
    while (next(3) == 0) {
      bool nb;
      s += "|" + seq(depth, nb);
      nullable = nullable || nb;
    }
    return s;
  }
};

}  // namespace

TEST_CASE("tokenizer regex: literals, classes, alternation, groups and quantifiers", "[tokenizer][regex]") {
  CHECK(split("ab", "xabyab") == V{"ab", "ab"});
  CHECK(split("a|ab", "ab") == V{"a"});                 // leftmost-first, not longest
  CHECK(split("ab|a", "ab") == V{"ab"});
  CHECK(split("a+", "caaab aa") == V{"aaa", "aa"});
  CHECK(split("a+?", "aaa") == V{"a", "a", "a"});       // lazy
  CHECK(split("a{2}", "aaaaa") == V{"aa", "aa"});
  CHECK(split("a{2,3}", "aaaaaaa") == V{"aaa", "aaa"});
  CHECK(split("a{2,3}?", "aaaaa") == V{"aa", "aa"});
  CHECK(split("a{2,}", "a aa aaaa") == V{"aa", "aaaa"});
  CHECK(split("a{,2}b", "aaab") == V{"aab"});
  CHECK(split("x{", "x{") == V{"x{"});                  // a brace that is not an interval is a literal
  CHECK(split("[a-c]+", "abcdcba") == V{"abc", "cba"});
  CHECK(split("[^a-c ]+", "abc def") == V{"def"});
  CHECK(split("[-a]+", "a-b") == V{"a-"});
  CHECK(split(R"([\]x]+)", "]x]") == V{"]x]"});
  CHECK(split("(?:ab)+", "ababab") == V{"ababab"});
  CHECK(split("(a|b)c", "acbc") == V{"ac", "bc"});
  CHECK(split(".", "a\nb") == V{"a", "b"});             // . stops at \n only
  CHECK(split(".+", "a\rb") == V{"a\rb"});
  CHECK(split(R"(\t\n\r\x41\x{42}\u0043\.\*)", "\t\n\rABC.*") == V{"\t\n\rABC.*"});
  CHECK(split("é+", "ééa") == V{"éé"});
  CHECK(split("[é-ë]", "èéêëì") == V{"é", "ê", "ë"});
}

TEST_CASE("tokenizer regex: Unicode classes, case folding, lookahead and anchors", "[tokenizer][regex]") {
  CHECK(split(R"(\p{L}+)", "héllo wörld 42 日本") == V{"héllo", "wörld", "日本"});
  CHECK(split(R"(\pN+)", "a٣٤b½") == V{"٣٤", "½"});
  CHECK(split(R"(\P{L}+)", "ab12cd") == V{"12"});
  CHECK(split(R"(\p{^L}+)", "ab12cd") == V{"12"});
  CHECK(split(R"(\p{Letter}\p{Number})", "a1") == V{"a1"});
  CHECK(split(R"(\s+)", "a \t\u00a0\u3000b\u0085c\u200bd") == V{" \t\u00a0\u3000", "\u0085"});  // U+200B is not white space
  CHECK(split(R"(\S+)", "a b") == V{"a", "b"});
  CHECK(split(R"([^\s\p{L}]+)", "ab, 12!") == V{",", "12!"});
  CHECK(split("(?i:'s|k)", "'S 's 'ſ K k \u212a") == V{"'S", "'s", "'ſ", "K", "k", "\u212a"});
  CHECK(split("(?i:[a-c]+)", "xAbCy") == V{"AbC"});
  CHECK(split("(?i:a(?-i:b))", "aB Ab") == V{"Ab"});
  CHECK(split(R"(\s+(?!\S))", "a   b") == V{"  "});
  CHECK(split(R"(a(?=b))", "ab ac") == V{"a"});
  CHECK(split(R"(a(?!b))", "ab ac") == V{"a"});
  CHECK(split("^a", "aa\na") == V{"a", "a"});
  CHECK(split("a$", "aa\na") == V{"a", "a"});
  CHECK(split(R"(\Aa)", "aa\na") == V{"a"});
  CHECK(split(R"(a\z)", "aa\na") == V{"a"});
  // Empty matches: one at each position not right after a match (Oniguruma's iterator; the JS suite checks
  // the splits this gives against the library's).
  CHECK(split("x*", "axb") == V{"", "x", ""});
  CHECK(split("x*", "axbb") == V{"", "x", "", ""});
  CHECK_FALSE(compiled("a+|b").can_match_empty());
  CHECK(compiled("a*|b").can_match_empty());
  CHECK(compiled("(?:a?b?){2}").can_match_empty());
}

TEST_CASE("tokenizer regex: the pre-tokenizer patterns of GPT-2 and Llama 3", "[tokenizer][regex]") {
  // \s+(?!\S) backs off one character before a word: the last space goes with it.
  CHECK(split(kGpt2, "Hello world's  \n\n 12345 ok!?") ==
        V{"Hello", " world", "'s", "  \n\n", " 12345", " ok", "!?"});
  CHECK(split(kGpt2, "I'M fine") == V{"I", "'", "M", " fine"});  // GPT-2's contractions are lower case only
  CHECK(split(kLlama3, "I'M fine, 1234567 \r\n\r\n  x") == V{"I", "'M", " fine", ",", " ", "123", "456", "7", " \r\n\r\n", " ", " x"});
  CHECK(split(kLlama3, "don't 'ſ") == V{"don", "'t", " '", "ſ"});
}

TEST_CASE("tokenizer regex: random patterns find what std::regex (ECMAScript) finds, from every offset", "[tokenizer][regex]") {
  Gen g{20240601};
  int compared = 0;
  for (int k = 0; k < 1500; ++k) {
    bool nullable;
    const std::string pattern = g.alt(0, nullable);
    std::string text;
    for (unsigned i = 0, n = g.next(12); i < n; ++i) text += static_cast<char>('a' + g.next(3));
    const t::Regex re = compiled(pattern);
    const std::regex ref(pattern, std::regex::ECMAScript);
    for (std::size_t from = 0; from <= text.size(); ++from) {
      std::smatch m;
      const std::string rest = text.substr(from);
      const bool want = std::regex_search(rest, m, ref);
      std::size_t s = 0, e = 0, steps = 0;
      bool exhausted = false;
      const bool got = re.find(text, from, s, e, steps, std::size_t(-1), exhausted);
      INFO("pattern " << pattern << " text \"" << text << "\" from " << from);
      REQUIRE(got == want);
      if (want) {
        CHECK(s == from + static_cast<std::size_t>(m.position(0)));
        CHECK(e - s == static_cast<std::size_t>(m.length(0)));
      }
      ++compared;
    }
  }
  CHECK(compared > 5000);
}

TEST_CASE("tokenizer regex: a search's work is bounded by text × pattern where backtracking is exponential", "[tokenizer][regex]") {
  // (a|aa)*c and (x+x+)+y take exponential time in a backtracking engine on a run with no c / y.
  for (const char* pattern : {"(a|aa)*c", "(?:a+a+)+y", R"((\s*[\r\n]+)+x)", "(a*)*b"}) {
    const t::Regex re = compiled(pattern);
    for (std::size_t n : {10u, 100u, 1000u, 5000u}) {
      const std::string text(n, pattern[1] == '\\' ? '\n' : 'a');
      std::size_t s, e, steps = 0;
      bool exhausted = false;
      CHECK_FALSE(re.find(text, 0, s, e, steps, std::size_t(-1), exhausted));
      INFO(pattern << " n = " << n << ": " << steps << " steps, program " << re.size());
      // Each position holds at most one thread per instruction, each stepped once, plus its closure.
      CHECK(steps <= 2 * (n + 1) * (re.size() + 1) + 2 * re.size());
    }
  }
  // A pattern written to rescan the text (its first branch runs to the end, its second matches one character)
  // is stopped by the budget: an error, not a hang.
  const t::Regex rescan = compiled("a*b|a");
  std::vector<std::pair<std::size_t, std::size_t>> m;
  std::string error;
  CHECK_FALSE(rescan.find_all(std::string(50000, 'a'), m, error));
  CHECK(error.find("needs more than") != std::string::npos);
  CHECK(rescan.find_all(std::string(1000, 'a'), m, error));  // short texts are fine
  CHECK(m.size() == 1000);
}

TEST_CASE("tokenizer regex: what it does not support is refused by name and position", "[tokenizer][regex]") {
  CHECK(refusal(R"(a\d)") == R"(the escape \d at byte 1 is not supported)");
  CHECK(refusal(R"(\w+)").find(R"(\w)") != std::string::npos);
  CHECK(refusal(R"(\bx)").find(R"(\b)") != std::string::npos);
  CHECK(refusal(R"((a)\1)").find("backreference") != std::string::npos);
  CHECK(refusal("(?<=a)b").find("lookbehind") != std::string::npos);
  CHECK(refusal("(?>a)").find("atomic group") != std::string::npos);
  CHECK(refusal("a*+").find("possessive") != std::string::npos);
  CHECK(refusal(R"(\p{Lu})").find(R"(\p{Lu})") != std::string::npos);
  CHECK(refusal("[[:alpha:]]").find("nested class") != std::string::npos);
  CHECK(refusal("[a&&b]").find("intersection") != std::string::npos);
  CHECK(refusal(R"((?i:\p{L}))").find("(?i") != std::string::npos);
  CHECK(refusal("a(?!b+)").find("lookahead") != std::string::npos);
  CHECK(refusal("(?x)a").find("(?x") != std::string::npos);
  CHECK(refusal("a{2000}").find("1000") != std::string::npos);
  CHECK(refusal("(a").find("missing ')'") != std::string::npos);
  CHECK(refusal("a)").find("unmatched ')'") != std::string::npos);
  CHECK(refusal("[ab").find("unterminated class") != std::string::npos);
  CHECK(refusal("*a").find("nothing to repeat") != std::string::npos);
  CHECK(refusal("a**").find("quantifier directly after") != std::string::npos);
  CHECK(refusal("\xff").find("UTF-8") != std::string::npos);
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "(";
  CHECK(refusal(deep).find("nesting") != std::string::npos);
}
