// The intuition labs' URL state (web/URL_STATE.md): the soft key-value lookup (kq, kk, kv, kw), words pulling words
// (ps, pw, pe, pi; the pulled word is shared with the transformed spaces), the asymmetric pull (as, aq, ak) and
// the transformed spaces (tq, tk, tv).
import { WORD_KEY, bool, fieldsOf, int, numList, overrides, tokenIndex, writeBool, writeList, writeOverrides, type Overrides, type Slice } from '../../state/params';

export const INTUITION_LIMITS = {
  kvAbs: 100, // |query, key or value entry| in the lookup figure; |matrix entry| in the asymmetric and spaces figures
  pullIters: 20,
} as const;

/** Words pulling words' sentences: the URL's `ps` is an index into this list. */
export const PULL_SENTENCES = ['I ate a banana and an apple', 'I got a new phone from apple', 'banana pear phone apple'];

/** The lookup figure: query vector, keys apple/banana/chair (row-major 3 × 2), their values. */
export interface KvLookupState {
  kvQuery: number[];
  kvKeys: number[];
  kvValues: number[];
  /** The word looked up exactly in the dictionary, for contrast. */
  kvWord: string;
}

const kvField = fieldsOf<KvLookupState>();
const vector = (length: number) => (s: string) => numList(s, length, length, INTUITION_LIMITS.kvAbs);
export const kvLookupSlice: Slice<KvLookupState> = {
  defaults: () => ({ kvQuery: [1, 0.2], kvKeys: [1.2, 0.4, 0.9, 0.3, -1, 0.5], kvValues: [10, 5, 2], kvWord: 'fruit' }),
  fields: [
    kvField('kq', 'kvQuery', vector(2), writeList),
    kvField('kk', 'kvKeys', vector(6), writeList),
    kvField('kv', 'kvValues', vector(3), writeList),
    kvField('kw', 'kvWord', (s) => (/^[\p{L}\p{N}' -]{0,24}$/u.test(s) ? s : undefined), (v) => v),
  ],
};

export interface PullState {
  pullSentence: number;
  pullWord: number;
  pullEdits: Overrides;
  pullIters: number;
}

const pullField = fieldsOf<PullState>();
export const pullSlice: Slice<PullState> = {
  defaults: () => ({ pullSentence: 0, pullWord: 6, pullEdits: new Map(), pullIters: 0 }),
  fields: [
    pullField('ps', 'pullSentence', (s) => int(s, 0, PULL_SENTENCES.length - 1), String),
    pullField('pw', 'pullWord', tokenIndex, String),
    pullField('pe', 'pullEdits', (s) => {
      const o = overrides(s, WORD_KEY);
      return o && [...o.values()].every((v) => v >= -1.5 && v <= 3) ? o : undefined; // inside the drawn plane
    }, writeOverrides),
    pullField('pi', 'pullIters', (s) => int(s, 0, INTUITION_LIMITS.pullIters), String),
  ],
};

/** The asymmetric pull (bride/ring): separate W_Q, W_K (2 × 2, row-major) or one shared space. */
export interface AsymState {
  asymSeparate: boolean;
  asymWq: number[];
  asymWk: number[];
}

const asymField = fieldsOf<AsymState>();
export const asymSlice: Slice<AsymState> = {
  defaults: () => ({ asymSeparate: true, asymWq: [1, 0, 0, 1], asymWk: [0.5, 0.87, -0.87, 0.5] }),
  fields: [
    asymField('as', 'asymSeparate', bool, writeBool),
    asymField('aq', 'asymWq', vector(4), writeList),
    asymField('ak', 'asymWk', vector(4), writeList),
  ],
};

/** The transformed spaces: 2 × 2 W_Q, W_K, W_V (row-major). */
export interface SpacesState {
  spWq: number[];
  spWk: number[];
  spWv: number[];
}

const spacesField = fieldsOf<SpacesState>();
export const spacesSlice: Slice<SpacesState> = {
  defaults: () => ({ spWq: [1, 0, 0, 1], spWk: [1, 0, 0, 1], spWv: [1.5, 0, 0, 0.6] }),
  fields: [
    spacesField('tq', 'spWq', vector(4), writeList),
    spacesField('tk', 'spWk', vector(4), writeList),
    spacesField('tv', 'spWv', vector(4), writeList),
  ],
};
