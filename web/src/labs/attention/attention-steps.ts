// The attention pipeline, one card per step, each with its shape and formula:
// X → W → Q, K, V → QKᵀ → scaled → masked → weights → output.
import type { LabContext } from '../lab';
import type { AppState } from '../../state/app-state';
import type { Pipeline } from '../../model/pipeline';
import { el } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { setTex } from '../../ui/katex';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { Heatmap } from '../../ui/heatmap';

interface Card {
  root: HTMLElement;
  formula: HTMLElement;
  shape: HTMLElement;
  note: HTMLElement;
}

function card(step: string, title: string, explain: string, ...body: HTMLElement[]): Card {
  const formula = el('div', { class: 'step-formula' });
  const shape = el('span', { class: 'shape-badge' });
  const note = el('p', { class: 'step-note' });
  const root = el('li', { class: 'step' },
    el('header', { class: 'step-head' }, el('span', { class: 'step-num', text: step }), el('h3', { text: title }), shape),
    el('p', { class: 'step-explain', text: explain }), formula, note, ...body);
  return { root, formula, shape, note };
}

const idx = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const xCols = (d: number) => Array.from({ length: d }, (_, i) => (i === 0 ? 'd0 fruit' : i === 1 ? 'd1 tech' : `d${i}`));

function mt(spec: Partial<MatrixSpec> & { name: string; caption: string }): MatrixTable {
  return new MatrixTable({ rows: 0, cols: 0, values: [], rowLabels: [], colLabels: [], palette: 'div', ...spec });
}

function setShape(c: Card, text: string) {
  c.shape.textContent = text;
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
  private scaled = mt({ name: 'scaled', caption: 'scaled scores' });
  private masked = mt({ name: 'masked', caption: 'masked scores' });
  private weights = mt({ name: 'weights', caption: 'attention weights A', palette: 'seq' });
  private heat = new Heatmap({ name: 'weights', label: 'Attention weights', n: 0, m: 0, values: [], rowLabels: [], colLabels: [] });
  private out = mt({ name: 'output', caption: 'output O = AV' });
  private cards: Record<string, Card>;

  constructor(private ctx: LabContext) {
    this.cards = {
      x: card('1', 'Embeddings X', 'One row per token. Edit any cell: every occurrence of that word moves (it is one embedding per word).', this.x.root),
      w: card('2', 'Projections W_Q, W_K, W_V', 'One matrix each, shared by all tokens (seed 000). Editable.',
        el('div', { class: 'matrix-row' }, this.wq.root, this.wk.root, this.wv.root)),
      qkv: card('3', 'Queries, keys, values', 'Each token asks with its query, offers its key, and passes on its value.',
        el('div', { class: 'matrix-row' }, this.q.root, this.k.root, this.v.root)),
      raw: card('4', 'Scores QKᵀ', 'Row i, column j is the dot product qᵢ·kⱼ: how well token i’s question matches token j’s key.', this.raw.root),
      scaled: card('5', 'Scaled', 'Dividing by √d_k keeps the spread of the scores near 1 whatever d_k is, so softmax does not saturate.', this.scaled.root),
      masked: card('6', 'Masked', 'A causal mask puts −∞ where a token would look ahead; softmax turns −∞ into a weight of exactly 0.', this.masked.root),
      weights: card('7', 'Weights A = softmax of each row', 'Each row is a probability distribution over the tokens: how much token i attends to token j. Click a row to follow that query below.',
        el('div', { class: 'heat-pair' }, this.heat.root, this.weights.root)),
      out: card('8', 'Output O = AV', 'Each output row is a weighted average of the value rows: the token’s context vector.', this.out.root),
    };
    this.root = el('ol', { class: 'steps' }, ...Object.values(this.cards).map((c) => c.root));
  }

  update(s: AppState, p: Pipeline): void {
    const { n, dModel, dk, dv } = p;
    const store = this.ctx.store;
    const words = p.words;
    const tokLabels = words.map((w, i) => `${i} ${w}`);
    const c = this.cards;
    const qi = Math.min(s.query, n - 1);

    setShape(c.x, `${n} × ${dModel}`);
    setTex(c.x.formula, String.raw`X \in \mathbb{R}^{n \times d_{\text{model}}} = \mathbb{R}^{${n} \times ${dModel}}`, true);
    this.x.update({
      name: 'X', caption: 'X (embeddings)', rows: n, cols: dModel, values: p.x, rowLabels: tokLabels, colLabels: xCols(dModel),
      palette: 'div', edited: p.xEdited, highlightRow: qi,
      onEdit: (r, col, v) => {
        const edits = new Map(store.state.xEdits);
        edits.set(`${words[r]}.${col}`, v);
        store.update({ xEdits: edits });
      },
    });

    setShape(c.w, `${dModel} × ${dk}, ${dModel} × ${dv}`);
    setTex(c.w.formula, String.raw`W_Q, W_K \in \mathbb{R}^{${dModel}\times ${dk}},\quad W_V \in \mathbb{R}^{${dModel}\times ${dv}}`, true);
    const wEdit = (key: 'wqEdits' | 'wkEdits' | 'wvEdits') => (r: number, col: number, v: number) => {
      const edits = new Map(store.state[key]);
      edits.set(`${r}.${col}`, v);
      store.update({ [key]: edits } as Partial<AppState>);
    };
    const wSpec = (name: string, caption: string, m: Float32Array, cols: number, prefix: string, edited: boolean[], key: 'wqEdits' | 'wkEdits' | 'wvEdits'): MatrixSpec => ({
      name, caption, rows: dModel, cols, values: m, rowLabels: xCols(dModel), colLabels: idx(prefix, cols), palette: 'div', edited, onEdit: wEdit(key), showLegend: false,
    });
    this.wq.update(wSpec('Wq', 'W_Q', p.wq, dk, 'q', p.wqEdited, 'wqEdits'));
    this.wk.update(wSpec('Wk', 'W_K', p.wk, dk, 'k', p.wkEdited, 'wkEdits'));
    this.wv.update(wSpec('Wv', 'W_V', p.wv, dv, 'v', p.wvEdited, 'wvEdits'));

    setShape(c.qkv, `${n} × ${dk}, ${n} × ${dv}`);
    setTex(c.qkv.formula, String.raw`\begin{aligned} Q = XW_Q,\ K = XW_K &:\ (${n}\times ${dModel})(${dModel}\times ${dk}) = ${n}\times ${dk} \\ V = XW_V &:\ (${n}\times ${dModel})(${dModel}\times ${dv}) = ${n}\times ${dv} \end{aligned}`, true);
    const small = (name: string, caption: string, m: Float32Array, cols: number, prefix: string): MatrixSpec => ({
      name, caption, rows: n, cols, values: m, rowLabels: tokLabels, colLabels: idx(prefix, cols), palette: 'div', showLegend: false, highlightRow: qi,
    });
    this.q.update(small('Q', 'Q', p.q, dk, 'q'));
    this.k.update(small('K', 'K', p.k, dk, 'k'));
    this.v.update(small('V', 'V', p.v, dv, 'v'));

    const square = (name: string, caption: string, m: Float32Array): MatrixSpec => ({
      name, caption, rows: n, cols: n, values: m, rowLabels: tokLabels, colLabels: tokLabels, palette: 'div', highlightRow: qi,
    });
    setShape(c.raw, `${n} × ${n}`);
    setTex(c.raw.formula, String.raw`S = QK^{\top}:\quad (${n}\times ${dk})\,(${dk}\times ${n}) = ${n}\times ${n}`, true);
    c.raw.note.textContent = `${n} tokens give ${n * n} scores: the table grows with the square of the text length, which is why a long context is expensive (seeds 000 and 001).`;
    this.raw.update(square('QKt', 'QKᵀ (raw scores)', p.raw));

    setShape(c.scaled, `${n} × ${n}`);
    const tau = s.attnTemp === 1 ? '' : String.raw`\,\tau`;
    setTex(c.scaled.formula, s.scaled
      ? String.raw`S' = \frac{QK^{\top}}{\sqrt{d_k}${tau}} = QK^{\top}\times ${fmt(p.scale, 4)}`
      : String.raw`S' = \frac{QK^{\top}}{1${tau}} = QK^{\top}\times ${fmt(p.scale, 4)}`, true);
    const tauNote = s.attnTemp === 1 ? '' : ` and the temperature τ = ${fmt(s.attnTemp, 3)}`;
    c.scaled.note.textContent = s.scaled
      ? `d_k = ${dk}, so the scores are divided by √${dk}${tauNote}.`
      : `Scaling is off${tauNote ? `; only${tauNote.replace(' and', '')} applies` : ''}: with large d_k the scores spread out and softmax becomes nearly one-hot.`;
    this.scaled.update(square('scaled', 'scaled scores', p.scaledScores));

    setShape(c.masked, `${n} × ${n}`);
    setTex(c.masked.formula, s.causal
      ? String.raw`S' + M,\qquad M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}`
      : String.raw`S' + M,\qquad M = 0 \ \text{(no mask)}`, true);
    c.masked.note.textContent = s.causal ? 'Upper triangle: −∞. Token i only sees tokens 0…i.' : 'The causal mask is off, so this equals the scaled scores. Turn it on above.';
    this.masked.update(square('masked', 'masked scores', p.masked));

    setShape(c.weights, `${n} × ${n}`);
    setTex(c.weights.formula, String.raw`A_{ij} = \frac{e^{S'_{ij}+M_{ij}}}{\sum_{l} e^{S'_{il}+M_{il}}},\qquad \textstyle\sum_j A_{ij} = 1`, true);
    const maskedCells = Array.from(p.masked, (v) => v === Number.NEGATIVE_INFINITY);
    this.weights.update({ ...square('weights', 'attention weights A', p.weights), palette: 'seq', fixedMax: 1, maskedCells });
    this.heat.update({
      name: 'weights', label: 'Attention weights A', n, m: n, values: p.weights, rowLabels: words, colLabels: words,
      masked: maskedCells, highlightRow: qi,
      onSelectRow: (r) => store.update({ query: r }),
    });

    setShape(c.out, `${n} × ${dv}`);
    setTex(c.out.formula, String.raw`O = AV:\quad (${n}\times ${n})\,(${n}\times ${dv}) = ${n}\times ${dv}`, true);
    this.out.update({ ...small('output', 'output O = AV', p.output, dv, 'o'), showLegend: true });
  }
}
