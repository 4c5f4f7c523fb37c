// lab.attention's binding: marshalling only. The call descriptor and its reader are in attention_call.h (shared
// with lab.attentionBackward); attention() validates everything else.
#include <emscripten/bind.h>

#include "attention.h"
#include "attention_call.h"
#include "marshal.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

int attention_js(std::uintptr_t call) {
  const AttentionCall& c = *reinterpret_cast<const AttentionCall*>(call);
  AttentionArgs a;
  std::int64_t shape[4] = {};
  if (auto s = read_attention_call(c, a, shape); !s.ok()) return keep(std::move(s));
  const std::size_t nn = whole(c.matrix_len);
  return keep(attention(a, {out(whole(c.out), whole(c.out_len)), out(whole(c.raw_scores), nn), out(whole(c.scores), nn),
                            out(whole(c.weights), nn), out(whole(c.lse), whole(c.lse_len))}));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_attention) {
  emscripten::function("attention", &attention_js);
  emscripten::function("attentionCallFields", &attention_call_fields);
}
