// libFuzzer: the safetensors reader (and its JSON parser) on arbitrary bytes. Never a crash, an out-of-bounds
// read or an allocation beyond what the file justifies; a refusal is a range error naming "bytes"; a file that
// loads writes back to bytes that load to the same weights, bit for bit.
#include <cstring>
#include <memory>

#include "fuzz_input.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace m = attnlab::model;
  std::unique_ptr<m::GPT> g;
  const auto st = m::load_safetensors({data, size}, g);
  if (!st.ok()) {
    FUZZ_REQUIRE(st.kind == attnlab::ErrorKind::range || st.kind == attnlab::ErrorKind::out_of_memory);
    FUZZ_REQUIRE(st.arg == "bytes" || st.kind == attnlab::ErrorKind::out_of_memory);
    FUZZ_REQUIRE(!g);
    return 0;
  }
  FUZZ_REQUIRE(g);
  std::vector<std::uint8_t> again(m::safetensors_size(*g));
  m::write_safetensors(*g, again);
  std::unique_ptr<m::GPT> h;
  FUZZ_REQUIRE(m::load_safetensors(again, h).ok());
  FUZZ_REQUIRE(std::memcmp(h->parameters().data(), g->parameters().data(), g->parameters().size_bytes()) == 0);
  return 0;
}
