// The arithmetic of one attention weight aᵢⱼ, step by step: the terms qᵢₜkⱼₜ and their sum, × the scale and + the
// mask, softmax opened up (− the row max, exp, ÷ the row sum), and aᵢⱼ·vⱼ, its share of output row i. The terms
// (diag(qᵢ)·kⱼ) and the share (aᵢⱼ·vⱼ) are engine matrix products; q·k, the scaled and masked score and the weight
// are the engine's attention results; the softmax rows in between are the page's own float32 arithmetic, marked
// as such, to show what the engine does inside softmax.
import type { Engine } from '../../engine';
import type { Pipeline } from '../../model/pipeline';
import { el, clear } from '../../ui/dom';
import { exact, fmt, fmtProb, sub, vecBrief } from '../../ui/format';
import { dotTerms, termsText } from './dot-terms';

export class CellTrace {
  readonly root = el('div', { class: 'cell-trace', 'aria-live': 'polite' });

  constructor(private engine: Engine) {}

  update(p: Pipeline, i: number, j: number): void {
    const { n, dk, dv } = p;
    const engine = this.engine;
    const terms = dotTerms(engine, p.q.subarray(i * dk, (i + 1) * dk), p.k.subarray(j * dk, (j + 1) * dk));
    const at = (m: Float32Array) => m[i * n + j];
    const row = p.scores.subarray(i * n, (i + 1) * n);
    const isMasked = at(p.scores) === Number.NEGATIVE_INFINITY;
    // Softmax opened up, in float32 like the engine: the row max, each visible score minus it, exp, and the sum.
    let mi = Number.NEGATIVE_INFINITY;
    row.forEach((v) => { if (v > mi) mi = v; });
    const f = Math.fround;
    const shifted = isMasked ? Number.NEGATIVE_INFINITY : f(at(p.scores) - mi);
    const e = isMasked ? 0 : f(Math.exp(shifted));
    let sum = 0;
    row.forEach((v) => { if (v !== Number.NEGATIVE_INFINITY) sum = f(sum + f(Math.exp(f(v - mi)))); });
    const w = at(p.weights);
    const part = engine.matmul(new Float32Array([w]), p.v.subarray(j * dv, (j + 1) * dv), { m: 1, k: 1, n: dv });

    const wi = p.words[i], wj = p.words[j];
    const I = sub(i + 1), J = sub(j + 1); // tokens counted from 1, like S_{1,1}V₁ in “The Mechanics of Causal Self Attention”
    const scaleText = p.scale === 1 ? '× 1' : `× ${fmt(p.scale, 4)}${p.real ? ' (the model’s scale)' : ''}`;
    const rows: [string, string, string, string, boolean][] = [
      ['terms', `q${I},ₜ · k${J},ₜ for t = 1…${dk}${dk > 8 ? ' (the largest 4 by size, then the rest)' : ''}`, termsText(terms), Array.from(terms, exact).join(','), false],
      ['raw', `sum: q${I}·k${J}`, fmt(at(p.raw), 4), exact(at(p.raw)), false],
      ['scaled', isMasked ? `masked: key ${j + 1} comes after token ${i + 1}, so the score is −∞ (not scaled)` : `${scaleText}, + mask 0`, fmt(at(p.scores), 4), exact(at(p.scores)), false],
      ['shifted', `− row max m${I} = ${fmt(mi, 4)}`, fmt(shifted, 4), exact(shifted), true],
      ['exp', `e^(s − m${I})`, fmt(e, 4), exact(e), true],
      ['rowsum', `row sum Σₗ e^(s${I}ₗ − m${I})`, fmt(sum, 4), exact(sum), true],
      ['weight', `÷ row sum: weight a${I},${J}`, fmtProb(w), exact(w), false],
      ['part', `× v${J} = ${vecBrief(p.v.subarray(j * dv, (j + 1) * dv))}: share of output row ${i + 1}`, vecBrief(part), Array.from(part, exact).join(','), false],
    ];
    clear(this.root);
    this.root.append(
      el('h3', { class: 'trace-title', text: `How “${wi}” (row ${i + 1}) weighs “${wj}” (column ${j + 1})` }),
      el('div', { class: 'table-scroll' }, el('table', { class: 'plain-table', 'data-table': 'cell-trace', 'data-i': i, 'data-j': j },
        el('caption', { class: 'trace-caption', text: 'Rows marked “page” are the page’s own float32 arithmetic, opening up the softmax; the other numbers are the engine’s.' }),
        el('tbody', {}, ...rows.map(([key, label, shown, value, page]) => el('tr', { class: page ? 'page-arith' : undefined },
          el('th', { scope: 'row' }, label, page ? el('span', { class: 'page-badge', text: 'page' }) : null),
          el('td', { 'data-step': key, 'data-value': value, text: shown })))))),
    );
  }
}
