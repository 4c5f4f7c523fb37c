#include "exp_constants.h"

namespace attnlab::kernels {

const ExpConstants kExpConstants = {
    1.44269504088896341f,   // log2(e)
    12583039.0f,            // 0x1.8000FEp23 = 1.5·2²³ + 127: rounds x·log2e and adds the exponent bias
    0.693359375f,           // ln2 high part, 8 significant bits: n·ln2_hi is exact
    -2.12194440e-4f,        // ln2 − ln2_hi
    -88.029691931113f,      // -127·ln2: the clamp, where 2^n's bit pattern is +0
    // e^r ≈ 1 + r + r²·(p0·r⁴ + … + p4): Cephes expf's form one degree lower, refitted for the least
    // relative error on |r| ≤ ln2/2 (0.06 u from the polynomial; 1.4 u in float32 arithmetic, exp_test)
    {1.3879688922315836e-3f, 8.36869329214096e-3f, 4.166722670197487e-2f, 1.666652113199234e-1f, 4.999999701976776e-1f},
};

}  // namespace attnlab::kernels
