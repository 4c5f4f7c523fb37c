// The attention lab's inputs: text and examples, embeddings, projection weights, and the attention knobs.
import type { LabContext } from '../lab';
import type { AppState } from '../../state/app-state';
import { LIMITS } from '../../state/params';
import { ATTENTION_LIMITS } from './state';
import { el, clear } from '../../ui/dom';
import { buttonGroup, field, logSlider, randomDraw, select, toggle } from '../../ui/controls';
import { EXAMPLES } from '../../text/examples';
import { PRESETS } from '../../model/weights';
import { trainedHead, type Pipeline } from '../../model/pipeline';
import { trainedModel, trainedName } from '../../model/trained';
import { fmt } from '../../ui/format';
import { realModel, loadShippedModel } from '../../model/real-model';
import { describeModel, layerInput } from '../../model/real-head';

const WORDS_LABEL = 'Sentence (split into lower-case words; punctuation is dropped)';
const TOKENS_LABEL = 'Text (cut into the model’s tokens, as its tokenizer does)';

export class AttentionControls {
  readonly root: HTMLElement;
  private text: HTMLInputElement;
  private tokens: HTMLElement;
  private exampleNote: HTMLElement;
  private dModel: HTMLSelectElement;
  private dk: HTMLSelectElement;
  private dv: HTMLSelectElement;
  private embSeed: HTMLInputElement;
  private wSeed: HTMLInputElement;
  private draws: { setDisabled(d: boolean): void }[];
  private presetGroup: HTMLElement;
  private causal: HTMLInputElement;
  private scaled: HTMLInputElement;
  private temp: ReturnType<typeof logSlider>;
  private truncated: HTMLElement;
  private trainedBox: HTMLElement;
  private embHelp!: HTMLElement;
  private embTrained = el('p', { class: 'help', text: 'With trained weights, X is the trained model’s own input to its first layer: each word’s learned embedding plus its position’s, layer-normed (words outside its vocabulary use <unk>). The random vectors and d_model below do not apply.' });
  private trainedHead: HTMLSelectElement;
  private trainedNote: HTMLElement;
  private realBox: HTMLElement;
  private realLayer: HTMLSelectElement;
  private realHead: HTMLSelectElement;
  private realNote = el('p', { class: 'trained-note', 'data-figure': 'real-note', 'aria-live': 'polite' });
  private embReal = el('p', { class: 'help', 'data-figure': 'real-x' });

  constructor(private ctx: LabContext) {
    const { store } = ctx;
    const s = store.state;
    const update = (patch: Partial<AppState>) => store.update(patch);

    this.text = el('input', { type: 'text', maxlength: LIMITS.textChars, 'data-control': 'text', spellcheck: 'false', autocomplete: 'off' });
    this.text.value = s.text;
    this.text.addEventListener('input', () => update({ text: this.text.value }));
    this.exampleNote = el('p', { class: 'preset-note', 'aria-live': 'polite' });
    const examples = buttonGroup('Example sentences', EXAMPLES.map((ex) => ({
      label: ex.label, title: ex.text, name: `example-${ex.label}`,
      onClick: () => {
        this.exampleNote.textContent = ex.note;
        update({ text: ex.text, query: ex.query, xEdits: new Map() });
      },
    })));
    this.tokens = el('div', { class: 'tokens', role: 'group', 'aria-label': 'Tokens (choose the query token)' });
    this.truncated = el('p', { class: 'help warn-text' });

    const dims = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ value: String(from + i), label: String(from + i) }));
    this.dModel = select(ATTENTION_LIMITS.dModel.map((d) => ({ value: String(d), label: String(d) })), String(s.dModel), (v) => {
      const d = Number(v);
      // Keep d_k = d_v = d_model while they were equal: the identity preset then stays softmax(XXᵀ)X.
      const st = store.state;
      update({ dModel: d, ...(st.dk === st.dModel ? { dk: d } : {}), ...(st.dv === st.dModel ? { dv: d } : {}) });
    }, 'dmodel');
    const embDraw = randomDraw('random vectors', s.embSeed, (v) => update({ embSeed: v }), 'emb-seed', () => store.state.embSeed);
    this.embSeed = embDraw.input;
    const resetX = el('button', { type: 'button', class: 'chip', 'data-control': 'reset-x', text: 'reset edited X cells' });
    this.pageOnly = [embDraw.root, resetX];
    resetX.addEventListener('click', () => update({ xEdits: new Map() }));

    this.presetGroup = buttonGroup('Weight preset', PRESETS.map((p) => ({
      label: p.label, title: p.help, name: `preset-${p.id}`, pressed: s.preset === p.id,
      // The trained model never sees later words: its preset opens with the causal mask on, so the first weights
      // shown are the model's own (the mask can still be turned off to compare).
      // A real model too: its heads never see later tokens.
      onClick: () => {
        update({ preset: p.id, wqEdits: new Map(), wkEdits: new Map(), wvEdits: new Map(), ...(p.id === 'trained' || p.id === 'real' ? { causal: true } : {}) });
        if (p.id === 'real') AttentionControls.ensureModel();
      },
    })));
    const wDraw = randomDraw('random weights', s.wSeed, (v) => update({ wSeed: v }), 'w-seed', () => store.state.wSeed);
    this.wSeed = wDraw.input;
    this.pageOnly.push(wDraw.root);
    this.draws = [embDraw, wDraw];
    this.dk = select(dims(ATTENTION_LIMITS.dProj.min, ATTENTION_LIMITS.dProj.max), String(s.dk), (v) => update({ dk: Number(v) }), 'dk');
    this.dv = select(dims(ATTENTION_LIMITS.dProj.min, ATTENTION_LIMITS.dProj.max), String(s.dv), (v) => update({ dv: Number(v) }), 'dv');
    const presetHelp = el('p', { class: 'help', id: 'preset-help' });
    this.trainedHead = select(Array.from({ length: ATTENTION_LIMITS.heads.max }, (_, i) => ({ value: String(i), label: `head ${i + 1}` })), String(s.trainedHead), (v) => update({ trainedHead: Number(v) }), 'trained-head');
    this.trainedNote = el('p', { class: 'trained-note', 'data-figure': 'trained-note', 'aria-live': 'polite' });
    this.trainedBox = el('div', { class: 'trained-box' }, field('Trained head (layer 1)', this.trainedHead), this.trainedNote);
    this.realLayer = select([], '0', (v) => update({ realLayer: Number(v) }), 'real-layer');
    this.realHead = select([], '0', (v) => update({ realHead: Number(v) }), 'real-head');
    this.realBox = el('div', { class: 'trained-box', 'data-figure': 'real-box' },
      el('div', { class: 'field-row' }, field('Layer', this.realLayer), field('Head', this.realHead)), this.realNote);

    const causal = toggle('causal mask', s.causal, (v) => update({ causal: v }), 'causal', 'Each token sees only itself and earlier tokens (−∞ above the diagonal).');
    const scaled = toggle('divide by √d_k', s.scaled, (v) => update({ scaled: v }), 'scaled', 'Keeps the scores’ spread independent of d_k (see “Why divide by √d_k?” below).');
    this.causal = causal.input;
    this.scaled = scaled.input;
    this.temp = logSlider(LIMITS.temp.min, LIMITS.temp.max, s.attnTemp, (v) => update({ attnTemp: v }), 'attn-temp', 'Attention temperature τ');

    this.root = el('div', { class: 'controls' },
      el('fieldset', { class: 'control-group wide' },
        el('legend', { text: 'Text' }),
        this.textField = field(WORDS_LABEL, this.text),
        examples, this.exampleNote, this.tokens, this.truncated),
      el('fieldset', { class: 'control-group' },
        el('legend', { text: 'Embeddings X' }),
        this.embHelp = el('p', { class: 'help' },
          el('span', { class: 'swatch toy', 'aria-hidden': 'true' }), ' the words of the words-pulling-words figures (banana, pear, apple, phone, …) sit on a fruit axis (d1) and a tech axis (d2); ',
          el('span', { class: 'swatch seeded', 'aria-hidden': 'true' }), ' other words get random vectors:'),
        this.embTrained, this.embReal,
        embDraw.root,
        el('div', { class: 'field-row' }, field('d_model (width)', this.dModel), resetX)),
      el('fieldset', { class: 'control-group' },
        el('legend', { text: 'Projections W_Q, W_K, W_V' }),
        this.presetGroup, presetHelp, this.trainedBox, this.realBox,
        wDraw.root,
        el('div', { class: 'field-row' }, field('d_k (queries, keys)', this.dk), field('d_v (values)', this.dv))),
      el('fieldset', { class: 'control-group' },
        el('legend', { text: 'Attention' }),
        causal.root, scaled.root, this.temp.root),
    );
    this.presetHelpNode = presetHelp;
  }

  private presetHelpNode: HTMLElement;
  private textField!: HTMLElement;
  // The random draws and the X reset: a real model has none to offer.
  private pageOnly: HTMLElement[] = [];

  /** Loads the shipped model the first time a view asks for a real one (the views redraw when it arrives). */
  static ensureModel(): void {
    if (!realModel()) loadShippedModel().catch(() => { /* the views say it did not load */ });
  }

  /** While the real model or its forward is not ready: what the note says instead. */
  realWaiting(message: string | undefined): void {
    this.realNote.textContent = message ?? '';
  }

  /** Brings the controls in line with the state (skipping the one being typed in). */
  sync(s: AppState, p: Pipeline | undefined): void {
    if (document.activeElement !== this.text) this.text.value = s.text;
    this.dModel.value = String(s.dModel);
    this.dk.value = String(s.dk);
    this.dv.value = String(s.dv);
    if (document.activeElement !== this.embSeed) this.embSeed.value = String(s.embSeed);
    if (document.activeElement !== this.wSeed) this.wSeed.value = String(s.wSeed);
    this.causal.checked = s.causal;
    this.scaled.checked = s.scaled;
    this.temp.set(s.attnTemp);
    this.presetGroup.querySelectorAll('button').forEach((b, i) => b.setAttribute('aria-pressed', String(PRESETS[i].id === s.preset)));
    this.presetHelpNode.textContent = PRESETS.find((x) => x.id === s.preset)?.help ?? '';
    const m = s.preset === 'trained' ? trainedModel() : undefined;
    const real = s.preset === 'real';
    this.textField.querySelector('label')!.textContent = real ? TOKENS_LABEL : WORDS_LABEL;
    this.trainedBox.hidden = !m;
    this.realBox.hidden = !real;
    this.embHelp.hidden = !!m || real;
    this.embTrained.hidden = !m;
    this.embReal.hidden = !real;
    for (const c of [this.dModel, this.dk, this.dv]) c.disabled = !!m || real;
    for (const d of this.draws) d.setDisabled(real);
    for (const e of this.pageOnly) { e.dataset.realHide = ''; e.hidden = real; }
    const rm = real ? realModel()?.model : undefined;
    if (rm) {
      const fill = (sel: HTMLSelectElement, count: number, label: string, value: number) => {
        if (sel.options.length !== count) {
          clear(sel);
          for (let i = 0; i < count; i++) sel.appendChild(el('option', { value: String(i), text: `${label} ${i + 1}` }));
        }
        sel.value = String(Math.min(value, count - 1));
      };
      fill(this.realLayer, rm.config.layers, 'layer', s.realLayer);
      fill(this.realHead, rm.config.heads, 'head', s.realHead);
    }
    if (real && p?.real) {
      const r = p.real;
      const c = r.model.config;
      for (const [ctl, v] of [[this.dModel, p.dModel], [this.dk, p.dk], [this.dv, p.dv]] as const) {
        if (![...ctl.options].some((o) => o.value === String(v))) ctl.appendChild(el('option', { value: String(v), text: String(v) }));
        ctl.value = String(v);
      }
      this.embReal.textContent = `With a real model, X is ${layerInput(r.model, r.layer)}: ${p.n} × ${c.dModel} numbers, one row per token. The page does not draw ${c.dModel}-wide rows: the model computes X and its own W_Q, W_K, W_V (with their biases${c.ropeTheta === null ? '' : ', then RoPE'}), and the page starts from the q, k and v it produced.`;
      const qi = Math.min(s.query, p.n - 1);
      const row = Array.from(p.weights.subarray(qi * p.n, (qi + 1) * p.n), (w, j) => ({ w, j })).sort((a, b) => b.w - a.w);
      const top = row.filter((x) => x.w > 0).slice(0, 2).map((x) => `“${p.words[x.j]}” (${x.j + 1}) ${fmt(x.w, 2)}`).join(', then ');
      let worst = 0;
      if (s.causal) for (let i = 0; i < p.weights.length; i++) worst = Math.max(worst, Math.abs(p.weights[i] - r.engineWeights[i]));
      const own = !s.causal
        ? ' The model never sees later tokens: turn the causal mask on to see its own weights.'
        : p.scale !== r.modelScale
          ? ' The scale is changed above: turn “divide by √d_k” on and τ back to 1 for the model’s own weights.'
          : ` These are the model’s own weights: the engine’s run of the model ${worst === 0 ? 'gives exactly the same weights' : `gives the same to within ${worst.toExponential(1)}`}.`;
      this.realNote.textContent = `Layer ${r.layer + 1}, head ${r.head + 1} of the real model (${describeModel(r.model)}). From “${p.words[qi]}” (${qi + 1}) its largest weights: ${top}.${own}`;
    }
    if (m && p) {
      const h = trainedHead(s, m);
      [...this.trainedHead.options].forEach((o, i) => { o.hidden = o.disabled = i >= m.heads; });
      this.trainedHead.value = String(h);
      for (const [c, v] of [[this.dModel, p.dModel], [this.dk, p.dk], [this.dv, p.dv]] as const) {
        if (![...c.options].some((o) => o.value === String(v))) c.appendChild(el('option', { value: String(v), text: String(v) }));
        c.value = String(v);
      }
      // What this head does here, read off the weights on screen: the query's largest weights.
      const qi = Math.min(s.query, p.n - 1);
      const row = Array.from(p.weights.subarray(qi * p.n, (qi + 1) * p.n), (w, j) => ({ w, j })).sort((a, b) => b.w - a.w);
      const top = row.filter((x) => x.w > 0).slice(0, 2).map((x) => `“${p.words[x.j]}” (${x.j + 1}) ${fmt(x.w, 2)}`).join(', then ');
      this.trainedNote.textContent = `Head ${h + 1} of ${trainedName(m)}. From “${p.words[qi]}” (${qi + 1}) its largest weights: ${top}.${s.causal ? ' With the causal mask on, these are the model’s own layer-1 weights.' : ' The model never sees later words: turn the causal mask on to see its own weights.'}${p.words.includes('<unk>') ? ' Words outside its vocabulary are <unk>.' : ''}`;
    }

    clear(this.tokens);
    if (!p) {
      this.tokens.appendChild(el('p', { class: 'help warn-text', text: real && s.text.trim() ? 'The tokens appear once the model has run on the text.' : 'No words yet: type a sentence.' }));
      this.truncated.textContent = '';
      return;
    }
    const qi = Math.min(s.query, p.n - 1);
    p.words.forEach((w, i) => {
      const b = el('button', { type: 'button', class: `token ${p.source[i]}`, 'aria-pressed': String(i === qi), 'data-token': i, title: `${p.source[i] === 'toy' ? 'placed on the fruit/tech plane' : p.source[i] === 'trained' ? 'the trained model’s embedding' : p.source[i] === 'real' ? 'a token as the model’s tokenizer cut it (␣ is a space)' : 'random vector'}; click to make it the query` },
        el('span', { class: 'token-index', text: String(i + 1) }), el('span', { text: w }));
      b.addEventListener('click', () => this.ctx.store.update({ query: i }));
      this.tokens.appendChild(b);
    });
    this.truncated.textContent = !p.truncated ? ''
      : p.real ? `Only the first ${p.n} tokens are used${p.n < LIMITS.tokens ? ' (the positions the model has)' : ''}.`
        : `Only the first ${p.source[0] === 'trained' ? p.n : LIMITS.tokens} words are used${p.source[0] === 'trained' ? ' (the positions the trained model has)' : ''}.`;
  }
}
