// Why attention divides by √d_k ("Yet another set of notes on self-attention", "The Mechanics of Causal Self
// Attention"): for q, k with independent unit-variance entries, q·k is a sum of d_k unit-variance terms, so its
// variance is d_k; dividing by √d_k brings it back to 1 and keeps softmax from turning one-hot. The page draws
// random q, k (inputs, in JS); the engine computes every q·k (one matrix product), their sums and sums of
// squares (a second one) and one row's softmax each way; the page scales by 1/√d_k and divides the sums by N².
import type { Lab, LabContext } from '../lab';
import { ATTENTION_LIMITS } from './state';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { disclosure } from '../../ui/disclosure';
import { exact, fmt, fmtProb } from '../../ui/format';
import { buttonGroup } from '../../ui/controls';
import { Histogram } from '../../ui/histogram';
import { BarChart } from '../../ui/bars';
import { mulberry32 } from '../../text/random';
import { interpolateViridis } from 'd3';

/** Number of queries and of keys: every pair gives one dot product, N² = 40 000 of them. */
export const SQRT_N = 200;
/** How many keys of the first query's row go through softmax. */
const ROW = 8;

/** Standard normal samples (Box–Muller on mulberry32), unrounded: the variance must be exactly 1 in law. */
export function unitNormals(seed: number, count: number): Float32Array {
  const rand = mulberry32((0x9e3779b9 ^ seed) >>> 0);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rand()));
    const t = 2 * Math.PI * rand();
    out[i] = r * Math.cos(t);
    if (i + 1 < count) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

export const sqrtDkLab: Lab = {
  id: 'sqrt-dk',
  nav: '√d_k',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Why divide by √d_k?' }),
      el('p', { class: 'intro', text: `A dot product of two d_k-dimensional vectors adds up d_k products. If every entry of q and k is random with mean 0 and variance 1, and all of them are independent, each product has variance 1 and the variances of the d_k products add up: q·k has variance d_k, so its typical size grows like √d_k. Fed to softmax, such large scores make one weight ≈ 1 and the rest ≈ 0 (tiny gradients). Dividing by √d_k brings the variance back to 1. The queries and keys of real text are not independent (the words of a sentence depend on each other, which is what attention uses), so in a model the division keeps the scores’ size in check without making their variance exactly 1. Here ${SQRT_N} random queries meet ${SQRT_N} random keys: ${(SQRT_N * SQRT_N).toLocaleString('en')} dot products, computed by the engine.` }),
      tex(String.raw`\operatorname{Var}(q\cdot k) = \sum_{t=1}^{d_k} \operatorname{Var}(q_t k_t) = d_k, \qquad \operatorname{Var}\!\Big(\frac{q\cdot k}{\sqrt{d_k}}\Big) = 1`, true),
    );

    const slider = el('input', { type: 'range', min: 0, max: Math.log2(ATTENTION_LIMITS.rootDk), step: 1, 'data-control': 'sqrt-dk', id: 'sqrt-dk-slider' });
    const out = el('output', { class: 'slider-value', for: 'sqrt-dk-slider' });
    slider.addEventListener('input', () => store.update({ rootDk: 2 ** Number(slider.value) }));
    const reseed = buttonGroup('Random draw', [{ label: 'shuffle q and k', title: 'Draw new random q and k', name: 'sqrt-reseed', onClick: () => store.update({ rootSeed: (store.state.rootSeed + 1) % 1000000 }) }]);
    const rawHist = new Histogram('sqrt-raw');
    const scaledHist = new Histogram('sqrt-scaled');
    const stats = el('table', { class: 'plain-table', 'data-table': 'sqrt-stats' });
    const rowTable = el('table', { class: 'plain-table', 'data-table': 'sqrt-row' });
    const rawBars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'softmax of raw scores' });
    const scaledBars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'softmax of scaled scores' });
    const rawTitle = el('h3');
    section.append(
      el('div', { class: 'field slider' }, el('label', { for: 'sqrt-dk-slider', text: 'd_k (query/key width)' }), el('div', { class: 'slider-row' }, slider, out)),
      reseed,
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' }, rawTitle, rawHist.root),
        el('div', { class: 'panel' }, el('h3', { text: 'q·k / √d_k: the scaled scores' }), scaledHist.root)),
      el('p', { class: 'help', text: 'Both histograms share one horizontal axis. Dashed lines: ± one predicted standard deviation (√d_k without the scale, 1 with it).' }),
      el('div', { class: 'table-scroll' }, stats),
      el('h3', { text: `One row of scores through softmax (query 1, its first ${ROW} keys)` }),
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' }, el('h4', { text: 'softmax(q·k)' }), rawBars.root),
        el('div', { class: 'panel' }, el('h4', { text: 'softmax(q·k / √d_k)' }), scaledBars.root)),
      disclosure('The row as a table', el('div', { class: 'table-scroll' }, rowTable), 'sqrt-row'),
    );

    const render = () => {
      const t0 = performance.now();
      const { rootDk: dk, rootSeed } = store.state;
      const n = SQRT_N;
      slider.value = String(Math.round(Math.log2(dk)));
      out.textContent = `d_k = ${dk}`;
      slider.setAttribute('aria-valuetext', `d_k = ${dk}`);
      rawTitle.textContent = `q·k: the raw scores (d_k = ${dk})`;

      const qk = unitNormals(rootSeed, 2 * n * dk);
      const q = qk.subarray(0, n * dk);
      const k = qk.subarray(n * dk);
      // Every q·k: one engine product Q·Kᵀ. The scaled scores are the page's: one float32 multiply each by
      // 1/√d_k, the same rounding the engine's attention applies.
      const raw = engine.matmul(q, k, { m: n, k: dk, n, transposeB: true });
      const inv = Math.fround(1 / Math.sqrt(dk));
      const scaled = raw.map((x) => x * inv); // a Float32Array: each product is rounded to float32
      // Sums of squares and sums by one engine product, rows [raw; scaled] against rows [raw; scaled; ones]:
      // [Σr², Σrs, Σr; Σsr, Σs², Σs]. The page divides them by N² for the means.
      const m = n * n;
      const a = new Float32Array(2 * m);
      a.set(raw, 0); a.set(scaled, m);
      const b = new Float32Array(3 * m);
      b.set(raw, 0); b.set(scaled, m); b.fill(1, 2 * m);
      const sums = engine.matmul(a, b, { m: 2, k: m, n: 3, transposeB: true });
      const msRaw = sums[0] / m, meanRaw = sums[2] / m, msScaled = sums[4] / m, meanScaled = sums[5] / m;

      const lim = Math.max(4, 4 * Math.sqrt(dk));
      const bins = 60;
      rawHist.update({ values: raw, domain: [-lim, lim], bins, colour: '#f2a65a', label: `Histogram of ${m} raw scores q·k at d_k = ${dk}: measured variance ${fmt(msRaw, 3)}, predicted ${dk}.`,
        guides: [{ at: -Math.sqrt(dk), label: '−√d_k' }, { at: Math.sqrt(dk), label: '+√d_k' }] });
      scaledHist.update({ values: scaled, domain: [-lim, lim], bins, colour: '#21918c', label: `Histogram of ${m} scaled scores q·k/√d_k at d_k = ${dk}: measured variance ${fmt(msScaled, 3)}, predicted 1.`,
        guides: [{ at: -1, label: '−1' }, { at: 1, label: '+1' }] });

      clear(stats);
      stats.append(
        el('caption', { text: `${m.toLocaleString('en')} dot products at d_k = ${dk} (random draw #${rootSeed})` }),
        el('thead', {}, el('tr', {}, el('td'), el('th', { scope: 'col', text: 'mean' }),
          el('th', { scope: 'col', text: 'measured variance = mean of squares' }), el('th', { scope: 'col', text: 'predicted variance' }))),
        el('tbody', {},
          el('tr', {}, el('th', { scope: 'row', text: 'q·k' }),
            el('td', { 'data-col': 'mean-raw', 'data-value': exact(meanRaw), text: fmt(meanRaw, 3) }),
            el('td', { 'data-col': 'var-raw', 'data-value': exact(msRaw), text: fmt(msRaw, 3) }),
            el('td', { text: `d_k = ${dk}` })),
          el('tr', {}, el('th', { scope: 'row', text: 'q·k / √d_k' }),
            el('td', { 'data-col': 'mean-scaled', 'data-value': exact(meanScaled), text: fmt(meanScaled, 3) }),
            el('td', { 'data-col': 'var-scaled', 'data-value': exact(msScaled), text: fmt(msScaled, 3) }),
            el('td', { text: '1' }))),
      );

      const rowRaw = raw.slice(0, ROW);
      const rowScaled = scaled.slice(0, ROW);
      const pRaw = engine.softmax(rowRaw, { cols: ROW });
      const pScaled = engine.softmax(rowScaled, { cols: ROW });
      const labels = Array.from({ length: ROW }, (_, j) => `k${j + 1}`);
      const colour = (x: number) => interpolateViridis(0.15 + 0.7 * x);
      rawBars.update({ labels, values: Array.from(pRaw), domain: [0, 1], format: fmtProb, colour, label: 'softmax of the raw scores' });
      scaledBars.update({ labels, values: Array.from(pScaled), domain: [0, 1], format: fmtProb, colour, label: 'softmax of the scaled scores' });
      clear(rowTable);
      rowTable.append(
        el('caption', { text: 'Query 1 against keys 1–8' }),
        el('thead', {}, el('tr', {}, ...['key', 'q·k', 'softmax(q·k)', 'q·k / √d_k', 'softmax(q·k / √d_k)'].map((h) => el('th', { scope: 'col', text: h })))),
      );
      const body = el('tbody');
      for (let j = 0; j < ROW; j++) {
        body.appendChild(el('tr', {}, el('th', { scope: 'row', text: labels[j] }),
          el('td', { 'data-col': 'raw', 'data-value': exact(rowRaw[j]), text: fmt(rowRaw[j], 3) }),
          el('td', { 'data-col': 'p-raw', 'data-value': exact(pRaw[j]), text: fmtProb(pRaw[j]) }),
          el('td', { 'data-col': 'scaled', 'data-value': exact(rowScaled[j]), text: fmt(rowScaled[j], 3) }),
          el('td', { 'data-col': 'p-scaled', 'data-value': exact(pScaled[j]), text: fmtProb(pScaled[j]) })));
      }
      rowTable.appendChild(body);
      ctx.reportTiming('sqrtDk', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (changed.has('rootDk') || changed.has('rootSeed')) render(); });
    render();
  },
};
