// Causal masking ("The Mechanics of Causal Self Attention") on the attention lab's current tokens: the mask M (0 on and below the diagonal,
// −∞ above), the masked scores, their zero weights, and each output row written out as the lower-triangular
// sum S₂₁V₁ + S₂₂V₂ + … . Selecting a weight cell (click, or arrow keys in the table) traces its arithmetic.
import type { Lab, LabContext } from '../lab';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { exact, fmt, sub, vecBrief } from '../../ui/format';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { runPipeline } from '../../model/pipeline';
import { CellTrace } from './cell-trace';
import { onTrainedChange } from '../../model/trained';
import { onRealModel } from '../../model/real-model';
import { describeModel, onRealRun } from '../../model/real-head';
import { realPicker } from './real-picker';
import type { AppState } from '../../state/app-state';

const KEYS = ['text', 'dModel', 'embSeed', 'xEdits', 'preset', 'trainedHead', 'realLayer', 'realHead', 'wSeed', 'wqEdits', 'wkEdits', 'wvEdits', 'dk', 'dv', 'scaled', 'attnTemp', 'traceRow', 'traceCol'];

export const causalLab: Lab = {
  id: 'causal',
  nav: 'Causal mask',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Causal masking: no peeking ahead' }),
      el('p', { class: 'intro', text: 'When a model learns to predict the next word, token i must not see the tokens after it. Adding −∞ to those scores makes e^(−∞) = 0: their weights are exactly zero, so output row i only mixes the values of tokens 1…i, as “The Mechanics of Causal Self Attention” writes out. This figure uses the attention lab’s sentence, embeddings and weights, with the mask always on. Click any weight (or move through the table with the arrow keys) to see its arithmetic.' }),
      tex(String.raw`M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}\qquad O = \operatorname{softmax}\!\Big(\frac{QK^{\top}}{\sqrt{d_k}} + M\Big)V`, true),
    );
    const base = (name: string, caption: string, palette: MatrixSpec['palette']): MatrixSpec =>
      ({ name, caption, rows: 0, cols: 0, values: [], rowLabels: [], colLabels: [], palette });
    const mask = new MatrixTable(base('causal-mask', 'mask M', 'none'));
    const scores = new MatrixTable(base('causal-scores', 'scores + M', 'div'));
    const weights = new MatrixTable(base('causal-weights', 'weights S = softmax(scores + M), the attention lab’s A: click a cell', 'seq'));
    const trace = new CellTrace(engine);
    const sums = el('table', { class: 'plain-table', 'data-table': 'causal-sums' });
    // Whose weights these are: the attention lab's choice, said here so the figure reads on its own.
    const source = el('p', { class: 'help', 'data-figure': 'causal-source', 'aria-live': 'polite' });
    // The switch changes the attention lab's choice too (one sentence, one set of weights); switching back restores
    // the page's weights and mask as they were.
    let before: Pick<AppState, 'preset' | 'causal'> = store.state.preset === 'real' ? { preset: 'id', causal: false } : { preset: store.state.preset, causal: store.state.causal };
    const picker = realPicker(store, 'causal', (st) => st.preset === 'real', (v) => {
      if (!v) return before;
      before = { preset: store.state.preset === 'real' ? before.preset : store.state.preset, causal: store.state.causal };
      return { preset: 'real', causal: true };
    }, true);
    section.append(
      picker.root, source,
      el('div', { class: 'matrix-row' }, mask.root, scores.root),
      el('div', { class: 'two-col' }, el('div', { class: 'panel' }, weights.root), el('div', { class: 'panel' }, trace.root)),
      el('h3', { text: 'Each output row is a sum over the tokens so far' }),
      el('div', { class: 'table-scroll' }, sums),
    );
    // Selecting a cell: clicking it, or moving the keyboard focus onto it.
    const pick = (e: Event) => {
      const td = (e.target as HTMLElement).closest('td[data-r][data-c]') as HTMLElement | null;
      if (!td) return;
      const r = Number(td.dataset.r), c = Number(td.dataset.c);
      if (r !== store.state.traceRow || c !== store.state.traceCol) store.update({ traceRow: r, traceCol: c });
    };
    weights.root.addEventListener('click', pick);
    weights.root.addEventListener('focusin', pick);

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      picker.sync(s);
      const p = runPipeline(engine, { ...s, causal: true });
      section.classList.toggle('is-empty', !p);
      source.textContent = s.preset !== 'real' ? ''
        : p?.real ? `On the real model (${describeModel(p.real.model)}): layer ${p.real.layer + 1}, head ${p.real.head + 1}, its q, k and v for the attention lab’s text cut into its ${p.n} tokens. These weights are the model’s own.`
          : 'On the real model: waiting for it to run on the attention lab’s text…';
      if (!p) return;
      const { n, dv } = p;
      const labels = p.words.map((w, k) => `${k + 1} ${w}`);
      const m = new Float32Array(n * n);
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) m[i * n + j] = Number.NEGATIVE_INFINITY; // an input, not a result
      const maskedCells = Array.from(m, (v) => v === Number.NEGATIVE_INFINITY);
      const spec = (t: MatrixSpec, values: Float32Array, extra: Partial<MatrixSpec> = {}) => ({ ...t, rows: n, cols: n, values, rowLabels: labels, colLabels: labels, ...extra });
      mask.update(spec(base('causal-mask', 'mask M', 'none'), m, { showLegend: false }));
      scores.update(spec(base('causal-scores', 'scores + M', 'div'), p.scores));
      const i = Math.min(s.traceRow, n - 1), j = Math.min(s.traceCol, n - 1);
      weights.update(spec(base('causal-weights', 'weights S = softmax(scores + M), the attention lab’s A: click a cell', 'seq'), p.weights, { fixedMax: 1, maskedCells, highlightRow: i }));
      weights.root.querySelectorAll('td.traced').forEach((td) => td.classList.remove('traced'));
      weights.root.querySelector(`td[data-r="${i}"][data-c="${j}"]`)?.classList.add('traced');
      trace.update(p, i, j);

      clear(sums);
      sums.append(
        el('caption', { text: 'Output rows O = SV, written out as “The Mechanics of Causal Self Attention” writes them (S is the weights, the attention lab’s A; Vⱼ is row j of V)' }),
        el('thead', {}, el('tr', {}, ...['row', 'lower-triangular sum', 'with the weights', '= output row'].map((h) => el('th', { scope: 'col', text: h })))),
      );
      const body = el('tbody');
      for (let r = 0; r < n; r++) {
        const R = sub(r + 1);
        const terms = Array.from({ length: r + 1 }, (_, c) => `S${R},${sub(c + 1)}V${sub(c + 1)}`).join(' + ');  // (S₁₁,₁₀: the article's S_{i,j})
        const nums = Array.from({ length: r + 1 }, (_, c) => `${fmt(p.weights[r * n + c], 3)}·V${sub(c + 1)}`).join(' + ');
        const o = p.output.subarray(r * dv, (r + 1) * dv);
        body.appendChild(el('tr', { class: r === i ? 'chosen' : undefined }, el('th', { scope: 'row', text: `O${R} (${p.words[r]})` }),
          el('td', { class: 'sum-terms', text: terms }), el('td', { class: 'sum-terms', text: nums }),
          el('td', { 'data-col': 'output', 'data-value': Array.from(o, exact).join(','), text: vecBrief(o) })));
      }
      sums.appendChild(body);
      ctx.reportTiming('causal', performance.now() - t0);
    };
    // The attention lab's edits change this figure too; while it is off screen, only note that it is stale
    // and render when it scrolls into view, so typing up there does not pay for a second 32 × 32 pipeline.
    let visible = false;
    let stale = false;
    new IntersectionObserver((entries) => {
      visible = entries.some((e) => e.isIntersecting);
      if (visible && stale) { stale = false; render(); }
    }, { rootMargin: '200px 0px' }).observe(section);
    onTrainedChange(() => { if (store.state.preset !== 'trained') return; if (visible) render(); else stale = true; });
    const onReal = () => { if (store.state.preset !== 'real') return; if (visible) render(); else stale = true; };
    onRealModel(onReal);
    onRealRun(onReal);
    store.subscribe((_, changed) => {
      if (!KEYS.some((k) => changed.has(k as never))) return;
      if (visible) render();
      else stale = true;
    });
    render();
  },
};
