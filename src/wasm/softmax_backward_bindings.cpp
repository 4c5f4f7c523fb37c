// lab.softmaxBackward's binding: marshalling only.
#include <emscripten/bind.h>

#include "marshal.h"
#include "softmax_backward.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

JsStatus softmax_backward_js(std::uintptr_t y, std::uintptr_t dy, std::size_t len, std::size_t cols, float temperature,
                             bool log, std::uintptr_t dx) {
  return to_js(softmax_backward({in(y, len), in(dy, len), cols, temperature, log}, out(dx, len)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_softmax_backward) { emscripten::function("softmaxBackward", &softmax_backward_js); }
