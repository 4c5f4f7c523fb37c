// lab.rope's binding: marshalling only. The call crosses as one descriptor (an Embind value_object) whose
// tensors are (address, length) pairs in wasm memory; the engine validates everything.
#include <emscripten/bind.h>

#include <cstdint>

#include "marshal.h"
#include "rope.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

struct RopeCall {
  std::uintptr_t x = 0, out = 0;
  std::size_t x_len = 0;  // out has the same length
  std::size_t batch = 1, heads = 1, dk = 0, rotary_dim = 0;
  int layout = 0;  // RopeLayout: 0 = bhsd, 1 = bshd
  std::uintptr_t positions = 0, offset = 0;  // int32 arrays
  std::size_t positions_len = 0, offset_len = 0;
  bool has_base = false;  // false: the engine's default (10000)
  double base = 0;
  bool interleaved = false, inverse = false;
  std::uintptr_t cos = 0, sin = 0;
  std::size_t cos_len = 0, sin_len = 0;
};

std::span<const std::int32_t> ints(std::uintptr_t ptr, std::size_t len) {
  return ptr ? std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(ptr), len) : std::span<const std::int32_t>();
}

JsStatus rope_js(const RopeCall& c) {
  RopeArgs a;
  a.x = in(c.x, c.x_len);
  a.batch = c.batch, a.heads = c.heads, a.dk = c.dk, a.rotary_dim = c.rotary_dim;
  a.layout = c.layout == 1 ? RopeLayout::bshd : RopeLayout::bhsd;
  a.positions = ints(c.positions, c.positions_len), a.offset = ints(c.offset, c.offset_len);
  if (c.has_base) a.base = c.base;
  a.interleaved = c.interleaved, a.inverse = c.inverse;
  a.cos = in(c.cos, c.cos_len), a.sin = in(c.sin, c.sin_len);
  return to_js(rope(a, out(c.out, c.x_len)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_rope) {
  using namespace emscripten;
  value_object<RopeCall>("RopeCall")
      .field("x", &RopeCall::x)
      .field("out", &RopeCall::out)
      .field("xLength", &RopeCall::x_len)
      .field("batch", &RopeCall::batch)
      .field("heads", &RopeCall::heads)
      .field("dk", &RopeCall::dk)
      .field("rotaryDim", &RopeCall::rotary_dim)
      .field("layout", &RopeCall::layout)
      .field("positions", &RopeCall::positions)
      .field("positionsLength", &RopeCall::positions_len)
      .field("offset", &RopeCall::offset)
      .field("offsetLength", &RopeCall::offset_len)
      .field("hasBase", &RopeCall::has_base)
      .field("base", &RopeCall::base)
      .field("interleaved", &RopeCall::interleaved)
      .field("inverse", &RopeCall::inverse)
      .field("cos", &RopeCall::cos)
      .field("cosLength", &RopeCall::cos_len)
      .field("sin", &RopeCall::sin)
      .field("sinLength", &RopeCall::sin_len);
  function("rope", &rope_js);
}
