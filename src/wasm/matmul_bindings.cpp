// lab.matmul's binding: its call descriptor (call.h) read into the core's arguments.
#include "call.h"
#include "matmul.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;

#define ATTNLAB_MATMUL_CALL(N, O, T) \
  N(m) N(k) N(n) N(transpose_b) T(a, f32, in) T(b, f32, in) T(out, f32, out)
ATTNLAB_CALL_STRUCT(MatmulCall, ATTNLAB_MATMUL_CALL);

Status matmul_call(MatmulCall& c) {
  MatmulArgs a;
  if (!size_of(c.m, a.m)) return size_error("m", c.m);
  if (!size_of(c.k, a.k)) return size_error("k", c.k);
  if (!size_of(c.n, a.n)) return size_error("n", c.n);
  a.a = in<float>(c.a), a.b = in<float>(c.b);
  a.transpose_b = c.transpose_b != 0;
  resolve(c.out, a.m * a.n);  // (check_matmul refuses a product past size_t before anything is allocated)
  if (c.check) return check_matmul(a, c.out.size());
  return matmul(a, out<float>(c.out));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_matmul) { ATTNLAB_BIND_CALL("matmul", MatmulCall, matmul_call); }
