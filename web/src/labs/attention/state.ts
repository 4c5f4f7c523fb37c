// The attention labs' URL state (web/URL_STATE.md): the attention lab's text, embeddings, weights and options
// (t … qi; the text is shared with the multi-head lab), the multi-head lab's (h … wo), why √d_k's (rk, rs) and the
// causal-mask trace's cell (ci, cj).
import { WEIGHT_PRESETS, type WeightPreset } from '../../model/weights';
import {
  CELL_KEY, LIMITS, WORD_KEY, bool, fieldsOf, fmt, int, num, overrides, seed, text, tokenIndex, writeBool, writeOverrides,
  type Overrides, type Slice,
} from '../../state/params';

export const ATTENTION_LIMITS = {
  dModel: [2, 3, 4, 6, 8, 12, 16],
  dProj: { min: 1, max: 16 },
  heads: { min: 1, max: 8 },
  headDim: { min: 1, max: 8 },
  rootDk: 512,
  /** A real model's layer or head index in a link (past the model's own: its last). */
  realIndex: 255,
} as const;

export interface AttentionState {
  text: string;
  dModel: number;
  embSeed: number;
  xEdits: Overrides;
  preset: WeightPreset;
  wSeed: number;
  /** With the trained preset: which of the trained model's layer-1 heads (0-based). */
  trainedHead: number;
  /** With the real-model preset (and the multi-head lab on it): the layer and head shown, from 0. */
  realLayer: number;
  realHead: number;
  wqEdits: Overrides;
  wkEdits: Overrides;
  wvEdits: Overrides;
  dk: number;
  dv: number;
  causal: boolean;
  scaled: boolean;
  attnTemp: number;
  query: number;
}

const attentionField = fieldsOf<AttentionState>();
const dProj = (s: string) => int(s, ATTENTION_LIMITS.dProj.min, ATTENTION_LIMITS.dProj.max);
export const attentionSlice: Slice<AttentionState> = {
  defaults: () => ({
    text: 'I ate a banana and an apple',
    dModel: 2,
    embSeed: 1,
    xEdits: new Map(),
    preset: 'id',
    wSeed: 7,
    trainedHead: 1,
    realLayer: 0,
    realHead: 0,
    wqEdits: new Map(),
    wkEdits: new Map(),
    wvEdits: new Map(),
    dk: 2,
    dv: 2,
    causal: false,
    scaled: true,
    attnTemp: 1,
    query: 6,
  }),
  fields: [
    attentionField('t', 'text', text, (v) => v),
    attentionField('dm', 'dModel', (s) => {
      const v = int(s, 1, 64);
      return v !== undefined && (ATTENTION_LIMITS.dModel as readonly number[]).includes(v) ? v : undefined;
    }, String),
    attentionField('es', 'embSeed', seed, String),
    attentionField('xe', 'xEdits', (s) => overrides(s, WORD_KEY), writeOverrides),
    attentionField('wp', 'preset', (s) => ((WEIGHT_PRESETS as readonly string[]).includes(s) ? (s as WeightPreset) : undefined), (v) => v),
    attentionField('ws', 'wSeed', seed, String),
    attentionField('th', 'trainedHead', (s) => int(s, 0, ATTENTION_LIMITS.heads.max - 1), String),
    attentionField('rl', 'realLayer', (s) => int(s, 0, ATTENTION_LIMITS.realIndex), String),
    attentionField('rh', 'realHead', (s) => int(s, 0, ATTENTION_LIMITS.realIndex), String),
    attentionField('wq', 'wqEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
    attentionField('wk', 'wkEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
    attentionField('wv', 'wvEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
    attentionField('dk', 'dk', dProj, String),
    attentionField('dv', 'dv', dProj, String),
    attentionField('c', 'causal', bool, writeBool),
    attentionField('sc', 'scaled', bool, writeBool),
    attentionField('tau', 'attnTemp', (s) => num(s, LIMITS.temp.min, LIMITS.temp.max), fmt),
    attentionField('qi', 'query', tokenIndex, String),
  ],
};

export interface MultiheadState {
  heads: number;
  headDim: number;
  mhSeed: number;
  mhCausal: boolean;
  /** The multi-head lab on the trained model's layer 1 (the default: its heads differ) instead of random weights. */
  mhTrained: boolean;
  /** The multi-head lab on the real model's layer (`realLayer`): every head of it. Takes precedence over mhTrained. */
  mhReal: boolean;
  woEdits: Overrides;
}

/** The multi-head lab's parameters of its random weights: without `mt` they mean mt=0 (web/URL_STATE.md). */
const RANDOM_MH = ['h', 'hd', 'ms', 'wo'];

const multiheadField = fieldsOf<MultiheadState>();
export const multiheadSlice: Slice<MultiheadState> = {
  defaults: () => ({ heads: 2, headDim: 2, mhSeed: 3, mhCausal: true, mhTrained: true, mhReal: false, woEdits: new Map() }),
  fields: [
    multiheadField('h', 'heads', (s) => int(s, ATTENTION_LIMITS.heads.min, ATTENTION_LIMITS.heads.max), String),
    multiheadField('hd', 'headDim', (s) => int(s, ATTENTION_LIMITS.headDim.min, ATTENTION_LIMITS.headDim.max), String),
    multiheadField('ms', 'mhSeed', seed, String),
    multiheadField('mc', 'mhCausal', bool, writeBool),
    multiheadField('mt', 'mhTrained', bool, writeBool),
    multiheadField('mr', 'mhReal', bool, writeBool),
    multiheadField('wo', 'woEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
  ],
  // The lab once opened on random weights without the causal mask: a link that sets its random-weight parameters
  // without `mt` was made then, and meant random weights (and no mask unless `mc` says so).
  afterParse(state, given, rejected) {
    if (!given.has('mt') && RANDOM_MH.some((p) => given.has(p) && !rejected.includes(p))) {
      state.mhTrained = false;
      if (!given.has('mc')) state.mhCausal = false;
    }
  },
  // So that the rule above never misreads a new link, `mt` at its default is written next to any of them.
  afterWrite(params) {
    if (RANDOM_MH.some((p) => params.has(p)) && !params.has('mt')) params.set('mt', '1');
  },
};

export interface SqrtDkState {
  rootDk: number;
  rootSeed: number;
}

const sqrtDkField = fieldsOf<SqrtDkState>();
export const sqrtDkSlice: Slice<SqrtDkState> = {
  defaults: () => ({ rootDk: 64, rootSeed: 1 }),
  fields: [
    sqrtDkField('rk', 'rootDk', (s) => int(s, 1, ATTENTION_LIMITS.rootDk), String),
    sqrtDkField('rs', 'rootSeed', seed, String),
  ],
};

/** The causal-mask figure's traced weight cell (query row, key column). */
export interface CausalState {
  traceRow: number;
  traceCol: number;
}

const causalField = fieldsOf<CausalState>();
export const causalSlice: Slice<CausalState> = {
  defaults: () => ({ traceRow: 6, traceCol: 3 }),
  fields: [
    causalField('ci', 'traceRow', tokenIndex, String),
    causalField('cj', 'traceCol', tokenIndex, String),
  ],
};
