// Numerical stability of softmax: float32 e^x overflows to Infinity above x ≈ 88.72, so the textbook formula
// gives Infinity/Infinity = NaN, while the engine subtracts the row max first. The "naive" columns are what
// plain float32 arithmetic gives (JS Math.exp rounded with Math.fround), shown as the contrast, and x − m is the
// page's own subtraction; the softmax, log-softmax and attention columns are the engine's. A fully masked row (all −∞) is the other edge: 0/0 naively, zeros from the engine.
import type { Lab, LabContext } from '../lab';
import { SOFTMAX_LIMITS } from './state';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { exact, fmt, fmtProb } from '../../ui/format';
import { buttonGroup } from '../../ui/controls';
import { MatrixTable } from '../../ui/matrix-table';

const PRESETS: { label: string; logits: number[] }[] = [
  { label: 'overflow [90, 100, 110]', logits: [90, 100, 110] },
  { label: 'underflow [−1000, −990, −980]', logits: [-1000, -990, -980] },
  { label: 'safe [1, 2, 3]', logits: [1, 2, 3] },
  { label: 'one huge [1000, 0]', logits: [1000, 0] },
];

/** What the textbook formula gives in float32: e^x rounded to float32, then e/Σ. Labelled "naive" on the page. */
export function naiveSoftmax32(xs: number[]): { e: number[]; sum: number; p: number[] } {
  const e = xs.map((x) => Math.fround(Math.exp(x)));
  let sum = 0;
  for (const v of e) sum = Math.fround(sum + v);
  return { e, sum, p: e.map((v) => Math.fround(v / sum)) };
}

export const stabilityLab: Lab = {
  id: 'stability',
  nav: 'Stability',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Numerical stability: why the max is subtracted' }),
      el('p', { class: 'intro', text: 'In float32, e^x is Infinity for any x above about 88.72 and exactly 0 below about −103.97. The textbook softmax then divides Infinity by Infinity (NaN) or 0 by 0 (NaN). Subtracting the row’s maximum m first leaves the result unchanged mathematically but keeps every exponent ≤ 0 and the largest term exactly e⁰ = 1, so the sum is between 1 and n. Try the presets or type your own logits.' }),
      tex(String.raw`\frac{e^{x_i}}{\sum_j e^{x_j}} = \frac{e^{x_i-m}}{\sum_j e^{x_j-m}},\qquad m = \max_j x_j`, true),
    );
    const editSpec = (n: number) => ({
      name: 'stab-logits', caption: 'logits x (editable)', rows: 1, cols: n, values: new Float32Array(n),
      rowLabels: ['x'], colLabels: Array.from({ length: n }, (_, j) => `x${j + 1}`), palette: 'none' as const, showLegend: false, digits: 4,
      onEdit: (_: number, c: number, v: number) => store.update({ stabLogits: store.state.stabLogits.map((x, j) => (j === c ? v : x)) }),
    });
    const editor = new MatrixTable(editSpec(3));
    editor.root.classList.add('edit-plain');
    const table = el('table', { class: 'plain-table', 'data-table': 'stability' });
    const verdict = el('p', { class: 'callout', 'aria-live': 'polite' });
    const masked = el('table', { class: 'plain-table', 'data-table': 'stability-masked' });
    section.append(
      buttonGroup('Logit presets', PRESETS.map((p) => ({ label: p.label, name: `stab-preset-${p.logits.join('_')}`, onClick: () => store.update({ stabLogits: [...p.logits] }) }))),
      buttonGroup('Length', [
        { label: '+ add logit', name: 'stab-add', onClick: () => { const xs = store.state.stabLogits; if (xs.length < SOFTMAX_LIMITS.stab.max) store.update({ stabLogits: [...xs, 0] }); } },
        { label: '− remove last', name: 'stab-remove', onClick: () => { const xs = store.state.stabLogits; if (xs.length > SOFTMAX_LIMITS.stab.min) store.update({ stabLogits: xs.slice(0, -1) }); } },
      ]),
      editor.root,
      el('div', { class: 'table-scroll' }, table),
      verdict,
      el('p', { class: 'help', text: 'The last column is the log-softmax, ln pᵢ computed as (xᵢ − m) − ln Σⱼ e^(xⱼ − m) without forming pᵢ, so it stays finite where a weight rounds to 0: with one huge [1000, 0] the second weight is 0 (ln 0 = −∞) and its entry there −1000.' }),
      el('h3', { text: 'A fully masked row' }),
      el('p', { class: 'help', text: 'With a causal or padding mask, a query can end up with every key masked: all its logits are −∞. Naively e^(−∞) = 0 for every key and 0/0 = NaN. The engine returns weights of 0 and an output row of zeros instead (a query that sees nothing gets nothing), so one empty row cannot poison the rest of the batch.' }),
      el('div', { class: 'table-scroll' }, masked),
    );

    const render = () => {
      const t0 = performance.now();
      const xs = store.state.stabLogits;
      const n = xs.length;
      editor.update({ ...editSpec(n), values: Float32Array.from(xs) });
      const x = Float32Array.from(xs);
      const p = engine.softmax(x, { cols: n });
      const logp = engine.softmax(x, { cols: n, log: true });
      // x − m, one float32 subtraction each: the page's arithmetic, showing what the engine's softmax does first.
      let m = -Infinity;
      x.forEach((v) => { if (v > m) m = v; });
      const shifted = x.map((v) => v - m); // a Float32Array: each difference is rounded to float32
      const naive = naiveSoftmax32(Array.from(x));

      clear(table);
      table.append(
        el('caption', { text: 'Naive float32 softmax (JS Math.exp rounded to float32: what the formula gives without the max) against the engine; xᵢ − m is the page’s float32 subtraction, the first step of the engine’s softmax' }),
        el('thead', {}, el('tr', {}, ...['i', 'xᵢ', 'naive e^xᵢ (float32)', 'naive e^xᵢ / Σ', 'xᵢ − m', 'engine: softmax', 'engine: log-softmax'].map((h) => el('th', { scope: 'col', text: h })))),
      );
      const body = el('tbody');
      for (let j = 0; j < n; j++) {
        const bad = (v: number) => (!Number.isFinite(v) ? 'bad' : undefined);
        body.appendChild(el('tr', {}, el('th', { scope: 'row', text: String(j + 1) }),
          el('td', { text: fmt(x[j], 4) }),
          el('td', { class: bad(naive.e[j]), 'data-col': 'naive-exp', 'data-value': String(naive.e[j]), text: fmt(naive.e[j], 4) }),
          el('td', { class: bad(naive.p[j]), 'data-col': 'naive-p', 'data-value': String(naive.p[j]), text: Number.isNaN(naive.p[j]) ? 'NaN' : fmtProb(naive.p[j]) }),
          el('td', { 'data-col': 'shifted', 'data-value': exact(shifted[j]), text: fmt(shifted[j], 4) }),
          el('td', { 'data-col': 'p', 'data-value': exact(p[j]), text: fmtProb(p[j]) }),
          el('td', { 'data-col': 'logp', 'data-value': exact(logp[j]), text: fmt(logp[j], 4) })));
      }
      body.appendChild(el('tr', { class: 'sum-row' }, el('th', { scope: 'row', text: 'Σ' }), el('td'),
        el('td', { class: Number.isFinite(naive.sum) ? undefined : 'bad', 'data-col': 'naive-sum', 'data-value': String(naive.sum), text: fmt(naive.sum, 4) }),
        el('td'), el('td'), el('td'), el('td')));
      table.appendChild(body);

      const nan = naive.p.some(Number.isNaN);
      verdict.className = nan ? 'callout warn' : 'callout';
      verdict.textContent = nan
        ? (naive.sum === Infinity
          ? `Naive: some e^x overflow float32 (x > 88.72 gives Infinity), the sum is Infinity, and Infinity / Infinity = NaN. The engine subtracts m = ${fmt(m, 4)} first: the largest exponent is 0 and every weight is finite.`
          : `Naive: every e^x underflows to 0 (x < −103.97), the sum is 0 and 0 / 0 = NaN. The engine subtracts m = ${fmt(m, 4)} first: the largest term is e⁰ = 1 and the weights are finite.`)
        : 'Here every e^x fits in float32, so the naive formula works too (up to rounding); push a logit above 88.72 to see it break.';

      // The fully masked row: engine softmax of −∞s, and attention with every key masked.
      const allMasked = new Float32Array(3).fill(-Infinity);
      const pm = engine.softmax(allMasked, { cols: 3 });
      const att = engine.attention({ q: new Float32Array([1, 0]), k: new Float32Array([1, 0, 0, 1, 1, 1]), v: new Float32Array([1, 2, 3, 4, 5, 6]), nq: 1, nk: 3, dk: 2, dv: 2, scale: 1,
        mask: new Float32Array(3).fill(-Infinity), returnWeights: true });
      const naiveM = naiveSoftmax32([-Infinity, -Infinity, -Infinity]);
      clear(masked);
      masked.append(
        el('caption', { text: 'Logits [−∞, −∞, −∞]' }),
        el('thead', {}, el('tr', {}, el('td'), ...['key 1', 'key 2', 'key 3'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {},
          el('tr', {}, el('th', { scope: 'row', text: 'naive e^x / Σ (float32, JS)' }), ...naiveM.p.map((v) => el('td', { class: 'bad', 'data-col': 'naive', 'data-value': String(v), text: fmt(v) }))),
          el('tr', {}, el('th', { scope: 'row', text: 'engine softmax' }), ...Array.from(pm, (v) => el('td', { 'data-col': 'softmax', 'data-value': exact(v), text: fmt(v) }))),
          el('tr', {}, el('th', { scope: 'row', text: 'engine attention weights' }), ...Array.from(att.weights!, (v) => el('td', { 'data-col': 'weights', 'data-value': exact(v), text: fmt(v) }))),
          el('tr', {}, el('th', { scope: 'row', text: 'engine attention output (d_v = 2)' }),
            el('td', { colspan: 3, 'data-col': 'output', 'data-value': Array.from(att.output).join(','), text: `[${Array.from(att.output, (v) => fmt(v)).join(', ')}]` }))),
      );
      ctx.reportTiming('stability', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (changed.has('stabLogits')) render(); });
    render();
  },
};
