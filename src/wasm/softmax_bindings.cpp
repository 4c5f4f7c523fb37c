// lab.softmax's binding: its call descriptor (call.h) read into the core's arguments.
#include "call.h"
#include "softmax.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// cols: default x.length (written back). first_index: where x starts in the caller's array (softmax goes through wasm memory a
// chunk at a time; a bad value is named by its index in the whole array).
#define ATTNLAB_SOFTMAX_CALL(N, O, T) \
  O(cols) O(temperature) N(log) N(first_index) T(x, f32, in) T(out, f32, over_x)
ATTNLAB_CALL_STRUCT(SoftmaxCall, ATTNLAB_SOFTMAX_CALL);

Status softmax_call(SoftmaxCall& c) {
  SoftmaxArgs a;
  a.x = in<float>(c.x);
  if (!size_of(c.cols, a.x.size(), a.cols)) return size_error("cols", c.cols);
  c.cols.set(double(a.cols));
  if (c.temperature.given) a.temperature = c.temperature.value;
  a.log = c.log != 0;
  a.first_index = whole(c.first_index);
  resolve(c.out, a.x.size());
  if (c.check) return check_softmax(a, c.out.size());
  return softmax(a, out<float>(c.out));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_softmax) { ATTNLAB_BIND_CALL("softmax", SoftmaxCall, softmax_call); }
