// The explorer's whole state: plain data, small enough to live in the URL (see web/URL_STATE.md).

/** The attention lab's weight choices (labels and help in model/weights.ts); a list that can grow. */
export const WEIGHT_PRESETS = ['id', 'rnd', 'asym', 'trained'] as const;
export type WeightPreset = (typeof WEIGHT_PRESETS)[number];

/** Sparse edits of a matrix: "row.col" -> value. X edits are keyed by word instead of row ("word.col"). */
export type Overrides = Map<string, number>;

export interface AppState {
  // softmax lab
  logits: number[];
  smTemp: number;
  // attention lab
  text: string;
  dModel: number;
  embSeed: number;
  xEdits: Overrides;
  preset: WeightPreset;
  wSeed: number;
  /** With the trained preset: which of the trained model's layer-1 heads (0-based). */
  trainedHead: number;
  wqEdits: Overrides;
  wkEdits: Overrides;
  wvEdits: Overrides;
  dk: number;
  dv: number;
  causal: boolean;
  scaled: boolean;
  attnTemp: number;
  query: number;
  // multi-head lab
  heads: number;
  headDim: number;
  mhSeed: number;
  mhCausal: boolean;
  /** The multi-head lab on the trained model's layer 1 (the default: its heads differ) instead of random weights. */
  mhTrained: boolean;
  woEdits: Overrides;
  // soft key-value lookup: query vector, keys apple/banana/chair (row-major 3 × 2), their values
  kvQuery: number[];
  kvKeys: number[];
  kvValues: number[];
  /** The word looked up exactly in the dictionary, for contrast. */
  kvWord: string;
  // words pulling words
  pullSentence: number;
  pullWord: number;
  pullEdits: Overrides;
  pullIters: number;
  // why √d_k
  rootDk: number;
  rootSeed: number;
  // numerical stability
  stabLogits: number[];
  // causal mask figure and per-cell trace: the traced weight cell (query row, key column)
  traceRow: number;
  traceCol: number;
  // asymmetric pull (bride/ring): separate W_Q, W_K or one shared space
  asymSeparate: boolean;
  asymWq: number[];
  asymWk: number[];
  // transformed spaces: 2 × 2 W_Q, W_K, W_V (row-major) and the pulled word
  spWq: number[];
  spWk: number[];
  spWv: number[];
  // the cost calculator: tokens, model width, heads, layers, bytes per number
  costN: number;
  costD: number;
  costHeads: number;
  costLayers: number;
  costBytes: number;
  // the learn lab ("Watch attention learn"): the task on screen and its model's settings; null = the task's own
  // default (model/train-tasks.ts), so a link names only what was changed
  learnTask: LearnTask;
  learnLayers: number | null;
  learnHeads: number | null;
  learnDModel: number | null;
  learnLr: number | null;
  /** The words task's example sentence. */
  learnSentence: string;
}

/** The learn lab's tasks (model/train-tasks.ts names the same two). */
export const LEARN_TASKS = ['induction', 'words'] as const;
export type LearnTask = (typeof LEARN_TASKS)[number];

export const LIMITS = {
  logits: { min: 2, max: 12, abs: 1000 },
  temp: { min: 0.01, max: 100 },
  textChars: 240,
  tokens: 32,
  dModel: [2, 3, 4, 6, 8, 12, 16],
  dProj: { min: 1, max: 16 },
  heads: { min: 1, max: 8 },
  headDim: { min: 1, max: 8 },
  cell: 1000, // |edited matrix value|
  edits: 512, // edited cells per matrix
  kvAbs: 100, // |query, key or value entry| in the lookup figure
  pullIters: 20,
  rootDk: 512,
  stab: { min: 2, max: 8, abs: 1000 },
  cost: {
    n: { min: 1, max: 100_000_000 },
    d: { min: 1, max: 1_048_576 },
    heads: { min: 1, max: 4096 },
    layers: { min: 1, max: 10_000 },
    bytes: [4, 2, 1],
  },
  learn: {
    layers: { min: 1, max: 4 },
    heads: { min: 1, max: 8 },
    dModel: [16, 32, 48, 64, 96, 128],
    lr: { min: 1e-4, max: 3e-2 },
  },
} as const;

export function defaultState(): AppState {
  return {
    logits: [4, -1, 2.1],
    smTemp: 1,
    text: 'I ate a banana and an apple',
    dModel: 2,
    embSeed: 1,
    xEdits: new Map(),
    preset: 'id',
    wSeed: 7,
    trainedHead: 1,
    wqEdits: new Map(),
    wkEdits: new Map(),
    wvEdits: new Map(),
    dk: 2,
    dv: 2,
    causal: false,
    scaled: true,
    attnTemp: 1,
    query: 6,
    heads: 2,
    headDim: 2,
    mhSeed: 3,
    mhCausal: true,
    mhTrained: true,
    woEdits: new Map(),
    kvQuery: [1, 0.2],
    kvKeys: [1.2, 0.4, 0.9, 0.3, -1, 0.5],
    kvValues: [10, 5, 2],
    kvWord: 'fruit',
    pullSentence: 0,
    pullWord: 6,
    pullEdits: new Map(),
    pullIters: 0,
    rootDk: 64,
    rootSeed: 1,
    stabLogits: [90, 100, 110],
    traceRow: 6,
    traceCol: 3,
    asymSeparate: true,
    asymWq: [1, 0, 0, 1],
    asymWk: [0.5, 0.87, -0.87, 0.5],
    spWq: [1, 0, 0, 1],
    spWk: [1, 0, 0, 1],
    spWv: [1.5, 0, 0, 0.6],
    // “Self-attention”'s example (n = 8k, d = 4k, fp32) with a typical 7B shape
    costN: 8192,
    costD: 4096,
    costHeads: 32,
    costLayers: 32,
    costBytes: 4,
    learnTask: 'induction',
    learnLayers: null,
    learnHeads: null,
    learnDModel: null,
    learnLr: null,
    learnSentence: 'the capital of Spain is',
  };
}
