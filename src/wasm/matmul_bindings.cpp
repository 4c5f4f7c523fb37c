// lab.matmul's binding: marshalling only.
#include <emscripten/bind.h>

#include "marshal.h"
#include "matmul.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// Sizes first, then tensors as (address, length) pairs; the engine checks every length against m, k, n.
JsStatus matmul_js(std::size_t m, std::size_t k, std::size_t n, bool transpose_b, std::uintptr_t a, std::size_t a_len,
                   std::uintptr_t b, std::size_t b_len, std::uintptr_t o, std::size_t o_len) {
  return to_js(matmul({in(a, a_len), in(b, b_len), m, k, n, transpose_b}, out(o, o_len)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_matmul) { emscripten::function("matmul", &matmul_js); }
