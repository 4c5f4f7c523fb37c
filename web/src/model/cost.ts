// The cost of attention, as plain arithmetic (no DOM, so it can be checked on its own). Counts are BigInt:
// “Self-attention”'s ideal n×n×d×d tensor is 2^52 bytes and a long context with many layers passes 2^53, where
// float64 integers stop being exact. Only the display rounds (to 3 significant digits, marked ≈).

export interface CostInput {
  /** Tokens in the context. */
  n: number;
  /** Model width d (sum of the head widths). */
  d: number;
  heads: number;
  layers: number;
  /** Bytes per number: 4 (fp32), 2 (fp16 / bf16) or 1 (int8). */
  bytes: number;
}

/** The engine's streaming tile (src/core/attention.cpp: kRows × kKeyTile): 32 query rows × 128 keys. */
/**
 * The cost lab's measured curve (labs/cost/cost-curve.ts): q, k, v of n × CURVE_D, and the materialized path stops
 * at n = MAX_MATERIALIZED_N: its n² float32 scores, the same again for the weights the engine fills in wasm memory,
 * and a third copy when they are handed back to JS.
 */
export const CURVE_D = 64;
export const MAX_MATERIALIZED_N = 4096;
/** MiB of one n × n float32 matrix at the curve's largest materialized n. */
export const MAX_MATERIALIZED_MIB = (MAX_MATERIALIZED_N * MAX_MATERIALIZED_N * 4) / 2 ** 20;

export const TILE_ROWS = 32;
export const TILE_KEYS = 128;

/**
 * Bounds of the calculator's inputs: big enough for any real model, small enough to stay meaningful. The cost lab's
 * URL parameters accept exactly these (labs/cost/state.ts).
 */
export const COST_LIMITS = {
  n: { min: 1, max: 100_000_000 },
  d: { min: 1, max: 1_048_576 },
  heads: { min: 1, max: 4096 },
  layers: { min: 1, max: 10_000 },
  bytes: [4, 2, 1] as readonly number[],
} as const;

export interface CostResult {
  /** d / heads. */
  headDim: number;
  /**
   * Materialized: one n×n matrix per head, the minimum (softmax can overwrite the scores in place). This engine's
   * materialized path keeps two, scores and weights, so it uses twice this (the measured curve shows it).
   */
  scoresPerHead: bigint;
  scoresPerLayer: bigint;
  scoresAll: bigint;
  /** Streaming (online softmax): a 32×128 score tile, a 32×d_h output accumulator, a running max and sum per row. */
  tilePerHead: bigint;
  tilePerLayer: bigint;
  tileAll: bigint;
  /** q, k, v and the output, n×d each: needed by both paths, linear in n. */
  qkvoPerLayer: bigint;
  qkvoAll: bigint;
  materializedAll: bigint;
  streamingAll: bigint;
  /** Q, K, V and O projections: 4 matrix products of [n×d]·[d×d], 2·n·d² FLOPs each. */
  projFlopsPerLayer: bigint;
  /** QKᵀ and P·V summed over the heads: 2·n²·d_h each per head, 2·2·n²·d per layer. */
  attnFlopsPerLayer: bigint;
  projFlopsAll: bigint;
  attnFlopsAll: bigint;
  /** n where 4n²d = 8nd²: attention's n² term equals the projections' nd² term. */
  crossoverN: number;
  /** attnFlops / projFlops = n / (2d). */
  attnOverProj: number;
  /** “Self-attention”'s "ideal" tensor: a d×d matrix for every pair of tokens, n·n·d·d numbers. */
  idealTensor: bigint;
  /** What replaces it in practice: W_q, W_k, W_v, d×d each (the chapter's 3 × (d × δ × 4 bytes)). */
  qkvWeights: bigint;
}

/** Why an input is out of bounds, or null when every input is valid. */
export function validate(x: CostInput): string | null {
  const int = (v: number, name: string, lo: number, hi: number) =>
    Number.isInteger(v) && v >= lo && v <= hi ? null : `${name} must be a whole number from ${lo.toLocaleString('en-US')} to ${hi.toLocaleString('en-US')}`;
  return int(x.n, 'n', COST_LIMITS.n.min, COST_LIMITS.n.max)
    ?? int(x.d, 'd', COST_LIMITS.d.min, COST_LIMITS.d.max)
    ?? int(x.heads, 'heads', COST_LIMITS.heads.min, COST_LIMITS.heads.max)
    ?? int(x.layers, 'layers', COST_LIMITS.layers.min, COST_LIMITS.layers.max)
    ?? (COST_LIMITS.bytes.includes(x.bytes) ? null : 'bytes per number must be 4, 2 or 1')
    ?? (x.d % x.heads === 0 ? null : `heads (${x.heads}) must divide d (${x.d}): each head gets d / heads dimensions`);
}

export function cost(x: CostInput): CostResult {
  const err = validate(x);
  if (err) throw new RangeError(err);
  const n = BigInt(x.n), d = BigInt(x.d), h = BigInt(x.heads), L = BigInt(x.layers), b = BigInt(x.bytes);
  const dh = d / h;
  const scoresPerHead = n * n * b;
  const tilePerHead = (BigInt(TILE_ROWS * TILE_KEYS) + BigInt(TILE_ROWS) * dh + BigInt(2 * TILE_ROWS)) * b;
  const qkvoPerLayer = 4n * n * d * b;
  const projFlopsPerLayer = 4n * 2n * n * d * d;
  const attnFlopsPerLayer = 2n * 2n * n * n * d;
  return {
    headDim: x.d / x.heads,
    scoresPerHead,
    scoresPerLayer: h * scoresPerHead,
    scoresAll: L * h * scoresPerHead,
    tilePerHead,
    tilePerLayer: h * tilePerHead,
    tileAll: L * h * tilePerHead,
    qkvoPerLayer,
    qkvoAll: L * qkvoPerLayer,
    materializedAll: L * (h * scoresPerHead + qkvoPerLayer),
    streamingAll: L * (h * tilePerHead + qkvoPerLayer),
    projFlopsPerLayer,
    attnFlopsPerLayer,
    projFlopsAll: L * projFlopsPerLayer,
    attnFlopsAll: L * attnFlopsPerLayer,
    crossoverN: 2 * x.d,
    attnOverProj: x.n / (2 * x.d),
    idealTensor: n * n * d * d * b,
    qkvWeights: 3n * d * d * b,
  };
}

/** Theoretical bytes of one n×n float32 matrix (what the measured curve compares against). */
export const squareBytes = (n: number, bytes = 4): number => n * n * bytes;

// ---- human-readable units ----

const SI = ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y', 'R', 'Q'];

/**
 * value rounded to `sig` significant digits, exactly (BigInt digits, round half up).
 * digits: the leading digits (fewer than sig only when the value has fewer), exp10: power of ten of the first.
 */
export function roundSig(value: bigint, sig = 3): { digits: string; exp10: number; exact: boolean } {
  if (value < 0n) throw new RangeError('roundSig: negative value');
  const s = value.toString();
  if (s.length <= sig) return { digits: s, exp10: s.length - 1, exact: true };
  let head = BigInt(s.slice(0, sig));
  const rest = s.slice(sig);
  if (rest.charCodeAt(0) >= 53 /* '5' */) head += 1n;
  let exp10 = s.length - 1;
  let digits = head.toString();
  if (digits.length > sig) { digits = digits.slice(0, sig); exp10 += 1; } // 999.5 → 1.00 × 10³
  return { digits, exp10, exact: /^0*$/.test(rest) };
}

/**
 * Decimal (SI) units, 3 significant digits: 4503599627370496 B → "≈ 4.50 PB"; exact values get no "≈".
 * Decimal like “Self-attention” (its 4.5 PB is 2^52 bytes / 10^15); formatBinary gives the KiB/MiB/… reading.
 */
export function formatSI(value: bigint, unit: string, kilo = 'K'): string {
  if (value < 1000n) return `${value} ${unit}`;
  const { digits, exp10, exact } = roundSig(value);
  const k = Math.floor(exp10 / 3);
  const approx = exact ? '' : '≈ ';
  if (k >= SI.length) return `${approx}${digits[0]}.${digits.slice(1)} × 10^${exp10} ${unit}`;
  const intLen = exp10 - 3 * k + 1; // 1, 2 or 3 digits before the point
  const mant = digits.length > intLen ? `${digits.slice(0, intLen)}.${digits.slice(intLen)}` : digits.padEnd(intLen, '0');
  const prefix = k === 1 ? kilo : SI[k];
  return `${approx}${mant} ${prefix}${unit}`;
}

export const formatBytes = (v: bigint): string => formatSI(v, 'B');
export const formatFlops = (v: bigint): string => formatSI(v, 'FLOP', 'k');

const IEC = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'];

/** Binary units (1 KiB = 1024 B), 3 significant digits: 2^52 B → "4.00 PiB", 67108864 B → "64.0 MiB". */
export function formatBinary(value: bigint): string {
  let k = 0;
  while (k < IEC.length - 1 && value >= 1024n ** BigInt(k + 1)) k += 1;
  if (k === 0) return `${value} B`;
  const x = Number(value) / 1024 ** k; // 3 digits of a float64 quotient: far inside its precision
  let s = x.toPrecision(3);
  if (s.includes('e')) s = String(Math.round(x)); // 1000 ≤ x < 1024 only
  const exact = BigInt(Math.round(Number(s) * 1000)) * 1024n ** BigInt(k) === value * 1000n;
  return `${exact ? '' : '≈ '}${s} ${IEC[k]}`;
}

/** Number versions for chart axes (ticks are powers of ten or two; exactness does not matter there). */
export function shortSI(v: number, unit: string): string {
  if (!(v > 0)) return `0 ${unit}`;
  const k = Math.max(0, Math.min(SI.length - 1, Math.floor(Math.log10(v) / 3 + 1e-9)));
  const x = v / 1000 ** k;
  const s = x >= 10 ? x.toFixed(0) : Number(x.toPrecision(2)).toString();
  return `${s} ${k === 1 && unit === 'FLOP' ? 'k' : SI[k]}${unit}`;
}

/** Presets for the calculator. “Self-attention” gives only n, d and 4 bytes; its heads and layers are our assumption. */
export interface CostPreset { id: string; label: string; input: CostInput; note: string }

export const COST_PRESETS: CostPreset[] = [
  {
    id: 'ideal',
    label: '“Self-attention”’s ideal tensor',
    input: { n: 8192, d: 4096, heads: 32, layers: 32, bytes: 4 },
    note: 'From “Self-attention”: n = 8k tokens, d = 4k, 4-byte numbers, so the ideal n × n × d × d tensor holds 8192 · 8192 · 4096 · 4096 ≈ 1.1 × 10¹⁵ numbers ≈ 4.5 PB. Heads (32) and layers (32) are not in the chapter: they are a typical shape of a model with 7 billion weights.',
  },
  {
    id: 'small',
    label: 'Small model (GPT-2 small)',
    input: { n: 1024, d: 768, heads: 12, layers: 12, bytes: 4 },
    note: 'GPT-2 small: 1024 tokens, d = 768, 12 heads, 12 layers, 4-byte numbers. Here n < 2d: the projections still cost more arithmetic than attention.',
  },
  {
    id: 'long',
    label: 'Long context (128k tokens)',
    input: { n: 131072, d: 4096, heads: 32, layers: 32, bytes: 2 },
    note: 'A 128k-token context on a 7-billion-weight shape, with 2-byte numbers (bf16): one head’s n × n matrix alone is 34 GB. This is why long-context engines stream.',
  },
  {
    id: 'page',
    label: 'This page’s largest measurement',
    input: { n: MAX_MATERIALIZED_N, d: CURVE_D, heads: 1, layers: 1, bytes: 4 },
    note: `The measured curve below at its largest materialized point: one head, n = ${MAX_MATERIALIZED_N}, d = ${CURVE_D}, 4-byte numbers: ${MAX_MATERIALIZED_N}² · 4 B = ${MAX_MATERIALIZED_MIB} MiB of scores.`,
  },
];
