// lab.attention's binding: the descriptor it shares with lab.attentionBackward (attention_call.h), its options and
// the outputs wanted; attention() validates everything.
#include "attention.h"
#include "attention_call.h"
#include "call.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

Status attention_call(AttentionCall& c) {
  AttentionArgs a;
  std::int64_t shape[4] = {};
  if (auto s = read_attention_call(c, a, shape); !s.ok()) return s;
  const AttentionOutputs o{out<float>(c.out), out<float>(c.rawScores), out<float>(c.scores), out<float>(c.weights), out<float>(c.lse)};
  if (!c.check) return attention(a, o);
  AttentionShape sh;
  if (auto s = check_attention(a, o, c.return_raw_scores || c.return_scores || c.return_weights, sh); !s.ok()) return s;
  write_shape(c, sh);
  resolve(c.out, sh.out);
  for (auto [wanted, t] : {std::pair{c.return_raw_scores, &c.rawScores}, {c.return_scores, &c.scores}, {c.return_weights, &c.weights}})
    if (wanted) resolve(*t, sh.matrix);
  if (c.return_lse) resolve(c.lse, sh.lse);
  return Status::success();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_attention) { ATTNLAB_BIND_CALL("attention", AttentionCall, attention_call); }
