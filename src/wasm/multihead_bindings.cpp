// lab.multiHeadAttention's binding: its call descriptor (call.h) read into the core's arguments, n and dModel
// inferred from x.length when one is left out.
#include "call.h"
#include "format.h"
#include "multihead.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// kv_heads: default heads; dk, dv: default dModel / heads. intermediates: fill q, k, v, scores, weights, concat.
#define ATTNLAB_MULTIHEAD_CALL(N, O, T)                                                                        \
  O(n) O(d_model) N(heads) O(kv_heads) O(dk) O(dv) O(scale) N(causal) N(intermediates)                         \
  T(x, f32, in) T(wq, f32, in) T(wk, f32, in) T(wv, f32, in) T(wo, f32, in) T(mask, f32, in)                   \
  T(out, f32, out) T(q, f32, out) T(k, f32, out) T(v, f32, out) T(scores, f32, out) T(weights, f32, out)        \
  T(concat, f32, out)
ATTNLAB_CALL_STRUCT(MultiHeadCall, ATTNLAB_MULTIHEAD_CALL);

// n and dModel: as given, or one inferred from x.length and the other.
Status read_rows(MultiHeadCall& c, std::size_t x_len, MultiHeadArgs& a) {
  if (c.d_model.given) {
    if (!size_of(c.d_model.value, a.d_model)) return size_error("dModel", c.d_model.value);
    if (c.n.given) return size_of(c.n.value, a.n) ? Status::success() : size_error("n", c.n);
    if (x_len % a.d_model) return detail::range_errorf("x", "x.length must be a multiple of dModel = %zu, got %zu", a.d_model, x_len);
    a.n = x_len / a.d_model;
  } else if (c.n.given) {
    if (!size_of(c.n.value, a.n)) return size_error("n", c.n.value);
    if (x_len % a.n) return detail::range_errorf("x", "x.length must be a multiple of n = %zu, got %zu", a.n, x_len);
    a.d_model = x_len / a.n;
  } else {
    return Status::range_error("dModel", "dModel is required (or n, to infer it from x.length)");
  }
  return Status::success();  // (an n of 0, x shorter than dModel, is named by the core)
}

Status multi_head_call(MultiHeadCall& c) {
  MultiHeadArgs a;
  a.x = in<float>(c.x);
  if (auto s = read_rows(c, a.x.size(), a); !s.ok()) return s;
  if (!size_of(c.heads, a.heads)) return size_error("heads", c.heads);
  if (!size_of(c.kv_heads, 0, a.kv_heads)) return size_error("kvHeads", c.kv_heads);
  if (!size_of(c.dk, 0, a.dk)) return size_error("dk", c.dk);
  if (!size_of(c.dv, 0, a.dv)) return size_error("dv", c.dv);
  a.wq = in<float>(c.wq), a.wk = in<float>(c.wk), a.wv = in<float>(c.wv), a.wo = in<float>(c.wo);
  a.mask = in<float>(c.mask);
  a.scale = c.scale.get();
  a.causal = c.causal != 0;
  if (c.check) {  // the sizes resolved, and the lengths of the outputs wanted
    MultiHeadDims d{};
    MultiHeadLengths len{};
    if (auto s = multi_head_lengths(a, c.intermediates != 0, d, len); !s.ok()) return s;
    c.n.set(double(a.n)), c.d_model.set(double(a.d_model)), c.kv_heads.set(double(d.kv_heads));
    c.dk.set(double(d.dk)), c.dv.set(double(d.dv));
    resolve(c.out, len.out);
    if (c.intermediates) {
      for (auto [t, want] : {std::pair{&c.q, len.q}, {&c.k, len.k}, {&c.v, len.v}, {&c.scores, len.matrix},
                             {&c.weights, len.matrix}, {&c.concat, len.concat}})
        resolve(*t, want);
    }
  }
  const MultiHeadOutputs o{out<float>(c.out), out<float>(c.q), out<float>(c.k), out<float>(c.v),
                           out<float>(c.scores), out<float>(c.weights), out<float>(c.concat)};
  if (c.check) return check_multi_head_attention(a, o);
  return multi_head_attention(a, o);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_multihead) { ATTNLAB_BIND_CALL("multiHeadAttention", MultiHeadCall, multi_head_call); }
