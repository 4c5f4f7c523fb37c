// One query, step by step, beside the weights heatmap: query → scores → ÷ √d_k (+ mask) → softmax → weighted sum,
// as "Self-attention" walks it for one query token. Choosing a query (a heatmap row, a token, the menu) plays the
// five stages one after another; under prefers-reduced-motion they all appear at once. Every number is the
// engine's: Q, the scores and the weights from the pipeline, the weighted values from one matrix product.
import type { LabContext } from '../lab';
import type { AppState } from '../../state/app-state';
import { weightedValues, type Pipeline } from '../../model/pipeline';
import { el, clear, reducedMotion } from '../../ui/dom';
import { exact, fmt, fmtProb, sub, vecBrief as vec } from '../../ui/format';
import { dotTerms, termsText } from './dot-terms';
import { BarChart } from '../../ui/bars';
import { select as selectControl, field } from '../../ui/controls';
import { interpolateViridis } from 'd3';

/** How long each stage stays on screen while the step-through plays. */
const STAGE_MS = 900;
const STAGES = ['query', 'scores', 'scale', 'softmax', 'sum'] as const;
const STAGE_NAMES = ['query', 'scores', '÷ √d_k', 'softmax', 'weighted sum'];
type Stage = 1 | 2 | 3 | 4 | 5;

export class QueryStepper {
  readonly root: HTMLElement;
  private title = el('h4', { class: 'stepper-title' });
  private chooser = el('div', { class: 'stepper-chooser' });
  // Built once and refilled only when the tokens change, so it keeps the keyboard focus while the reader
  // steps through the tokens with the arrow keys.
  private select = selectControl([], '0', (v) => this.ctx.store.update({ query: Number(v) }), 'query');
  private selectKey = '';
  private replay = el('button', { type: 'button', class: 'chip', 'data-control': 'stepper-replay', text: '▶ Play the steps' });
  private stages: HTMLLIElement[];
  private stageText: HTMLElement[];
  private barsTitle = el('p', { class: 'stepper-bars-title' });
  private bars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'weights', duration: 450 });
  private summary = el('p', { class: 'walk-summary', 'aria-live': 'polite' });
  private table = el('table', { class: 'plain-table walk-table', 'data-table': 'walkthrough' });
  private stage: Stage = 5;
  private timer: number | undefined;
  private last: { s: AppState; p: Pipeline; i: number; parts: Float32Array[] } | undefined;

  constructor(private ctx: LabContext) {
    this.stages = STAGES.map((id, k) => el('li', { 'data-stage-id': id, class: 'stage' },
      el('span', { class: 'stage-num', 'aria-hidden': 'true', text: String(k + 1) })));
    this.stageText = this.stages.map((li) => li.appendChild(el('span', { class: 'stage-text' })));
    this.replay.addEventListener('click', () => this.play());
    this.chooser.appendChild(field('Query token', this.select));
    this.root = el('section', { class: 'stepper', 'aria-label': 'One query, step by step', 'data-stage': '5' },
      this.title,
      el('div', { class: 'stepper-controls' }, this.chooser, this.replay),
      el('ol', { class: 'stepper-stages' }, ...this.stages),
      this.barsTitle, this.bars.root, this.summary,
      el('div', { class: 'table-scroll' }, this.table));
  }

  /** Redraws for the current state; `play` runs the five stages (when the query changed). */
  update(s: AppState, p: Pipeline, play = false): void {
    const i = Math.min(s.query, p.n - 1);
    this.last = { s, p, i, parts: weightedValues(this.ctx.engine, p, i) };
    const key = p.words.join('\u0001');
    if (key !== this.selectKey) {
      this.selectKey = key;
      clear(this.select);
      p.words.forEach((w, j) => this.select.appendChild(el('option', { value: String(j), text: `${j + 1} · ${w}` })));
    }
    this.select.value = String(i);
    this.title.textContent = `One query, step by step: “${p.words[i]}” (token ${i + 1})`;
    this.renderTable();
    if (play) this.play();
    else this.show(this.timer === undefined ? 5 : this.stage);
  }

  /** Plays stage 1 → 5, or shows stage 5 at once when the reader prefers reduced motion. */
  play(): void {
    window.clearTimeout(this.timer);
    this.timer = undefined;
    if (reducedMotion()) {
      delete this.root.dataset.playing;
      this.show(5);
      return;
    }
    this.root.dataset.playing = 'true';
    let k: Stage = 1;
    const next = () => {
      this.show(k);
      if (k === 5) {
        this.timer = undefined;
        delete this.root.dataset.playing;
        return;
      }
      k = (k + 1) as Stage;
      this.timer = window.setTimeout(next, STAGE_MS);
    };
    next();
  }

  private show(stage: Stage): void {
    const last = this.last;
    if (!last) return;
    const { s, p, i } = last;
    this.stage = stage;
    this.root.dataset.stage = String(stage);
    const { n, dk } = p;
    const row = (m: Float32Array, cols: number) => Array.from(m.subarray(i * cols, (i + 1) * cols));
    const raw = row(p.raw, n), scores = row(p.scores, n), weights = row(p.weights, n);
    const I = sub(i + 1);
    const word = p.words[i];
    const argmax = (xs: number[]) => xs.reduce((b, x, j) => (x > xs[b] ? j : b), 0);
    const argmin = (xs: number[]) => xs.reduce((b, x, j) => (x < xs[b] ? j : b), 0);
    const named = (xs: number[], j: number, f: (v: number) => string) => `${f(xs[j])} (${p.words[j]})`;
    const hidden = scores.filter((x) => x === Number.NEGATIVE_INFINITY).length;
    const ownScale = p.real && Math.abs(p.real.modelScale * Math.sqrt(dk) - 1) > 1e-6;
    const divisor = s.scaled && ownScale ? `× the model’s scale ${fmt(p.real!.modelScale, 4)}${s.attnTemp === 1 ? '' : ` ÷ τ = ${fmt(s.attnTemp, 3)}`}`
      : s.scaled ? (s.attnTemp === 1 ? `√d_k = √${dk} = ${fmt(Math.sqrt(dk), 3)}` : `√d_k·τ = ${fmt(Math.sqrt(dk) * s.attnTemp, 3)}`)
      : (s.attnTemp === 1 ? '1 (scaling is off)' : `τ = ${fmt(s.attnTemp, 3)}`);
    const visible = scores.filter(Number.isFinite);
    const texts = [
      `query q${I} = row ${i + 1} of Q = ${vec(p.q.subarray(i * dk, (i + 1) * dk))}`,
      `scores q${I}·kⱼ, one per key: from ${named(raw, argmin(raw), (v) => fmt(v, 3))} to ${named(raw, argmax(raw), (v) => fmt(v, 3))}${this.termsNote(p, i, argmax(weights))}`,
      `${divisor.startsWith('×') ? divisor : `÷ ${divisor}`}${hidden ? `, and −∞ for the ${hidden} key${hidden > 1 ? 's' : ''} after token ${i + 1} (causal mask)` : ''}: now from ${fmt(Math.min(...visible), 3)} to ${fmt(Math.max(...visible), 3)}`,
      `softmax: e^score ÷ the sum of e^score over the row, so the weights are ≥ 0 and add up to 1; largest ${named(weights, argmax(weights), fmtProb)}`,
      `weighted sum: c${I} = Σⱼ a${I}ⱼ·vⱼ = ${vec(p.output.subarray(i * p.dv, (i + 1) * p.dv))}, row ${i + 1} of the output`,
    ];
    this.stages.forEach((li, k) => {
      li.className = `stage ${k + 1 < stage ? 'done' : k + 1 === stage ? 'now' : 'todo'}`;
      if (k + 1 === stage) li.setAttribute('aria-current', 'step');
      else li.removeAttribute('aria-current');
      this.stageText[k].textContent = k + 1 <= stage ? texts[k] : STAGE_NAMES[k];
    });

    const labels = p.words.map((w, j) => `${j + 1} ${w}`);
    const colour = (v: number) => interpolateViridis(0.15 + 0.7 * Math.max(0, Math.min(1, v)));
    const signed = (v: number) => (v < 0 ? '#5b93c7' : '#f2a65a');
    // Scores and scaled scores share one axis, so the division visibly shrinks the bars.
    const lim = Math.max(1, ...raw.map(Math.abs), ...visible.map(Math.abs));
    const spec = {
      1: { values: raw.map(() => 0), domain: [-lim, lim] as [number, number], title: `q${I}·kⱼ: computed in the next step`, format: (v: number) => fmt(v, 3), colour: signed },
      2: { values: raw, domain: [-lim, lim] as [number, number], title: `scores q${I}·kⱼ`, format: (v: number) => fmt(v, 3), colour: signed },
      3: { values: scores, domain: [-lim, lim] as [number, number], title: `scaled scores q${I}·kⱼ ÷ ${s.scaled ? '√d_k' : '1'}${s.attnTemp === 1 ? '' : '·τ'}${hidden ? ' + mask' : ''}`, format: (v: number) => fmt(v, 3), colour: signed },
      4: { values: weights, domain: [0, 1] as [number, number], title: `weights a${I}ⱼ = softmax of the scaled scores`, format: fmtProb, colour },
      5: { values: weights, domain: [0, 1] as [number, number], title: `weights a${I}ⱼ: how much of each vⱼ goes into c${I}`, format: fmtProb, colour },
    }[stage];
    this.barsTitle.textContent = spec.title;
    this.bars.update({ labels, values: spec.values, domain: spec.domain, format: spec.format, colour: spec.colour, label: `${spec.title} for “${word}”`, highlight: i, duration: 450 });
    const best = argmax(weights);
    this.summary.textContent = stage < 4 ? '' : best === i
      ? `“${word}” attends most to itself (${fmtProb(weights[best])}).`
      : `“${word}” attends most to “${p.words[best]}” (${fmtProb(weights[best])}).`;
    this.table.dataset.stage = String(stage);
  }

  /** For a wide head, one score written out term by term: the key with the largest weight. */
  private termsNote(p: Pipeline, i: number, j: number): string {
    if (p.dk <= 8) return '';
    const terms = dotTerms(this.ctx.engine, p.q.subarray(i * p.dk, (i + 1) * p.dk), p.k.subarray(j * p.dk, (j + 1) * p.dk));
    return `. Each is a sum of ${p.dk} products; for “${p.words[j]}” (key ${j + 1}): ${termsText(terms)} = ${fmt(p.raw[i * p.n + j], 3)}`;
  }

  private renderTable(): void {
    const last = this.last;
    if (!last) return;
    const { s, p, i, parts } = last;
    const { n, dv } = p;
    const row = (m: Float32Array) => m.subarray(i * n, (i + 1) * n);
    const raw = row(p.raw), scores = row(p.scores), weights = row(p.weights);
    const I = sub(i + 1);
    let best = 0;
    weights.forEach((w, j) => { if (w > weights[best]) best = j; });
    clear(this.table);
    const th = (text: string, col: string) => el('th', { scope: 'col', 'data-stage-col': col, text });
    this.table.append(
      el('caption', { text: `The numbers for “${p.words[i]}” (token ${i + 1})` }),
      el('thead', {}, el('tr', {},
        th('key j', 'key'), th(`q${I}·kⱼ`, 'scores'), th(p.real && Math.abs(p.real.modelScale * Math.sqrt(p.dk) - 1) > 1e-6 ? (s.causal ? '× scale + mask' : '× scale') : s.causal ? '÷ √d_k + mask' : '÷ √d_k', 'scale'),
        th(`weight a${I}ⱼ`, 'softmax'), th('value vⱼ', 'sum'), th(`a${I}ⱼ·vⱼ`, 'sum'))),
    );
    const body = el('tbody');
    for (let j = 0; j < n; j++) {
      body.appendChild(el('tr', { class: j === best ? 'best' : undefined },
        el('th', { scope: 'row', text: `${j + 1} ${p.words[j]}` }),
        el('td', { 'data-stage-col': 'scores', 'data-value': exact(raw[j]), text: fmt(raw[j], 3) }),
        el('td', { 'data-stage-col': 'scale', class: scores[j] === Number.NEGATIVE_INFINITY ? 'masked' : undefined, 'data-value': exact(scores[j]), text: fmt(scores[j], 3) }),
        el('td', { 'data-stage-col': 'softmax', 'data-value': exact(weights[j]), text: fmtProb(weights[j]) }),
        el('td', { 'data-stage-col': 'sum', text: vec(p.v.subarray(j * dv, (j + 1) * dv)) }),
        el('td', { 'data-stage-col': 'sum', 'data-value': Array.from(parts[j], exact).join(','), text: vec(parts[j]) })));
    }
    body.appendChild(el('tr', { class: 'sum-row' },
      el('th', { scope: 'row', text: `Σ = c${I}` }),
      el('td', { 'data-stage-col': 'scores' }), el('td', { 'data-stage-col': 'scale' }), el('td', { 'data-stage-col': 'softmax', text: '1' }), el('td', { 'data-stage-col': 'sum' }),
      el('td', { 'data-stage-col': 'sum', 'data-context': 'true', 'data-value': Array.from(p.output.subarray(i * dv, (i + 1) * dv), exact).join(','), text: vec(p.output.subarray(i * dv, (i + 1) * dv)) })));
    this.table.appendChild(body);
  }
}
