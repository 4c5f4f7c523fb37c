// Seed 000's walk-through for one query token: its scores against every key, scaled, softmaxed into
// weights, the weighted value vectors, and their sum, the context vector (a row of the engine's output).
import type { LabContext } from '../lab';
import type { AppState } from '../../state/app-state';
import { weightedValues, type Pipeline } from '../../model/pipeline';
import { el, clear } from '../../ui/dom';
import { exact, fmt, fmtProb } from '../../ui/format';
import { tex, setTex } from '../../ui/katex';
import { BarChart } from '../../ui/bars';
import { select as selectControl, field } from '../../ui/controls';
import { interpolateViridis } from 'd3';

export class QueryWalkthrough {
  readonly root: HTMLElement;
  private chooser: HTMLElement;
  private formula: HTMLElement;
  private bars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'weights' });
  private table = el('table', { class: 'plain-table walk-table', 'data-table': 'walkthrough' });
  private summary = el('p', { class: 'walk-summary', 'aria-live': 'polite' });

  constructor(private ctx: LabContext) {
    this.chooser = el('div', { class: 'walk-chooser' });
    this.formula = el('div', { class: 'step-formula' });
    this.root = el('div', { class: 'walkthrough' },
      el('h3', { text: 'One query, step by step' }),
      el('p', { class: 'step-explain', text: 'Follow one token as the query (seed 000): its query vector is compared with every key, the scores are scaled and softmaxed into weights, each value vector is multiplied by its weight, and the weighted values are summed into the context vector.' }),
      this.chooser, this.formula, this.summary,
      el('div', { class: 'panel walk-bars' }, el('h4', { text: 'How much it attends to each token' }), this.bars.root),
      el('h4', { text: 'Weighted values and their sum' }), el('div', { class: 'table-scroll' }, this.table),
    );
    this.formula.appendChild(tex('c_i', true));
  }

  update(s: AppState, p: Pipeline): void {
    const { n, dv } = p;
    const i = Math.min(s.query, n - 1);
    clear(this.chooser);
    this.chooser.appendChild(field('Query token', selectControl(p.words.map((w, j) => ({ value: String(j), label: `${j} · ${w}` })), String(i),
      (v) => this.ctx.store.update({ query: Number(v) }), 'query')));

    const word = p.words[i];
    setTex(this.formula, String.raw`c_{${i}} = \sum_{j} a_{${i}j}\, v_j,\qquad a_{${i}j} = \operatorname{softmax}_j\!\Big(\tfrac{q_{${i}}\cdot k_j}{${s.scaled ? String.raw`\sqrt{d_k}` : '1'}${s.attnTemp === 1 ? '' : String.raw`\,\tau`}} ${s.causal ? '+ M_{' + i + 'j}' : ''}\Big)`, true);

    const row = (m: Float32Array, cols: number) => Array.from(m.subarray(i * cols, (i + 1) * cols));
    const weights = row(p.weights, n);
    this.bars.update({
      labels: p.words.map((w, j) => `${j} ${w}`), values: weights, domain: [0, 1], format: fmtProb,
      colour: (v) => interpolateViridis(0.15 + 0.7 * v), label: `Attention weights of “${word}”`, highlight: i,
    });

    let best = 0;
    weights.forEach((w, j) => { if (w > weights[best]) best = j; });
    this.summary.textContent = `“${word}” attends most to “${p.words[best]}” (${fmtProb(weights[best])}).`;

    const parts = weightedValues(this.ctx.engine, p, s, i);
    const raw = row(p.raw, n);
    const masked = row(p.masked, n);
    const vec = (xs: ArrayLike<number>) => `[${Array.from(xs, (x) => fmt(x, 3)).join(', ')}]`;
    clear(this.table);
    this.table.append(
      el('caption', { text: `Query “${word}” (token ${i})` }),
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col', text: 'key j' }),
        el('th', { scope: 'col', text: `q${i}·kⱼ` }),
        el('th', { scope: 'col', text: s.causal ? 'scaled + mask' : 'scaled' }),
        el('th', { scope: 'col', text: 'weight aᵢⱼ' }),
        el('th', { scope: 'col', text: 'value vⱼ' }),
        el('th', { scope: 'col', text: 'aᵢⱼ·vⱼ' }))),
    );
    const body = el('tbody');
    for (let j = 0; j < n; j++) {
      body.appendChild(el('tr', { class: j === best ? 'best' : undefined },
        el('th', { scope: 'row', text: `${j} ${p.words[j]}` }),
        el('td', { text: fmt(raw[j], 3) }),
        el('td', { class: masked[j] === Number.NEGATIVE_INFINITY ? 'masked' : undefined, text: fmt(masked[j], 3) }),
        el('td', { 'data-value': exact(weights[j]), text: fmtProb(weights[j]) }),
        el('td', { text: vec(p.v.subarray(j * dv, (j + 1) * dv)) }),
        el('td', { text: vec(parts[j]) })));
    }
    body.appendChild(el('tr', { class: 'sum-row' },
      el('th', { scope: 'row', text: 'Σ = context vector' }), el('td'), el('td'), el('td', { text: '1' }), el('td'),
      el('td', { 'data-context': 'true', text: vec(row(p.output, dv)) })));
    this.table.appendChild(body);
  }
}
