// The arithmetic of one attention weight aᵢⱼ, step by step: the terms qᵢₜkⱼₜ and their sum, × the scale,
// + the mask, e^(s − mᵢ), ÷ the row sum, and aᵢⱼ·vⱼ, its share of output row i. Every number is the engine's:
// the terms are the diagonal of a d_k × d_k, width-1 attention's raw scores; sᵢⱼ − mᵢ is a score with an
// additive mask of −mᵢ; e^(sᵢⱼ−mᵢ) = aᵢⱼ / a_max and Σ = 1 / a_max are ratios of the engine's own weights
// (the 1/Σ cancels, as in the softmax lab); aᵢⱼ·vⱼ is attention with V zeroed except row j.
import type { Engine } from '../../engine';
import type { Pipeline } from '../../model/pipeline';
import { el, clear } from '../../ui/dom';
import { exact, fmt, fmtProb } from '../../ui/format';

export class CellTrace {
  readonly root = el('div', { class: 'cell-trace', 'aria-live': 'polite' });

  constructor(private engine: Engine) {}

  update(p: Pipeline, i: number, j: number, causal: boolean): void {
    const { n, dk, dv, engine } = { ...p, engine: this.engine };
    const qi = p.q.subarray(i * dk, (i + 1) * dk);
    const kj = p.k.subarray(j * dk, (j + 1) * dk);
    const diagTerms = engine.attention({ q: qi, k: kj, v: new Float32Array(dk), nq: dk, nk: dk, dk: 1, dv: 1, scale: 1, returnRawScores: true }).rawScores!;
    const terms = Array.from({ length: dk }, (_, t) => diagTerms[t * dk + t]);
    const at = (m: Float32Array) => m[i * n + j];
    const row = p.masked.subarray(i * n, (i + 1) * n);
    let mi = -Infinity;
    row.forEach((v) => { if (v > mi) mi = v; }); // a comparison: which score is largest
    // Keys must be finite: masked keys go in as 0 with a mask of −∞, the others with a mask of −mᵢ.
    const finite = Float32Array.from(row, (v) => (v === Number.NEGATIVE_INFINITY ? 0 : v));
    const shiftMask = Float32Array.from(row, (v) => (v === Number.NEGATIVE_INFINITY ? v : -mi));
    const shifted = engine.attention({ q: new Float32Array([1]), k: finite, v: new Float32Array(n), nq: 1, nk: n, dk: 1, dv: 1, scale: 1,
      mask: shiftMask, returnScores: true }).scores!;
    const w = p.weights.subarray(i * n, (i + 1) * n);
    let wmax = 0;
    w.forEach((v) => { if (v > wmax) wmax = v; });
    const vj = new Float32Array(n * dv);
    vj.set(p.v.subarray(j * dv, (j + 1) * dv), j * dv);
    const part = engine.attention({ q: p.q, k: p.k, v: vj, nq: n, nk: n, dk, dv, causal, scale: p.scale }).output.subarray(i * dv, (i + 1) * dv);
    const vec = (xs: ArrayLike<number>) => `[${Array.from(xs, (x) => fmt(x, 3)).join(', ')}]`;
    const isMasked = at(p.masked) === Number.NEGATIVE_INFINITY;

    const wi = p.words[i], wj = p.words[j];
    const I = i + 1, J = j + 1; // the figure counts tokens from 1, like seed 002's S₁₁V₁
    const rows: [string, string, string, string][] = [
      ['terms', `q${sub(I)},ₜ · k${sub(J)},ₜ for t = 1…${dk}`, terms.map((t) => fmt(t, 4)).join(' + '), terms.join(',')],
      ['raw', `sum: q${sub(I)}·k${sub(J)}`, fmt(at(p.raw), 4), exact(at(p.raw))],
      ['scaled', `× scale ${p.scale === 1 ? '(1)' : `= ${fmt(p.scale, 4)}`}`, fmt(at(p.scaledScores), 4), exact(at(p.scaledScores))],
      ['masked', `+ mask ${isMasked ? '(−∞: key after the query)' : '(0)'}`, fmt(at(p.masked), 4), exact(at(p.masked))],
      ['shifted', `− row max mᵢ = ${fmt(mi, 4)}`, fmt(shifted[j], 4), exact(shifted[j])],
      ['exp', 'exp: e^(s − mᵢ) = aᵢⱼ / aᵢ,max', fmt(w[j] / wmax, 4), exact(w[j] / wmax)],
      ['rowsum', 'row sum Σₗ e^(sᵢₗ − mᵢ) = 1 / aᵢ,max', fmt(1 / wmax, 4), exact(1 / wmax)],
      ['weight', '÷ row sum: weight aᵢⱼ', fmtProb(w[j]), exact(w[j])],
      ['part', `× v${sub(J)} = ${vec(p.v.subarray(j * dv, (j + 1) * dv))}: share of output row ${I}`, vec(part), Array.from(part).join(',')],
    ];
    clear(this.root);
    this.root.append(
      el('h4', { text: `How “${wi}” (row ${I}) weighs “${wj}” (column ${J})` }),
      el('div', { class: 'table-scroll' }, el('table', { class: 'plain-table', 'data-table': 'cell-trace', 'data-i': i, 'data-j': j },
        el('tbody', {}, ...rows.map(([key, label, shown, value]) => el('tr', {},
          el('th', { scope: 'row', text: label }),
          el('td', { 'data-step': key, 'data-value': value, text: shown })))))),
    );
  }
}

function sub(n: number): string {
  return String(n).replace(/\d/g, (d) => '₀₁₂₃₄₅₆₇₈₉'[Number(d)]);
}
