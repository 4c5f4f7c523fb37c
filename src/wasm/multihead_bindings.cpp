// lab.multiHeadAttention's binding: marshalling only.
#include <emscripten/bind.h>

#include "multihead.h"
#include "marshal.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// Outputs: out[n×dModel] plus optional stacked intermediates (see MultiHeadOutputs), each (address, length).
JsStatus multi_head_js(std::size_t n, std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t dk,
                       std::size_t dv, bool has_scale, double scale, bool causal, std::uintptr_t x, std::size_t x_len,
                       std::uintptr_t wq, std::size_t wq_len, std::uintptr_t wk, std::size_t wk_len, std::uintptr_t wv,
                       std::size_t wv_len, std::uintptr_t wo, std::size_t wo_len, std::uintptr_t mask,
                       std::size_t mask_len, std::uintptr_t o, std::size_t o_len, std::uintptr_t q, std::size_t q_len,
                       std::uintptr_t k, std::size_t k_len, std::uintptr_t v, std::size_t v_len, std::uintptr_t s,
                       std::uintptr_t w, std::size_t hnn, std::uintptr_t c, std::size_t c_len) {
  MultiHeadArgs args;
  args.x = in(x, x_len);
  args.n = n, args.d_model = d_model, args.heads = heads, args.kv_heads = kv_heads, args.dk = dk, args.dv = dv;
  args.wq = in(wq, wq_len), args.wk = in(wk, wk_len), args.wv = in(wv, wv_len), args.wo = in(wo, wo_len);
  if (has_scale) args.scale = scale;
  args.causal = causal;
  args.mask = in(mask, mask_len);
  return to_js(multi_head_attention(
      args, {out(o, o_len), out(q, q_len), out(k, k_len), out(v, v_len), out(s, hnn), out(w, hnn), out(c, c_len)}));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_multihead) { emscripten::function("multiHeadAttention", &multi_head_js); }
