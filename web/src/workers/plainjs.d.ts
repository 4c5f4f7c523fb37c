// Types for the repo's plain-JS baseline (bench/lib/plainjs.mjs), which the speed lab's worker imports so the
// page and `npm run bench` time the same code. A pattern module, because TypeScript does not let a declaration
// name a relative path; the pattern only matches that one file.
declare module '*/bench/lib/plainjs.mjs' {
  /** Scaled dot-product attention in plain JS into out [nq × dv] (new unless given); returns out. */
  export function attention(
    q: Float32Array, k: Float32Array, v: Float32Array,
    nq: number, nk: number, dk: number, dv: number, causal: boolean, scale: number, out?: Float32Array,
  ): Float32Array;
  /** Row softmax of x [rows × cols] into out (new unless given); returns out. */
  export function softmax(x: Float32Array, cols: number, out?: Float32Array): Float32Array;
}
