// lab.attentionBackward's binding: marshalling only. The same call descriptor as lab.attention (attention_call.h),
// with the forward's output and lse as inputs and the gradients' buffers; attention_backward() validates the rest.
#include <emscripten/bind.h>

#include "attention_backward.h"
#include "attention_call.h"
#include "marshal.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

int attention_backward_js(std::uintptr_t call) {
  const AttentionCall& c = *reinterpret_cast<const AttentionCall*>(call);
  AttentionArgs a;
  std::int64_t shape[4] = {};
  if (auto s = read_attention_call(c, a, shape); !s.ok()) return keep(std::move(s));
  const AttentionSaved saved{in(whole(c.output), whole(c.output_len)), in(whole(c.lse), whole(c.lse_len)),
                             in(whole(c.d_output), whole(c.d_output_len))};
  return keep(attention_backward(a, saved, {out(whole(c.dq), whole(c.dq_len)), out(whole(c.dk_out), whole(c.dk_len)),
                                            out(whole(c.dv_out), whole(c.dv_len))}));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_attention_backward) { emscripten::function("attentionBackward", &attention_backward_js); }
