// Embind surface of the engine: marshalling and error translation only, no math.
// The JS wrapper copies each tensor into wasm memory (one bulk copy), passes its address and length
// here, and turns the returned status into a TypeError/RangeError/Error; outputs are written in place.
#include <emscripten/bind.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "attnlab.h"

namespace {

using namespace attnlab;

// What every call returns: kind 0 = ok, 1 = range, 2 = out of memory (attnlab::ErrorKind values).
struct JsStatus {
  int kind = 0;
  std::string arg;
  std::string message;
};

JsStatus to_js(Status s) { return {static_cast<int>(s.kind), std::move(s.arg), std::move(s.message)}; }

// Address 0 (or length 0) means "no tensor": an empty span, which the core reads as "not given / not wanted".
std::span<const float> in(std::uintptr_t ptr, std::size_t len) {
  return ptr ? std::span<const float>(reinterpret_cast<const float*>(ptr), len) : std::span<const float>();
}
std::span<float> out(std::uintptr_t ptr, std::size_t len) {
  return ptr ? std::span<float>(reinterpret_cast<float*>(ptr), len) : std::span<float>();
}

// first_index: where this x starts in the caller's array (the JS wrapper passes softmax a chunk at a time).
JsStatus softmax_js(std::uintptr_t x, std::size_t x_len, std::size_t cols, float temperature, bool log,
                    std::uintptr_t y, std::size_t first_index) {
  return to_js(softmax({in(x, x_len), cols, temperature, log, first_index}, out(y, x_len)));
}

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

// Outputs: out[n×dModel] plus optional stacked intermediates (see MultiHeadOutputs), each (address, length).
JsStatus multi_head_js(std::size_t n, std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t dk,
                       std::size_t dv, bool has_scale, float scale, bool causal, std::uintptr_t x, std::size_t x_len,
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

struct JsBuildInfo {
  std::string version;
  bool simd;
  std::string kernels;
};

JsBuildInfo build_info_js() {
  const BuildInfo b = build_info();
  return {b.version, b.simd, b.kernels};
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab) {
  using namespace emscripten;
  value_object<JsStatus>("Status")
      .field("kind", &JsStatus::kind)
      .field("arg", &JsStatus::arg)
      .field("message", &JsStatus::message);
  value_object<JsBuildInfo>("BuildInfo")
      .field("version", &JsBuildInfo::version)
      .field("simd", &JsBuildInfo::simd)
      .field("kernels", &JsBuildInfo::kernels);
  function("softmax", &softmax_js);
  function("attention", &attention_js);
  function("multiHeadAttention", &multi_head_js);
  function("buildInfo", &build_info_js);
}
