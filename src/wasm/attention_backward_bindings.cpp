// lab.attentionBackward's binding: the descriptor it shares with lab.attention (attention_call.h), with the
// forward's output and lse, dL/d output and the gradients' buffers; attention_backward() validates everything.
#include "attention_backward.h"
#include "attention_call.h"
#include "call.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

Status attention_backward_call(AttentionCall& c) {
  AttentionArgs a;
  std::int64_t shape[4] = {};
  if (auto s = read_attention_call(c, a, shape); !s.ok()) return s;
  const AttentionSaved saved{in<float>(c.output), in<float>(c.savedLse), in<float>(c.dOutput)};
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
  ATTNLAB_BIND_CALL("attentionBackward", AttentionCall, attention_backward_call);
}
