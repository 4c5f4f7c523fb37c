// libFuzzer: tokenizer.json on arbitrary bytes (the seeds are small valid files of every supported component:
// the fuzzer mutates them into nearly-valid ones). Never a crash, an out-of-bounds read or a runaway allocation; a
// refusal is a range error naming tokenizer.json; a file that loads encodes and decodes: every id below the
// vocabulary's size, decode and display succeed on them.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_input.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace t = attnlab::tokenizer;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  t::TokenizerFiles f;
  f.tokenizer_json = text;
  std::unique_ptr<t::Tokenizer> tk;
  const auto st = t::Tokenizer::load(f, tk);
  if (!st.ok()) {
    FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range && st.arg == "tokenizer.json" && !tk);
    FUZZ_REQUIRE(st.message.rfind("tokenizer.json: ", 0) == 0);
    return 0;
  }
  FUZZ_REQUIRE(tk);
  for (std::string_view s : {std::string_view("Hello, world! It's 2024 \xe2\x80\x94 caf\xc3\xa9 \xf0\x9f\x98\x80\n\n  x"),
                             std::string_view(""), std::string_view("abcab <s> </s>\t\r\n 123 ")}) {
    for (bool special : {false, true}) {
      std::vector<std::int32_t> ids;
      const auto e = tk->encode(s, special, ids);
      if (!e.ok()) {
        FUZZ_REQUIRE(e.arg == "text");  // only a pattern's work budget can refuse valid text
        continue;
      }
      for (std::int32_t id : ids) FUZZ_REQUIRE(id >= 0 && std::uint32_t(id) < tk->vocab_size());
      std::string out, bytes;
      std::vector<std::uint32_t> offsets;
      const auto d = tk->decode(ids, false, false, out);
      FUZZ_REQUIRE(d.ok() || d.message.rfind("the decoder: ", 0) == 0);  // a Replace pattern's work budget
      FUZZ_REQUIRE(tk->display(ids, bytes, offsets).ok());
      FUZZ_REQUIRE(offsets.size() == ids.size() + 1 && offsets.back() == bytes.size());
    }
  }
  return 0;
}
