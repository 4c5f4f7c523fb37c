/**
 * attnlab — softmax, scaled dot-product attention (batch × heads, GQA, masks, windows, a KV cache…) and
 * multi-head attention in WebAssembly (SIMD128 when the engine supports it, scalar otherwise).
 *
 * Every tensor is a row-major `Float32Array`. Every function returns new arrays owned by the caller
 * (`Float32Array<ArrayBuffer>`: these declarations need TypeScript 5.7 or later); nothing needs to be freed,
 * except a {@link KvCache}, which holds wasm memory until disposed (or garbage-collected).
 * Matrices a call can also return (`weights`, `scores`, …) are in the result's type exactly when the call
 * asks for them, so `lab.attention({ …, returnWeights: true }).weights` needs no `!`.
 *
 * Three entries export this same API: `attnlab` loads the `.wasm` file beside its JS (fetched in browsers and
 * compiled as it streams, read from disk in Node), and where a bundler did not copy it there imports the copy
 * inside the package's JS ({@link BuildInfo.source}); `attnlab/inline` carries the operators' module inside its
 * JS (nothing to serve, nothing requested), and `attnlab/inline-gpt` the module with the small GPT
 * (`init({ gpt: true })`). The declarations need neither the DOM lib nor `@types/node`.
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

/**
 * The four module files the package ships, as passed to a {@link InitOptions.wasmUrl} function: the operators
 * (`attnlab-simd.wasm`, `attnlab-scalar.wasm`: what {@link init} loads) and the operators with the small GPT
 * (`attnlab-gpt-simd.wasm`, `attnlab-gpt-scalar.wasm`: what `init({ gpt: true })` loads), each with SIMD128
 * kernels or scalar ones.
 */
export type WasmFile = 'attnlab-simd.wasm' | 'attnlab-scalar.wasm' | 'attnlab-gpt-simd.wasm' | 'attnlab-gpt-scalar.wasm';

/**
 * A URL object: anything with an absolute `href`, such as a `URL` (declared here so that these types need
 * neither the DOM lib nor `@types/node`).
 */
export interface UrlLike {
  /** The absolute URL. */
  readonly href: string;
}

/** A `Float32Array` the package allocated: always backed by a plain (not shared) `ArrayBuffer`. */
export type Float32Result = Float32Array<ArrayBuffer>;

/**
 * The array a call returns as its main result for options `O`: the `out` buffer when `O` has one (its own
 * type, e.g. a view of a `SharedArrayBuffer`), else a new {@link Float32Result}.
 */
export type OutputOf<O> = O extends {
  /** The caller's buffer. */
  out: infer T extends Float32Array;
}
  ? T
  : 'out' extends keyof O
    ? O['out' & keyof O] extends null | undefined
      ? Float32Result
      : Float32Result | NonNullable<O['out' & keyof O]>
    : Float32Result;

/**
 * The fields that a `return…` flag adds to a result: all of `Fields` when the flag is `true` in `O`, none when
 * it is `false` or left out, and all of them optional when `O` types it as `boolean` (not known until run time).
 * A result type is its always-present fields intersected with one `Requested` per flag.
 */
export type Requested<O, Flag extends string, Fields> = Flag extends keyof O
  ? O[Flag] extends true
    ? Fields
    : O[Flag] extends false | undefined
      ? unknown
      : Partial<Fields>
  : unknown;

/** Rejects options that `T` does not name (type parameters skip TypeScript's excess-property check). */
export type KnownKeys<O, T> = { [K in Exclude<keyof O, keyof T>]: never };

/** Shows an intersection of field groups as one object type. */
export type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Options of {@link init}. All optional. */
export interface InitOptions {
  /**
   * `true` forces the SIMD module (an `Error` if the engine lacks SIMD128), `false` forces the scalar module.
   * Default: SIMD when `WebAssembly.validate` accepts a tiny SIMD module, else scalar.
   */
  simd?: boolean;
  /**
   * Load the module with the small GPT ({@link Lab.createGPT}, {@link Lab.loadGPT}): `attnlab-gpt-simd.wasm`
   * (or `attnlab-gpt-scalar.wasm`), about twice the size of the operators' module that loads without it.
   * Without it those two methods throw an `Error` saying so. The `attnlab/inline` entry carries only the
   * operators' modules: with `gpt: true` import `init` from `attnlab/inline-gpt`, or pass
   * {@link InitOptions.wasmUrl} / {@link InitOptions.wasmBinary}. Default false.
   */
  gpt?: boolean;
  /**
   * Where to load the `.wasm` from, for bundlers and CDNs that do not keep it beside the package's JS.
   * A string or URL is used for whichever module is chosen: pin it with {@link InitOptions.simd}, and point it
   * at `attnlab-gpt-*.wasm` with `gpt: true` (an `Error` if the module has no GPT). A function receives the file
   * name of the chosen module ({@link WasmFile}) and returns its location: `(file) => '/static/' + file` serves
   * all four from one folder.
   * Default: the file beside `index.js` (`import.meta.url`); in Node it is read from disk. Where that file cannot
   * be loaded, `attnlab` runs its copy inside the JS ({@link BuildInfo.fallback}); a `wasmUrl` given here that
   * cannot be loaded is an `Error`, never a fallback.
   */
  wasmUrl?: string | UrlLike | ((file: WasmFile) => string | UrlLike);
  /**
   * The module's bytes, already loaded (must be the module chosen by {@link InitOptions.simd} and
   * {@link InitOptions.gpt}). When given, nothing is fetched or read. Takes precedence over
   * {@link InitOptions.wasmUrl}.
   */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
  /**
   * Workers for the async twins ({@link Lab.attentionAsync}, {@link Lab.softmaxAsync}, …): an integer from 1 to
   * 256. With `n ≥ 2`, `init` starts `n` Web Workers (worker_threads in Node), each with its own instance of the
   * same compiled module (sent to it, not downloaded again), from a Blob URL of the package's worker script
   * (`attnlab` reads `attnlab-worker.js` beside its JS, or its copy inside the JS where the file is not there;
   * `attnlab/inline` carries it): works from `file://` pages
   * and without cross-origin isolation (the page's Content-Security-Policy must allow `worker-src blob:`).
   * With 1 the async twins run on the calling thread. Real models ({@link Lab.loadModel}) are placed on the
   * workers too, one slice of every weight matrix on each ({@link LoadModelOptions.threads}).
   * End the workers with {@link Lab.dispose}; in Node idle workers never keep a script alive. Default 1.
   */
  threads?: number;
  /**
   * How {@link GPT.trainStepAsync}'s workers exchange gradients and weights: `'shared'` through shared memory
   * (`SharedArrayBuffer`, which they can always in Node and in browsers on cross-origin isolated pages; elsewhere
   * init rejects), `'message'` by messages (copies and transfers) even where memory could be shared. The results
   * are the same bit for bit; shared memory spends less of each step on copies. Default: `'shared'` where this
   * thread can share memory, else `'message'` (as {@link LoadModelOptions.exchange}).
   */
  exchange?: 'shared' | 'message';
}

/** What {@link Lab.trainTimes} returns: milliseconds summed over {@link GPT.trainStepAsync}'s steps. */
export interface TrainTimes {
  /** Steps run on the workers. */
  readonly steps: number;
  /** Each step's wall time less its slowest worker's gradient time: what more workers do not divide, waits for a core included. */
  readonly serialMs: number;
  /** The work in {@link TrainTimes.serialMs}: `mainMs` + `gatherMs` + `sumMs` + `adamwMs`. */
  readonly serialWorkMs: number;
  /** The slowest worker's gradient time in each step. */
  readonly workerMs: number;
  /** This thread's own time in the steps. */
  readonly mainMs: number;
  /** The slowest worker's time bringing its replica's weights up to date, each step. */
  readonly gatherMs: number;
  /** The slowest worker's time summing its slice of the parts' gradients, each step. */
  readonly sumMs: number;
  /** The slowest worker's time updating its slice (AdamW), each step. */
  readonly adamwMs: number;
  /** Wall time, as this thread saw it, of making or bringing up to date the replicas from the model. */
  readonly seedMs: number;
  /** Wall time of the gradients round. */
  readonly gradientsMs: number;
  /** Wall time of the reduce round (each slice's gradients summed). */
  readonly reduceMs: number;
  /** Wall time of the update round (each slice's AdamW). */
  readonly updateMs: number;
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
  /** Not with `k` and `v`. */
  cache?: null;
}

/** {@link Lab.attention} over the keys and values of a {@link KvCache}: only the queries cross into wasm memory. */
export interface AttentionCacheOptions extends AttentionCommonOptions {
  /** The cache to attend to; `nk` is its length, `dk`/`dv`/`batch`/`kvHeads` are its own. */
  cache: KvCache;
  /** Not with a cache (its keys are used). */
  k?: undefined;
  /** Not with a cache (its values are used). */
  v?: undefined;
}

/** Options of {@link Lab.attention}: `output = softmax(mask(softcap(scale · Q·Kᵀ) + ALiBi)) · V`, per head. */
export type AttentionOptions = AttentionTensorOptions | AttentionCacheOptions;

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

/** The `rope` option of {@link KvCache.append}: {@link Lab.rope}'s angle options, for the keys on their way in. */
export interface KvRopeOptions {
  /** Default 10000 (without `cos`/`sin`). */
  base?: number;
  /** Even, 2 … dk. Default dk. */
  rotaryDim?: number;
  /** Pairs (2i, 2i+1) instead of (i, i + rotaryDim/2). Default false. */
  interleaved?: boolean;
  /** Cosines `[maxPosition × rotaryDim/2]` replacing the computed angles (with `sin`). */
  cos?: Float32Array;
  /** Sines `[maxPosition × rotaryDim/2]` replacing the computed angles (with `cos`). */
  sin?: Float32Array;
  /** Positions of the new tokens, `[batch, t]` or `[t]`. Default: their cache positions (each item's length on). */
  positions?: Int32Array | number[];
}

/** Options of {@link KvCache.append}. */
export interface KvAppendOptions {
  /** Layout of this call's `k` and `v`. Default: the cache's. */
  layout?: Layout;
  /** Rotate the new keys (RoPE) at their cache positions as they are stored. `{}` is the default rotation. */
  rope?: KvRopeOptions;
}

/**
 * Keys and values kept in wasm memory between calls (from {@link Lab.kvCache}), for token-by-token decoding: each
 * step appends its new keys and values and attends with {@link Lab.attention}`({ q, cache })`; only the new tokens
 * and the queries cross into wasm memory. Keys are stored the way the attention kernel reads them, so a step
 * packs nothing. Free it with {@link KvCache.dispose} (it is also freed when garbage-collected).
 */
export interface KvCache {
  /** Batch items. */
  readonly batch: number;
  /** Key/value heads. */
  readonly kvHeads: number;
  /** Key width. */
  readonly dk: number;
  /** Value width. */
  readonly dv: number;
  /** Tokens each batch item can hold. */
  readonly capacity: number;
  /** Default layout of appended keys and values. */
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
  keys(): Float32Result;
  /** A copy of the values, `[batch, kvHeads, max(lengths), dv]` (`'bhsd'`). */
  values(): Float32Result;
  /** Frees the cache's wasm memory now. Any later use throws an `Error`; calling it again does nothing. */
  dispose(): void;
}

/** The field every {@link AttentionResult} has. */
export interface AttentionOutput<Out extends Float32Array = Float32Result> {
  /**
   * `[batch, heads, nq, dv]` in the layout (`[nq × dv]` with one head). A query that sees no key (masked, windowed,
   * causal or padded away) gets a row of zeros. `out` when one was given.
   */
  output: Out;
}

/** Added to an {@link AttentionResult} by {@link AttentionCommonOptions.returnScores}. */
export interface AttentionScores {
  /**
   * `[batch, heads, nq, nk]` logits after scale, softcap, ALiBi and mask; −Infinity wherever a key is not seen
   * (masked, causal, windowed or past `keyLengths`).
   */
  scores: Float32Result;
}

/** Added to an {@link AttentionResult} by {@link AttentionCommonOptions.returnWeights}. */
export interface AttentionWeights {
  /** `[batch, heads, nq, nk]` attention weights; each row sums to 1 (0 where a key is not seen, all 0 when none is). */
  weights: Float32Result;
}

/** Added to an {@link AttentionResult} by {@link AttentionCommonOptions.returnRawScores}. */
export interface AttentionRawScores {
  /** `[batch, heads, nq, nk]` `Q·Kᵀ`. */
  rawScores: Float32Result;
}

/** Added to an {@link AttentionResult} by {@link AttentionCommonOptions.returnLse}. */
export interface AttentionLse {
  /** `[batch, heads, nq]` log Σⱼ exp(scoresᵢⱼ) of each row; −Infinity for a row that sees no key. */
  lse: Float32Result;
}

/**
 * Result of {@link Lab.attention} for options `O`: `output`, plus each matrix that `O` requests.
 * Without `O` (`AttentionResult`), the requested matrices are optional.
 * @typeParam O The options of the call.
 */
export type AttentionResult<O extends AttentionOptions = AttentionOptions> = Simplify<
  AttentionOutput<OutputOf<O>> &
    Requested<O, 'returnScores', AttentionScores> &
    Requested<O, 'returnWeights', AttentionWeights> &
    Requested<O, 'returnRawScores', AttentionRawScores> &
    Requested<O, 'returnLse', AttentionLse>
>;

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

/** One head's intermediates in {@link MultiHeadIntermediates.heads}. */
export interface HeadIntermediates {
  /** `[n × dk]` this head's queries, `X·Wq` columns of the head. */
  q: Float32Result;
  /** `[n × dk]` the keys it reads: key head `h / (heads / kvHeads)`. */
  k: Float32Result;
  /** `[n × dv]` the values it reads (same key/value head). */
  v: Float32Result;
  /** `[n × n]` scaled and masked logits. */
  scores: Float32Result;
  /** `[n × n]` attention weights (softmax rows). */
  weights: Float32Result;
  /** `[n × dv]` the head's output, its block of `concat`. */
  output: Float32Result;
}

/** The field every {@link MultiHeadAttentionResult} has. */
export interface MultiHeadOutput<Out extends Float32Array = Float32Result> {
  /** `[n × dModel]` = `concat · Wo`. `out` when one was given. */
  output: Out;
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

/** Added to a {@link MultiHeadAttentionResult} by {@link MultiHeadAttentionOptions.returnIntermediates}. */
export interface MultiHeadIntermediates {
  /** `[n × heads·dk]` = `X·Wq`. */
  q: Float32Result;
  /** `[n × kvHeads·dk]` = `X·Wk`. */
  k: Float32Result;
  /** `[n × kvHeads·dv]` = `X·Wv`. */
  v: Float32Result;
  /** `[n × heads·dv]` head outputs side by side, before `Wo`. */
  concat: Float32Result;
  /** One entry per query head. */
  heads: HeadIntermediates[];
}

/**
 * Result of {@link Lab.multiHeadAttention} for options `O`: `output`, plus the intermediates when `O` asks for
 * them. Without `O` (`MultiHeadAttentionResult`), the intermediates are optional.
 * @typeParam O The options of the call.
 */
export type MultiHeadAttentionResult<O extends MultiHeadAttentionOptions = MultiHeadAttentionOptions> = Simplify<
  MultiHeadOutput<OutputOf<O>> & Requested<O, 'returnIntermediates', MultiHeadIntermediates>
>;

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
  /**
   * Where the module came from: `'file'`, the `.wasm` beside the package's JS (what `attnlab` loads);
   * `'inline'`, the copy inside the package's JS (`attnlab/inline`, `attnlab/inline-gpt`, or `attnlab` where its
   * file was not there: see {@link BuildInfo.fallback}); `'wasmUrl'` or `'wasmBinary'`, what init() was given.
   */
  source: 'file' | 'inline' | 'wasmUrl' | 'wasmBinary';
  /**
   * Only where `attnlab` could not load a file beside its JS (a bundler that copies no assets, a CommonJS bundle
   * without `import.meta.url`) and ran its copy inside the JS instead: which file, and why. Covers the module and,
   * with {@link InitOptions.threads}, the workers' script (`attnlab-worker.js`).
   */
  fallback?: string;
}

/**
 * Options of {@link Lab.attentionBackward}: every option of {@link Lab.attention} (the same names, meanings and
 * checks) with the keys and values as tensors, plus what the forward saved and the loss's gradient.
 */
export interface AttentionBackwardOptions
  extends Omit<AttentionCommonOptions, 'returnScores' | 'returnWeights' | 'returnRawScores' | 'returnLse' | 'out'> {
  /** The forward's keys, `[batch, kvHeads, nk, dk]` in the layout (`[nk × dk]` with one head). */
  k: Float32Array;
  /** The forward's values, `[batch, kvHeads, nk, dv]` in the layout (`[nk × dv]` with one head). */
  v: Float32Array;
  /** The forward's `output`, `[batch, heads, nq, dv]` in the layout. */
  output: Float32Array;
  /**
   * The forward's `lse` (`returnLse: true`), `[batch, heads, nq]`: the weights are recomputed from it tile by tile.
   * −Infinity for a query that sees no key. An `lse` that does not belong to these inputs and options is a RangeError.
   */
  lse: Float32Array;
  /** dL/d`output`, shaped as `output`; finite. */
  dOutput: Float32Array;
  /** Write the gradients into these buffers (each shaped as `q`, `k`, `v`) instead of new arrays; untouched when the call throws. */
  out?: AttentionGradientBuffers | null;
  /** Not an option of the backward pass: it takes explicit `k` and `v` (copy them out with {@link KvCache.keys} / {@link KvCache.values}). */
  cache?: never;
}

/** Buffers for {@link AttentionBackwardOptions.out}; any left out is allocated. */
export interface AttentionGradientBuffers {
  /** For `dq`: `q.length` floats. */
  dq?: Float32Array;
  /** For `dk`: `k.length` floats. */
  dk?: Float32Array;
  /** For `dv`: `v.length` floats. */
  dv?: Float32Array;
}

/** Result of {@link Lab.attentionBackward}: the gradients of the loss with respect to the forward's inputs. */
export interface AttentionGradients {
  /** dL/dq, shaped as `q`. A query that sees no key gets zeros. `out.dq` when given. */
  dq: Float32Result;
  /** dL/dk, shaped as `k`: a key/value head shared by several query heads (GQA, MQA) gets the sum over them. `out.dk` when given. */
  dk: Float32Result;
  /** dL/dv, shaped as `v` (summed over the query heads of a group like `dk`). `out.dv` when given. */
  dv: Float32Result;
}

/** Options of {@link Lab.softmaxBackward}: the gradient of softmax (or log-softmax) with respect to its logits. */
export interface SoftmaxBackwardOptions {
  /** The forward's output: probabilities in [0, 1] (with `log`: log-probabilities ≤ 0, −Infinity allowed), `rows·cols`. */
  y: Float32Array;
  /** dL/dy, the same length; finite. */
  dy: Float32Array;
  /** Row length, as in the forward. Default: `y.length` (one row). */
  cols?: number;
  /** The forward's temperature: y = softmax(x / temperature). Default 1. */
  temperature?: number;
  /** `y` is log-softmax. Default false. */
  log?: boolean;
}

/**
 * Where the async twins' work ran ({@link Lab.threadStats}), counted since {@link init}. Every async call is
 * checked first on the calling thread, as its synchronous form checks it: a call refused there counts nowhere.
 */
export interface ThreadStats {
  /**
   * Parts a worker computed: each part of a call cut into parts, each whole call sent to one worker (`ropeAsync`,
   * `multiHeadAttentionAsync`), each part of a {@link GPT.trainStepAsync} batch, and each worker's step of a model
   * placed on the workers (a forward, a generation's prompt, each token: one per worker holding the model; a step
   * that fails is never run again on the calling thread).
   */
  workerParts: number;
  /**
   * Calls kept whole on the calling thread without asking the workers: those with less work than a worker's round
   * trip is worth (the tuning thresholds of {@link Lab.attentionAsync} and the others), attention over a KV
   * `cache`, and every call with `threads: 1`.
   */
  inlineCalls: number;
  /**
   * Calls run again on the calling thread after a worker's part failed or could not be posted. A valid call never
   * does: a part fails only for a bad value (one the check before the cut does not read), and then the whole call
   * runs again here so that its error names the argument as one call does (softmax's parts name it already).
   */
  reruns: number;
}

/**
 * Configuration of {@link Lab.createGPT}: a decoder-only transformer with nanoGPT's architecture —
 * `x = wte[token] + wpe[position]`; per block `x += c_proj(attention(c_attn(ln_1(x))))` (causal, `heads` query
 * heads reading `kvHeads` key/value heads, scale 1/√(dModel/heads)) and `x += c_proj(GELU(c_fc(ln_2(x))))` (hidden
 * width 4·dModel, exact GELU); `logits = ln_f(x) · wteᵀ` (or `lm_head` when not tied). LayerNorm eps 1e-5.
 */
export interface GPTConfig {
  /** Token ids are 0 … vocabSize − 1. */
  vocabSize: number;
  /** The longest sequence (nanoGPT's block_size). */
  context: number;
  /** Residual width (n_embd); a multiple of `heads`. */
  dModel: number;
  /** Query heads; the head width is dModel / heads. */
  heads: number;
  /** Key/value heads, dividing `heads` (grouped-query attention when fewer). Default `heads`. */
  kvHeads?: number;
  /** Transformer blocks. */
  layers: number;
  /** `false` leaves out ln_2 and the MLP: an attention-only model. Default true. */
  mlp?: boolean;
  /** Learned position embeddings (`transformer.wpe.weight`) or rotary. Default `'learned'`. */
  position?: 'learned' | 'rope';
  /** `lm_head` shares the token embedding (nanoGPT's weight tying). Default true. */
  tied?: boolean;
  /** Biases in every Linear and LayerNorm (nanoGPT's `bias=True`). Default true. */
  bias?: boolean;
  /**
   * Seed of the initial weights: nanoGPT's `_init_weights` — Linear and Embedding weights N(0, 0.02), the residual
   * projections (`attn.c_proj`, `mlp.c_proj`) N(0, 0.02/√(2·layers)), biases 0, LayerNorm weights 1. Default 0.
   */
  seed?: number;
}

/** Options of {@link GPT.trainStep}: AdamW as `torch.optim.AdamW`, with its defaults. */
export interface TrainOptions {
  /** Learning rate; finite, ≥ 0. Default 1e-3. */
  lr?: number;
  /** Decoupled weight decay, applied to matrices and embeddings only (nanoGPT's grouping). Default 0.01. */
  weightDecay?: number;
  /** Default 0.9. */
  beta1?: number;
  /** Default 0.999. */
  beta2?: number;
  /** Default 1e-8. */
  eps?: number;
  /** Clip the gradient to this global L2 norm (`clip_grad_norm_`); 0 = no clipping. Default 0. */
  gradClip?: number;
}

/** Options of {@link GPT.forward}. */
export interface ForwardOptions {
  /** Sequences in `tokens` (`tokens.length / batch` ≤ context tokens each). Default 1. */
  batch?: number;
  /** Also return every layer's attention weights. Default false. */
  returnAttention?: boolean;
}

/** Result of {@link GPT.forward}. */
export interface ForwardResult {
  /** `[batch, t, vocabSize]` logits. */
  logits: Float32Array;
  /** With `returnAttention`: one `[batch, heads, t, t]` array of causal attention weights per layer. */
  attention?: Float32Array[];
}

/** Options of {@link GPT.generate}. */
export interface GenerateOptions {
  /** How many tokens to generate. */
  maxTokens: number;
  /** Sampling temperature, ≥ 0; 0 is greedy (the first most likely token). Default 1. */
  temperature?: number;
  /** Sample among the k most likely tokens (ties with the k-th kept); 0 = all. Default 0. */
  topK?: number;
  /** Seed of the sampler (an integer below 2⁵³): equal seeds give equal samples. Default: a random one. */
  seed?: number;
}

/**
 * A small GPT living in the engine's wasm memory, from {@link Lab.createGPT} or {@link Lab.loadGPT}. Every layer's
 * forward and backward runs in the engine; nothing crosses to JavaScript between layers.
 *
 * Weights use nanoGPT's `state_dict()` names and shapes (`nn.Linear` weights are `[out, in]`):
 * `transformer.wte.weight` [vocabSize, dModel], `transformer.wpe.weight` [context, dModel],
 * `transformer.h.{i}.ln_1.weight|bias` [dModel], `transformer.h.{i}.attn.c_attn.weight` [(heads + 2·kvHeads)·dModel/heads,
 * dModel] (the query heads' rows, then the key heads', then the value heads'; [3·dModel, dModel] without GQA) and its
 * `.bias`, `transformer.h.{i}.attn.c_proj.weight` [dModel, dModel], `transformer.h.{i}.ln_2.*`,
 * `transformer.h.{i}.mlp.c_fc.weight` [4·dModel, dModel], `transformer.h.{i}.mlp.c_proj.weight` [dModel, 4·dModel],
 * `transformer.ln_f.*`, `lm_head.weight` [vocabSize, dModel] (the token embedding itself when tied).
 *
 * Errors: arguments of the wrong type throw `TypeError`; bad token ids, lengths, options or weights throw
 * `RangeError` naming the argument, and leave the model unchanged and usable. A step whose loss or gradient is not
 * finite throws an `Error` saying so and changes nothing. Any method after {@link GPT.dispose} throws an `Error`.
 */
export interface GPT {
  /** The configuration, defaults filled in. */
  readonly config: Readonly<Required<GPTConfig>>;
  /** Number of parameters (the tied lm_head counted once). */
  readonly parameterCount: number;
  /** AdamW updates applied so far. */
  readonly steps: number;
  /** Bytes of wasm memory the model holds: parameters, gradients, Adam moments, activations, KV cache. */
  readonly memoryBytes: number;
  /** The state dict's shapes, as PyTorch has them. */
  readonly shapes: Record<string, number[]>;
  /**
   * One AdamW step on a `[batch, context]` batch (`batch = tokens.length / context`): forward, cross-entropy, backward,
   * update. A target of −1 is ignored (nanoGPT's `ignore_index=-1`).
   * @returns the batch's mean cross-entropy before the update.
   */
  trainStep(tokens: Int32Array, targets: Int32Array, options?: TrainOptions): number;
  /**
   * {@link GPT.trainStep} with the batch's sequences split across the lab's workers ({@link InitOptions.threads}),
   * and the optimizer's work split too. Each worker keeps a replica of the model between steps and owns one slice
   * of its parameters: it computes the gradient of its sequences on its replica, sums its slice of every part's
   * gradient (weighted by counted targets, so the sum is the gradient of the whole batch's mean loss), and applies
   * AdamW to its slice (`gradClip` on the global norm of the summed gradient, from the slices' sums of squares);
   * the next step's replicas start from the slices put together. The exchange goes through shared memory where it
   * can ({@link InitOptions.exchange}), by messages elsewhere. Same arguments, options, errors and result as
   * `trainStep`; the loss equals trainStep's to the last bit or one ulp, the update differs only by the order the
   * gradient's float32 terms are summed (bit for bit when one worker gets the whole batch). With `threads: 1` it is
   * `trainStep` on the calling thread.
   *
   * Nothing changes until every part is back and the loss and the gradient's norm are checked: a failing part, a
   * non-finite loss or gradient, disposing the model or the lab during the step rejects and leaves the weights,
   * Adam moments and step count as they were, here and on the workers. Steps on one model run one after another
   * in call order; while one runs, `trainStep` and `setWeights` on that model throw an `Error` (reads — `forward`,
   * `generate`, `getWeights`, `toSafetensors` — see the weights before the step). The model on the calling thread
   * takes the workers' weights, moments and step count when it is next read or changed; `trainStep` and
   * `setWeights` between async steps just work. After the lab's `dispose()` it rejects with an `Error`;
   * `trainStep` still works. Each worker keeps a replica of every model it trained (about the model's
   * {@link GPT.memoryBytes} for its part of the batch) until the model's or the lab's `dispose()`; the calling
   * thread keeps two copies of the weights and moments (the last step's and the one being written: 24 bytes per
   * parameter) and, with shared memory, one gradient per worker (4 bytes per parameter each).
   * @returns a promise of the batch's mean cross-entropy before the update.
   */
  trainStepAsync(tokens: Int32Array, targets: Int32Array, options?: TrainOptions): Promise<number>;
  /** Logits (and optionally attention weights) of `[batch, t]` tokens, `t ≤ context`. */
  forward(tokens: Int32Array, options?: ForwardOptions): ForwardResult;
  /**
   * Continues `prompt` with the model's KV cache and returns the new tokens only. A prompt longer than the context
   * keeps its last `context` tokens; past the context each token conditions on the last `context` tokens (as
   * nanoGPT's `generate`).
   */
  generate(prompt: Int32Array, options: GenerateOptions): Int32Array;
  /** Every weight, by state-dict name, in PyTorch's layout (a tied `lm_head.weight` is a copy of the embedding). */
  getWeights(): Record<string, Float32Array>;
  /**
   * Sets any subset of the weights (names and shapes as {@link GPT.getWeights}). Everything is checked first: an
   * unknown name, a wrong length or a non-finite value throws and nothing changes. The optimizer state is kept.
   */
  setWeights(weights: Record<string, Float32Array>): void;
  /**
   * The model as a safetensors file: float32 tensors under the state-dict names, the config in `__metadata__`
   * (`vocab_size`, `block_size`, `n_layer`, `n_head`, `n_kv_head`, `n_embd`, `bias`, `mlp`, `position`, `tied`). A tied
   * `lm_head.weight` is stored once, as `transformer.wte.weight` (as `safetensors.torch.save_model` does; load it in
   * PyTorch with `load_model` or `load_state_dict(…, strict=False)`).
   */
  toSafetensors(): Uint8Array;
  /** Frees the model's wasm memory now (it is freed on garbage collection otherwise). Idempotent. */
  dispose(): void;
}

/**
 * A model folder's files for {@link Lab.loadModel}, by file name, as a Hugging Face repository holds them:
 * `config.json`, `model.safetensors` (or `model.safetensors.index.json` and the shards it names),
 * `generation_config.json` when there is one, and the tokenizer's files. A `Blob` (a `File` from an
 * `<input type="file">` or a drop) is read slice by slice: a large file never sits in JavaScript memory whole.
 */
export type ModelFiles = Record<string, Uint8Array | ArrayBuffer | BlobLike> | Map<string, Uint8Array | ArrayBuffer | BlobLike>;

/**
 * Token ids, as {@link Tokenizer.decode}, {@link Tokenizer.tokens}, {@link Model.forward}, {@link Model.generate}
 * and {@link Model.stream} all take them: an `Int32Array` (read as it is), another integer typed array (a
 * `Uint32Array`, `Uint16Array`, …), or an array of integers. Each id must fit an int32 (a `Uint32Array`'s 2³¹ and up
 * do not); a value that does not, or is not an integer, is a `RangeError` naming its index (`ids[3]`). Float and
 * BigInt arrays are a `TypeError`.
 */
export type TokenIds =
  | Int32Array
  | Uint32Array
  | Int16Array
  | Uint16Array
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | readonly number[];

/**
 * A `Blob` or `File` (declared structurally, so that these types need neither the DOM lib nor `@types/node`): its
 * size, and its bytes whole or in slices, read as ArrayBuffers.
 */
export interface BlobLike {
  /** Bytes in all. */
  readonly size: number;
  /** Bytes `start` … `end − 1`, read with their `arrayBuffer()`. */
  slice(start?: number, end?: number): BlobSliceLike;
  /** All the bytes. */
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A slice of a {@link BlobLike}. */
export interface BlobSliceLike {
  /** The slice's bytes. */
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** Progress of {@link Lab.loadModel}: reported as each piece of each file reaches the engine. */
export interface LoadProgress {
  /** The file being read (`config.json`, `model.safetensors`, a shard, …). */
  file: string;
  /** Its bytes read so far. */
  loaded: number;
  /** Its size, when known (a `Content-Length` without `Content-Encoding`, a Blob's size); undefined otherwise. */
  total: number | undefined;
}

/** An `AbortSignal` (declared structurally, so that these types need neither the DOM lib nor `@types/node`). */
export interface AbortSignalLike {
  /** Whether it was aborted. */
  readonly aborted: boolean;
  /** What it was aborted with (the error a load or a generation then rejects with). */
  readonly reason?: unknown;
}

/** Options of {@link Lab.loadModel}. */
export interface LoadModelOptions {
  /** Called as the bytes come in. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Aborting stops the load between two pieces (and aborts the downloads): the promise rejects with the signal's
   * reason and nothing of the model stays in memory.
   */
  signal?: AbortSignalLike;
  /**
   * Where the model runs: 1 is the calling thread; n > 1 is the first n of the lab's workers
   * ({@link InitOptions.threads}), each holding a slice of every weight matrix — whole key/value heads with their
   * query heads, a range of the MLP's hidden width and of the vocabulary — so the weights are in memory once across
   * them, and every step (a forward, each token) runs on the workers, the calling thread free. Default: all of the
   * lab's workers (1 for a lab without). More than the lab has is a `RangeError`. See {@link Model.split}.
   */
  threads?: number;
  /**
   * How the workers exchange their partial sums per layer: `'shared'` (SharedArrayBuffer and Atomics: Node, and
   * pages that are cross-origin isolated) or `'message'` (MessagePorts between the workers: everywhere, a copy per
   * worker and exchange). Default: `'shared'` where this thread can share memory, else `'message'`.
   */
  exchange?: 'shared' | 'message';
}

/** {@link Model.split}: where a model runs and how it is cut. */
export interface ModelSplit {
  /** 1: the calling thread; more: that many of the lab's workers, one shard each. */
  readonly threads: number;
  /** How the workers exchange their partial sums ({@link LoadModelOptions.exchange}); `'none'` on one thread. */
  readonly exchange: 'shared' | 'message' | 'none';
  /** Each shard's slices, `[begin, end)` ranges, in rank order (together, the whole model). */
  readonly ranks: readonly ModelShard[];
}

/** One worker's slices of a model ({@link ModelSplit.ranks}): `[begin, end)` ranges. */
export interface ModelShard {
  /** Its place among the model's workers. */
  readonly rank: number;
  /** Query heads (whole groups of {@link ModelConfig.kvHeads}). May be empty when there are fewer K/V heads than workers. */
  readonly heads: readonly [number, number];
  /** Key/value heads, with their KV caches. */
  readonly kvHeads: readonly [number, number];
  /** The MLP's hidden units (rows of c_fc / gate / up, columns of c_proj / down). */
  readonly ffn: readonly [number, number];
  /** Token ids whose embedding rows (and lm_head rows) it holds, and whose logits it computes. */
  readonly vocab: readonly [number, number];
  /** GPT-2's learned positions it holds (`[0, 0]` for the Llama family). */
  readonly positions: readonly [number, number];
}

/** One worker's share of a model, from {@link Model.workers}. */
export interface ModelWorker {
  /** Its place among the model's workers (0 for a model on the calling thread). */
  readonly rank: number;
  /** Bytes the shard holds: its weights, KV caches, activations. */
  readonly memoryBytes: number;
  /** Bytes of its weights. */
  readonly weightBytes: number;
  /** The worker's whole wasm memory (what the shard grew it to, and what else the worker holds). */
  readonly wasmBytes: number;
  /** Phases of steps its engine ran (a step — a forward, a token — has 2·layers + 2): where the work ran. */
  readonly phases: number;
  /** Its slices. */
  readonly plan: ModelShard;
}

/**
 * A checkpoint's configuration as the engine read it from `config.json` (and `generation_config.json`), in the
 * package's words.
 */
export interface ModelConfig {
  /** `architectures[0]`: `'GPT2LMHeadModel'`, `'LlamaForCausalLM'`, `'Qwen2ForCausalLM'` or `'MistralForCausalLM'`. */
  readonly architecture: string;
  /** `'gpt2'`, `'llama'`, `'qwen2'` or `'mistral'`. */
  readonly modelType: string;
  /** Rows of the token embedding: token ids are 0 … vocabSize − 1. */
  readonly vocabSize: number;
  /** Positions: `n_positions` / `max_position_embeddings`. A prompt and its generated tokens fit in it. */
  readonly context: number;
  /** Residual width (`n_embd` / `hidden_size`). */
  readonly dModel: number;
  /** Transformer blocks (`n_layer` / `num_hidden_layers`). */
  readonly layers: number;
  /** Query heads. */
  readonly heads: number;
  /** Key/value heads (fewer than `heads`: grouped-query attention). */
  readonly kvHeads: number;
  /** Width of a head. */
  readonly headDim: number;
  /** The MLP's hidden width (`n_inner` / `intermediate_size`). */
  readonly ffnDim: number;
  /** LayerNorm's or RMSNorm's eps. */
  readonly normEps: number;
  /** `'gelu_tanh'` (GPT-2's `gelu_new` and the other names of GELU's tanh form), `'gelu'` (the exact erf GELU:
   * `activation_function` `"gelu"` or `"gelu_python"`) or `'silu'` (SwiGLU). */
  readonly activation: 'gelu_tanh' | 'gelu' | 'silu';
  /** The head shares the token embedding. */
  readonly tied: boolean;
  /** RoPE's base (`rope_theta`); null for GPT-2's learned positions. */
  readonly ropeTheta: number | null;
  /** A query sees the last `slidingWindow` positions (itself included); 0 = all. */
  readonly slidingWindow: number;
  /**
   * Each layer's attention scale, as the engine's scores use it (a float32 value): scores = q·kᵀ·scale. 1/√headDim,
   * or for GPT-2 what `scale_attn_weights` and `scale_attn_by_inverse_layer_idx` make it (1, and ÷ (layer + 1)).
   */
  readonly attentionScales: readonly number[];
  /** End-of-sequence ids: generation stops after one unless {@link ModelGenerateOptions.stop} says otherwise. */
  readonly eos: readonly number[];
  /** The beginning-of-sequence id, or null. */
  readonly bos: number | null;
  /**
   * The sampling {@link Model.generate} uses when not told: `generation_config.json`'s when it samples
   * (`do_sample: true`), else greedy (`temperature` 0), as Hugging Face's `generate`.
   */
  readonly defaults: SamplingDefaults;
}

/** {@link ModelConfig.defaults}. */
export interface SamplingDefaults {
  /** 0: greedy. */
  readonly temperature: number;
  /** 0: every token. */
  readonly topK: number;
  /** 1: every token. */
  readonly topP: number;
}

/** Options of {@link Model.forward}. */
export interface ModelForwardOptions {
  /** Also return every layer's and head's attention weights. Default false. */
  attention?: boolean;
  /** Also return every layer's queries, keys and values as the attention read them ({@link ModelQkv}). Default false. */
  qkv?: boolean;
}

/** What {@link Model.forward} always returns. */
export interface ModelLogits {
  /** `[n, vocabSize]` logits, row-major: row i is the prediction after the first i + 1 tokens. */
  logits: Float32Result;
  /** The logits' shape: `[n, vocabSize]`. */
  shape: [number, number];
}

/** Added to {@link Model.forward}'s result by {@link ModelForwardOptions.attention}. */
export interface ModelAttention {
  /**
   * `attention[layer][head]`: that head's `[n, n]` causal attention weights as the engine computed them, row-major
   * (row i: how much query i attends to each key; 0 past the diagonal and outside a sliding window).
   */
  attention: Float32Result[][];
}

/** Added to {@link Model.forward}'s result by {@link ModelForwardOptions.qkv}. */
export interface ModelQkv {
  /** `qkv[layer]`: what that layer's attention computed its weights from. */
  qkv: ModelLayerQkv[];
}

/**
 * One layer's queries, keys and values exactly as the engine's attention consumed them: after the projections'
 * biases and, for the Llama family (Llama, Qwen2, Mistral), after RoPE; row-major, row i for the token at position i.
 * Head h's weights are softmax(q_h · k_gᵀ · scale + the causal mask, and the sliding window where there is one) with
 * g = ⌊h·kvHeads / heads⌋, its group's K/V head. On the calling thread the three are views of one array the call read back; on workers, gathered from
 * every worker's heads.
 */
export interface ModelLayerQkv {
  /** `[n, heads, headDim]`. */
  q: Float32Result;
  /** `[n, kvHeads, headDim]` (after RoPE for the Llama family). */
  k: Float32Result;
  /** `[n, kvHeads, headDim]`. */
  v: Float32Result;
  /** The scale the scores used: {@link ModelConfig.attentionScales} of this layer. */
  scale: number;
}

/** Result of {@link Model.forward}; `attention` and `qkv` are in the type exactly when `O` asks for them. */
export type ModelForwardResult<O extends ModelForwardOptions = {}> =
  Simplify<ModelLogits & Requested<O, 'attention', ModelAttention> & Requested<O, 'qkv', ModelQkv>>;

/** Options of {@link Model.generate} and {@link Model.stream}. */
export interface ModelGenerateOptions {
  /** Tokens to generate at most; the prompt and these must fit in {@link ModelConfig.context}. */
  maxTokens: number;
  /** Sampling temperature, ≥ 0; 0 is greedy (the first most likely token). Default: {@link ModelConfig.defaults}. */
  temperature?: number;
  /** Sample among the k most likely tokens (ties with the k-th kept); 0 = all. Default: {@link ModelConfig.defaults}. */
  topK?: number;
  /**
   * Nucleus sampling: among the most likely tokens whose probabilities before them sum to less than topP (the
   * smallest set holding at least topP), in (0, 1]. Applied after temperature and topK, as Hugging Face does.
   * Default: {@link ModelConfig.defaults}.
   */
  topP?: number;
  /** Seed of the sampler (an integer below 2⁵³): equal seeds give equal samples. Default: a random one. */
  seed?: number;
  /**
   * Stop after any of these token ids (the stop token is the last one returned); strings (not empty) stop once the
   * generated text contains them (needs a tokenizer). Default: {@link ModelConfig.eos}; `[]` never stops early. A
   * bad entry is named by its place in the list as given, strings and ids counted alike (`stop[2]`; `stop` for one).
   */
  stop?: number | string | readonly (number | string)[];
  /** Aborting ends the generation before its next token: the promise (or iterator) rejects with the signal's reason. */
  signal?: AbortSignalLike;
}

/** One generated token, from {@link Model.stream} (and {@link Model.generate}'s `onToken`). */
export interface GeneratedToken {
  /** The token id. */
  id: number;
  /** Its index among the generated tokens (0 for the first). */
  index: number;
  /**
   * The text it adds to the prompt's and the earlier tokens' (with a tokenizer), else undefined. A character whose
   * bytes span tokens comes whole with its last one (the tokens before add `''`), and a token past the tokenizer's
   * ids (an embedding row it has no token for) adds `''`; joined, the pieces are {@link GenerateResult.text}.
   */
  text: string | undefined;
  /** Whether it is the last one (maxTokens reached, or a stop). */
  last: boolean;
}

/** Result of {@link Model.generate}. */
export interface GenerateResult {
  /** The generated tokens (the prompt not included). */
  tokens: Int32Array<ArrayBuffer>;
  /**
   * Their text as it continues the prompt's, when the model has a tokenizer: the prompt's text followed by it is the
   * text of the prompt and the tokens decoded together. (`tokenizer.decode(tokens)` alone may differ at the start: a
   * SentencePiece-style decoder, Llama 2's, drops the space a text begins with.) A prompt that ends inside a character
   * (the first of its UTF-8 bytes, the rest to come) gives that character to this text: decoded alone, such a prompt
   * ends in U+FFFD, which this text replaces with the whole character, or repeats if the tokens never complete it.
   */
  text?: string;
  /** Why it ended: a stop token or string, or maxTokens. */
  reason: 'stop' | 'maxTokens';
}

/**
 * A decoder-only checkpoint in the engine's wasm memory, from {@link Lab.loadModel}: GPT-2 (`GPT2LMHeadModel`) or a
 * Llama-family model (`LlamaForCausalLM`, `Qwen2ForCausalLM`, `MistralForCausalLM`). Its weights are stored once, as
 * the files have them (F16 and BF16 matrices stay 16-bit and are widened in the kernels); generation keeps a KV cache
 * in wasm memory. Token ids are {@link TokenIds}, as its tokenizer takes them (strings too, with a tokenizer).
 *
 * Errors: arguments of the wrong type throw `TypeError`; a token id outside the vocabulary, an empty prompt, a prompt
 * and `maxTokens` past the context, or a bad sampling option throws `RangeError` naming it, and the model keeps
 * working. Any method after {@link Model.dispose} throws an `Error`.
 */
export interface Model {
  /** The configuration as the engine read it. */
  readonly config: ModelConfig;
  /**
   * The tokenizer, or null when the model was loaded without one. It runs on the calling thread, for a model on
   * workers too (its calls stay synchronous).
   */
  readonly tokenizer: Tokenizer | null;
  /**
   * Bytes of wasm memory the model holds now: weights, KV caches, activations (on workers: all of their shards, as
   * of the last call that finished).
   */
  readonly memoryBytes: number;
  /** Bytes of the weights alone, as stored (on workers: all of their slices). */
  readonly weightBytes: number;
  /** Whether {@link Model.dispose} was called. */
  readonly disposed: boolean;
  /** Where the model runs ({@link LoadModelOptions.threads}) and how it is cut across the workers. */
  readonly split: ModelSplit;
  /**
   * Logits of every position of `ids` (at most {@link ModelConfig.context}), with `attention: true` every
   * layer's and head's attention weights, and with `qkv: true` every layer's queries, keys and values
   * ({@link ModelLayerQkv}). Independent of any generation in progress. On the calling thread: a
   * model on workers throws an `Error` saying to use {@link Model.forwardAsync}.
   * @typeParam O The options as written, from which the result's fields are typed.
   */
  forward<const O extends ModelForwardOptions = {}>(ids: TokenIds | string,
    options?: O & KnownKeys<O, ModelForwardOptions>): ModelForwardResult<O>;
  /**
   * {@link Model.forward} as a promise: on the workers for a model placed on them (each computes its heads and its
   * vocabulary's logits; the calling thread stays free), on the calling thread otherwise. The same results within
   * float32 rounding: the workers' partial sums are added in another order than one thread's.
   * @typeParam O The options as written, from which the result's fields are typed.
   */
  forwardAsync<const O extends ModelForwardOptions = {}>(ids: TokenIds | string,
    options?: O & KnownKeys<O, ModelForwardOptions>): Promise<ModelForwardResult<O>>;
  /**
   * Generates up to `maxTokens` tokens after `prompt`: the prompt runs through the model once into the KV cache,
   * then one token per step. Greedy generation (`temperature: 0`) gives, token for token, the argmax of
   * {@link Model.forward} over the prompt and the tokens so far. Between tokens the event loop runs; `onToken`
   * sees each token as it comes. One generation runs per model: starting another ends this one (it rejects).
   */
  generate(prompt: TokenIds | string,
    options: ModelGenerateOptions & { onToken?: (token: GeneratedToken) => void }): Promise<GenerateResult>;
  /**
   * {@link Model.generate} as an async iterator: `for await (const t of model.stream(prompt, { maxTokens: 20 }))`.
   * The prompt's and the options' types are checked when it is called (a TypeError then); their values (ids against
   * the vocabulary, maxTokens against the context, the sampling ranges) by the engine when the generation starts, at
   * the first step (a RangeError from the first `next()`), as on workers. Leaving the loop early ends the generation.
   */
  stream(prompt: TokenIds | string, options: ModelGenerateOptions): AsyncGenerator<GeneratedToken, void, void>;
  /**
   * Each worker's share as the worker counts it now (after the calls before this one): memory, weights, the phases
   * its engine ran. One entry, the calling thread's, for a model on it.
   */
  workers(): Promise<ModelWorker[]>;
  /**
   * Frees the model's wasm memory now — every worker's share for a model on workers; a step in progress ends and
   * its call rejects — and its tokenizer's. Both are freed on garbage collection otherwise. Idempotent.
   */
  dispose(): void;
}

/**
 * The files of a Hugging Face model folder, by name: `tokenizer.json` (with `tokenizer_config.json` and
 * `special_tokens_map.json` when present), or GPT-2's `vocab.json` and `merges.txt`. Other names are ignored, so
 * a whole folder can be passed.
 */
export type TokenizerFiles =
  | Record<string, Uint8Array | ArrayBuffer | BlobLike>
  | Map<string, Uint8Array | ArrayBuffer | BlobLike>;

/** A special token: its id and its text. */
export interface SpecialToken {
  /** Its id. */
  readonly id: number;
  /** Its text (`"<s>"`, `"<|endoftext|>"`). */
  readonly token: string;
}

/** The special tokens a model's files name (each present only when they do). */
export interface SpecialTokens {
  /** The token that begins a sequence. */
  readonly bos?: SpecialToken;
  /** The token that ends one (where generation stops). */
  readonly eos?: SpecialToken;
  /** The token of text the vocabulary cannot spell. */
  readonly unk?: SpecialToken;
  /** The token that pads a batch. */
  readonly pad?: SpecialToken;
}

/** Options of {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /**
   * Apply the file's post-processor: the tokens it puts around the text (Llama's and Gemma's `<bos>`), as Hugging
   * Face's `encode` does by default. Default true.
   */
  addSpecialTokens?: boolean;
}

/** Options of {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Leave out special tokens (`<s>`, `<|endoftext|>`, …). Default false. */
  skipSpecialTokens?: boolean;
  /**
   * transformers' clean-up: no space before `. , ! ?` and English contractions (`" n't"` → `"n't"`).
   * Default: `clean_up_tokenization_spaces` of `tokenizer_config.json`, false without one.
   */
  cleanUpTokenizationSpaces?: boolean;
}

/**
 * A Hugging Face tokenizer running in the engine (from {@link Lab.loadTokenizer}): byte-level BPE (GPT-2, SmolLM,
 * Qwen2/3, Llama 3) and SentencePiece-style BPE with byte fallback (Llama 2, TinyLlama, Mistral, Gemma), with the
 * normalizers, pre-tokenizers, post-processors, decoders and added tokens of their `tokenizer.json`. Ids and text
 * are those Hugging Face's `tokenizers` library gives. The tokenizer lives in wasm memory: {@link Tokenizer.dispose}
 * frees it (so does garbage collection).
 */
export interface Tokenizer {
  /** Number of ids, `0 … vocabSize − 1`: the model's tokens, then the added tokens. */
  readonly vocabSize: number;
  /**
   * Whether {@link Tokenizer.decode} cleans up spaces unless told (`tokenizer_config.json`'s
   * `clean_up_tokenization_spaces`: " ." → ".", " n't" → "n't", …).
   */
  readonly cleanUpTokenizationSpaces: boolean;
  /** The model's named special tokens, where its files name them (`tokenizer_config.json`, the model's unknown token, the post-processor's). */
  readonly specialTokens: SpecialTokens;
  /** Bytes of wasm memory the tokenizer holds (vocabulary, merges, added tokens, caches). */
  readonly memoryBytes: number;
  /** True after {@link Tokenizer.dispose}. */
  readonly disposed: boolean;
  /**
   * The token ids of `text` (sent to the engine as UTF-8: a lone surrogate becomes U+FFFD, as `TextEncoder`
   * makes it).
   * @throws TypeError when `text` is not a string or an option is unknown or mistyped; Error after dispose();
   * RangeError naming `text` when a pre-tokenizer pattern would need more than its work budget on it (a pattern
   * written to rescan the text; none of the real files' is).
   */
  encode(text: string, options?: EncodeOptions): Int32Array;
  /**
   * The text of `ids`, through the file's decoders.
   * @throws TypeError when `ids` is not {@link TokenIds}; RangeError naming the index of an id that is not a token
   * id; Error after dispose().
   */
  decode(ids: TokenIds, options?: DecodeOptions): string;
  /**
   * Each id's token as text, for display: GPT-2's `Ġhave` as `" have"`, SentencePiece's `▁the` as `" the"`, a byte
   * token `<0x0A>` as `"\n"`. Bytes that are not text on their own (part of a character split between tokens)
   * are shown as `<0xE2>`; added tokens as their text.
   * @throws as {@link Tokenizer.decode}.
   */
  tokens(ids: TokenIds): string[];
  /** The id of a token as the vocabulary spells it (`"Ġhave"`, `"<s>"`), or undefined. */
  idOf(token: string): number | undefined;
  /** The token of an id as the vocabulary spells it, or undefined for a number that is not a token id. */
  tokenOf(id: number): string | undefined;
  /** Frees the tokenizer's wasm memory now. Idempotent; afterwards every method throws an Error. */
  dispose(): void;
}

/** A loaded engine instance, from {@link init}. Methods do not use `this`; they may be destructured. */
export interface Lab {
  /** The module that runs. */
  readonly backend: Backend;
  /**
   * Row-wise softmax of a `[rows × cols]` matrix: subtracts each row's max (no overflow), −Infinity entries
   * get exactly 0, a row that is all −Infinity gives all zeros (never NaN).
   * @param x Logits, `rows·cols` values; −Infinity allowed.
   * @param options See {@link SoftmaxOptions}.
   * @returns A new array of `x.length` probabilities (or log-probabilities with `log`), or `out` when given.
   * @throws TypeError when `x` is not a Float32Array; RangeError on a bad `cols`, `temperature` or value.
   * @typeParam O The options as written, so that the result is typed `out`'s type when `out` is given.
   */
  softmax<const O extends SoftmaxOptions = {}>(x: Float32Array, options?: O & KnownKeys<O, SoftmaxOptions>): OutputOf<O>;
  /**
   * Scaled dot-product attention `softmax(mask(softcap(scale · Q·Kᵀ) + ALiBi)) · V` over whole tensors: batch ×
   * heads in one call, grouped-query heads, either layout, causal masks, windows, masks, key lengths, a KV cache.
   * Without any returned matrix it streams over tiles of K/V (online softmax, no `nq × nk` matrix in memory),
   * skipping the keys a row cannot see.
   * @throws TypeError for a missing or mistyped tensor or option; RangeError for bad sizes, lengths or values
   * (the message names the argument); Error for a disposed cache or out of memory.
   * @param options See {@link AttentionOptions}.
   * @returns `output`, and `scores`, `weights`, `rawScores`, `lse` when requested (present in the type exactly then).
   * @typeParam O The options as written, from which the result's fields are typed.
   */
  attention<const O extends AttentionOptions>(options: O & KnownKeys<O, AttentionOptions>): AttentionResult<O>;
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
   * @param options See {@link MultiHeadAttentionOptions}.
   * @returns `output`, and the intermediates with `returnIntermediates: true` (present in the type exactly then).
   * @throws TypeError for a missing or non-Float32Array tensor; RangeError for bad sizes, lengths or values.
   * @typeParam O The options as written, from which the result's fields are typed.
   */
  multiHeadAttention<const O extends MultiHeadAttentionOptions>(
    options: O & KnownKeys<O, MultiHeadAttentionOptions>,
  ): MultiHeadAttentionResult<O>;
  /**
   * Matrix product `a · b` (or `a · bᵀ` with `transposeB`) of row-major float32 matrices, on the same SIMD
   * GEMM kernel as attention. Each entry is a float32 sum of `k` products.
   * @param a `[m × k]`.
   * @param b `[k × n]`, or `[n × k]` with `transposeB`.
   * @returns A new `Float32Array` of `m·n` values (or `options.out`).
   * @throws TypeError when `a`, `b` or `out` is not a Float32Array, a size is not a number, or an option is
   * unknown; RangeError for a size < 1, a length that does not match the sizes, a NaN or ±Infinity in `a` or
   * `b`, or inputs whose product could overflow float32 (max row norm of `a` × max column norm of `b` > 1e37).
   * @typeParam O The options as written, so that the result is typed `out`'s type when `out` is given.
   * @example
   * ```ts
   * const q = lab.matmul(x, wq, { m: n, k: dModel, n: dk });               // Q = X·W_Q
   * const s = lab.matmul(q, k, { m: n, k: dk, n: n, transposeB: true });   // Q·Kᵀ
   * ```
   */
  matmul<const O extends MatmulOptions>(a: Float32Array, b: Float32Array, options: O & KnownKeys<O, MatmulOptions>): OutputOf<O>;
  /**
   * Rotary position embedding of query or key heads, as ONNX's `RotaryEmbedding` (opset 23) and Hugging Face's
   * `apply_rotary_pos_emb` compute it. Angles are computed in double precision and rounded once to float32, so
   * large positions (100 000 and beyond) stay as accurate as small ones; a position gets the same bits in
   * every call (a decode step matches its prefill).
   * @param x Heads to rotate, `[batch, heads, seq, dk]` or `[batch, seq, heads, dk]` (see {@link RopeOptions.layout}); finite.
   * @returns A new `Float32Array` of `x.length` (or `out`).
   * @throws TypeError for a wrong type or an unknown option; RangeError for bad sizes, positions or values.
   * @typeParam O The options as written, so that the result is typed `out`'s type when `out` is given.
   */
  rope<const O extends RopeOptions>(x: Float32Array, options: O & KnownKeys<O, RopeOptions>): OutputOf<O>;
  /**
   * The gradient of row-wise softmax (or log-softmax) with respect to its logits, from the forward's output:
   * `dx = y∘(dy − Σ y∘dy) / temperature`, or `(dy − exp(y)·Σ dy) / temperature` for log-softmax. A row the forward
   * saw entirely masked gets zeros.
   * @throws TypeError for a missing or non-Float32Array tensor; RangeError for bad lengths or values (a `y` outside
   * [0, 1], or above 0 with `log`, is not a softmax output).
   */
  softmaxBackward(options: SoftmaxBackwardOptions): Float32Array;
  /**
   * The gradients of {@link Lab.attention} with respect to `q`, `k` and `v`, for every option of the forward, from
   * what the forward returned (`output` and `lse`) and dL/d`output`. FlashAttention-2's backward: the weights are
   * recomputed tile by tile from `lse`, so memory stays O(tile), never `nq × nk`.
   * @throws TypeError for a missing or mistyped tensor or option (a `cache` included); RangeError for bad sizes,
   * lengths or values, an `lse` that does not match the inputs, or gradients that overflow float32 (the message
   * names the argument); Error when out of memory.
   * @param options See {@link AttentionBackwardOptions}.
   * @returns `{ dq, dk, dv }`, shaped as `q`, `k`, `v`.
   */
  attentionBackward(options: AttentionBackwardOptions): AttentionGradients;
  /**
   * A new small GPT with seeded initial weights (see {@link GPTConfig}). Needs a lab from `init({ gpt: true })`.
   * @throws TypeError for a missing or mistyped field; RangeError for a zero size, `dModel % heads`, `heads % kvHeads`,
   * or a model too large for wasm memory, naming the field; Error when the lab was loaded without `gpt: true`.
   */
  createGPT(config: GPTConfig): GPT;
  /**
   * A GPT from a safetensors file ({@link GPT.toSafetensors}, or PyTorch's with `n_head` in its metadata). F32, F16,
   * BF16 and F64 tensors are read; what the metadata leaves out is read from the shapes.
   * Needs a lab from `init({ gpt: true })`.
   * @throws Error when the lab was loaded without `gpt: true`; TypeError when `bytes` is not a Uint8Array or ArrayBuffer; RangeError naming `bytes` for a malformed file,
   * a missing, extra or misshapen tensor, or a non-finite weight.
   */
  loadGPT(bytes: Uint8Array | ArrayBuffer): GPT;
  /**
   * Loads a decoder-only checkpoint (GPT-2, Llama, Qwen2, Mistral; F32, F16 or BF16 safetensors, sharded or not) from
   * a Hugging Face model folder: its files ({@link ModelFiles}), or a base URL laid out as a repository's
   * `resolve/main/` folder (`config.json`, `generation_config.json` if there is one — a 404 is fine, as is a web page
   * (`text/html`), which dev servers such as Vite's send for a file they do not have —,
   * `model.safetensors.index.json` or `model.safetensors`, the shards, the tokenizer's files), each response body
   * streamed into the engine. Every tensor goes straight to its place in wasm memory as its bytes arrive; the engine
   * checks the files against `config.json` first (names, shapes, dtypes) and names the file and field of any error.
   *
   * Works from any lab: the language-model engine is in the modules with the small GPT, which a lab on the
   * operators' module (`init()` without `gpt: true`) loads the first time it is needed, beside the package's JS
   * (`attnlab/inline` cannot: it carries only the operators — use `attnlab/inline-gpt`). Its models live in that
   * module's memory, not in the lab's ({@link Lab.memoryBytes}).
   * @returns a promise of the {@link Model}.
   * @throws (rejects with) TypeError for a source or option of the wrong type, or a Hugging Face hub URL that is not
   * under `resolve/` (a repository's or a file's web page: the message gives the files' URL); RangeError naming the
   * file and the field or tensor for an unsupported architecture or `rope_scaling`, a malformed or truncated file, a
   * tensor whose shape disagrees with `config.json`, a quantized dtype, SentencePiece's `tokenizer.model` given
   * without `tokenizer.json`, or a model too large for wasm memory (2 GiB); Error for a
   * missing file, a download that fails (halfway too: the message says how far it got), or the signal's reason when
   * aborted. Nothing of a failed load stays in memory.
   */
  loadModel(source: ModelFiles | string | UrlLike, options?: LoadModelOptions): Promise<Model>;
  /** Models from {@link Lab.loadModel} not yet disposed or garbage-collected. */
  readonly liveModels: number;
  /**
   * A Hugging Face tokenizer from a model folder's files (see {@link TokenizerFiles}; Blobs are read). The engine
   * parses and checks them: anything it does not support (another model type, a normalizer or regex construct it
   * does not run, truncation…) or anything malformed is an error naming the file, the field (a JSON path such as
   * `pre_tokenizer.pretokenizers[0].pattern.Regex`) and the value — never a different tokenization.
   * Works from any lab, as {@link Lab.loadModel} does: a lab on the operators' module loads the module with the
   * models the first time (`attnlab/inline` cannot: use `attnlab/inline-gpt`).
   * @throws (rejects with) TypeError for a file that is not a Uint8Array, ArrayBuffer or Blob; RangeError naming
   * the file and field of a malformed or unsupported file; Error when the module with the models cannot be loaded.
   * @example
   * ```ts
   * const tokenizer = await lab.loadTokenizer({ 'tokenizer.json': await (await fetch(url)).arrayBuffer() });
   * const ids = tokenizer.encode('Hello world');   // Int32Array
   * tokenizer.decode(ids);                         // 'Hello world'
   * ```
   */
  loadTokenizer(files: TokenizerFiles): Promise<Tokenizer>;
  /**
   * Tokenizers from {@link Lab.loadTokenizer} not yet disposed or garbage-collected. A model's own
   * {@link Model.tokenizer} is not among them: it goes with its model ({@link Lab.liveModels}).
   */
  readonly liveTokenizers: number;
  /** Version and kernels of the running module. */
  buildInfo(): BuildInfo;
  /** Current size of this instance's wasm memory in bytes (it grows on demand and never shrinks). */
  readonly memoryBytes: number;
  /** The workers the async twins use ({@link InitOptions.threads}); 1 = the calling thread. */
  readonly threads: number;
  /**
   * Where the async twins' work ran since {@link init}: a snapshot of the counts (see {@link ThreadStats}). A call
   * that is valid never runs twice: its `reruns` stay 0, so a test (or a bench) can tell that the workers really
   * computed what they were sent.
   */
  threadStats(): ThreadStats;
  /**
   * {@link GPT.trainStepAsync}'s steps on the workers since {@link init}, and where their time went, in milliseconds
   * summed over the steps. For benches: `npm run bench:train-threads` prints them.
   */
  trainTimes(): TrainTimes;
  /**
   * Ends the workers of {@link InitOptions.threads}; afterwards every async twin rejects with an `Error`, and so
   * does a call still running on the workers (the synchronous functions keep working). The models
   * {@link Lab.loadModel} placed on the workers end with them: each is disposed ({@link Model.disposed},
   * {@link Lab.liveModels} no longer counts it) and any call on it is an `Error` saying so; a model on the
   * calling thread (`threads: 1`) keeps working. Idempotent.
   */
  dispose(): void;
  /**
   * {@link Lab.softmax} on the workers: the rows are cut into one block per worker. Same options, same result bit
   * for bit, same errors (a bad value is named by its index in the whole `x`). Below 4 Mi floats the call runs on
   * the calling thread: row-wise softmax costs about what its copies to a worker cost.
   * @typeParam O The options as written, so that the result is typed `out`'s type when `out` is given.
   */
  softmaxAsync<const O extends SoftmaxOptions = {}>(x: Float32Array, options?: O & KnownKeys<O, SoftmaxOptions>): Promise<OutputOf<O>>;
  /** {@link Lab.softmaxBackward} on the workers, by blocks of rows (below 4 Mi floats on the calling thread). Same result bit for bit, same errors. */
  softmaxBackwardAsync(options: SoftmaxBackwardOptions): Promise<Float32Array>;
  /**
   * {@link Lab.attention} on the workers: the call is cut into parts of equal work over batch items, K/V heads
   * (with their query heads) and query rows — single-head and MQA calls too — and each worker receives only the
   * rows and heads its part reads. Same options, same result bit for bit, same errors. A call with `cache` runs on
   * the calling thread (the cache lives in this lab's memory), as do calls with less work than a worker's round trip is worth (about 1.2·10⁷ multiply-adds);
   * `out` is filled once every part is done (untouched on error).
   * @typeParam O The options as written, from which the result's fields are typed.
   */
  attentionAsync<const O extends AttentionOptions>(options: O & KnownKeys<O, AttentionOptions>): Promise<AttentionResult<O>>;
  /**
   * {@link Lab.multiHeadAttention} in one worker (not cut: its projections span every head); concurrent calls
   * spread over the workers. Same result bit for bit, same errors.
   * @typeParam O The options as written, from which the result's fields are typed.
   */
  multiHeadAttentionAsync<const O extends MultiHeadAttentionOptions>(
    options: O & KnownKeys<O, MultiHeadAttentionOptions>,
  ): Promise<MultiHeadAttentionResult<O>>;
  /**
   * {@link Lab.matmul} on the workers, by blocks of 64 rows of `a` (the GEMM's own row block, so each entry is
   * summed exactly as in one call). Same result bit for bit, same errors. Below 4·10⁸ multiply-adds the call runs
   * on the calling thread (smaller products gained nothing from two workers).
   * @typeParam O The options as written, so that the result is typed `out`'s type when `out` is given.
   */
  matmulAsync<const O extends MatmulOptions>(a: Float32Array, b: Float32Array, options: O & KnownKeys<O, MatmulOptions>): Promise<OutputOf<O>>;
  /**
   * {@link Lab.rope} in one worker (a memory-bound pass: not cut); concurrent calls spread over the workers.
   * Same result bit for bit, same errors.
   * @typeParam O The options as written, so that the result is typed `out`'s type when `out` is given.
   */
  ropeAsync<const O extends RopeOptions>(x: Float32Array, options: O & KnownKeys<O, RopeOptions>): Promise<OutputOf<O>>;
  /**
   * {@link Lab.attentionBackward} on the workers, cut along batch items × K/V heads (a K/V head with its query
   * heads: its gradients are theirs alone). Same result bit for bit, same errors; `out`'s buffers are filled
   * once every part succeeded (untouched on error). Calls with less work than a worker's round trip is worth run on
   * the calling thread.
   */
  attentionBackwardAsync(options: AttentionBackwardOptions): Promise<AttentionGradients>;
}

/**
 * Loads the engine. From `attnlab`, browsers fetch the `.wasm` beside the package's JS (compiled while it
 * streams when served as `application/wasm`, from the same response's bytes otherwise) and Node reads it
 * from disk, and where it is not there the copy inside the JS runs ({@link BuildInfo.source}); from `attnlab/inline` and `attnlab/inline-gpt` the module comes from inside the JS. Without
 * `gpt: true` it is the operators' module (`attnlab-simd.wasm`, or `attnlab-scalar.wasm`); with it, the one
 * that also has the small GPT (`attnlab-gpt-simd.wasm`, `attnlab-gpt-scalar.wasm`). Each call makes an
 * independent instance.
 * @param options See {@link InitOptions}.
 * @throws TypeError for bad options. Error when `simd: true` is forced on an engine without SIMD128, when
 * `gpt: true` meets a module without the GPT (from `attnlab/inline`, or a `wasmUrl` / `wasmBinary` of the
 * operators' module), and when the module cannot be loaded (a `wasmUrl` or `wasmBinary` that does not hold
 * it; from `attnlab`, neither the file nor its copy inside the JS): the message names the URL or path it tried
 * and what to do.
 */
export function init(options?: InitOptions): Promise<Lab>;

/** True when this JavaScript engine validates WebAssembly SIMD128 code (what {@link init} uses to choose). */
export function simdSupported(): boolean;
