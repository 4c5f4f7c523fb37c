// Everything that decides the shipped model's bits: the tokenizer's size, the model's shape and seed, the batches,
// the schedule, the optimizer and the number of workers. Change any of it and the committed folder no longer
// reproduces (train-shipped-model.mjs --check says so).
import { fileURLToPath } from 'node:url';

export const NAME = 'kjv-fortunes-gpt';
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** Outside web/public: the page imports the files (served as assets, inlined into the offline copy). */
export const FOLDER = `${REPO}web/models/${NAME}`;

/**
 * 4,096 tokens: 256 bytes, 3,839 merges, <|endoftext|>. Measured on the held-out text: 2.89 bytes per token at
 * 1,024, 3.38 at 2,048, 3.74 at 4,096, 4.01 at 8,192. At 4,096 nearly every common word is one token, so the
 * attention drawn between tokens is attention between words, and the tied embedding (4,096 × dModel) stays a
 * minority of the weights; doubling again saves 7% of the tokens for twice the embedding.
 */
export const VOCAB_SIZE = 4096;
export const EOT = VOCAB_SIZE - 1;

/**
 * GPT-2's architecture (nanoGPT's): learned positions, biases, tied embeddings, exact GELU. 1,334,016 parameters,
 * 2.7 MB in float16. Chosen by held-out loss per CPU second, in short runs of the same schedule shape (warm-up, then
 * a cosine over the run): d_model 128 (4 heads) was ahead of d_model 192 (6 heads, 2.6 M parameters, 5.2 MB) at
 * every equal CPU time measured (5.08 against 5.30 nats per token after 75 cpu-s, 4.657 against 4.866 after 225),
 * while at equal tokens d_model 192 led by 0.16 → 0.04 nats. In an hour d_model 128 sees twice the text, and it is
 * half the download.
 */
export const MODEL = { vocabSize: VOCAB_SIZE, context: 128, dModel: 128, heads: 4, layers: 4, mlp: true, position: 'learned', tied: true, bias: true, seed: 1611 };

/**
 * The batches, schedule and AdamW settings. threads is part of the recipe: trainStepAsync cuts each batch into one
 * run of whole sequences per worker and sums the parts' gradients in worker order, so the float32 sums (and so the
 * bits) depend on the number of workers, not on the machine.
 */
export const TRAIN = {
  threads: 2,
  batch: 16,          // sequences of MODEL.context tokens per step, at offsets drawn from the training stream
  batchSeed: 1769,
  steps: 8000,       // 16.4 M tokens, 13 passes over the training text
  warmup: 200,        // linear warm-up to lr, then a cosine to minLr at the last step
  lr: 2e-3,
  minLr: 2e-4,
  weightDecay: 0.1,   // matrices and embeddings only (the engine's grouping, nanoGPT's)
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  gradClip: 1,
  logEvery: 50,       // batch loss recorded
  evalEvery: 500,     // held-out loss on EVAL_WINDOWS windows recorded, and the weights' hash
};
/** Steps retrained by --check (npm test): the first steps' losses and weights must equal the record. */
export const CHECK_STEPS = 3;
export const EVAL_WINDOWS = 16;

/** The model card's samples: seeded prompts, sampled with GPT.generate. */
export const SAMPLING = { temperature: 0.8, topK: 40, maxTokens: 48, seed: 7 };
export const PROMPTS = ['In the beginning', 'And the LORD said unto Moses,', 'A wise man', 'The old man walked to the river', 'Q: What is', 'Love is'];

/** The learning rate of step s (0-based). */
export function lrAt(s, t = TRAIN) {
  if (s < t.warmup) return (t.lr * (s + 1)) / t.warmup;
  const p = (s - t.warmup) / Math.max(1, t.steps - 1 - t.warmup);
  return t.minLr + 0.5 * (t.lr - t.minLr) * (1 + Math.cos(Math.PI * Math.min(1, p)));
}

/** A small seeded generator (mulberry32): uniform floats in [0, 1), the same sequence on every machine. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
