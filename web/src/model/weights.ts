// Projection matrices W_Q, W_K, W_V (d_model × d_k or d_v, row-major) from a preset plus hand edits.
// These are inputs to the engine, like the embeddings: generating them is not the math under study.
import type { Overrides } from '../state/params';
import { gaussians, hashString } from '../text/random';

/** The attention lab's weight choices, in the order it offers them: the URL's `wp` accepts exactly these ids. */
export const WEIGHT_PRESETS = ['id', 'rnd', 'trained', 'asym', 'real'] as const;
export type WeightPreset = (typeof WEIGHT_PRESETS)[number];

/** Each choice's label and help, in WEIGHT_PRESETS order (checked at load). */
export const PRESETS: readonly { id: WeightPreset; label: string; help: string }[] = [
  { id: 'id', label: 'identity',
    help: 'W_Q = W_K = W_V = I, so Q = K = V = X (its first d_k columns): attention is softmax(XXᵀ/√d)·X, as in “Yet another set of notes on self-attention” and the words-pulling-words article.' },
  { id: 'rnd', label: 'random weights',
    help: 'Random weights with standard deviation 1/√d_model, like a freshly initialised layer before any training.' },
  { id: 'trained', label: 'trained',
    help: 'Layer 1 of a small GPT the engine trained on the words corpus of “Watch attention learn”: X is each word’s learned embedding plus its position’s, layer-normed; W_Q, W_K, W_V are the chosen head’s slices of the layer’s projection. With the causal mask on, the weights are exactly the model’s (d_model and d_k are the model’s).' },
  { id: 'asym', label: 'asymmetric pair',
    help: 'W_Q = I, W_K turns the key space by 45°: the pull of A on B no longer equals the pull of B on A (the bride and ring of the words-pulling-words article).' },
  { id: 'real', label: 'real model',
    help: 'A real language model’s head, on your text cut into its tokens: Q, K and V are the queries, keys and values that head computed (the model itself, through the engine), and every step below is redone from them. Choose the layer and head below.' },
];
if (PRESETS.map((p) => p.id).join() !== WEIGHT_PRESETS.join()) throw new Error('weights: PRESETS and WEIGHT_PRESETS differ');

export type Which = 'q' | 'k' | 'v';

/** Rectangular identity: row i has a 1 in column i when i < cols. */
function identity(rows: number, cols: number): Float32Array {
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < Math.min(rows, cols); i++) m[i * cols + i] = 1;
  return m;
}

/** Identity with each pair of dimensions (0,1), (2,3), … turned by `deg` degrees, then cut to `cols`. */
function rotation(rows: number, cols: number, deg: number): Float32Array {
  const c = Math.round(Math.cos((deg * Math.PI) / 180) * 100) / 100;
  const s = Math.round(Math.sin((deg * Math.PI) / 180) * 100) / 100;
  const m = identity(rows, cols);
  for (let i = 0; i + 1 < rows; i += 2) {
    const set = (r: number, col: number, v: number) => { if (col < cols) m[r * cols + col] = v; };
    set(i, i, c); set(i, i + 1, s);
    set(i + 1, i, -s); set(i + 1, i + 1, c);
  }
  return m;
}

export function presetMatrix(preset: WeightPreset, which: Which, dModel: number, cols: number, seed: number): Float32Array {
  if (preset === 'rnd') {
    return Float32Array.from(gaussians(hashString(`w${which}:${seed}`), dModel * cols, 1 / Math.sqrt(dModel)));
  }
  if (preset === 'asym' && which === 'k') return rotation(dModel, cols, 45);
  return identity(dModel, cols);
}

/** Applies "row.col" edits that fall inside the matrix; returns the matrix and which cells were edited. */
export function applyEdits(m: Float32Array, rows: number, cols: number, edits: Overrides): { m: Float32Array; edited: boolean[] } {
  const out = Float32Array.from(m);
  const edited: boolean[] = new Array(rows * cols).fill(false);
  for (const [key, v] of edits) {
    const [r, c] = key.split('.').map(Number);
    if (r < rows && c < cols) {
      out[r * cols + c] = v;
      edited[r * cols + c] = true;
    }
  }
  return { m: out, edited };
}

/** Seeded weights for the multi-head lab: W_Q, W_K, W_V are d_model × heads·d_k, W_O is heads·d_v × d_model. */
export function seededMatrix(tag: string, rows: number, cols: number, seed: number): Float32Array {
  return Float32Array.from(gaussians(hashString(`${tag}:${seed}`), rows * cols, 1 / Math.sqrt(rows)));
}
