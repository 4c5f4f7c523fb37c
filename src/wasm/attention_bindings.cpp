// lab.attention's binding: its descriptor is the shared options (attention_call.h), the outputs wanted and their
// buffers; attention() validates everything.
#include "attention.h"
#include "attention_call.h"
#include "call.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

#define ATTNLAB_ATTENTION_CALL(N, O, T)                                                                    \
  ATTNLAB_ATTENTION_OPTIONS(N, O, T)                                                                       \
  N(return_raw_scores) N(return_scores) N(return_weights) N(return_lse)                                    \
  T(out, f32, out) T(rawScores, f32, out) T(scores, f32, out) T(weights, f32, out) T(lse, f32, out)
ATTNLAB_CALL_STRUCT(AttentionCall, ATTNLAB_ATTENTION_CALL);

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
