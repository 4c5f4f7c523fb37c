// The learn lab's controls: the task, the model's size and learning rate, the training buttons and the numbers of
// the current run. They only show and report; the lab (learn-lab.ts) decides what a choice does.
import { el } from '../../ui/dom';
import { field, logSlider, select } from '../../ui/controls';
import type { ModelChoice, TaskName } from '../../model/train-tasks';
import { LEARN_LIMITS } from './state';

export interface ControlEvents {
  task(name: TaskName): void;
  size(change: Partial<ModelChoice>): void;
  lr(lr: number): void;
  train(): void;
  pause(): void;
  step(): void;
  reset(): void;
}

const TASK_LABELS: Record<TaskName, string> = { induction: 'Induction heads: copying a repeat', words: 'Words in context', text: 'Your own text' };
const range = ({ min, max }: { min: number; max: number }) => Array.from({ length: max - min + 1 }, (_, i) => min + i);
const opts = (xs: readonly number[]) => xs.map((x) => ({ value: String(x), label: String(x) }));

export class LearnControls {
  readonly root: HTMLElement;
  /** The task's description (the lab fills it). */
  readonly taskText = el('div', { class: 'learn-task-text' });
  readonly status = el('p', { class: 'learn-status', role: 'status', 'aria-live': 'polite' });
  /** The run's numbers: each a <dd> (data-metric) and the row around it. */
  readonly metrics;
  private taskButtons: Record<TaskName, HTMLButtonElement>;
  private layers: HTMLSelectElement;
  private heads: HTMLSelectElement;
  private dModel: HTMLSelectElement;
  private lrSlider: ReturnType<typeof logSlider>;
  private sizeError = el('p', { class: 'warn-text learn-size-error', role: 'status' });
  private trainBtn: HTMLButtonElement;
  private pauseBtn: HTMLButtonElement;
  private stepBtn: HTMLButtonElement;
  private resetBtn: HTMLButtonElement;

  constructor(task: TaskName, model: ModelChoice, on: ControlEvents) {
    const taskGroup = el('div', { class: 'button-group', role: 'group', 'aria-label': 'Task' });
    const taskBtn = (name: TaskName) => {
      const b = el('button', { type: 'button', class: 'chip', 'data-control': `task-${name}`, 'aria-pressed': String(name === task), text: TASK_LABELS[name] });
      b.addEventListener('click', () => on.task(name));
      taskGroup.appendChild(b);
      return b;
    };
    this.taskButtons = { induction: taskBtn('induction'), words: taskBtn('words'), text: taskBtn('text') };

    this.layers = select(opts(range(LEARN_LIMITS.layers)), String(model.layers), (v) => on.size({ layers: Number(v) }), 'learn-layers');
    this.heads = select(opts(range(LEARN_LIMITS.heads)), String(model.heads), (v) => on.size({ heads: Number(v) }), 'learn-heads');
    this.dModel = select(opts(LEARN_LIMITS.dModel), String(model.dModel), (v) => on.size({ dModel: Number(v) }), 'learn-dmodel');
    this.lrSlider = logSlider(LEARN_LIMITS.lr.min, LEARN_LIMITS.lr.max, model.lr, (v) => on.lr(v), 'learn-lr', 'Learning rate');

    const button = (label: string, name: string, onClick: () => void, title?: string) => {
      const b = el('button', { type: 'button', class: 'chip', 'data-control': name, text: label, title });
      b.addEventListener('click', onClick);
      return b;
    };
    this.trainBtn = button('Train', 'learn-train', () => on.train());
    this.trainBtn.classList.add('learn-train');
    this.pauseBtn = button('Pause', 'learn-pause', () => on.pause());
    this.stepBtn = button('Step', 'learn-step', () => on.step(), 'One training step (one batch), then stop');
    this.resetBtn = button('Reset', 'learn-reset', () => on.reset());

    const metric = (name: string, label: string) => {
      const dd = el('dd', { 'data-metric': name, text: '–' });
      return { root: el('div', { class: 'learn-metric' }, el('dt', { text: label }), dd), dd };
    };
    const m = this.metrics = {
      step: metric('step', 'step'), loss: metric('loss', 'loss (this batch)'), rate: metric('steps-per-second', 'steps / s'),
      first: metric('first-loss', 'first copy'), repeat: metric('repeat-loss', 'repeated half'), held: metric('held-out-loss', 'held-out loss'),
      params: metric('parameters', 'parameters'),
      threads: metric('threads', 'threads'), stepTime: metric('step-time', 'last step'),
    };

    this.root = el('div', { class: 'controls' },
      el('fieldset', { class: 'control-group wide' }, el('legend', { text: 'Task' }), taskGroup, this.taskText),
      el('fieldset', { class: 'control-group' }, el('legend', { text: 'Model' }),
        el('div', { class: 'learn-size' }, field('Layers', this.layers), field('Heads per layer', this.heads), field('d_model', this.dModel)),
        this.sizeError, this.lrSlider.root,
        el('p', { class: 'help', text: 'Changing the size starts a new model; the learning rate applies from the next step.' })),
      el('fieldset', { class: 'control-group' }, el('legend', { text: 'Training' }),
        el('div', { class: 'button-group' }, this.trainBtn, this.pauseBtn, this.stepBtn, this.resetBtn),
        el('dl', { class: 'learn-metrics' }, m.step.root, m.loss.root, m.rate.root, m.first.root, m.repeat.root, m.held.root, m.params.root, m.threads.root, m.stepTime.root),
        this.status),
    );
  }

  /** Shows the task chosen and its model's settings; the induction-only numbers only for induction. */
  showTask(task: TaskName, model: ModelChoice, sizeProblem: string): void {
    for (const [name, b] of Object.entries(this.taskButtons)) b.setAttribute('aria-pressed', String(name === task));
    this.showModel(model, sizeProblem);
    this.metrics.first.root.hidden = this.metrics.repeat.root.hidden = task !== 'induction';
  }

  /** Shows a model's settings, and why its size is no model if it is not one. */
  showModel(model: ModelChoice, sizeProblem: string): void {
    this.layers.value = String(model.layers); this.heads.value = String(model.heads); this.dModel.value = String(model.dModel);
    this.lrSlider.set(model.lr);
    this.showSizeProblem(sizeProblem);
  }

  showSizeProblem(problem: string): void {
    this.sizeError.textContent = problem;
  }

  /** Which buttons work: nothing starts while a model is being made or its size is no model. */
  enable({ running, busy, sizeProblem }: { running: boolean; busy: boolean; sizeProblem: boolean }): void {
    this.trainBtn.disabled = running || busy || sizeProblem;
    this.pauseBtn.disabled = !running;
    this.stepBtn.disabled = running || busy || sizeProblem;
    this.resetBtn.disabled = sizeProblem;
  }
}
