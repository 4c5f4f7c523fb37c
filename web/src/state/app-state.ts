// The explorer's whole state: plain data, small enough to live in the URL (see web/URL_STATE.md).

export type WeightPreset = 'id' | 'rnd' | 'asym';

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
  woEdits: Overrides;
}

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
    mhCausal: false,
    woEdits: new Map(),
  };
}
