// Types of the plain-JS baseline (plainjs.mjs: plain JavaScript, so that `npm run bench` times the same file in Node).
/** Scaled dot-product attention in plain JS into out [nq × dv] (new unless given); returns out. */
export function attention(
  q: Float32Array, k: Float32Array, v: Float32Array,
  nq: number, nk: number, dk: number, dv: number, causal: boolean, scale: number, out?: Float32Array,
): Float32Array;
/** Row softmax of x [rows × cols] into out (new unless given); returns out. */
export function softmax(x: Float32Array, cols: number, out?: Float32Array): Float32Array;
