// The learn lab's example on the words task: the sentence the heads are drawn on (typed, or one of the presets),
// the model's next-word guesses, the buttons that hand the trained model to the labs above, and the corpus it
// learns from.
import { el } from '../../ui/dom';
import { field } from '../../ui/controls';
import { disclosure } from '../../ui/disclosure';
import { encode, UNKNOWN, type Corpus } from '../../text/corpus';
import { TASKS } from '../../model/train-tasks';
import { useTrained } from '../../model/trained';

const SENTENCES = ['the capital of Spain is', 'I ate a banana and an apple', 'I got a new phone from apple', 'once upon a', 'the dog chased the cat', 'Houston we have a problem'];

export interface ExampleEvents {
  /** The sentence changed (typed or picked). */
  sentence(text: string): void;
  /** "Use this model in the labs above". */
  use(): void;
}

export class WordsExample {
  readonly root: HTMLElement;
  /** The model's next-word guesses after the sentence (the findings fill it). */
  readonly nextLine = el('p', { class: 'learn-next', 'data-figure': 'learn-next' });
  private input: HTMLInputElement;
  private unknownNote = el('p', { class: 'learn-unknown', role: 'status' });
  private shippedBtn: HTMLButtonElement;
  private useNote = el('p', { class: 'help', role: 'status' });

  constructor(private corpus: Corpus, sentence: string, on: ExampleEvents) {
    this.input = el('input', { type: 'text', 'data-control': 'learn-sentence', value: sentence, autocomplete: 'off', spellcheck: 'false' });
    this.input.addEventListener('input', () => on.sentence(this.input.value));
    const presets = el('div', { class: 'button-group', role: 'group', 'aria-label': 'Example sentences' },
      ...SENTENCES.map((s) => {
        const b = el('button', { type: 'button', class: 'chip', text: s });
        b.addEventListener('click', () => { this.input.value = s; on.sentence(s); });
        return b;
      }));
    const vocabList = el('p', { class: 'learn-vocab', text: corpus.vocab.filter((w) => w !== UNKNOWN).join(' · ') });
    const corpusText = el('div', {},
      el('p', { text: `${corpus.sentences.length} sentences (${corpus.ids.length} tokens, ${corpus.vocab.length} words in the vocabulary counting “.” and ${UNKNOWN}), generated with a fixed seed by a small grammar written for this page: 12 sentence shapes from the articles with their words swapped — “I ate a banana and an apple” against “I got a new phone from apple”, “the capital of France is Paris”, “once upon a time”, “the sun is a star”, “Houston we have a problem”, “the dog chased the cat”, “the bride wore a ring”. The model sees windows of ${TASKS.words.context} tokens and learns to predict each next word. The first sentences:` }),
      el('ol', { class: 'learn-sentences' }, ...corpus.sentences.slice(0, 8).map((s) => el('li', { text: s }))),
      el('p', { text: 'The vocabulary:' }), vocabList);
    const useBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'learn-use', text: 'Use this model in the labs above' });
    useBtn.addEventListener('click', () => on.use());
    this.shippedBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'learn-use-shipped', text: 'Back to the page’s trained model', disabled: true });
    this.shippedBtn.addEventListener('click', () => {
      useTrained(undefined);
      this.shippedBtn.disabled = true;
      this.useNote.textContent = 'The labs above show the page’s own trained model again.';
    });
    this.root = el('div', { class: 'learn-words' },
      field('Your sentence (words from the vocabulary below; others show as <unk>)', this.input), presets, this.unknownNote, this.nextLine,
      el('div', { class: 'button-group' }, useBtn, this.shippedBtn), this.useNote,
      disclosure('The corpus: where these sentences come from', corpusText, 'learn-corpus'));
  }

  /** Shows a sentence set from elsewhere (a loaded state). */
  setSentence(sentence: string): void {
    this.input.value = sentence;
  }

  /** The sentence as the model's tokens (undefined when it has none); says which words are not in the vocabulary. */
  probe(sentence: string): Int32Array | undefined {
    const e = encode(this.corpus, sentence, TASKS.words.context);
    this.unknownNote.textContent = e.unknown.length
      ? `Not in the vocabulary, shown as ${UNKNOWN} (the model has never seen it, so it carries no meaning): ${e.unknown.join(', ')}.`
      : e.ids.length ? '' : 'Type at least one word.';
    return e.ids.length ? e.ids : undefined;
  }

  /** The trained weights the worker sent: the labs above show them, or say why they cannot. */
  useWeights(bytes: Uint8Array, step: number, show: () => void): void {
    try {
      useTrained(bytes, step);
      show();
      this.useNote.textContent = `The attention, causal-mask and multi-head labs above now show layer 1 of this model, as trained at step ${step}.`;
      this.shippedBtn.disabled = false;
    } catch (err) {
      this.useNote.textContent = `These weights cannot be shown there: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}
