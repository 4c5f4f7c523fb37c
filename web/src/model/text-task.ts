// The learn lab's third task: a small GPT trains on text the learner brings (or the sample of the shipped model's
// text), tokenized by the shipped model's byte-level BPE tokenizer. The model's vocabulary is cut to the tokens the
// text uses: a few thousand characters use a few hundred to a couple of thousand of the tokenizer's 4,096, and every
// other row of the embedding and column of the logits would only be trained towards zero probability. Shared by the
// lab (which checks the text before it is sent) and the training worker (which tokenizes it and makes the batches).
import { mulberry32 } from '../text/random';
import type { Batch } from './train-tasks';

/** Characters the text must have: fewer give the model too few windows to learn from (and to hold out). */
export const TEXT_MIN_CHARS = 1000;
/** Characters the text may have: the tokenizer and the batches cope with far more, but a tab's minute or two of training sees only about this much. */
export const TEXT_MAX_CHARS = 200_000;
/** Tokens of the shown sample's prompt and of each generated sample. */
export const SAMPLE = { promptTokens: 6, maxTokens: 40, temperature: 0.8, topK: 20, every: 100 } as const;
/** AdamW's weight decay for the text task (the page's other tasks train without). */
export const TEXT_WEIGHT_DECAY = 0.1;
/** Tokens of the example the heads are drawn on: the start of the text. */
export const EXAMPLE_TOKENS = 16;

/** Why `text` cannot be trained on, or '' when it can (the page says this before anything is sent). */
export function textProblem(text: string): string {
  const n = text.trim().length;
  if (n === 0) return 'Paste some text first (or use the sample of the shipped model’s text).';
  if (n < TEXT_MIN_CHARS) return `The text is too short: ${n.toLocaleString('en')} characters, and a model needs at least ${TEXT_MIN_CHARS.toLocaleString('en')} to learn anything from it.`;
  if (text.length > TEXT_MAX_CHARS) return `The text is too long: ${text.length.toLocaleString('en')} characters, at most ${TEXT_MAX_CHARS.toLocaleString('en')} (a tab trains on far less in a few minutes; paste a part of it).`;
  return '';
}

/** The text's token ids renumbered 0 … V − 1 by the tokenizer's id (`vocab[local]` is the tokenizer's id). */
export function cutVocabulary(ids: Int32Array): { local: Int32Array; vocab: Int32Array } {
  const vocab = Int32Array.from(new Set(ids)).sort();
  const index = new Map<number, number>();
  vocab.forEach((g, i) => index.set(g, i));
  return { local: Int32Array.from(ids, (g) => index.get(g)!), vocab };
}

/** Held-out windows at most (the lab's held-out batch); fewer where the text is short (each needs 3 more windows of training text). */
export const HELD_OUT_WINDOWS = 16;

/**
 * Batches of `batch` windows of T tokens (and their next tokens) at offsets drawn by a seeded generator, and the
 * held-out windows, which no training window overlaps: up to `windows` of them spread evenly over the text, so that
 * they sample every part of it (a text that changes as it goes, Bible chapters then fortunes, is measured on both).
 */
export function textBatches(ids: Int32Array, seed: number, batch: number, T: number, windows = HELD_OUT_WINDOWS): { next: () => Batch; heldOut: Batch } {
  const W = T + 1, n = Math.min(windows, Math.floor(ids.length / (4 * W)));
  if (n < 1) throw new Error(`the text is too short: ${ids.length} tokens, at least ${4 * W} are needed`);
  const stride = Math.floor(ids.length / n);
  const held = Array.from({ length: n }, (_, k) => k * stride + Math.floor((stride - W) / 2)); // each in the middle of its stretch
  // Every start whose window [s, s + T] misses every held-out window [h, h + T].
  const starts: number[] = [];
  for (let s = 0, k = 0; s + W <= ids.length; s++) {
    while (k < n && held[k] + W <= s) k++;
    if (k < n && s + W > held[k]) { s = held[k] + W - 1; continue; }
    starts.push(s);
  }
  const window = (start: number, tokens: Int32Array, targets: Int32Array, b: number) => {
    tokens.set(ids.subarray(start, start + T), b * T);
    targets.set(ids.subarray(start + 1, start + W), b * T);
  };
  const rand = mulberry32(seed);
  const heldOut = { tokens: new Int32Array(n * T), targets: new Int32Array(n * T) };
  held.forEach((h, b) => window(h, heldOut.tokens, heldOut.targets, b));
  return {
    next() {
      const tokens = new Int32Array(batch * T), targets = new Int32Array(batch * T);
      for (let b = 0; b < batch; b++) window(starts[Math.floor(rand() * starts.length)], tokens, targets, b);
      return { tokens, targets };
    },
    heldOut,
  };
}
