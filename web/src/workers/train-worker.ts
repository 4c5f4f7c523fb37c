// Trains the learn lab's small GPT off the main thread, so the page keeps scrolling and answering clicks.
// Each step is GPT.trainStepAsync on the package's workers (init({ threads })), started from here: workers inside
// this worker. The model, its batches and its measurements stay on this worker, so the page's main thread does none
// of a step's serial part (the steps' slices put together, the checks); the workers share memory where the page is
// cross-origin isolated, and exchange messages where it is not (the offline copy opened from disk).
// It runs steps in slices of about 40 ms, posts the loss after each slice, and every ~300 ms measures the model on a
// fixed held-out batch (loss, each head's score for the patterns the page names) and on the example the page draws.
// The text task also samples from the model every SAMPLE.every steps (model/text-task.ts).
import type { GPT, Lab, Tokenizer } from 'attnlab';
import { HELD_OUT_SEQUENCES, batchMaker, inductionExample, taskSpec, type Batch, type ModelChoice, type TaskName } from '../model/train-tasks';
import { EXAMPLE_TOKENS, SAMPLE, TEXT_WEIGHT_DECAY, cutVocabulary, textBatches } from '../model/text-task';
import { runContext, type ContextMessage, type ContextRequest } from './context-run';
import { initFrom, type WasmFiles } from '../wasm-files';

export type TrainRequest =
  /**
   * wasm: the page's module files (the first reset loads the engine from them, with `threads` workers).
   * text, tokenizer: the text task's text and the URL of the tokenizer.json that cuts it.
   */
  | { type: 'reset'; id: number; task: TaskName; model: ModelChoice; probe?: Int32Array; wasm: WasmFiles; threads: number; text?: string; tokenizer?: string }
  | { type: 'run' }
  | { type: 'pause' }
  | { type: 'step'; count: number }
  | { type: 'lr'; lr: number }
  | { type: 'probe'; ids: Int32Array }
  | { type: 'export' };

/** Per layer, per head: the mean weight a pattern's key gets (previous token; for induction also the token after the previous occurrence). */
export interface HeadScores { previous: number[][]; induction?: number[][] }

/** The drawn example: its ids, one [heads, t, t] array per layer, the top next tokens; the text task labels them. */
export interface Probe { ids: Int32Array; attention: Float32Array[]; next: { id: number; p: number }[]; labels?: string[]; nextLabels?: string[] }

export type TrainMessage =
  | {
    type: 'ready'; task: TaskName; parameterCount: number; memoryBytes: number; backend: string; vocabSize: number; context: number;
    /** The package's workers (1: this worker alone), how they exchange, and why there are none where they could not start. */
    threads: number; exchange: 'shared' | 'message' | 'none'; threadsError?: string;
    /** The text task: the text's tokens, and the tokenizer's vocabulary. */
    textTokens?: number; tokenizerVocab?: number;
  }
  | {
    type: 'progress'; step: number; loss: number; stepsPerSecond: number; running: boolean;
    /** The last step's wall time (ms) and the workers that computed a part of its batch (threadStats' parts). */
    stepMs: number; stepThreads: number;
    /** Since the engine started: steps run on the workers (lab.trainTimes().steps), parts the workers computed (threadStats().workerParts). */
    workerSteps: number; workerParts: number;
  }
  | { type: 'sample'; step: number; prompt: string; text: string }
  | {
    type: 'eval'; step: number;
    /** Held-out loss: words, every position; induction, the first copy (unpredictable) and the repeat separately. */
    loss: number; firstLoss?: number; repeatLoss?: number;
    scores: HeadScores;
    /** The drawn example: one [heads, t, t] array per layer, and the model's next-token probabilities after its last token. */
    probe: Probe;
  }
  | { type: 'weights'; bytes: Uint8Array; step: number; task: TaskName }
  | { type: 'error'; message: string };

/** Every message names the model it is about (the id its reset gave), so the page can drop a stale one. */
const post = (m: TrainMessage, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage({ ...m, model: modelId }, transfer);
let modelId = 0;

let lab: Lab | undefined;
let gpt: GPT | undefined;
let task: TaskName = 'induction';
let lr = 1e-3;
let next: () => Batch = () => { throw new Error('no model'); };
let held: Batch | undefined;
let probeIds: Int32Array = inductionExample().ids;
let running = false;
let lastLoss = NaN;
let lastEval = 0;
/** (time, step) samples of the last ~2 s of training, for steps/s. */
let rate: [number, number][] = [];
let generation = 0;
let lastStep = { ms: NaN, threads: 0 };
let threadsError: string | undefined;
let exchange: 'shared' | 'message' | 'none' = 'none';
/** The text task: its tokenizer (kept across resets), each local id's tokenizer id, the sample's prompt. */
let tokenizer: { url: string; t: Tokenizer } | undefined;
let textVocab: Int32Array | undefined;
let samplePrompt: Int32Array | undefined;

/** The engine, with `threads` workers of the package where they start (else this worker alone, and why). */
async function startEngine(wasm: WasmFiles, threads: number): Promise<Lab> {
  if (threads >= 2) {
    // Shared memory exists only where the page is cross-origin isolated (its workers inherit that): the served page.
    exchange = self.crossOriginIsolated && typeof SharedArrayBuffer === 'function' ? 'shared' : 'message';
    try {
      return await initFrom(wasm, { gpt: true, threads, exchange });
    } catch (err) {
      threadsError = err instanceof Error ? err.message : String(err);
    }
  }
  exchange = 'none';
  return initFrom(wasm, { gpt: true });
}

async function stepOnce(): Promise<void> {
  const model = gpt!, b = next();
  const parts0 = lab!.threadStats().workerParts, t0 = performance.now();
  const loss = await model.trainStepAsync(b.tokens, b.targets, { lr, weightDecay: task === 'text' ? TEXT_WEIGHT_DECAY : 0, gradClip: task === 'induction' ? 0 : 1 });
  if (model !== gpt) return; // a reset came while the step ran
  lastLoss = loss;
  lastStep = { ms: performance.now() - t0, threads: lab!.threads > 1 ? lab!.threadStats().workerParts - parts0 : 1 };
  // The text task's samples are taken right after steps 100, 200, …, so each is labelled with the model it came
  // from (sampling at the end of a slice would take it a few steps later).
  if (task === 'text' && model.steps % SAMPLE.every === 0) sample();
}

function stepsPerSecond(): number {
  if (rate.length < 2) return 0;
  const [t0, s0] = rate[0], [t1, s1] = rate[rate.length - 1];
  return t1 > t0 ? ((s1 - s0) * 1000) / (t1 - t0) : 0;
}

function progress(): void {
  const now = performance.now();
  rate.push([now, gpt!.steps]);
  while (rate.length > 2 && now - rate[0][0] > 2000) rate.shift();
  post({
    type: 'progress', step: gpt!.steps, loss: lastLoss, stepsPerSecond: running ? stepsPerSecond() : 0, running,
    stepMs: lastStep.ms, stepThreads: lastStep.threads, workerSteps: lab!.trainTimes().steps, workerParts: lab!.threadStats().workerParts,
  });
}

/** The text task: the model continues the start of the text; its tokens decoded to text. */
function sample(): void {
  const g = gpt!, vocab = textVocab!, prompt = samplePrompt!;
  const out = g.generate(prompt, { maxTokens: SAMPLE.maxTokens, temperature: SAMPLE.temperature, topK: SAMPLE.topK, seed: 7 + g.steps });
  const text = (ids: Int32Array) => tokenizer!.t.decode(Array.from(ids, (l) => vocab[l]));
  post({ type: 'sample', step: g.steps, prompt: text(prompt), text: text(out) });
}

/** Per-position cross-entropy of `targets` under `logits` [rows × V] (log-softmax by the engine); NaN where the target is −1. */
function losses(logits: Float32Array, targets: Int32Array, V: number): Float64Array {
  const logp = lab!.softmax(logits, { cols: V, log: true });
  const out = new Float64Array(targets.length);
  for (let i = 0; i < targets.length; i++) out[i] = targets[i] < 0 ? NaN : -logp[i * V + targets[i]];
  return out;
}

function evaluate(): void {
  const spec = taskSpec(task);
  const T = spec.context, V = gpt!.config.vocabSize, B = held!.tokens.length / T;
  const { layers, heads } = gpt!.config;
  const f = gpt!.forward(held!.tokens, { batch: B, returnAttention: true });
  const l = losses(f.logits, held!.targets, V);
  const at = (layer: number, b: number, h: number, i: number, j: number) => f.attention![layer][((b * heads + h) * T + i) * T + j];
  const previous = Array.from({ length: layers }, () => new Array<number>(heads).fill(0));
  let loss = 0, firstLoss: number | undefined, repeatLoss: number | undefined, induction: number[][] | undefined;
  if (task === 'induction') {
    induction = Array.from({ length: layers }, () => new Array<number>(heads).fill(0));
    let sf = 0, nf = 0, sr = 0, nr = 0, np = 0, ni = 0;
    for (let b = 0; b < B; b++) {
      const L = held!.lengths![b];
      for (let t = 0; t + 1 < 2 * L; t++) {
        const x = l[b * T + t];
        if (t + 1 < L) { sf += x; nf++; }
        if (t >= L) { sr += x; nr++; }
      }
      // Previous-token pattern: query t's weight on t − 1, over the two copies. Induction pattern: a query in the
      // repeat (t ≥ L, holding block[t − L]) on the token after that token's first occurrence, at t − L + 1.
      for (let t = 1; t < 2 * L; t++, np++) for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) previous[y][h] += at(y, b, h, t, t - 1);
      for (let t = L; t + 1 < 2 * L; t++, ni++) for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) induction[y][h] += at(y, b, h, t, t - L + 1);
    }
    firstLoss = sf / nf; repeatLoss = sr / nr; loss = (sf + sr) / (nf + nr);
    for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) { previous[y][h] /= np; induction[y][h] /= ni; }
  } else {
    let s = 0;
    for (const x of l) s += x;
    loss = s / l.length;
    let np = 0;
    for (let b = 0; b < B; b++) for (let t = 1; t < T; t++, np++) for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) previous[y][h] += at(y, b, h, t, t - 1);
    for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) previous[y][h] /= np;
  }
  post({ type: 'eval', step: gpt!.steps, loss, firstLoss, repeatLoss, scores: { previous, induction }, probe: probe() });
  lastEval = performance.now();
}

function probe(): Probe {
  const V = gpt!.config.vocabSize;
  const ids = probeIds.length ? probeIds : Int32Array.of(0);
  const f = gpt!.forward(ids, { returnAttention: true });
  const last = lab!.softmax(f.logits.subarray((ids.length - 1) * V, ids.length * V));
  const next = Array.from(last, (p, id) => ({ id, p })).sort((a, b) => b.p - a.p).slice(0, 3);
  if (task !== 'text') return { ids: ids.slice(), attention: f.attention!, next };
  // Tokens as the tokenizer cut them, a line break drawn as ↵ (a label of its own, not a break in the page's text).
  const label = (ids: number[]) => tokenizer!.t.tokens(ids.map((l) => textVocab![l])).map((t) => t.replace(/\n/g, '↵'));
  return { ids: ids.slice(), attention: f.attention!, next, labels: label(Array.from(ids)), nextLabels: label(next.map((n) => n.id)) };
}

/** The newest loop's ticket: a pause and a run that both come while a step is in flight must not leave the old loop
 * going beside the new one (their steps would alternate, each loop posting its own progress). */
let loopTicket = 0;

/** Trains while running: slices of about 40 ms, each followed by the progress and (every ~300 ms) a measurement. */
async function loop(gen: number, ticket: number): Promise<void> {
  const current = () => running && gen === generation && ticket === loopTicket && gpt !== undefined;
  while (current()) {
    try {
      const t0 = performance.now();
      do await stepOnce(); while (current() && performance.now() - t0 < 40);
      if (gen !== generation || ticket !== loopTicket) return; // replaced, or superseded by a newer loop (it reports)
      progress();
      // A pause that came during the slice's last step measured the model one step short of where it stopped:
      // measure the model it left, so the step shown and the losses and heads shown are of the same model.
      if (!running || performance.now() - lastEval > 300) evaluate();
    } catch (err) {
      if (gen !== generation) return; // the model was replaced during its step
      running = false;
      post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      return;
    }
    // A macrotask between slices (the steps' own awaits let pause, step and probe messages in too).
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** The text task's tokens: the text cut by the tokenizer at `url`, renumbered to the tokens it uses. */
async function textTokens(text: string, url: string): Promise<Int32Array> {
  if (tokenizer?.url !== url) {
    const bytes = await (await fetch(url)).arrayBuffer();
    tokenizer?.t.dispose();
    tokenizer = { url, t: await lab!.loadTokenizer({ 'tokenizer.json': bytes }) };
  }
  const ids = tokenizer.t.encode(text);
  const { local, vocab } = cutVocabulary(ids);
  textVocab = vocab;
  return local;
}

async function handle(m: TrainRequest): Promise<void> {
  switch (m.type) {
    case 'reset': {
      lab ??= await startEngine(m.wasm, m.threads);
      running = false;
      generation += 1;
      gpt?.dispose();
      gpt = undefined;
      task = m.task;
      modelId = m.id;
      lr = m.model.lr;
      const spec = { ...taskSpec(task) };
      let text: Int32Array | undefined, batches: ReturnType<typeof textBatches> | undefined;
      if (task === 'text') {
        text = await textTokens(m.text ?? '', m.tokenizer ?? '');
        batches = textBatches(text, 42 + m.model.seed, spec.batch, spec.context, HELD_OUT_SEQUENCES); // refuses a text too short
        spec.vocabSize = textVocab!.length;
      }
      gpt = lab.createGPT({
        vocabSize: spec.vocabSize, context: spec.context, dModel: m.model.dModel, heads: m.model.heads,
        layers: m.model.layers, mlp: spec.mlp, position: spec.position, bias: spec.bias, seed: m.model.seed,
      });
      if (text && batches) {
        next = batches.next;
        held = batches.heldOut;
        samplePrompt = text.slice(0, SAMPLE.promptTokens);
      } else {
        next = batchMaker(task as Exclude<TaskName, 'text'>, 42 + m.model.seed);
        held = batchMaker(task as Exclude<TaskName, 'text'>, 99991, HELD_OUT_SEQUENCES)();
      }
      rate = [];
      lastLoss = NaN;
      lastStep = { ms: NaN, threads: 0 };
      probeIds = text ? text.slice(0, EXAMPLE_TOKENS) : m.probe?.length ? m.probe.slice(0, spec.context) : task === 'induction' ? inductionExample().ids : Int32Array.of(0);
      post({
        type: 'ready', task, parameterCount: gpt.parameterCount, memoryBytes: gpt.memoryBytes, backend: lab.backend, vocabSize: spec.vocabSize, context: spec.context,
        threads: lab.threads, exchange, threadsError,
        textTokens: text?.length, tokenizerVocab: text ? tokenizer!.t.vocabSize : undefined,
      });
      if (task === 'text') sample(); // the untrained model's, at step 0
      progress();
      evaluate();
      return;
    }
    case 'run':
      if (!gpt || running) return;
      running = true;
      rate = [];
      loop(generation, ++loopTicket);
      return;
    case 'pause':
      running = false;
      if (gpt) { progress(); evaluate(); }
      return;
    case 'step':
      if (!gpt) return;
      for (let i = 0; i < m.count; i++) await stepOnce();
      progress();
      evaluate();
      return;
    case 'lr':
      lr = m.lr;
      return;
    case 'probe':
      if (task === 'text') return; // the text task's example is the text's start
      probeIds = m.ids.slice(0, taskSpec(task).context);
      if (gpt) evaluate();
      return;
    case 'export':
      if (gpt) { const bytes = gpt.toSafetensors(); post({ type: 'weights', bytes, step: gpt.steps, task }, [bytes.buffer]); }
      return;
  }
}

// One message at a time, in order (a reset awaits the engine's first load).
let queue: Promise<void> = Promise.resolve();
self.addEventListener('message', (e: MessageEvent<TrainRequest | ContextRequest>) => {
  const m = e.data;
  if (m.type === 'context') {
    const raw = (x: ContextMessage) => (self as unknown as Worker).postMessage(x);
    runContext(m, raw).catch((err: unknown) => raw({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
    return;
  }
  queue = queue.then(() => handle(m)).catch((err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
});
