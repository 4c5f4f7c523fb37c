// lab.softmaxBackward's binding: its call descriptor (call.h) read into the core's arguments.
#include "call.h"
#include "softmax_backward.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// cols: default y.length (written back); temperature: default 1 (the engine computes with its float32 value).
#define ATTNLAB_SOFTMAX_BACKWARD_CALL(N, O, T) \
  O(cols) O(temperature) N(log) T(y, f32, in) T(dy, f32, in) T(dx, f32, out)
ATTNLAB_CALL_STRUCT(SoftmaxBackwardCall, ATTNLAB_SOFTMAX_BACKWARD_CALL);

Status softmax_backward_call(SoftmaxBackwardCall& c) {
  SoftmaxBackwardArgs a;
  a.y = in<float>(c.y), a.dy = in<float>(c.dy);
  if (!size_of(c.cols, a.y.size(), a.cols)) return size_error("cols", c.cols);
  c.cols.set(double(a.cols));
  if (c.temperature.given)
    if (auto s = detail::check_float32_positive("temperature", c.temperature.value, a.temperature); !s.ok()) return s;
  a.log = c.log != 0;
  resolve(c.dx, a.y.size());
  if (c.check) return check_softmax_backward(a, c.dx.size());
  return softmax_backward(a, out<float>(c.dx));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_softmax_backward) {
  ATTNLAB_BIND_CALL("softmaxBackward", SoftmaxBackwardCall, softmax_backward_call);
}
