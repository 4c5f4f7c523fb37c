// The tokenizer's Unicode layer: UTF-8 (strict and lossy decoding as WHATWG and Rust do it), the property tables
// at hand-checked code points (UnicodeData.txt, PropList.txt and CaseFolding.txt of Unicode 14.0), simple case
// folding, and NFC / NFD against Python's unicodedata on the generated cases (unicode_cases.h).
#include <string>
#include <vector>

#include "testing.h"
#include "tokenizer/unicode.h"
#include "unicode_cases.h"

namespace t = attnlab::tokenizer;

TEST_CASE("tokenizer unicode: the tables are Unicode 14.0", "[tokenizer][unicode]") {
  CHECK(std::string(t::unicode_version()) == "14.0.0");
}

TEST_CASE("tokenizer unicode: UTF-8 validation refuses overlong forms, surrogates and code points past U+10FFFF", "[tokenizer][unicode]") {
  CHECK(t::utf8_invalid_at("plain ascii") == 11);
  CHECK(t::utf8_invalid_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == 14);
  CHECK(t::utf8_invalid_at("a\xc0\xafz") == 1);           // overlong '/'
  CHECK(t::utf8_invalid_at("ab\xe0\x80\xafz") == 2);       // overlong, three bytes
  CHECK(t::utf8_invalid_at("\xed\xa0\x80") == 0);          // U+D800
  CHECK(t::utf8_invalid_at("xy\xf4\x90\x80\x80") == 2);    // U+110000
  CHECK(t::utf8_invalid_at("xyz\xe2\x82") == 3);           // truncated
  CHECK(t::utf8_invalid_at("\x80") == 0);                  // a lone continuation byte
  CHECK(t::utf8_invalid_at("\xff") == 0);
  std::size_t i = 0;
  CHECK(t::utf8_next("\xf0\x9f\x98\x80", i) == 0x1F600);
  CHECK(i == 4);
  std::string s;
  for (char32_t c : {char32_t{0x24}, char32_t{0xA2}, char32_t{0x20AC}, char32_t{0x10348}}) t::utf8_append(s, c);
  CHECK(s == "$\xc2\xa2\xe2\x82\xac\xf0\x90\x8d\x88");
}

TEST_CASE("tokenizer unicode: lossy decoding replaces each maximal ill-formed subsequence with one U+FFFD", "[tokenizer][unicode]") {
  const std::string r = "\xef\xbf\xbd";
  // The examples of the Unicode Standard, chapter 3, "U+FFFD Substitution of Maximal Subparts" (tables 3-8 … 3-11).
  CHECK(t::utf8_lossy("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64") == "a" + r + r + r + "b" + r + "c" + r + r + "d");
  CHECK(t::utf8_lossy("\xc0\xaf\xe0\x80\xbf\xf0\x81\x82\x41") == r + r + r + r + r + r + r + r + "A");
  CHECK(t::utf8_lossy("\xed\xa0\x80\xed\xbf\xbf\xed\xaf\x41") == r + r + r + r + r + r + r + r + "A");
  CHECK(t::utf8_lossy("\xf4\x91\x92\x93\xff\x41\x80\xbf\x42") == r + r + r + r + r + "A" + r + r + "B");
  CHECK(t::utf8_lossy("\xe1\x80\xe2\xf0\x91\x92\xf1\xbf\x41") == r + r + r + r + "A");
  CHECK(t::utf8_lossy("ok \xe2\x82\xac") == "ok \xe2\x82\xac");
}

TEST_CASE("tokenizer unicode: letters, numbers, white space and word characters at hand-checked points", "[tokenizer][unicode]") {
  for (char32_t c : {U'A', U'z', U'\u00aa', U'\u00e9', U'\u01c5', U'\u02b0', U'\u05d0', U'\u0627', U'\u0905', U'\u0e01',
                     U'\u3042', U'\u4e00', U'\uac00', U'\U00020000', U'\U0001d400', U'\u0870' /* new in 14.0 */})
    CHECK(t::is_letter(c));
  // U+1C89 is a letter from Unicode 16.0 on, unassigned in 14.0.
  for (char32_t c : {U'0', U' ', U'_', U'\u0301', U'\u00d7', U'\u2160', U'\U0001f600', U'\u200d', U'\u1c89'}) CHECK_FALSE(t::is_letter(c));
  for (char32_t c : {U'0', U'9', U'\u00b2', U'\u00bd', U'\u0663', U'\u0967', U'\u2160', U'\u3007', U'\U0001d7ce'})
    CHECK(t::is_number(c));
  for (char32_t c : {U'a', U'.', U'\u0e01', U'\u00d7'}) CHECK_FALSE(t::is_number(c));
  // White_Space is exactly these 25 code points.
  std::vector<char32_t> spaces;
  for (char32_t c = 0; c < 0x110000; ++c)
    if (t::is_white_space(c)) spaces.push_back(c);
  CHECK(spaces == std::vector<char32_t>{0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
                                        0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000});
  for (char32_t c : {U'a', U'Z', U'5', U'_', U'\u0301', U'\u200d', U'\u2160', U'\u0663', U'\u203f', U'\u4e00'}) CHECK(t::is_word(c));
  for (char32_t c : {U' ', U'-', U'.', U'\u00b2', U'\u00d7', U'\U0001f600'}) CHECK_FALSE(t::is_word(c));
}

TEST_CASE("tokenizer unicode: simple case folding (statuses C and S, not the multi-character F)", "[tokenizer][unicode]") {
  CHECK(t::simple_fold(U'A') == U'a');
  CHECK(t::simple_fold(U'a') == U'a');
  CHECK(t::simple_fold(U'\u017f') == U's');           // ſ
  CHECK(t::simple_fold(U'\u212a') == U'k');           // Kelvin sign
  CHECK(t::simple_fold(U'\u212b') == U'\u00e5');      // Ångström sign
  CHECK(t::simple_fold(U'\u1e9e') == U'\u00df');      // ẞ folds to ß (S), not "ss" (F)
  CHECK(t::simple_fold(U'\u00df') == U'\u00df');
  CHECK(t::simple_fold(U'\u03c2') == U'\u03c3');      // final sigma
  CHECK(t::simple_fold(U'\u0130') == U'\u0130');      // İ has only a full (F) and a Turkic (T) folding
  CHECK(t::simple_fold(U'\u0100') == U'\u0101');      // a run with stride 2
  CHECK(t::simple_fold(U'\u0101') == U'\u0101');
  CHECK(t::simple_fold(U'\uab70') == U'\u13a0');      // Cherokee folds to upper case
  CHECK(t::simple_fold(U'\U00010400') == U'\U00010428');
  std::vector<char32_t> eq;
  t::fold_equivalents(U's', eq);
  CHECK(eq == std::vector<char32_t>{U'S', U's', U'\u017f'});
  eq.clear();
  t::fold_equivalents(U'K', eq);
  CHECK(eq == std::vector<char32_t>{U'K', U'k', U'\u212a'});
}

TEST_CASE("tokenizer unicode: NFC and NFD equal Python's unicodedata on the generated cases", "[tokenizer][unicode]") {
  std::size_t n = 0;
  for (const auto& c : kNfcCases) {
    INFO("case " << n << ": " << c.input);
    CHECK(t::nfc(c.input) == c.nfc);
    CHECK(t::nfc(t::nfd(c.input)) == c.nfc);
    CHECK(t::nfc(c.nfc) == c.nfc);  // NFC is idempotent
    ++n;
  }
  CHECK(n > 1000);
  CHECK(t::nfd("\xc3\xa9") == "e\xcc\x81");                  // é
  CHECK(t::nfd("\xea\xb0\x81") == "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8");  // 각 as jamo
  CHECK(t::combining_class(U'\u0301') == 230);
  CHECK(t::combining_class(U'\u0323') == 220);
  CHECK(t::combining_class(U'a') == 0);
}
