// Token embeddings for the labs. Words from the words-pulling-words article's 2-D picture get hand-placed vectors on two axes,
// "fruitiness" (dimension 0) and "techiness" (dimension 1); every other word gets a deterministic seeded
// vector. In d_model > 2 the toy words keep their plane and are 0 on the extra dimensions.
import { gaussians, hashString } from './random';
import type { Overrides } from '../state/params';

/** The article's plane: fruits to the right, tech up, "apple" in between (it is both), furniture far from both. */
export const TOY_EMBEDDINGS: Readonly<Record<string, readonly [number, number]>> = {
  banana: [2.4, 0.2],
  pear: [2.2, 0.4],
  orange: [2.0, 0.5],
  fruit: [2.3, 0.0],
  apple: [1.4, 1.4],
  phone: [0.2, 2.4],
  laptop: [0.3, 2.3],
  computer: [0.1, 2.2],
  chair: [-1.2, -0.6],
  ate: [0.7, -0.3],
};

/** Spread of the random vectors: small next to the placed words, as in the article (function words barely pull). */
const SEEDED_STD = 0.5;

export type EmbeddingSource = 'toy' | 'seeded' | 'trained' | 'real';

export interface Embedded {
  /** n × dModel, row-major. */
  x: Float32Array;
  source: EmbeddingSource[];
  /** Which cells were edited by hand (row-major flags). */
  edited: boolean[];
}

export function wordVector(word: string, dModel: number, seed: number): number[] {
  // hasOwn: "constructor" or "__proto__" are words, not the table's prototype members.
  const toy = Object.hasOwn(TOY_EMBEDDINGS, word) ? TOY_EMBEDDINGS[word] : undefined;
  if (toy) return Array.from({ length: dModel }, (_, i) => (i < 2 ? toy[i] : 0));
  // The prefix does not depend on dModel, so growing d_model keeps the first coordinates.
  return gaussians(hashString(`${seed}:${word}`), dModel, SEEDED_STD);
}

/** Builds X for the tokens. Edits are per word ("apple.0"), so every occurrence of a word moves together. */
export function embed(words: string[], dModel: number, seed: number, edits: Overrides): Embedded {
  const x = new Float32Array(words.length * dModel);
  const edited: boolean[] = new Array(words.length * dModel).fill(false);
  words.forEach((w, r) => {
    const v = wordVector(w, dModel, seed);
    for (let c = 0; c < dModel; c++) {
      const e = edits.get(`${w}.${c}`);
      x[r * dModel + c] = e ?? v[c];
      edited[r * dModel + c] = e !== undefined;
    }
  });
  return { x, source: words.map((w) => (Object.hasOwn(TOY_EMBEDDINGS, w) ? 'toy' : 'seeded')), edited };
}
