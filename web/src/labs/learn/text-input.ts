// The learn lab's text task: the learner's own text (pasted or typed), or the sample of the shipped model's text,
// which a small GPT then trains on; what the text became (tokens, the vocabulary it uses) and the samples the model
// writes as it trains. The text is checked here before anything is sent (model/text-task.ts says what is refused).
import { el, clear, nextId } from '../../ui/dom';
import { SAMPLE, TEXT_MAX_CHARS, TEXT_MIN_CHARS, textProblem } from '../../model/text-task';
import { TASKS } from '../../model/train-tasks';
import type { TrainMessage } from '../../workers/train-worker';
import sampleUrl from '../../text/kjv-fortunes-excerpt.txt?url';

export interface TextEvents {
  /** The learner asked for a model trained on `text` (it passed the checks). */
  use(text: string): void;
}

type Sample = Extract<TrainMessage, { type: 'sample' }>;

/** The sample's size in bytes, for the button that loads it (scripts/shipped-model/excerpt.mjs writes the file). */
export const SAMPLE_NOTE = 'about 23 KB: Bible chapters and fortunes the shipped model never trained on';

export class TextInput {
  readonly root: HTMLElement;
  /** The model's next-token guesses after the example (the findings fill it). */
  readonly nextLine = el('p', { class: 'learn-next', 'data-figure': 'learn-text-next' });
  private input: HTMLTextAreaElement;
  private problem = el('p', { class: 'warn-text learn-text-problem', role: 'alert', 'data-figure': 'learn-text-problem' });
  private info = el('p', { class: 'help learn-text-info', role: 'status', 'data-figure': 'learn-text-info' });
  private samples = el('ol', { class: 'learn-samples', 'data-figure': 'learn-samples', reversed: true });
  private samplesNote = el('p', { class: 'help', text: `At step 0 (untrained) and every ${SAMPLE.every} steps the model continues the start of the text, ${SAMPLE.maxTokens} tokens at temperature ${SAMPLE.temperature} among its ${SAMPLE.topK} likeliest tokens (in grey: the prompt).` });
  /** The text the current model trains on (undefined: none yet). */
  current: string | undefined;
  private sampleText: Promise<string> | undefined;

  constructor(private on: TextEvents) {
    this.input = el('textarea', { 'data-control': 'learn-text', rows: 8, spellcheck: 'false', placeholder: `Paste ${TEXT_MIN_CHARS.toLocaleString('en')} to ${TEXT_MAX_CHARS.toLocaleString('en')} characters of English text.` });
    this.input.addEventListener('input', () => { this.problem.textContent = ''; });
    const label = el('label', { text: 'Your text' });
    label.htmlFor = this.input.id = nextId('learn-text');
    const useBtn = el('button', { type: 'button', class: 'chip learn-train', 'data-control': 'learn-text-use', text: 'Train a new model on this text' });
    useBtn.addEventListener('click', () => this.submit());
    const sampleBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'learn-text-sample', text: 'Use the sample text' });
    sampleBtn.addEventListener('click', () => { void this.loadSample().then((t) => { this.input.value = t; this.submit(); }); });
    this.root = el('div', { class: 'learn-text' },
      el('p', { text: `A small GPT (its size is set above: ${TASKS.text.defaults.layers} layers of ${TASKS.text.defaults.heads} heads, d_model ${TASKS.text.defaults.dModel} to start) learns to continue your text, one token at a time. The text is cut into tokens by the tokenizer of the model that ships with this page (a byte-level BPE of 4,096 tokens trained on the King James Bible and fortune files), and the model’s vocabulary is just the tokens your text uses, so its embedding stays small and a minute or two of training goes a long way. Sixteen windows spread over the text are held out: the model never trains on them, and its loss there says how well it learned rather than memorised (on a short text it soon memorises: the training loss keeps falling while the held-out loss turns back up). The sample text is ${SAMPLE_NOTE}.` }),
      label, this.input, this.problem,
      el('div', { class: 'button-group' }, useBtn, sampleBtn),
      this.info, this.nextLine,
      el('h3', { text: 'What it writes as it trains' }), this.samplesNote, this.samples);
  }

  /** The sample of the shipped model's text (fetched once, when first needed). */
  loadSample(): Promise<string> {
    this.sampleText ??= fetch(sampleUrl).then((r) => {
      if (!r.ok) throw new Error(`the sample text could not be loaded (HTTP ${r.status})`);
      return r.text();
    });
    return this.sampleText;
  }

  /** The text for a new model: the current one, else the sample (shown in the box). */
  async text(): Promise<string> {
    if (this.current !== undefined) return this.current;
    const t = await this.loadSample();
    if (!this.input.value) this.input.value = t;
    this.current = t;
    return t;
  }

  /** Checks the box's text and, when it can be trained on, asks for a model. */
  private submit(): void {
    const text = this.input.value;
    const problem = textProblem(text);
    // The line under it still describes the text the model has: say so, or it reads as the refused text's.
    const kept = problem && this.current !== undefined ? ` The model below keeps the text it has (${this.current.length.toLocaleString('en')} characters).` : '';
    this.problem.textContent = problem + kept;
    if (problem) { this.input.focus(); return; }
    this.current = text;
    this.on.use(text);
  }

  /** Says what the text became, once the worker tokenized it. */
  showReady(msg: Extract<TrainMessage, { type: 'ready' }>): void {
    if (msg.textTokens === undefined) return;
    this.info.textContent = `${this.current?.length.toLocaleString('en') ?? '?'} characters became ${msg.textTokens.toLocaleString('en')} tokens, using ${msg.vocabSize.toLocaleString('en')} of the tokenizer’s ${msg.tokenizerVocab?.toLocaleString('en')}: the model’s vocabulary. Guessing evenly among them would score ln ${msg.vocabSize} = ${Math.log(msg.vocabSize).toFixed(2)}.`;
    clear(this.samples); clear(this.nextLine);
  }

  /** A message the worker refused the text with. */
  showProblem(message: string): void {
    this.problem.textContent = `This text cannot be trained on: ${message}.`;
  }

  /** The samples so far, newest first (the last five). */
  showSamples(samples: Sample[]): void {
    clear(this.samples);
    for (const s of samples.slice(-5).reverse()) {
      this.samples.appendChild(el('li', { 'data-step': String(s.step) },
        el('span', { class: 'learn-sample-step', text: `step ${s.step}: ` }),
        el('span', { class: 'learn-sample-prompt', text: s.prompt }),
        el('span', { class: 'learn-sample-text', text: s.text })));
    }
  }
}
