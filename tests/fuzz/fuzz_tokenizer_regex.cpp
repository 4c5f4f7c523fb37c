// libFuzzer: the tokenizer's regex engine on arbitrary patterns and texts (input: pattern, a 0 byte, text). A
// pattern compiles or is refused with a message; a search never crashes, stays within its work budget (or says
// so), and gives matches in order, inside the text, on character boundaries.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_input.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace t = attnlab::tokenizer;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = all.find('\0');
  const std::string_view pattern = all.substr(0, cut), text = cut == std::string_view::npos ? std::string_view() : all.substr(cut + 1);
  t::Regex re;
  std::string error;
  if (!re.compile(pattern, error)) {
    FUZZ_REQUIRE(!error.empty());
    return 0;
  }
  if (t::utf8_invalid_at(text) != text.size()) return 0;  // the engine's callers pass valid UTF-8 only
  std::vector<std::pair<std::size_t, std::size_t>> m;
  if (!re.find_all(text, m, error)) {
    FUZZ_REQUIRE(error.find("needs more than") != std::string::npos);
    return 0;
  }
  std::size_t last = 0;
  for (auto [s, e] : m) {
    FUZZ_REQUIRE(s <= e && e <= text.size() && s >= last);
    for (std::size_t at : {s, e})
      FUZZ_REQUIRE(at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80);
    last = e;
  }
  return 0;
}
