// The attention lab's numbers, all from the engine: three matrix products project X into Q, K and V, and one
// attention call returns QKᵀ, the scaled and masked scores, the weights and the output. An edit that leaves X and
// the weights alone (the mask, the scale, the query) reuses the projections: one engine call.
import type { Engine } from '../engine';
import type { AppState } from '../state/app-state';
import { LIMITS } from '../state/params';
import { tokenize } from '../text/tokenize';
import { embed, type EmbeddingSource } from '../text/embeddings';
import { applyEdits, presetMatrix } from './weights';
import { trainedInput, trainedModel, type TrainedModel } from './trained';
import { realModel } from './real-model';
import { headSlice, realRun, type RealRun } from './real-head';
import type { Model } from 'attnlab';

/** On a real model's head: which one, and the engine's own weights for it (the page's are recomputed from q, k). */
export interface RealHeadInfo {
  model: Model;
  run: RealRun;
  layer: number;
  head: number;
  kvHead: number;
  /** The scale the model's attention used (the page's scale is this, or 1 with scaling off, ÷ τ). */
  modelScale: number;
  engineWeights: Float32Array;
}

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
  /** QKᵀ. */
  raw: Float32Array;
  /** scale · QKᵀ + M: −∞ where the causal mask hides a key. */
  scores: Float32Array;
  weights: Float32Array;
  output: Float32Array;
  /** Set on a real model's head: X and the W are then not tables (x, wq, wk, wv are empty). */
  real?: RealHeadInfo;
}

export interface Projections { q: Float32Array; k: Float32Array; v: Float32Array }

const same = (a: Float32Array, b: Float32Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

/** Q = X·W_Q, K = X·W_K, V = X·W_V: three engine matrix products (X is n × d, each W is d × its width). */
export function project(engine: Engine, x: Float32Array, n: number, d: number, wq: Float32Array, wk: Float32Array, wv: Float32Array): Projections {
  return {
    q: engine.matmul(x, wq, { m: n, k: d, n: wq.length / d }),
    k: engine.matmul(x, wk, { m: n, k: d, n: wk.length / d }),
    v: engine.matmul(x, wv, { m: n, k: d, n: wv.length / d }),
  };
}

// The last projections, with their inputs: the attention lab and the causal-mask figure share one sentence and
// one set of weights, and most edits (mask, scale, temperature, the query) do not change them.
let memo: { x: Float32Array; w: Float32Array[]; n: number; d: number; out: Projections } | undefined;

function projectMemo(engine: Engine, x: Float32Array, n: number, d: number, w: Float32Array[]): Projections {
  if (memo && memo.n === n && memo.d === d && same(memo.x, x) && memo.w.every((m, i) => same(m, w[i]))) return memo.out;
  const out = project(engine, x, n, d, w[0], w[1], w[2]);
  memo = { x, w, n, d, out };
  return out;
}

export function runPipeline(engine: Engine, s: AppState): Pipeline | undefined {
  const { words, truncated } = tokenize(s.text, LIMITS.tokens);
  const n = words.length;
  if (n === 0) return undefined;
  if (s.preset === 'real') return runReal(engine, s).pipeline;
  const model = s.preset === 'trained' ? trainedModel() : undefined;
  if (model) return runTrained(engine, s, model, words, truncated);
  const { dModel, dk, dv } = s;
  const emb = embed(words, dModel, s.embSeed, s.xEdits);
  const wq = applyEdits(presetMatrix(s.preset, 'q', dModel, dk, s.wSeed), dModel, dk, s.wqEdits);
  const wk = applyEdits(presetMatrix(s.preset, 'k', dModel, dk, s.wSeed), dModel, dk, s.wkEdits);
  const wv = applyEdits(presetMatrix(s.preset, 'v', dModel, dv, s.wSeed), dModel, dv, s.wvEdits);
  // The scale is an input to the engine (a number we choose), not a result.
  const scale = (s.scaled ? 1 / Math.sqrt(dk) : 1) / s.attnTemp;
  const { q, k, v } = projectMemo(engine, emb.x, n, dModel, [wq.m, wk.m, wv.m]);
  const r = engine.attention({
    q, k, v, nq: n, nk: n, dk, dv, causal: s.causal, scale,
    returnRawScores: true, returnScores: true, returnWeights: true,
  });
  return {
    words, truncated, n, dModel, dk, dv, scale,
    x: emb.x, xEdited: emb.edited, source: emb.source,
    wq: wq.m, wk: wk.m, wv: wv.m, wqEdited: wq.edited, wkEdited: wk.edited, wvEdited: wv.edited,
    q, k, v, raw: r.rawScores!, scores: r.scores!, weights: r.weights!, output: r.output,
  };
}

/** The real-model preset's state: the pipeline once the model and its forward are ready, else what to say meanwhile. */
export function runReal(engine: Engine, s: AppState): { pipeline?: Pipeline; message?: string } {
  const m = realModel()?.model;
  if (!m) return { message: 'Loading the model…' };
  const run = realRun(m, s.text);
  if (!run) return { message: tokenize(s.text, LIMITS.tokens).words.length ? 'Running the model on your text…' : undefined };
  if ('error' in run) return { message: `The model could not run on this text: ${run.error}` };
  const { layer, head } = realChoice(s, m);
  const h = headSlice(run, layer, head);
  const n = run.n, dk = m.config.headDim;
  const scale = (s.scaled ? h.scale : 1) / s.attnTemp;
  // A sliding window (a query sees its last W positions) hides keys further back, as the model's attention does.
  const w = m.config.slidingWindow;
  let mask: Float32Array | null = null;
  if (w > 0 && n > w) {
    mask = new Float32Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j <= i - w; j++) mask[i * n + j] = Number.NEGATIVE_INFINITY;
  }
  const r = engine.attention({ q: h.q, k: h.k, v: h.v, nq: n, nk: n, dk, dv: dk, causal: s.causal, scale, mask, returnRawScores: true, returnScores: true, returnWeights: true });
  const none = new Float32Array(0);
  return {
    pipeline: {
      words: run.tokens, truncated: run.truncated, n, dModel: m.config.dModel, dk, dv: dk, scale,
      x: none, xEdited: [], source: run.tokens.map(() => 'real'),
      wq: none, wk: none, wv: none, wqEdited: [], wkEdited: [], wvEdited: [],
      q: h.q, k: h.k, v: h.v, raw: r.rawScores!, scores: r.scores!, weights: r.weights!, output: r.output,
      real: { model: m, run, layer, head, kvHead: h.kvHead, modelScale: h.scale, engineWeights: h.weights },
    },
  };
}

/** The real model's layer and head the state names (its last where the state names one past it). */
export function realChoice(s: AppState, m: Model): { layer: number; head: number } {
  return { layer: Math.min(s.realLayer, m.config.layers - 1), head: Math.min(s.realHead, m.config.heads - 1) };
}

/** The chosen head of a trained model's layer 1, for the chosen head (its last when the state names one past it). */
export function trainedHead(s: AppState, m: TrainedModel): number {
  return Math.min(s.trainedHead, m.heads - 1);
}

/**
 * The pipeline on trained weights: X is the model's layer-1 input for these words (trained.ts), W_Q, W_K, W_V the
 * chosen head's slices; d_model and d_k = d_v are the model's. Hand edits of X and the weights still apply.
 */
function runTrained(engine: Engine, s: AppState, m: TrainedModel, all: string[], truncated: boolean): Pipeline {
  const t = trainedInput(m, all);
  const { n, words } = t;
  const d = m.dModel, dk = m.dk, h = trainedHead(s, m);
  const x = Float32Array.from(t.x);
  const xEdited: boolean[] = new Array(n * d).fill(false);
  words.forEach((w, r) => {
    for (let c = 0; c < d; c++) {
      const e = s.xEdits.get(`${w}.${c}`);
      if (e !== undefined) { x[r * d + c] = e; xEdited[r * d + c] = true; }
    }
  });
  const wq = applyEdits(m.wq[h], d, dk, s.wqEdits), wk = applyEdits(m.wk[h], d, dk, s.wkEdits), wv = applyEdits(m.wv[h], d, dk, s.wvEdits);
  const scale = (s.scaled ? 1 / Math.sqrt(dk) : 1) / s.attnTemp;
  const { q, k, v } = projectMemo(engine, x, n, d, [wq.m, wk.m, wv.m]);
  const r = engine.attention({ q, k, v, nq: n, nk: n, dk, dv: dk, causal: s.causal, scale, returnRawScores: true, returnScores: true, returnWeights: true });
  return {
    words, truncated: truncated || t.truncated, n, dModel: d, dk, dv: dk, scale,
    x, xEdited, source: words.map(() => 'trained'),
    wq: wq.m, wk: wk.m, wv: wv.m, wqEdited: wq.edited, wkEdited: wk.edited, wvEdited: wv.edited,
    q, k, v, raw: r.rawScores!, scores: r.scores!, weights: r.weights!, output: r.output,
  };
}

/**
 * The weighted value vectors aᵢⱼ·vⱼ of query row i, one per key j: the engine's product diag(aᵢ)·V, whose row j is
 * row j of V times the weight aᵢⱼ. Their sum is row i of the output.
 */
export function weightedValues(engine: Engine, p: Pipeline, row: number): Float32Array[] {
  const diag = new Float32Array(p.n * p.n);
  for (let j = 0; j < p.n; j++) diag[j * p.n + j] = p.weights[row * p.n + j];
  const parts = engine.matmul(diag, p.v, { m: p.n, k: p.n, n: p.dv });
  return Array.from({ length: p.n }, (_, j) => parts.subarray(j * p.dv, (j + 1) * p.dv));
}
