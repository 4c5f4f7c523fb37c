// UTF-8 and the Unicode properties the tokenizer uses: letters, numbers, white space and word characters (for
// regex classes), simple case folding (for (?i:…)), and NFC / NFD. The data is Unicode 14.0 (unicode_tables.cpp,
// generated); text is UTF-8 in std::string, code points are char32_t.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::tokenizer {

/** The Unicode version of the tables ("14.0.0"). */
const char* unicode_version();

// --- UTF-8 ---
// Length of the valid UTF-8 sequence at s[i] (1…4), 0 if the bytes there are not one (overlong forms, surrogates
// and code points above U+10FFFF are not).
std::size_t utf8_sequence(std::string_view s, std::size_t i);
/** The index of the first byte that is not valid UTF-8, or s.size() when it all is. */
std::size_t utf8_invalid_at(std::string_view s);
/** Decodes the code point at s[i] of valid UTF-8 and advances i past it. */
char32_t utf8_next(std::string_view s, std::size_t& i);
/** Length in bytes of the UTF-8 sequence a lead byte starts (1 for anything else). */
inline std::size_t utf8_length(unsigned char lead) { return lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }
void utf8_append(std::string& out, char32_t cp);
/** Bytes as text: each maximal ill-formed subsequence becomes one U+FFFD (the WHATWG and Unicode practice). */
std::string utf8_lossy(std::string_view bytes);

// --- Properties ---
bool is_letter(char32_t cp);       // General_Category L*
bool is_number(char32_t cp);       // General_Category N*
bool is_white_space(char32_t cp);  // White_Space
bool is_word(char32_t cp);         // \w of UTS #18: Alphabetic, M, Nd, Pc, Join_Control
/** Simple case folding (CaseFolding.txt C + S); the code point itself when it has none. */
char32_t simple_fold(char32_t cp);
/** Every code point whose simple case folding equals that of cp, cp included. */
void fold_equivalents(char32_t cp, std::vector<char32_t>& out);
/** Canonical_Combining_Class. */
unsigned combining_class(char32_t cp);

// --- Normalization (valid UTF-8 in and out) ---
std::string nfd(std::string_view s);
std::string nfc(std::string_view s);

}  // namespace attnlab::tokenizer
