// "The context is full", measured (run by the training worker, train-worker.ts, on a message of its own: one worker
// script, so the offline copy carries the package's code once for both labs): two small GPTs (learned positions, rotary positions) train on the words corpus
// with their targets cut at `trained` positions, then their loss is measured at every position up to `context`.
// Positions past `trained` get no gradient: learned position vectors there stay as initialised.
import { initFrom, type WasmFiles } from '../wasm-files';
import { batchMaker, wordsCorpus } from '../model/train-tasks';

/** wasm: the page's module files. */
/** positions: the models to train, in order (the page runs one worker per model, so that they train side by side). */
export interface ContextRequest { type: 'context'; trained: number; context: number; steps: number; positions?: ('learned' | 'rope')[]; wasm: WasmFiles }
export type ContextMessage =
  | { type: 'progress'; position: 'learned' | 'rope'; step: number; steps: number }
  | { type: 'result'; position: 'learned' | 'rope'; loss: number[] }
  | { type: 'done' }
  | { type: 'error'; message: string };

export async function runContext(req: ContextRequest, post: (m: ContextMessage) => void): Promise<void> {
  const lab = await initFrom(req.wasm, { gpt: true });
  const V = wordsCorpus().vocab.length, T = req.context;
  for (const position of req.positions ?? (['learned', 'rope'] as const)) {
    const gpt = lab.createGPT({ vocabSize: V, context: T, dModel: 32, heads: 2, layers: 1, mlp: true, position, bias: false, seed: 5 });
    const next = batchMaker('words', 77, 16, T);
    for (let s = 0; s < req.steps; s++) {
      const b = next();
      for (let i = 0; i < b.targets.length; i++) if (i % T >= req.trained) b.targets[i] = -1; // never trained past `trained`
      gpt.trainStep(b.tokens, b.targets, { lr: 3e-3, weightDecay: 0, gradClip: 1 });
      if ((s + 1) % 50 === 0) post({ type: 'progress', position, step: s + 1, steps: req.steps });
    }
    // Loss at each position over 64 held-out windows (log-softmax by the engine).
    const held = batchMaker('words', 4242, 64, T)();
    const f = gpt.forward(held.tokens, { batch: 64 });
    const logp = lab.softmax(f.logits, { cols: V, log: true });
    const loss = new Array<number>(T).fill(0);
    for (let b = 0; b < 64; b++) for (let t = 0; t < T; t++) loss[t] -= logp[(b * T + t) * V + held.targets[b * T + t]] / 64;
    gpt.dispose();
    post({ type: 'result', position, loss });
  }
  post({ type: 'done' });
}
