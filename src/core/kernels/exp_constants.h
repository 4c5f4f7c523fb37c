// The vector exp's constants, defined in exp_constants.cpp — out of the kernels' sight on purpose. If the
// compiler saw the values it would emit them as v128.const at every use inside the loops, and wasm engines
// (V8) rebuild a v128.const with several instructions each time; loaded once per call, they stay in registers.
#pragma once

namespace attnlab::kernels {

struct ExpConstants {
  float log2e, magic, ln2_hi, ln2_lo, lo_limit;
  float p[5];  // polynomial for e^r on |r| ≤ ln2/2, highest degree first
};

extern const ExpConstants kExpConstants;

}  // namespace attnlab::kernels
