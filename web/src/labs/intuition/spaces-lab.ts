// Transformed spaces, from the words-pulling-words article: a 2 × 2 matrix moves every word and the basis
// vectors e₁, e₂ with them.
// Queries, keys and values each get their own matrix; the weights come from the query and key spaces and
// the updated vector is the weighted average in the value space. The sentence, pulled word and positions
// are the "words pulling words" figure's. Every position (three matrix products) and weight (one attention
// call) is the engine's.
import type { Lab, LabContext } from '../lab';
import { INTUITION_LIMITS } from './state';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { disclosure } from '../../ui/disclosure';
import { exact, fmt, fmtProb } from '../../ui/format';
import { buttonGroup } from '../../ui/controls';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { project } from '../../model/pipeline';
import { SpacePlane, planeLimit } from './space-plane';
import { pullEmbeddings } from './pull-lab';

type Key = 'spWq' | 'spWk' | 'spWv';
const I = [1, 0, 0, 1];
const PRESETS: { label: string; q: number[]; k: number[]; v: number[] }[] = [
  { label: 'all identity (plain pulling)', q: I, k: I, v: I },
  { label: 'values: stretch fruit, squash tech', q: I, k: I, v: [1.5, 0, 0, 0.6] },
  { label: 'keys & queries: only fruitiness counts', q: [1, 0, 0, 0], k: [1, 0, 0, 0], v: I },
  { label: 'keys rotated 90°', q: I, k: [0, 1, -1, 0], v: I },
];

export const spacesLab: Lab = {
  id: 'spaces',
  nav: 'Spaces',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Transformed spaces: queries, keys and values' }),
      el('p', { class: 'intro', text: 'A 2 × 2 matrix transforms the whole plane: each word x moves to x·W, and the unit vectors e₁ = (1, 0) and e₂ = (0, 1) move to the rows of W, carrying the grid with them. Attention uses three such spaces: similarities are measured between the query space and the key space, and the updated word is the weighted average in the value space. Edit the matrices; the weights update live. The words and the pulled word are those of “Words pulling words”.' }),
      el('div', { class: 'callout learned' },
        el('p', {}, el('strong', { text: 'Where do W_Q, W_K and W_V come from? ' }),
          'In a real model they are learned: training adjusts their numbers, over a great deal of text, until the attention they produce helps predict the next word. Here you set them by hand.'),
        el('p', {}, el('strong', { text: 'Why three? ' }),
          'Each word plays three parts. As a query it asks what it is looking for (W_Q); as a key it offers itself to the others’ queries (W_K); as a value it is what gets passed on when it is picked (W_V). With one matrix for all three, or none at all, the score of one word against another always equals the score back (their softmax weights can still differ: see “Asymmetric pull” below), and the words move in the very space that measured them. Set all three to the identity and Q, K and V are the same table, X itself: the plain pulling of the figure above.')),
      tex(String.raw`q = xW_Q,\quad k = xW_K,\quad v = xW_V,\qquad \text{new}_i = \sum_j \operatorname{softmax}_j(q_i\cdot k_j)\, v_j`, true),
    );
    const cols = ['→ fruit', '→ tech'];
    const spec = (key: Key, name: string, caption: string): MatrixSpec => ({
      name, caption, rows: 2, cols: 2, values: new Float32Array(4), rowLabels: ['e₁ ↦', 'e₂ ↦'], colLabels: cols, palette: 'div', showLegend: false, limit: INTUITION_LIMITS.kvAbs,
      onEdit: (r, c, v) => store.update({ [key]: store.state[key].map((x, j) => (j === r * 2 + c ? v : x)) }),
    });
    const mats = ([
      ['spWq', 'sp-Wq', 'W_Q', 'sp-queries', 'Query space x·W_Q', '#5b93c7'],
      ['spWk', 'sp-Wk', 'W_K', 'sp-keys', 'Key space x·W_K', '#b35806'],
      ['spWv', 'sp-Wv', 'W_V', 'sp-values', 'Value space x·W_V', '#21918c'],
    ] as const).map(([key, name, caption, plane, title, colour]) => ({
      key: key as Key, spec: spec(key, name, caption), table: new MatrixTable(spec(key, name, caption)), plane: new SpacePlane(plane), title, colour,
    }));
    const table = el('table', { class: 'plain-table', 'data-table': 'spaces' });
    const summary = el('p', { class: 'pull-status', 'aria-live': 'polite' });
    section.append(
      buttonGroup('Space presets', PRESETS.map((p, i) => ({ label: p.label, name: `sp-preset-${i}`, onClick: () => store.update({ spWq: [...p.q], spWk: [...p.k], spWv: [...p.v] }) }))),
      el('div', { class: 'spaces-grid' }, ...mats.map((m) => el('div', { class: 'panel' }, m.table.root, m.plane.root))),
      summary,
      disclosure('The numbers: each word in the three spaces', el('div', { class: 'table-scroll' }, table), 'spaces-table'),
    );

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      const { words, x } = pullEmbeddings(s);
      const n = words.length;
      const i = Math.min(s.pullWord, n - 1);
      const w = { spWq: Float32Array.from(s.spWq), spWk: Float32Array.from(s.spWk), spWv: Float32Array.from(s.spWv) };
      const { q, k, v } = project(engine, x, n, 2, w.spWq, w.spWk, w.spWv);
      const r = engine.attention({ q, k, v, nq: n, nk: n, dk: 2, dv: 2, scale: 1, returnRawScores: true, returnWeights: true });
      const pts = { spWq: q, spWk: k, spWv: v };
      // One scale for the three planes, large enough for every word and basis vector.
      const limit = planeLimit(q, k, v, w.spWq, w.spWk, w.spWv);
      for (const m of mats) {
        m.table.update({ ...m.spec, values: w[m.key] });
        m.plane.update({ title: m.title, words, points: pts[m.key], w: w[m.key], colour: m.colour, limit });
      }
      const wt = r.weights!.subarray(i * n, (i + 1) * n);
      const out = r.output.subarray(i * 2, i * 2 + 2);
      summary.textContent = `“${words[i]}” is pulled to (${fmt(out[0], 3)}, ${fmt(out[1], 3)}) in the value space.`;
      const pair = (m: Float32Array, j: number) => `(${fmt(m[2 * j], 3)}, ${fmt(m[2 * j + 1], 3)})`;
      clear(table);
      table.append(
        el('caption', { text: `Each word in the three spaces, and how hard it pulls “${words[i]}”` }),
        el('thead', {}, el('tr', {}, ...['word', 'query q', 'key k', 'value v', `q_${words[i]}·k`, 'weight'].map((h) => el('th', { scope: 'col', text: h })))),
      );
      const body = el('tbody');
      for (let j = 0; j < n; j++) {
        body.appendChild(el('tr', { class: j === i ? 'chosen' : undefined }, el('th', { scope: 'row', text: words[j] }),
          el('td', { 'data-col': 'q', 'data-value': `${exact(q[2 * j])},${exact(q[2 * j + 1])}`, text: pair(q, j) }),
          el('td', { 'data-col': 'k', 'data-value': `${exact(k[2 * j])},${exact(k[2 * j + 1])}`, text: pair(k, j) }),
          el('td', { 'data-col': 'v', 'data-value': `${exact(v[2 * j])},${exact(v[2 * j + 1])}`, text: pair(v, j) }),
          el('td', { 'data-col': 'score', 'data-value': exact(r.rawScores![i * n + j]), text: fmt(r.rawScores![i * n + j], 3) }),
          el('td', { 'data-col': 'weight', 'data-value': exact(wt[j]), text: fmtProb(wt[j]) })));
      }
      body.appendChild(el('tr', { class: 'sum-row' }, el('th', { scope: 'row', text: `new ${words[i]}` }), el('td'), el('td'),
        el('td', { 'data-col': 'new', 'data-value': `${exact(out[0])},${exact(out[1])}`, text: `(${fmt(out[0], 3)}, ${fmt(out[1], 3)})` }), el('td'), el('td', { text: '1' })));
      table.appendChild(body);
      ctx.reportTiming('spaces', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (['spWq', 'spWk', 'spWv', 'pullSentence', 'pullWord', 'pullEdits'].some((k) => changed.has(k as never))) render(); });
    render();
  },
};
