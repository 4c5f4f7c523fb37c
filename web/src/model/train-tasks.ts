// The learn lab's two training tasks: what a batch is, the model each starts from, and the example the page
// draws. Shared by the training worker (which makes the batches) and the lab (which labels the heatmaps).
import { mulberry32 } from '../text/random';
import { makeCorpus, type Corpus } from '../text/corpus';

/** induction and words are the page's own; text is the learner's (model/text-task.ts). */
export type TaskName = 'induction' | 'words' | 'text';

export interface ModelChoice {
  layers: number;
  heads: number;
  dModel: number;
  lr: number;
  seed: number;
}

export interface TaskSpec {
  vocabSize: number;
  context: number;
  batch: number;
  mlp: boolean;
  position: 'learned' | 'rope';
  /** Biases in the projections. The words model has none, so its layer 1 is exactly X·W_Q, X·W_K, X·W_V (the labs' form). */
  bias: boolean;
  defaults: ModelChoice;
}

/** Sequences in the held-out batch the training worker measures each head on (and the lab says so). */
export const HELD_OUT_SEQUENCES = 16;

/** Induction: random blocks of 2…32 tokens out of 64 repeated once, the rest padding whose targets are ignored. */
export const INDUCTION = { vocab: 64, context: 64, batch: 32, minBlock: 2, maxBlock: 32 } as const;

export const TASKS: Record<TaskName, TaskSpec> = {
  // 2 layers, attention only, rotary positions, one head per layer: the setting in which the previous-token
  // head and the induction head form cleanly (the engine's own native test trains the same model).
  induction: {
    vocabSize: INDUCTION.vocab, context: INDUCTION.context, batch: INDUCTION.batch, mlp: false, position: 'rope', bias: true,
    defaults: { layers: 2, heads: 1, dModel: 64, lr: 1e-3, seed: 3 },
  },
  words: {
    vocabSize: 0, context: 24, batch: 16, mlp: true, position: 'learned', bias: false,
    defaults: { layers: 2, heads: 4, dModel: 48, lr: 3e-3, seed: 1 },
  },
  // The learner's text: its vocabulary is known once the worker has tokenized it (the tokens the text uses). A few
  // thousand tokens are memorised within a hundred steps at the words task's 3e-3 (the held-out loss turns up at
  // step 75 on the sample); 1e-3 with weight decay 0.1 (TEXT_WEIGHT_DECAY) keeps it falling for longer.
  text: {
    vocabSize: 0, context: 64, batch: 16, mlp: true, position: 'learned', bias: false,
    defaults: { layers: 2, heads: 4, dModel: 64, lr: 1e-3, seed: 1 },
  },
};

let corpus: Corpus | undefined;
/** The words corpus, made once (3000 sentences from the grammar in text/corpus.ts). */
export function wordsCorpus(): Corpus {
  corpus ??= makeCorpus();
  return corpus;
}

export function taskSpec(task: TaskName): TaskSpec {
  return task === 'words' ? { ...TASKS.words, vocabSize: wordsCorpus().vocab.length } : TASKS[task];
}

export interface Batch {
  tokens: Int32Array;
  targets: Int32Array;
  /** Induction: each sequence's block length L (tokens 0…L−1 repeated at L…2L−1). */
  lengths?: number[];
}

/** A batch source with its own seeded generator: the same seed gives the same batches in the same order. */
export function batchMaker(task: Exclude<TaskName, 'text'>, seed: number, batch = taskSpec(task).batch, T = taskSpec(task).context): () => Batch {
  const rand = mulberry32(seed);
  if (task === 'induction') {
    const { vocab, minBlock, maxBlock } = INDUCTION;
    return () => {
      const tokens = new Int32Array(batch * T), targets = new Int32Array(batch * T), lengths: number[] = [];
      for (let b = 0; b < batch; b++) {
        const L = minBlock + Math.floor(rand() * (maxBlock - minBlock + 1));
        lengths.push(L);
        const row = tokens.subarray(b * T, (b + 1) * T);
        for (let t = 0; t < T; t++) row[t] = Math.floor(rand() * vocab);
        for (let t = 0; t < L; t++) row[L + t] = row[t];
        for (let t = 0; t < T; t++) targets[b * T + t] = t + 1 < 2 * L ? row[t + 1] : -1;
      }
      return { tokens, targets, lengths };
    };
  }
  const ids = wordsCorpus().ids;
  return () => {
    const tokens = new Int32Array(batch * T), targets = new Int32Array(batch * T);
    for (let b = 0; b < batch; b++) {
      const start = Math.floor(rand() * (ids.length - T - 1));
      tokens.set(ids.subarray(start, start + T), b * T);
      targets.set(ids.subarray(start + 1, start + T + 1), b * T);
    }
    return { tokens, targets };
  };
}

/** The induction example the page draws: a block of `L` distinct random tokens and its repeat. */
export function inductionExample(L = 12, seed = 2024): { ids: Int32Array; labels: string[] } {
  const rand = mulberry32(seed);
  // Distinct tokens, so that every token of the repeat has exactly one earlier occurrence to find.
  const block: number[] = [];
  while (block.length < L) { const t = Math.floor(rand() * INDUCTION.vocab); if (!block.includes(t)) block.push(t); }
  const ids = Int32Array.from([...block, ...block]);
  return { ids, labels: Array.from(ids, (t) => String(t)) };
}
