// lab.rope's binding: its call descriptor (call.h) read into the core's arguments.
#include "call.h"
#include "rope.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

// batch, heads: default 1; rotary_dim: default dk; layout 0 bhsd, 1 bshd; base: default 10000. positions and offset
// are int32 (the wrapper refuses what an Int32Array cannot hold).
#define ATTNLAB_ROPE_CALL(N, O, T)                                                                           \
  O(batch) O(heads) N(dk) O(rotary_dim) N(layout) O(base) N(interleaved) N(inverse)                          \
  T(x, f32, in) T(positions, i32, in) T(offset, i32, in) T(cos, f32, in) T(sin, f32, in) T(out, f32, over_x)
ATTNLAB_CALL_STRUCT(RopeCall, ATTNLAB_ROPE_CALL);

Status rope_call(RopeCall& c) {
  RopeArgs a;
  if (!size_of(c.batch, 1, a.batch)) return size_error("batch", c.batch);
  if (!size_of(c.heads, 1, a.heads)) return size_error("heads", c.heads);
  if (!size_of(c.dk, a.dk)) return size_error("dk", c.dk);
  if (!size_of(c.rotary_dim, 0, a.rotary_dim)) return size_error("rotaryDim", c.rotary_dim);
  a.layout = c.layout == 1 ? RopeLayout::bshd : RopeLayout::bhsd;
  a.base = c.base.get();
  a.interleaved = c.interleaved != 0, a.inverse = c.inverse != 0;
  a.x = in<float>(c.x);
  a.positions = in<std::int32_t>(c.positions), a.offset = in<std::int32_t>(c.offset);
  a.cos = in<float>(c.cos), a.sin = in<float>(c.sin);
  resolve(c.out, a.x.size());
  if (c.check) return check_rope(a, c.out.size());
  return rope(a, out<float>(c.out));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_rope) { ATTNLAB_BIND_CALL("rope", RopeCall, rope_call); }
