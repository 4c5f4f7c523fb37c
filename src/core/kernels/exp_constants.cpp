#include "exp_constants.h"

namespace attnlab::kernels {

const ExpConstants kExpConstants = {
    1.44269504088896341f,   // log2(e)
    12583039.0f,            // 0x1.8000FEp23 = 1.5·2²³ + 127: rounds x·log2e and adds the exponent bias
    0.693359375f,           // ln2 high part, 8 significant bits: n·ln2_hi is exact
    -2.12194440e-4f,        // ln2 − ln2_hi
    -87.336544750553f,      // below: e^x is denormal, flushed to 0
    // Cephes expf polynomial: e^r ≈ 1 + r + r²·(p0·r⁵ + … + p5)
    {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f},
};

}  // namespace attnlab::kernels
