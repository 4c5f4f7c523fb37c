// The learn lab's training session: one Web Worker (web/src/workers/train-worker.ts) that holds the engine and the
// model and trains it on the package's workers (`threads` of them, started inside it), and what the page keeps of
// the current model's run (the loss of each batch, each measurement, the text task's samples). A new model (reset)
// gets a new id; the worker names the model every message is about, so a message about an older one is dropped.
import TrainWorker from '../../workers/train-worker.ts?worker';
import type { TrainMessage, TrainRequest } from '../../workers/train-worker';
import type { ModelChoice, TaskName } from '../../model/train-tasks';
import { wasmFiles } from '../../engine-files';
import type { Eval } from './findings';

/** The model a reset makes: the task, its settings, (words) the example to measure on, (text) the text and its tokenizer's URL. */
export interface ModelSpec { task: TaskName; model: ModelChoice; probe?: Int32Array; text?: string; tokenizer?: string }

export interface SessionEvents {
  /** A message about the current model (or an error). */
  message(msg: TrainMessage): void;
  /** The worker itself failed. */
  workerError(message: string): void;
}

export class TrainingSession {
  running = false;
  /** The current model is made (its first message arrived). */
  ready = false;
  trainLoss: [number, number][] = [];
  evalPoints: { step: number; loss: number; first?: number; repeat?: number }[] = [];
  latest: Eval | undefined;
  progress: Extract<TrainMessage, { type: 'progress' }> | undefined;
  info: Extract<TrainMessage, { type: 'ready' }> | undefined;
  /** The text task's samples, oldest first. */
  samples: Extract<TrainMessage, { type: 'sample' }>[] = [];
  /** The step at which an induction head was first named. */
  firstInductionStep: number | undefined;
  private worker: Worker | undefined;
  private modelId = 0;

  /** threads: the package's workers the training worker starts (init({ threads })). */
  constructor(private events: SessionEvents, private threads: number) {}

  /** Whether the worker was started. */
  get started(): boolean {
    return this.worker !== undefined;
  }

  /** Whether the worker is starting a model (started, its model not ready yet). */
  get busy(): boolean {
    return this.worker !== undefined && !this.ready;
  }

  post(m: TrainRequest): void {
    this.worker?.postMessage(m);
  }

  /** Starts the worker if it is not running, with a new model `spec`. */
  start(spec: ModelSpec): void {
    if (this.worker) return;
    this.worker = new TrainWorker();
    this.worker.addEventListener('message', (e: MessageEvent<TrainMessage & { model: number }>) => {
      if (e.data.model === this.modelId || e.data.type === 'error') this.receive(e.data);
    });
    this.worker.addEventListener('error', (e) => this.events.workerError(e.message));
    this.reset(spec);
  }

  /** A new, untrained model (the worker must be started). */
  reset(spec: ModelSpec): void {
    this.running = false;
    this.ready = false;
    this.trainLoss = []; this.evalPoints = []; this.latest = undefined; this.progress = undefined; this.firstInductionStep = undefined;
    this.samples = []; this.info = undefined;
    this.modelId += 1;
    this.post({ type: 'reset', id: this.modelId, task: spec.task, model: spec.model, probe: spec.probe, wasm: wasmFiles, threads: this.threads, text: spec.text, tokenizer: spec.tokenizer });
  }

  private receive(msg: TrainMessage): void {
    switch (msg.type) {
      case 'ready':
        this.info = msg; this.ready = true;
        break;
      case 'progress':
        this.progress = msg;
        if (Number.isFinite(msg.loss)) this.trainLoss.push([msg.step, msg.loss]);
        break;
      case 'eval':
        this.latest = msg;
        if (!this.evalPoints.length || this.evalPoints[this.evalPoints.length - 1].step !== msg.step) {
          this.evalPoints.push({ step: msg.step, loss: msg.loss, first: msg.firstLoss, repeat: msg.repeatLoss });
        }
        break;
      case 'sample':
        this.samples.push(msg);
        break;
      case 'error':
        this.running = false;
        // A model that could not be made (its text refused) leaves no model to train; the next reset makes one.
        break;
    }
    this.events.message(msg);
  }
}
