/**
 * attnlab — softmax, scaled dot-product attention and multi-head attention in WebAssembly
 * (SIMD128 when the engine supports it, scalar otherwise).
 *
 * Every tensor is a row-major `Float32Array`. Every function returns new arrays owned by the caller;
 * nothing needs to be freed.
 *
 * Errors: a missing tensor, a tensor that is not a `Float32Array`, or an option of the wrong type throws a
 * `TypeError`; a wrong length, a size that is not an integer ≥ 1, a non-finite or non-positive `temperature`
 * or `scale`, a NaN or +Infinity in an input (−Infinity is allowed in logits and masks), or a mask of the wrong
 * size throws a `RangeError`. Messages start with the function name, name the argument and give the expected
 * and the actual value. Running out of wasm memory throws an `Error`. After any error the instance keeps working.
 *
 * @example
 * ```ts
 * import { init } from 'attnlab';
 * const lab = await init();
 * const p = lab.softmax(new Float32Array([2, 1, 0.1]));            // ≈ [0.659, 0.242, 0.099]
 * const { output, weights } = lab.attention({
 *   q, k, v, nq: 2, nk: 3, dk: 4, dv: 4, causal: true, returnWeights: true,
 * });
 * ```
 * @packageDocumentation
 */

/** Which compiled module runs: `'wasm-simd'` (SIMD128 kernels) or `'wasm'` (scalar kernels). */
export type Backend = 'wasm-simd' | 'wasm';

/** The two module files the package ships, as passed to a {@link InitOptions.wasmUrl} function. */
export type WasmFile = 'attnlab-simd.wasm' | 'attnlab-scalar.wasm';

/** Options of {@link init}. All optional. */
export interface InitOptions {
  /**
   * `true` forces the SIMD module (an `Error` if the engine lacks SIMD128), `false` forces the scalar module.
   * Default: SIMD when `WebAssembly.validate` accepts a tiny SIMD module, else scalar.
   */
  simd?: boolean;
  /**
   * Where to load the `.wasm` from, for bundlers and CDNs that do not keep it beside the package's JS.
   * A string or URL is used for whichever module is chosen (pin it with {@link InitOptions.simd}); a
   * function receives the file name of the chosen module and returns its location.
   * Default: the file beside `index.js` (`import.meta.url`); in Node it is read from disk.
   */
  wasmUrl?: string | URL | ((file: WasmFile) => string | URL);
  /**
   * The module's bytes, already loaded (must be the module chosen by {@link InitOptions.simd}).
   * When given, nothing is fetched or read.
   */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
}

/** Options of {@link Lab.softmax}. */
export interface SoftmaxOptions {
  /** Row length; `x.length` must be a multiple of it. Default: `x.length` (one row). */
  cols?: number;
  /** Softmax of `x / temperature`; finite and > 0. Default 1. Low values sharpen, high values flatten. */
  temperature?: number;
  /** Return log-softmax instead (numerically stable; −Infinity where the probability is 0). Default false. */
  log?: boolean;
  /**
   * Write the result into this buffer (length `x.length`, may be `x` itself) and return it, instead of a new
   * array. Reusing one buffer across calls saves an allocation per call; untouched when the call throws.
   */
  out?: Float32Array | null;
}

/** Options of {@link Lab.attention}: `output = softmax(mask(scale · Q·Kᵀ)) · V`. */
export interface AttentionOptions {
  /** Queries, `[nq × dk]`. */
  q: Float32Array;
  /** Keys, `[nk × dk]`. */
  k: Float32Array;
  /** Values, `[nk × dv]`. */
  v: Float32Array;
  /** Number of queries. Inferred as `q.length / dk` when left out. */
  nq?: number;
  /** Number of keys (and values). Inferred as `k.length / dk` when left out. */
  nk?: number;
  /** Query/key width. Inferred as `q.length / nq` (or `k.length / nk`) when left out; one of dk, nq, nk is required. */
  dk?: number;
  /** Value width. Inferred as `v.length / nk` when left out. */
  dv?: number;
  /** Causal mask, bottom-right aligned: query `i` sees keys `j ≤ i + nk − nq`. Default false. */
  causal?: boolean;
  /** Multiplier of `Q·Kᵀ`; finite and > 0. Default `1 / sqrt(dk)`. */
  scale?: number;
  /** Additive mask `[nq × nk]` added to the scaled scores; −Infinity hides a key. NaN and +Infinity are rejected. */
  mask?: Float32Array | null;
  /** Also return `scores` (scaled and masked logits). Default false. */
  returnScores?: boolean;
  /** Also return `weights` (the softmax rows). Default false. */
  returnWeights?: boolean;
  /** Also return `rawScores` (`Q·Kᵀ` before scale and mask). Default false. */
  returnRawScores?: boolean;
  /** Write `output` into this buffer (length `nq·dv`) instead of a new array; untouched when the call throws. */
  out?: Float32Array | null;
}

/** Result of {@link Lab.attention}; the optional matrices are present when requested. */
export interface AttentionResult {
  /** `[nq × dv]`. A query that sees no key (all masked) gets a row of zeros. */
  output: Float32Array;
  /** `[nq × nk]` `scale · Q·Kᵀ + mask`, −Infinity where masked. */
  scores?: Float32Array;
  /** `[nq × nk]` attention weights; each row sums to 1 (or is all 0 when every key is masked). */
  weights?: Float32Array;
  /** `[nq × nk]` `Q·Kᵀ`. */
  rawScores?: Float32Array;
}

/** Options of {@link Lab.multiHeadAttention} (self-attention over `x`). */
export interface MultiHeadAttentionOptions {
  /** Input tokens, `[n × dModel]`. */
  x: Float32Array;
  /** Number of tokens. Inferred as `x.length / dModel` when left out. */
  n?: number;
  /** Model width. Inferred as `x.length / n` when left out; one of n, dModel is required. */
  dModel?: number;
  /** Number of query heads. */
  heads: number;
  /** Number of key/value heads; must divide `heads`. Less than `heads` = grouped-query attention (1 = multi-query). Default `heads`. */
  kvHeads?: number;
  /** Per-head query/key width. Default `dModel / heads` (which must then be an integer). */
  dk?: number;
  /** Per-head value width. Default `dModel / heads`. */
  dv?: number;
  /** `[dModel × heads·dk]`; head `h` uses columns `h·dk … h·dk + dk − 1`. */
  wq: Float32Array;
  /** `[dModel × kvHeads·dk]`. */
  wk: Float32Array;
  /** `[dModel × kvHeads·dv]`. */
  wv: Float32Array;
  /** Output projection `[heads·dv × dModel]`. */
  wo: Float32Array;
  /** Causal mask: token `i` attends to tokens `j ≤ i`. Default false. */
  causal?: boolean;
  /** Multiplier of `Q·Kᵀ`; finite and > 0. Default `1 / sqrt(dk)`. */
  scale?: number;
  /** Additive mask `[n × n]` shared by every head; −Infinity hides a key. */
  mask?: Float32Array | null;
  /** Also return the projections, the per-head matrices and the concatenation. Default false. */
  returnIntermediates?: boolean;
  /** Write `output` into this buffer (length `n·dModel`) instead of a new array; untouched when the call throws. */
  out?: Float32Array | null;
}

/** Options of {@link Lab.matmul}: the sizes of `a[m × k] · b[k × n] = [m × n]`. */
export interface MatmulOptions {
  /** Rows of `a` and of the result. */
  m: number;
  /** Columns of `a`: the length of every dot product. */
  k: number;
  /** Columns of the result (of `b`, or rows of `b` with {@link MatmulOptions.transposeB}). */
  n: number;
  /** `b` is `[n × k]` and the result is `a · bᵀ` (one row of `b` per output column, as keys in `Q·Kᵀ`). Default false. */
  transposeB?: boolean;
  /** Write the result into this buffer (length `m·n`, not `a` or `b`) instead of a new array; untouched when the call throws. */
  out?: Float32Array | null;
}

/** One head's intermediates in {@link MultiHeadAttentionResult.heads}. */
export interface HeadIntermediates {
  /** `[n × dk]` this head's queries, `X·Wq` columns of the head. */
  q: Float32Array;
  /** `[n × dk]` the keys it reads: key head `h / (heads / kvHeads)`. */
  k: Float32Array;
  /** `[n × dv]` the values it reads (same key/value head). */
  v: Float32Array;
  /** `[n × n]` scaled and masked logits. */
  scores: Float32Array;
  /** `[n × n]` attention weights (softmax rows). */
  weights: Float32Array;
  /** `[n × dv]` the head's output, its block of `concat`. */
  output: Float32Array;
}

/** Result of {@link Lab.multiHeadAttention}; everything but `output` is present with `returnIntermediates`. */
export interface MultiHeadAttentionResult {
  /** `[n × dModel]` = `concat · Wo`. */
  output: Float32Array;
  /** `[n × heads·dk]` = `X·Wq`. */
  q?: Float32Array;
  /** `[n × kvHeads·dk]` = `X·Wk`. */
  k?: Float32Array;
  /** `[n × kvHeads·dv]` = `X·Wv`. */
  v?: Float32Array;
  /** `[n × heads·dv]` head outputs side by side, before `Wo`. */
  concat?: Float32Array;
  /** One entry per query head. */
  heads?: HeadIntermediates[];
}

/** What the running module contains. */
export interface BuildInfo {
  /** Engine version (the package version). */
  version: string;
  /** The module that runs. */
  backend: Backend;
  /** True when the SIMD128 kernels are compiled in (and run). */
  simd: boolean;
  /** Name of the kernel set: `'wasm-simd128'` or `'scalar'`. */
  kernels: string;
}

/** A loaded engine instance, from {@link init}. Methods do not use `this`; they may be destructured. */
export interface Lab {
  /** The module that runs. */
  readonly backend: Backend;
  /**
   * Row-wise softmax of a `[rows × cols]` matrix: subtracts each row's max (no overflow), −Infinity entries
   * get exactly 0, a row that is all −Infinity gives all zeros (never NaN).
   * @param x Logits, `rows·cols` values; −Infinity allowed.
   * @returns A new `Float32Array` of `x.length` probabilities (or log-probabilities with `log`).
   * @throws TypeError when `x` is not a Float32Array; RangeError on a bad `cols`, `temperature` or value.
   */
  softmax(x: Float32Array, options?: SoftmaxOptions): Float32Array;
  /**
   * Scaled dot-product attention `softmax(mask(scale · Q·Kᵀ)) · V`. Without any returned matrix it streams
   * over tiles of K/V (online softmax, no `nq × nk` matrix in memory).
   * @throws TypeError for a missing or non-Float32Array tensor; RangeError for bad sizes, lengths or values.
   */
  attention(options: AttentionOptions): AttentionResult;
  /**
   * Multi-head self-attention: `Q = X·Wq`, `K = X·Wk`, `V = X·Wv`, attention per head (query head `h` reads
   * key/value head `h / (heads / kvHeads)`), heads concatenated, then `· Wo`.
   * @throws TypeError for a missing or non-Float32Array tensor; RangeError for bad sizes, lengths or values.
   */
  multiHeadAttention(options: MultiHeadAttentionOptions): MultiHeadAttentionResult;
  /**
   * Matrix product `a · b` (or `a · bᵀ` with `transposeB`) of row-major float32 matrices, on the same SIMD
   * GEMM kernel as attention. Each entry is a float32 sum of `k` products.
   * @param a `[m × k]`.
   * @param b `[k × n]`, or `[n × k]` with `transposeB`.
   * @returns A new `Float32Array` of `m·n` values (or `options.out`).
   * @throws TypeError when `a`, `b` or `out` is not a Float32Array, a size is not a number, or an option is
   * unknown; RangeError for a size < 1, a length that does not match the sizes, a NaN or ±Infinity in `a` or
   * `b`, or inputs whose product could overflow float32 (max row norm of `a` × max column norm of `b` > 1e37).
   * @example
   * ```ts
   * const q = lab.matmul(x, wq, { m: n, k: dModel, n: dk });               // Q = X·W_Q
   * const s = lab.matmul(q, k, { m: n, k: dk, n: n, transposeB: true });   // Q·Kᵀ
   * ```
   */
  matmul(a: Float32Array, b: Float32Array, options: MatmulOptions): Float32Array;
  /** Version and kernels of the running module. */
  buildInfo(): BuildInfo;
  /** Current size of this instance's wasm memory in bytes (it grows on demand and never shrinks). */
  readonly memoryBytes: number;
}

/**
 * Loads the engine. In browsers the `.wasm` beside the package's JS is fetched and compiled while it
 * streams; in Node it is read from disk. Each call makes an independent instance.
 * @throws TypeError for bad options; Error when `simd: true` is forced on an engine without SIMD128.
 */
export function init(options?: InitOptions): Promise<Lab>;

/** True when this JavaScript engine validates WebAssembly SIMD128 code (what {@link init} uses to choose). */
export function simdSupported(): boolean;
