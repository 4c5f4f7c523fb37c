// lab.softmax's binding: marshalling only.
#include <emscripten/bind.h>

#include "marshal.h"
#include "softmax.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// first_index: where this x starts in the caller's array (the JS wrapper passes softmax a chunk at a time).
JsStatus softmax_js(std::uintptr_t x, std::size_t x_len, std::size_t cols, double temperature, bool log,
                    std::uintptr_t y, std::size_t first_index) {
  return to_js(softmax({in(x, x_len), cols, temperature, log, first_index}, out(y, x_len)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_softmax) { emscripten::function("softmax", &softmax_js); }
