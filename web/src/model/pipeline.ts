// The attention lab's numbers, all from the engine. One call to multiHeadAttention with a single head
// projects X into Q, K, V (the engine does the matrix products); attention() then returns QKᵀ, the scaled
// and masked logits and the weights; a second, unmasked call gives the "scaled, before the mask" step.
import type { Engine } from '../engine';
import type { AppState } from '../state/app-state';
import { LIMITS } from '../state/app-state';
import { tokenize } from '../text/tokenize';
import { embed, type EmbeddingSource } from '../text/embeddings';
import { applyEdits, presetMatrix } from './weights';

export interface Pipeline {
  words: string[];
  truncated: boolean;
  n: number;
  dModel: number;
  dk: number;
  dv: number;
  /** The scale the engine was given: (scaled ? 1/√d_k : 1) / temperature. */
  scale: number;
  x: Float32Array;
  xEdited: boolean[];
  source: EmbeddingSource[];
  wq: Float32Array; wk: Float32Array; wv: Float32Array;
  wqEdited: boolean[]; wkEdited: boolean[]; wvEdited: boolean[];
  q: Float32Array; k: Float32Array; v: Float32Array;
  raw: Float32Array; // QKᵀ
  scaledScores: Float32Array; // scale · QKᵀ (no mask)
  masked: Float32Array; // + causal mask (−∞ above the diagonal)
  weights: Float32Array;
  output: Float32Array;
}

function identity(rows: number, cols: number): Float32Array {
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < Math.min(rows, cols); i++) m[i * cols + i] = 1;
  return m;
}

export function runPipeline(engine: Engine, s: AppState): Pipeline | undefined {
  const { words, truncated } = tokenize(s.text, LIMITS.tokens);
  const n = words.length;
  if (n === 0) return undefined;
  const { dModel, dk, dv } = s;
  const emb = embed(words, dModel, s.embSeed, s.xEdits);
  const wq = applyEdits(presetMatrix(s.preset, 'q', dModel, dk, s.wSeed), dModel, dk, s.wqEdits);
  const wk = applyEdits(presetMatrix(s.preset, 'k', dModel, dk, s.wSeed), dModel, dk, s.wkEdits);
  const wv = applyEdits(presetMatrix(s.preset, 'v', dModel, dv, s.wSeed), dModel, dv, s.wvEdits);
  // The scale is an input to the engine (a number we choose), not a result.
  const scale = (s.scaled ? 1 / Math.sqrt(dk) : 1) / s.attnTemp;

  // Projections by the engine: one head, W_O = I so the head's inputs come back untouched.
  const proj = engine.multiHeadAttention({
    x: emb.x, n, dModel, heads: 1, kvHeads: 1, dk, dv,
    wq: wq.m, wk: wk.m, wv: wv.m, wo: identity(dv, dModel),
    causal: false, scale, returnIntermediates: true,
  });
  const head = proj.heads?.[0];
  if (!head) throw new Error('multiHeadAttention returned no intermediates');
  const { q, k, v } = head;

  const full = engine.attention({
    q, k, v, nq: n, nk: n, dk, dv, causal: s.causal, scale,
    returnRawScores: true, returnScores: true, returnWeights: true,
  });
  const unmasked = s.causal
    ? engine.attention({ q, k, v, nq: n, nk: n, dk, dv, causal: false, scale, returnScores: true }).scores!
    : full.scores!;

  return {
    words, truncated, n, dModel, dk, dv, scale,
    x: emb.x, xEdited: emb.edited, source: emb.source,
    wq: wq.m, wk: wk.m, wv: wv.m, wqEdited: wq.edited, wkEdited: wk.edited, wvEdited: wv.edited,
    q, k, v,
    raw: full.rawScores!, scaledScores: unmasked, masked: full.scores!, weights: full.weights!, output: full.output,
  };
}

/**
 * The weighted value vectors a_ij·v_j of one query row, from the engine: attention with V zeroed except
 * row j returns exactly a_ij·v_j in row i (same Q, K, mask and scale, so the same weights).
 */
export function weightedValues(engine: Engine, p: Pipeline, s: AppState, row: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let j = 0; j < p.n; j++) {
    const vj = new Float32Array(p.n * p.dv);
    vj.set(p.v.subarray(j * p.dv, (j + 1) * p.dv), j * p.dv);
    const r = engine.attention({ q: p.q, k: p.k, v: vj, nq: p.n, nk: p.n, dk: p.dk, dv: p.dv, causal: s.causal, scale: p.scale });
    out.push(r.output.slice(row * p.dv, (row + 1) * p.dv));
  }
  return out;
}
