// lab.attentionBackward's binding: the forward's options (attention_call.h), the forward's output and lse with
// dL/d output, and the gradients' buffers; attention_backward() validates everything.
#include "attention_backward.h"
#include "attention_call.h"
#include "call.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// gradQ, gradK, gradV: dL/dq, dL/dk, dL/dv, shaped as q, k, v.
#define ATTNLAB_ATTENTION_BACKWARD_CALL(N, O, T)                                                           \
  ATTNLAB_ATTENTION_OPTIONS(N, O, T)                                                                       \
  T(output, f32, in) T(lse, f32, in) T(dOutput, f32, in) T(gradQ, f32, out) T(gradK, f32, out) T(gradV, f32, out)
ATTNLAB_CALL_STRUCT(AttentionBackwardCall, ATTNLAB_ATTENTION_BACKWARD_CALL);

Status attention_backward_call(AttentionBackwardCall& c) {
  AttentionArgs a;
  std::int64_t shape[4] = {};
  if (auto s = read_attention_call(c, a, shape); !s.ok()) return s;
  const AttentionSaved saved{in<float>(c.output), in<float>(c.lse), in<float>(c.dOutput)};
  const AttentionGradients g{out<float>(c.gradQ), out<float>(c.gradK), out<float>(c.gradV)};
  if (!c.check) return attention_backward(a, saved, g);
  AttentionShape sh;
  if (auto s = check_attention_backward(a, saved, g, sh); !s.ok()) return s;
  write_shape(c, sh);
  resolve(c.gradQ, sh.q), resolve(c.gradK, sh.k), resolve(c.gradV, sh.v);
  return Status::success();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_attention_backward) {
  ATTNLAB_BIND_CALL("attentionBackward", AttentionBackwardCall, attention_backward_call);
}
