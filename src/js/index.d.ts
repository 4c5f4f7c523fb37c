/**
 * attnlab — softmax, scaled dot-product attention (batch × heads, GQA, masks, windows, a KV cache…) and
 * multi-head attention in WebAssembly (SIMD128 when the engine supports it, scalar otherwise).
 *
 * Every tensor is a row-major `Float32Array`. Every function returns new arrays owned by the caller;
 * nothing needs to be freed, except a {@link KvCache}, which holds wasm memory until disposed (or collected).
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

/** How a `[batch, heads, seq, d]` tensor lies in memory: `'bhsd'` = `[batch][heads][seq][d]`; `'bshd'` = `[batch][seq][heads][d]`, the packed `[batch, seq, heads·d]` of most model code and ONNX's 3-D inputs. */
export type Layout = 'bhsd' | 'bshd';

/**
 * The causal mask and the diagonal it (and {@link AttentionCommonOptions.window}, and ALiBi) is measured from:
 * query `i`'s diagonal key is `i' = i + keys − nq` (`true` / `'bottom-right'`: the last query sees the last key,
 * FlashAttention's rule; `keys` is the item's key count, see {@link AttentionCommonOptions.keyLengths}) or `i' = i`
 * (`'top-left'`: PyTorch's `is_causal`, ONNX without a cache). With `causal`, query `i` sees keys `j ≤ i'`.
 */
export type Causal = boolean | 'bottom-right' | 'top-left';

/** Options of {@link Lab.attention} shared by both ways of giving K and V. */
export interface AttentionCommonOptions {
  /** Queries, `[batch, heads, nq, dk]` in {@link AttentionCommonOptions.layout} (`[nq × dk]` with one head). */
  q: Float32Array;
  /** Batch items. Default 1 (a cache's batch with `cache`). */
  batch?: number;
  /** Query heads. Default 1 (a cache's `kvHeads` with `cache`). */
  heads?: number;
  /**
   * Key/value heads; must divide `heads`. Query head `h` reads K/V head `⌊h·kvHeads/heads⌋`: fewer than `heads` is
   * grouped-query attention, 1 is multi-query. Default `heads` (a cache's `kvHeads` with `cache`).
   */
  kvHeads?: number;
  /** Queries per head. Inferred from `q.length` when left out. */
  nq?: number;
  /** Keys (and values) per head. Inferred from `k.length` (or the cache's length) when left out. */
  nk?: number;
  /** Query/key width. Inferred from `q.length / nq` (or `k.length / nk`, or the cache) when left out; one of dk, nq, nk is required without a cache. */
  dk?: number;
  /** Value width. Inferred from `v.length / nk` (or the cache) when left out. */
  dv?: number;
  /** Layout of `q`, `k`, `v` and the output (each with its own head count). Read by strides: nothing is copied to split or merge heads. Default `'bhsd'`. */
  layout?: Layout;
  /** Causal mask and its alignment ({@link Causal}). `true` is `'bottom-right'`. Default false. */
  causal?: Causal;
  /**
   * Sliding-window (local) attention `[left, right]`: query `i` sees keys `i' − left … i' + right` around the
   * diagonal `i'` of {@link Causal} (bottom-right unless `causal: 'top-left'`). Integers ≥ 0; −1 or `Infinity`
   * means unlimited on that side. Keys outside are skipped, not computed. Default: unlimited.
   */
  window?: [number, number];
  /** Multiplier of `Q·Kᵀ`; finite and > 0. Default `1 / sqrt(dk)`. */
  scale?: number;
  /** When given (> 0), scores become `softcap · tanh(scores / softcap)` after the scale and before ALiBi and the mask (Gemma 2, ONNX's `softcap`). */
  softcap?: number;
  /**
   * A mask of shape {@link AttentionCommonOptions.maskShape}: a `Float32Array` is added to the scores (−Infinity
   * hides a key; NaN and +Infinity are rejected), a `Uint8Array` is boolean (1 = may attend, 0 = masked).
   */
  mask?: Float32Array | Uint8Array | null;
  /**
   * Shape of `mask`, broadcast to `[batch, heads, nq, nk]` by NumPy's rules (right-aligned; each dimension 1 or the
   * full size), e.g. `[batch, 1, nq, nk]`, `[batch, 1, 1, nk]` (key padding), `[1, heads, nq, nk]`. A key dimension
   * between 1 and nk masks the keys past it (ONNX's padded form). The mask is never expanded in memory. Default `[nq, nk]`.
   */
  maskShape?: number[];
  /**
   * Keys each batch item holds (`batch` integers, 0 … nk): item `b` sees only its first `keyLengths[b]` keys (right
   * padding; ONNX's `nonpad_kv_seqlen`, FlashAttention's `cache_seqlens`), and its bottom-right diagonal uses that
   * count: query `i` sees keys `j ≤ i + keyLengths[b] − nq`. Default: every key.
   */
  keyLengths?: Int32Array | number[];
  /** ALiBi (BLOOM, MPT): one slope per query head; `−slope·|i' − j|` is added to every score. */
  alibiSlopes?: Float32Array;
  /** Also return `scores` (the final logits). Default false. */
  returnScores?: boolean;
  /** Also return `weights` (the softmax rows). Default false. */
  returnWeights?: boolean;
  /** Also return `rawScores` (`Q·Kᵀ` before scale and mask). Default false. */
  returnRawScores?: boolean;
  /** Also return `lse`, the log-sum-exp of each score row (what a backward pass and split-K decoding need). Default false. */
  returnLse?: boolean;
  /** Write `output` into this buffer (length `batch·heads·nq·dv`) instead of a new array; untouched when the call throws. */
  out?: Float32Array | null;
}

/** {@link Lab.attention} over keys and values given as tensors. */
export interface AttentionTensorOptions extends AttentionCommonOptions {
  /** Keys, `[batch, kvHeads, nk, dk]` in the layout (`[nk × dk]` with one head). */
  k: Float32Array;
  /** Values, `[batch, kvHeads, nk, dv]` in the layout (`[nk × dv]` with one head). */
  v: Float32Array;
  cache?: null;
}

/** {@link Lab.attention} over the keys and values of a {@link KvCache}: only the queries cross into wasm memory. */
export interface AttentionCacheOptions extends AttentionCommonOptions {
  /** The cache to attend to; `nk` is its length, `dk`/`dv`/`batch`/`kvHeads` are its own. */
  cache: KvCache;
  k?: undefined;
  v?: undefined;
}

/** Options of {@link Lab.attention}: `output = softmax(mask(softcap(scale · Q·Kᵀ) + ALiBi)) · V`, per head. */
export type AttentionOptions = AttentionTensorOptions | AttentionCacheOptions;

/** Result of {@link Lab.attention}; the optional arrays are present when requested. */
export interface AttentionResult {
  /** `[batch, heads, nq, dv]` in the layout. A query that sees no key (masked, windowed or padded away) gets a row of zeros. */
  output: Float32Array;
  /** `[batch, heads, nq, nk]` logits after scale, softcap, ALiBi and mask; −Infinity wherever a key is not seen (masked, causal, windowed or past `keyLengths`). */
  scores?: Float32Array;
  /** `[batch, heads, nq, nk]` attention weights; each row sums to 1 (0 where a key is not seen, all 0 when none is). */
  weights?: Float32Array;
  /** `[batch, heads, nq, nk]` `Q·Kᵀ`. */
  rawScores?: Float32Array;
  /** `[batch, heads, nq]` log Σⱼ exp(scoresᵢⱼ) of each row; −Infinity for a row that sees no key. */
  lse?: Float32Array;
}

/** Options of {@link Lab.kvCache}. */
export interface KvCacheOptions {
  /** Batch items. Default 1. */
  batch?: number;
  /** Key/value heads. Default 1. */
  kvHeads?: number;
  /** Key width. */
  dk: number;
  /** Value width. */
  dv: number;
  /** Tokens each batch item can hold; the memory (batch·kvHeads·capacity·(dk + dv) floats) is allocated at once. */
  capacity: number;
  /** Default layout of appended keys and values. Default `'bhsd'`. */
  layout?: Layout;
}

/** Options of {@link KvCache.append}. */
export interface KvAppendOptions {
  /** Layout of this call's `k` and `v`. Default: the cache's. */
  layout?: Layout;
}

/**
 * Keys and values kept in wasm memory between calls (from {@link Lab.kvCache}), for token-by-token decoding: each
 * step appends its new keys and values and attends with {@link Lab.attention}`({ q, cache })`; only the new tokens
 * and the queries cross into wasm memory. Keys are stored the way the attention kernel reads them, so a step
 * packs nothing. Free it with {@link KvCache.dispose} (it is also freed when garbage-collected).
 */
export interface KvCache {
  readonly batch: number;
  readonly kvHeads: number;
  readonly dk: number;
  readonly dv: number;
  readonly capacity: number;
  readonly layout: Layout;
  /** Tokens each batch item holds. */
  readonly lengths: Int32Array;
  /** True after {@link KvCache.dispose}. */
  readonly disposed: boolean;
  /**
   * Appends `t` new tokens to every batch item: `k` is `[batch, kvHeads, t, dk]`, `v` `[batch, kvHeads, t, dv]` in
   * the layout (`t` from the lengths). All or nothing: past `capacity` (a `RangeError` naming it), a wrong length or
   * a NaN/Infinity leaves the cache unchanged. Returns the cache.
   */
  append(k: Float32Array, v: Float32Array, options?: KvAppendOptions): KvCache;
  /** Empties the cache (keeps its memory). Returns the cache. */
  reset(): KvCache;
  /** A copy of the keys, `[batch, kvHeads, max(lengths), dk]` (`'bhsd'`), zeros past an item's length. */
  keys(): Float32Array;
  /** A copy of the values, `[batch, kvHeads, max(lengths), dv]` (`'bhsd'`). */
  values(): Float32Array;
  /** Frees the cache's wasm memory now. Any later use throws an `Error`; calling it again does nothing. */
  dispose(): void;
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

/**
 * Options of {@link Lab.rope}. Pair i of a head vector at position p is turned by θ = p·base^(−2i/rotaryDim):
 * `(a, b) → (a·cos θ − b·sin θ, b·cos θ + a·sin θ)`.
 */
export interface RopeOptions {
  /** Width of one head; even unless `rotaryDim` is given. Required. */
  dk: number;
  /** Batch items. Default 1. */
  batch?: number;
  /** Heads per token. Default 1. The sequence length is `x.length / (batch·heads·dk)`. */
  heads?: number;
  /**
   * `'bhsd'`: x is `[batch, heads, seq, dk]` (ONNX's 4-D input, HF's query/key states). `'bshd'`: x is
   * `[batch, seq, heads, dk]`, which is also the packed `[batch, seq, heads·dk]` of most model code and ONNX's
   * 3-D input. Default `'bhsd'`.
   */
  layout?: 'bhsd' | 'bshd';
  /**
   * Position of each token, integers ≥ 0: `[seq]` (shared by every batch item) or `[batch, seq]` (a row per item,
   * e.g. left padding; HF's `position_ids`, ONNX's `position_ids`). Give `positions` or `offset`, not both.
   */
  positions?: Int32Array | readonly number[] | null;
  /**
   * Positions `offset … offset + seq − 1`: one integer ≥ 0 for every item, or one per batch item (e.g. each
   * item's cache length when decoding). Default 0.
   */
  offset?: number | Int32Array | readonly number[] | null;
  /**
   * Frequency base: pair i turns by base^(−2i/rotaryDim) per position; finite and ≥ 1. Default 10000
   * (LLaMA 3 uses 500 000). Leave it out when giving `cos` and `sin`.
   */
  base?: number;
  /**
   * Leading entries of each head that are rotated (partial rotary: GPT-NeoX, GPT-J, Phi); even, 2 … dk. The rest
   * pass through unchanged. Default `dk`.
   */
  rotaryDim?: number;
  /**
   * Pair entries (2i, 2i + 1) (GPT-J, the RoFormer paper, Meta's original LLaMA code) instead of (i, i + rotaryDim/2)
   * (HF's `rotate_half`: GPT-NeoX, LLaMA, Mistral, Qwen, Gemma in transformers). Default false.
   */
  interleaved?: boolean;
  /**
   * Tables `[maxPosition, rotaryDim/2]` (ONNX's `cos_cache`, `sin_cache`; HF's cos/sin before they are repeated)
   * used instead of computed angles: row p holds pair i's cos/sin at position p, used as given (scaled tables such
   * as YaRN's work). Both or neither; every position must then be < maxPosition. They are copied into wasm memory
   * on every call: for one decode step the computed angles are cheaper than a large table.
   */
  cos?: Float32Array | null;
  /** See {@link RopeOptions.cos}. */
  sin?: Float32Array | null;
  /**
   * Rotate by −θ instead: undoes a rotation at the same positions, and, being its transpose, is its backward
   * (the gradient with respect to x is `rope(dy, { ...options, inverse: true })`). Default false.
   */
  inverse?: boolean;
  /** Write the result into this buffer (length `x.length`, may be `x` itself) and return it; untouched when the call throws. */
  out?: Float32Array | null;
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
   * Scaled dot-product attention `softmax(mask(softcap(scale · Q·Kᵀ) + ALiBi)) · V` over whole tensors: batch ×
   * heads in one call, grouped-query heads, either layout, causal masks, windows, masks, key lengths, a KV cache.
   * Without any returned matrix it streams over tiles of K/V (online softmax, no `nq × nk` matrix in memory),
   * skipping the keys a row cannot see.
   * @throws TypeError for a missing or mistyped tensor or option; RangeError for bad sizes, lengths or values
   * (the message names the argument); Error for a disposed cache or out of memory.
   */
  attention(options: AttentionOptions): AttentionResult;
  /**
   * A key/value cache in wasm memory, for decoding token by token (see {@link KvCache}).
   * @throws TypeError for a mistyped or missing option; RangeError for bad sizes; Error when out of memory.
   */
  kvCache(options: KvCacheOptions): KvCache;
  /** KV caches of this instance not yet disposed or garbage-collected. */
  readonly liveKvCaches: number;
  /**
   * Multi-head self-attention: `Q = X·Wq`, `K = X·Wk`, `V = X·Wv`, attention per head (query head `h` reads
   * key/value head `h / (heads / kvHeads)`), heads concatenated, then `· Wo`.
   * @throws TypeError for a missing or non-Float32Array tensor; RangeError for bad sizes, lengths or values.
   */
  multiHeadAttention(options: MultiHeadAttentionOptions): MultiHeadAttentionResult;
  /**
   * Rotary position embedding of query or key heads, as ONNX's `RotaryEmbedding` (opset 23) and Hugging Face's
   * `apply_rotary_pos_emb` compute it. Angles are computed in double precision and rounded once to float32, so
   * large positions (100 000 and beyond) stay as accurate as small ones; a position gets the same bits in
   * every call (a decode step matches its prefill).
   * @param x Heads to rotate, `[batch, heads, seq, dk]` or `[batch, seq, heads, dk]` (see {@link RopeOptions.layout}); finite.
   * @returns A new `Float32Array` of `x.length` (or `out`).
   * @throws TypeError for a wrong type or an unknown option; RangeError for bad sizes, positions or values.
   */
  rope(x: Float32Array, options: RopeOptions): Float32Array;
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
