// lab.attention's binding: marshalling only.
#include <emscripten/bind.h>

#include "attention.h"
#include "marshal.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// Sizes come first, then tensors as (address, length) pairs; has_scale = false means 1/sqrt(dk).
JsStatus attention_js(std::size_t nq, std::size_t nk, std::size_t dk, std::size_t dv, bool has_scale, float scale,
                      bool causal, std::uintptr_t q, std::size_t q_len, std::uintptr_t k, std::size_t k_len,
                      std::uintptr_t v, std::size_t v_len, std::uintptr_t mask, std::size_t mask_len,
                      std::uintptr_t o, std::size_t o_len, std::uintptr_t raw, std::uintptr_t scores,
                      std::uintptr_t weights, std::size_t nn) {
  AttentionArgs args{in(q, q_len), in(k, k_len), in(v, v_len), nq, nk, dk, dv};
  if (has_scale) args.scale = scale;
  args.causal = causal;
  args.mask = in(mask, mask_len);
  return to_js(attention(args, {out(o, o_len), out(raw, nn), out(scores, nn), out(weights, nn)}));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_attention) { emscripten::function("attention", &attention_js); }
