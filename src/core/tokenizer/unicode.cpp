#include "unicode.h"

#include <algorithm>
#include <utility>

#include "unicode_tables.h"

namespace attnlab::tokenizer {

namespace {

// The tables decoded from their varint streams (unicode_tables.h), once.
struct Tables {
  std::vector<std::uint32_t> letter, number, white, word;  // [first, last] pairs
  std::vector<std::uint32_t> ccc;                          // (first << 8 | class, length - 1) pairs
  std::vector<std::uint64_t> decomposition;                // composes << 63 | cp << 42 | first << 21 | second
  std::vector<std::uint32_t> fold;                         // (first, count << 2 | stride, delta mod 2^32) triples
};

class Varints {
 public:
  Varints(const std::uint8_t* p, std::size_t n) : p_(p), end_(p + n) {}
  std::uint32_t next() {
    std::uint32_t v = 0;
    for (unsigned shift = 0; p_ < end_; shift += 7) {
      const std::uint8_t b = *p_++;
      v |= std::uint32_t(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  std::int32_t signed_next() {
    const std::uint32_t z = next();
    return static_cast<std::int32_t>(z >> 1) ^ -static_cast<std::int32_t>(z & 1);
  }

 private:
  const std::uint8_t *p_, *end_;
};

std::vector<std::uint32_t> ranges_of(const std::uint8_t* data, std::size_t bytes, std::size_t count) {
  std::vector<std::uint32_t> out;
  out.reserve(2 * count);
  Varints v(data, bytes);
  std::uint32_t expected = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t first = expected + v.next(), last = first + v.next();
    out.push_back(first), out.push_back(last);
    expected = last + 1;
  }
  return out;
}

const Tables& unicode_data() {
  static const Tables t = [] {
    using namespace attnlab::tokenizer::tables;
    Tables d;
    d.letter = ranges_of(kLetter, kLetterBytes, kLetterCount);
    d.number = ranges_of(kNumber, kNumberBytes, kNumberCount);
    d.white = ranges_of(kWhiteSpace, kWhiteSpaceBytes, kWhiteSpaceCount);
    d.word = ranges_of(kWord, kWordBytes, kWordCount);
    Varints c(kCombiningClass, kCombiningClassBytes);
    std::uint32_t expected = 0;
    for (std::size_t i = 0; i < kCombiningClassCount; ++i) {
      const std::uint32_t first = expected + c.next(), length = c.next(), cls = c.next();
      d.ccc.push_back(first << 8 | cls), d.ccc.push_back(length);
      expected = first + length + 1;
    }
    Varints dec(kDecomposition, kDecompositionBytes);
    std::int64_t cp = -1;
    for (std::size_t i = 0; i < kDecompositionCount; ++i) {
      const std::uint32_t head = dec.next();
      cp += (head >> 1) + 1;
      const std::int64_t first = cp - dec.signed_next();
      const std::uint64_t second = dec.next();
      d.decomposition.push_back(std::uint64_t(head & 1) << 63 | std::uint64_t(cp) << 42 | std::uint64_t(first) << 21 | second);
    }
    Varints f(kCaseFold, kCaseFoldBytes);
    std::uint32_t start = 0;
    for (std::size_t i = 0; i < kCaseFoldCount; ++i) {
      start += f.next();
      const std::uint32_t count = f.next(), stride = f.next();
      d.fold.push_back(start), d.fold.push_back(count << 2 | stride), d.fold.push_back(static_cast<std::uint32_t>(f.signed_next()));
    }
    return d;
  }();
  return t;
}

}  // namespace

const char* unicode_version() { return tables::kUnicodeVersion; }

// --- UTF-8 ---

namespace {

// A lead byte's count of continuation bytes (0: not a lead byte) and the bounds of its first continuation byte:
// RFC 3629's table of well-formed sequences, which also rules out overlongs, surrogates and code points past U+10FFFF.
struct Lead {
  std::size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
};

Lead lead_byte(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {1};
  if (b == 0xE0) return {2, 0xA0};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {2};
  if (b == 0xED) return {2, 0x80, 0x9F};
  if (b == 0xF0) return {3, 0x90};
  if (b >= 0xF1 && b <= 0xF3) return {3};
  if (b == 0xF4) return {3, 0x80, 0x8F};
  return {};
}

}  // namespace

std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return 1;
  auto [need, lo, hi] = lead_byte(b);
  if (!need) return 0;
  for (std::size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size() || at(i + k) < lo || at(i + k) > hi) return 0;
    lo = 0x80, hi = 0xBF;
  }
  return need + 1;
}

std::size_t utf8_invalid_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(s, i);
    if (!n) return i;
    i += n;
  }
  return s.size();
}

char32_t utf8_next(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return ++i, b;
  const std::size_t n = utf8_length(b);
  char32_t cp = b & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    if (const std::size_t n = utf8_sequence(s, i)) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    // The maximal subpart: the lead byte and the continuation bytes that could still have completed it.
    auto [need, lo, hi] = lead_byte(static_cast<unsigned char>(s[i]));
    std::size_t j = i + 1;
    for (std::size_t k = 0; k < need && j < s.size(); ++k, ++j) {
      const auto c = static_cast<unsigned char>(s[j]);
      if (c < lo || c > hi) break;
      lo = 0x80, hi = 0xBF;
    }
    out += "\xEF\xBF\xBD";
    i = j;
  }
  return out;
}

// --- Properties ---

namespace {

bool in_ranges(const std::uint32_t* r, std::size_t n, char32_t cp) {
  // r holds [first, last] pairs sorted by first: find the last pair whose first is <= cp.
  std::size_t lo = 0, hi = n / 2;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (r[2 * mid] <= cp) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && cp <= r[2 * (lo - 1) + 1];
}

}  // namespace

bool is_letter(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return in_ranges(unicode_data().letter.data(), unicode_data().letter.size(), cp);
}

bool is_number(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return in_ranges(unicode_data().number.data(), unicode_data().number.size(), cp);
}

bool is_white_space(char32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  return in_ranges(unicode_data().white.data(), unicode_data().white.size(), cp);
}

bool is_word(char32_t cp) {
  if (cp < 0x80) return ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') || (cp >= '0' && cp <= '9') || cp == '_';
  return in_ranges(unicode_data().word.data(), unicode_data().word.size(), cp);
}

char32_t simple_fold(char32_t cp) {
  // Runs of (first, count << 2 | stride, delta), sorted by first and not overlapping.
  const std::uint32_t* kCaseFold = unicode_data().fold.data();
  const std::size_t runs = unicode_data().fold.size() / 3;
  std::size_t lo = 0, hi = runs;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (kCaseFold[3 * mid] <= cp) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return cp;
  const std::uint32_t* r = kCaseFold + 3 * (lo - 1);
  const std::uint32_t count = r[1] >> 2, stride = r[1] & 3, offset = cp - r[0];
  if (offset % stride || offset / stride >= count) return cp;
  return static_cast<char32_t>(cp + r[2]);  // delta is stored modulo 2^32
}

void fold_equivalents(char32_t cp, std::vector<char32_t>& out) {
  const char32_t target = simple_fold(cp);
  out.push_back(cp);
  if (target != cp) out.push_back(target);
  const std::uint32_t* kCaseFold = unicode_data().fold.data();
  for (std::size_t i = 0; i < unicode_data().fold.size(); i += 3) {
    const std::uint32_t count = kCaseFold[i + 1] >> 2, stride = kCaseFold[i + 1] & 3;
    for (std::uint32_t k = 0; k < count; ++k) {
      const char32_t c = kCaseFold[i] + k * stride;
      if (c != cp && static_cast<char32_t>(c + kCaseFold[i + 2]) == target) out.push_back(c);
    }
  }
  std::vector<std::uint64_t> keys(out.begin(), out.end());
  std::sort(keys.begin(), keys.end());
  out.assign(keys.begin(), std::unique(keys.begin(), keys.end()));
}

unsigned combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  // Pairs of (first << 8 | class, length - 1), sorted by first.
  const std::uint32_t* kCombiningClass = unicode_data().ccc.data();
  const std::size_t runs = unicode_data().ccc.size() / 2;
  std::size_t lo = 0, hi = runs;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if ((kCombiningClass[2 * mid] >> 8) <= cp) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return 0;
  const std::uint32_t first = kCombiningClass[2 * (lo - 1)] >> 8, last = first + kCombiningClass[2 * (lo - 1) + 1];
  return cp <= last ? kCombiningClass[2 * (lo - 1)] & 0xFF : 0;
}

// --- Normalization ---

namespace {

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

char32_t decomposition_cp(std::uint64_t w) { return static_cast<char32_t>((w >> 42) & 0x1FFFFF); }

// The one-step canonical decomposition of cp: the table word, or 0 when it has none.
std::uint64_t decomposition_of(char32_t cp) {
  if (cp < 0xC0) return 0;
  const std::uint64_t* kDecomposition = unicode_data().decomposition.data();
  const std::uint64_t* end = kDecomposition + unicode_data().decomposition.size();
  const std::uint64_t* it = std::lower_bound(kDecomposition, end, cp,
                                             [](std::uint64_t w, char32_t c) { return decomposition_cp(w) < c; });
  return it != end && decomposition_cp(*it) == cp ? *it : 0;
}

void decompose(char32_t cp, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount) out += kTBase + s % kTCount;
    return;
  }
  const std::uint64_t w = decomposition_of(cp);
  if (!w) {
    out += cp;
    return;
  }
  decompose(static_cast<char32_t>((w >> 21) & 0x1FFFFF), out);
  if (const auto second = static_cast<char32_t>(w & 0x1FFFFF)) decompose(second, out);
}

// Canonical ordering: each run of non-starters sorted by combining class, stably.
void reorder(std::u32string& s) {
  for (std::size_t i = 0; i < s.size();) {
    if (!combining_class(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && combining_class(s[j])) ++j;
    // Insertion sort: stable, and runs of marks are short.
    for (std::size_t k = i + 1; k < j; ++k) {
      const char32_t c = s[k];
      const unsigned cc = combining_class(c);
      std::size_t m = k;
      while (m > i && combining_class(s[m - 1]) > cc) s[m] = s[m - 1], --m;
      s[m] = c;
    }
    i = j;
  }
}

std::u32string decomposed(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) decompose(utf8_next(s, i), out);
  reorder(out);
  return out;
}

// Primary composites, built once from the decomposition table: first << 42 | second << 21 | composite, sorted.
const std::vector<std::uint64_t>& compositions() {
  static const std::vector<std::uint64_t> table = [] {
    std::vector<std::uint64_t> t;
    for (std::uint64_t w : unicode_data().decomposition)
      if (w >> 63) t.push_back(((w & ((std::uint64_t{1} << 42) - 1)) << 21) | decomposition_cp(w));
    std::sort(t.begin(), t.end());
    return t;
  }();
  return table;
}

// The primary composite of a pair, or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto& t = compositions();
  const std::uint64_t key = (std::uint64_t{a} << 42) | (std::uint64_t{b} << 21);
  const auto it = std::lower_bound(t.begin(), t.end(), key);
  return it != t.end() && (*it >> 21) == (key >> 21) ? static_cast<char32_t>(*it & 0x1FFFFF) : 0;
}

std::string to_utf8(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) utf8_append(out, c);
  return out;
}

bool ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

}  // namespace

std::string nfd(std::string_view s) {
  if (ascii(s)) return std::string(s);
  return to_utf8(decomposed(s));
}

std::string nfc(std::string_view s) {
  if (ascii(s)) return std::string(s);
  std::u32string d = decomposed(s);
  // Canonical composition (UAX #15): a character joins the last starter unless a character between them blocks
  // it (one of class 0, or of a class not below its own).
  std::size_t starter = std::u32string::npos, out = 0;
  unsigned last_class = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const char32_t c = d[i];
    const unsigned cc = combining_class(c);
    if (starter != std::u32string::npos && (out == starter + 1 || (last_class != 0 && last_class < cc))) {
      if (const char32_t composite = compose(d[starter], c)) {
        d[starter] = composite;
        continue;
      }
    }
    if (cc == 0) starter = out;
    last_class = cc;
    d[out++] = c;
  }
  d.resize(out);
  return to_utf8(d);
}

}  // namespace attnlab::tokenizer
