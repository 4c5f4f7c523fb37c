// The attention pipeline, one card per step, each with its shape and formula:
// X → W → Q, K, V → QKᵀ → scaled and masked → weights (heatmap, with the one-query step-through beside it) → output.
import type { LabContext } from '../lab';
import type { AppState } from '../../state/app-state';
import type { Pipeline } from '../../model/pipeline';
import { el } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { setTex } from '../../ui/katex';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { Heatmap } from '../../ui/heatmap';
import { disclosure } from '../../ui/disclosure';
import type { QueryStepper } from './query-stepper';
import { layerInput } from '../../model/real-head';

interface Card {
  root: HTMLElement;
  formula: HTMLElement;
  shape: HTMLElement;
  note: HTMLElement;
}

function card(step: string, title: string, explain: string | HTMLElement, wide: boolean, ...body: HTMLElement[]): Card {
  const formula = el('div', { class: 'step-formula' });
  const shape = el('span', { class: 'shape-badge' });
  const note = el('p', { class: 'step-note' });
  const root = el('li', { class: wide ? 'step step-wide' : 'step', 'data-step': step },
    el('header', { class: 'step-head' }, el('span', { class: 'step-num', text: step }), el('h3', { text: title }), shape),
    typeof explain === 'string' ? el('p', { class: 'step-explain', text: explain }) : explain, formula, note, ...body);
  return { root, formula, shape, note };
}

const SIDE_BY_SIDE_TOKENS = 6;  // the most tokens whose score tables fit half the steps' width
const idx = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
// The fruit/tech names belong to the hand-placed plane; a trained model's dimensions have no names.
const xCols = (d: number, trained = false) => Array.from({ length: d }, (_, i) => (trained ? `d${i + 1}` : i === 0 ? 'd1 fruit' : i === 1 ? 'd2 tech' : `d${i + 1}`));

function mt(spec: Partial<MatrixSpec> & { name: string; caption: string }): MatrixTable {
  return new MatrixTable({ rows: 0, cols: 0, values: [], rowLabels: [], colLabels: [], palette: 'div', ...spec });
}

/** True when W_Q, W_K and W_V are the untouched identity: Q, K and V are then one and the same table. */
function identityWeights(s: AppState): boolean {
  return s.preset === 'id' && s.wqEdits.size === 0 && s.wkEdits.size === 0 && s.wvEdits.size === 0 && s.dk === s.dv;
}

export class AttentionSteps {
  readonly root: HTMLElement;
  private x = mt({ name: 'X', caption: 'X (embeddings)' });
  private wq = mt({ name: 'Wq', caption: 'W_Q' });
  private wk = mt({ name: 'Wk', caption: 'W_K' });
  private wv = mt({ name: 'Wv', caption: 'W_V' });
  private q = mt({ name: 'Q', caption: 'Q' });
  private k = mt({ name: 'K', caption: 'K' });
  private v = mt({ name: 'V', caption: 'V' });
  private raw = mt({ name: 'QKt', caption: 'QKᵀ (raw scores)' });
  private scores = mt({ name: 'scores', caption: 'scaled and masked scores' });
  private weights = mt({ name: 'weights', caption: 'attention weights A', palette: 'seq' });
  private heat = new Heatmap({ name: 'weights', label: 'Attention weights', n: 0, m: 0, values: [], rowLabels: [], colLabels: [] });
  private out = mt({ name: 'output', caption: 'output O = AV' });
  private cards: Record<string, Card>;
  private wRow = el('div', { class: 'matrix-row', 'data-real-hide': '' }, this.wq.root, this.wk.root, this.wv.root);
  // The sentences about editing the page's own X and W, hidden on a real model's head (nothing there to edit).
  private editX = el('span', { text: ' Edit any cell: every occurrence of that word moves (it is one embedding per word).' });
  private editW = el('span', { text: ' Here you choose them: edit any cell.' });

  constructor(private ctx: LabContext, stepper: QueryStepper) {
    const learned = el('p', { class: 'step-explain' },
      'One matrix each, shared by every token. In a real model these numbers are ', el('strong', { text: 'learned' }),
      ': training nudges them, over a great deal of text, until the attention they produce helps predict the next word. ',
      'There are three because each token plays three parts: W_Q turns it into a query (what it is looking for), W_K into a key (what it offers to the others’ queries), W_V into a value (what it hands on when it is picked).', this.editW);
    this.cards = {
      x: card('1', 'Embeddings X', el('p', { class: 'step-explain' }, 'One row per token.', this.editX), false, this.x.root),
      w: card('2', 'Projections W_Q, W_K, W_V', learned, false, this.wRow),
      qkv: card('3', 'Queries, keys, values', 'Each token asks with its query, offers its key, and passes on its value.', true,
        el('div', { class: 'matrix-row' }, this.q.root, this.k.root, this.v.root)),
      raw: card('4', 'Scores QKᵀ', 'Row i, column j is the dot product qᵢ·kⱼ: how well token i’s query matches token j’s key.', false, this.raw.root),
      scores: card('5', 'Scaled and masked', 'Dividing by √d_k keeps the spread of the scores near 1 whatever d_k is, so softmax does not saturate. A causal mask puts −∞ where a token would look ahead; softmax turns −∞ into a weight of exactly 0.', false, this.scores.root),
      weights: card('6', 'Weights A = softmax of each row', 'Each row is a probability distribution: how much token i attends to token j. Click a row of the heatmap to follow that query, step by step, in the panel beside it (below it on a narrow screen).', true,
        el('div', { class: 'heat-stepper' }, el('div', { class: 'heat-col' }, this.heat.root), stepper.root),
        disclosure('The weights as a table', this.weights.root, 'weights-table')),
      out: card('7', 'Output O = AV', 'Each output row is a weighted average of the value rows: the token’s context vector.', false, this.out.root),
    };
    this.root = el('ol', { class: 'steps' }, ...Object.values(this.cards).map((c) => c.root));
  }

  update(s: AppState, p: Pipeline, onSelectRow: (r: number) => void): void {
    const { n, dModel, dk, dv } = p;
    const store = this.ctx.store;
    const words = p.words;
    const tokLabels = words.map((w, i) => `${i + 1} ${w}`);
    const c = this.cards;
    const qi = Math.min(s.query, n - 1);

    c.x.shape.textContent = `${n} × ${dModel}`;
    setTex(c.x.formula, String.raw`X \in \mathbb{R}^{n \times d_{\text{model}}} = \mathbb{R}^{${n} \times ${dModel}}`, true);
    const real = p.real;
    this.x.root.hidden = !!real;
    this.x.root.dataset.realHide = '';
    this.wRow.hidden = !!real;
    this.editX.hidden = this.editW.hidden = !!real;
    if (real) {
      const cfg = real.model.config;
      const bias = cfg.modelType === 'gpt2' || cfg.modelType === 'qwen2';
      c.x.note.textContent = `Layer ${real.layer + 1}’s X is ${layerInput(real.model, real.layer)}: ${n} rows of ${dModel} numbers. Too wide to draw here: the model computes it, and the steps below start from what the head made of it.`;
      c.w.shape.textContent = `${dModel} × ${dk} each`;
      setTex(c.w.formula, String.raw`W_Q, W_K, W_V \in \mathbb{R}^{${dModel}\times ${dk}}${bias ? String.raw`,\quad b_Q, b_K, b_V \in \mathbb{R}^{${dk}}` : ''}`, true);
      c.w.note.textContent = `Head ${real.head + 1}’s W_Q, W_K, W_V are its ${dModel} × ${dk} slices of layer ${real.layer + 1}’s learned projection${bias ? ', each with a bias' : ''}${cfg.kvHeads < cfg.heads ? ` (its keys and values come from key/value head ${real.kvHead + 1}, which ${cfg.heads / cfg.kvHeads} query heads share)` : ''}. Learned over a great deal of text, not chosen here.`;
      c.qkv.shape.textContent = `${n} × ${dk}, ${n} × ${dv}`;
      setTex(c.qkv.formula, String.raw`Q = XW_Q${bias ? ' + b_Q' : ''},\ K = XW_K${bias ? ' + b_K' : ''},\ V = XW_V${bias ? ' + b_V' : ''}:\ (${n}\times ${dModel})(${dModel}\times ${dk}) = ${n}\times ${dk}`, true);
      c.qkv.note.textContent = `Head ${real.head + 1} of layer ${real.layer + 1}: the queries, keys and values the model computed for your tokens, as its attention read them${cfg.ropeTheta === null ? '' : ' (q and k already turned by RoPE)'}. Every step below is recomputed from these.`;
    } else {
      c.x.note.textContent = '';
      c.w.note.textContent = '';
    }
    if (!real) this.x.update({
      name: 'X', caption: 'X (embeddings)', rows: n, cols: dModel, values: p.x, rowLabels: tokLabels, colLabels: xCols(dModel, p.source[0] === 'trained'),
      palette: 'div', edited: p.xEdited, highlightRow: qi,
      onEdit: (r, col, v) => {
        const edits = new Map(store.state.xEdits);
        edits.set(`${words[r]}.${col}`, v);
        store.update({ xEdits: edits });
      },
    });

    if (!real) {
      c.w.shape.textContent = `${dModel} × ${dk}, ${dModel} × ${dv}`;
      setTex(c.w.formula, String.raw`W_Q, W_K \in \mathbb{R}^{${dModel}\times ${dk}},\quad W_V \in \mathbb{R}^{${dModel}\times ${dv}}`, true);
      const wEdit = (key: 'wqEdits' | 'wkEdits' | 'wvEdits') => (r: number, col: number, v: number) => {
        const edits = new Map(store.state[key]);
        edits.set(`${r}.${col}`, v);
        store.update({ [key]: edits } as Partial<AppState>);
      };
      const wSpec = (name: string, caption: string, m: Float32Array, cols: number, prefix: string, edited: boolean[], key: 'wqEdits' | 'wkEdits' | 'wvEdits'): MatrixSpec => ({
        name, caption, rows: dModel, cols, values: m, rowLabels: xCols(dModel, p.source[0] === 'trained'), colLabels: idx(prefix, cols), palette: 'div', edited, onEdit: wEdit(key), showLegend: false,
      });
      this.wq.update(wSpec('Wq', 'W_Q', p.wq, dk, 'q', p.wqEdited, 'wqEdits'));
      this.wk.update(wSpec('Wk', 'W_K', p.wk, dk, 'k', p.wkEdited, 'wkEdits'));
      this.wv.update(wSpec('Wv', 'W_V', p.wv, dv, 'v', p.wvEdited, 'wvEdits'));

      c.qkv.shape.textContent = `${n} × ${dk}, ${n} × ${dv}`;
      setTex(c.qkv.formula, String.raw`Q = XW_Q,\ K = XW_K:\ (${n}\times ${dModel})(${dModel}\times ${dk}) = ${n}\times ${dk};\quad V = XW_V:\ ${n}\times ${dv}`, true);
      c.qkv.note.textContent = identityWeights(s)
        ? `With the identity weights W_Q = W_K = W_V = I, the three tables below are identical: Q = K = V = X${dk < dModel ? ` (its first ${dk} columns)` : ''}. Attention is then softmax(XXᵀ/√d)·X, each word pulled by the words most like it. Trained weights make them differ: try “random weights” or the asymmetric pair above, or edit a weight.`
        : '';
    }
    const small = (name: string, caption: string, m: Float32Array, cols: number, prefix: string): MatrixSpec => ({
      name, caption, rows: n, cols, values: m, rowLabels: tokLabels, colLabels: idx(prefix, cols), palette: 'div', showLegend: false, highlightRow: qi,
    });
    this.q.update(small('Q', 'Q', p.q, dk, 'q'));
    this.k.update(small('K', 'K', p.k, dk, 'k'));
    this.v.update(small('V', 'V', p.v, dv, 'v'));

    const square = (name: string, caption: string, m: Float32Array): MatrixSpec => ({
      name, caption, rows: n, cols: n, values: m, rowLabels: tokLabels, colLabels: tokLabels, palette: 'div', highlightRow: qi,
    });
    // Beside each other (two columns from 900 px) the n × n tables lose their last columns past 6 tokens: then each
    // takes the whole row.
    for (const sq of [c.raw, c.scores]) sq.root.classList.toggle('step-wide', n > SIDE_BY_SIDE_TOKENS);
    c.raw.shape.textContent = `${n} × ${n}`;
    setTex(c.raw.formula, String.raw`S = QK^{\top}:\ (${n}\times ${dk})(${dk}\times ${n}) = ${n}\times ${n}`, true);
    c.raw.note.textContent = `${n} tokens give ${n * n} scores: the table grows with the square of the text length, which is why a long context is expensive (see “The cost of attention” below).`;
    this.raw.update(square('QKt', 'QKᵀ (raw scores)', p.raw));

    c.scores.shape.textContent = `${n} × ${n}`;
    const tau = s.attnTemp === 1 ? '' : String.raw`\,\tau`;
    const div = s.scaled ? String.raw`\sqrt{d_k}${tau}` : `1${tau}`;
    setTex(c.scores.formula, String.raw`S' = \frac{QK^{\top}}{${div}} + M${s.causal ? String.raw`,\ M_{ij} = -\infty \text{ for } j > i` : ''}`, true);
    const tauNote = s.attnTemp === 1 ? '' : ` and by the temperature τ = ${fmt(s.attnTemp, 3)}`;
    const modelScale = real && s.scaled && Math.abs(real.modelScale * Math.sqrt(dk) - 1) > 1e-6
      ? `This model scales its scores by ${fmt(real.modelScale, 4)}, not 1/√${dk} = ${fmt(1 / Math.sqrt(dk), 4)}: the page uses the model’s. ` : '';
    c.scores.note.textContent = `${modelScale}${s.scaled ? `d_k = ${dk}: every score is divided by √${dk} = ${fmt(Math.sqrt(dk), 3)}${tauNote}.` : `Scaling is off${tauNote ? `; only divided${tauNote.replace(' and', '')}` : ''}: with large d_k the scores spread out and softmax becomes nearly one-hot.`} ${s.causal ? `Upper triangle: −∞, so token i only sees tokens 1…i.` : 'No mask (turn on “causal mask” above).'}`;
    this.scores.update(square('scores', 'scaled and masked scores', p.scores));

    c.weights.shape.textContent = `${n} × ${n}`;
    setTex(c.weights.formula, String.raw`A_{ij} = \frac{e^{S'_{ij}}}{\sum_{l} e^{S'_{il}}},\qquad \textstyle\sum_j A_{ij} = 1`, true);
    const maskedCells = Array.from(p.scores, (v) => v === Number.NEGATIVE_INFINITY);
    this.weights.update({ ...square('weights', 'attention weights A', p.weights), palette: 'seq', fixedMax: 1, maskedCells });
    this.heat.update({
      name: 'weights', label: 'Attention weights A', n, m: n, values: p.weights, rowLabels: tokLabels, colLabels: tokLabels,
      masked: maskedCells, highlightRow: qi, onSelectRow,
    });

    c.out.shape.textContent = `${n} × ${dv}`;
    setTex(c.out.formula, String.raw`O = AV:\ (${n}\times ${n})(${n}\times ${dv}) = ${n}\times ${dv}`, true);
    this.out.update({ ...small('output', 'output O = AV', p.output, dv, 'o'), showLegend: true });
  }
}
