// Asymmetric pull (the words-pulling-words article's bride and ring): with one shared space the score of "bride
// pulls ring" equals that of "ring pulls bride" (x_ring·x_bride is symmetric); separate query and key
// transformations break the symmetry. Keys pull, queries are pulled: "bride pulls ring" is q_ring · k_bride.
// The projections (two matrix products) and S = QKᵀ, A (one attention call) are the engine's; S − Sᵀ and A − Aᵀ
// are the page's own float32 subtractions (one rounding per cell, so a symmetric S gives exactly 0).
import type { Lab, LabContext } from '../lab';
import { INTUITION_LIMITS } from './state';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { exact, fmt, fmtProb } from '../../ui/format';
import { toggle } from '../../ui/controls';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { Heatmap } from '../../ui/heatmap';
import { disclosure } from '../../ui/disclosure';
import { SpacePlane, planeLimit } from './space-plane';

export const ASYM_WORDS = ['bride', 'ring', 'wedding', 'boxing'];
/** One shared 2-D space: bride and wedding together, ring between them and boxing. */
export const ASYM_X = [2, 0.2, 0.6, 1.8, 2.2, -0.4, -0.4, 1.8];

/** M − Mᵀ for an n × n matrix, each cell one float32 subtraction (the page's arithmetic). */
export function antisym(a: Float32Array, n: number): Float32Array {
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i * n + j] = Math.fround(a[i * n + j] - a[j * n + i]);
  return out;
}

export const asymLab: Lab = {
  id: 'asym',
  nav: 'Asymmetry',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    const n = ASYM_WORDS.length;
    section.append(
      el('h2', { text: 'Asymmetric pull: bride and ring' }),
      el('p', { class: 'intro', text: '“Bride” should pull “ring” strongly (a bride suggests a wedding ring), but “ring” should pull “bride” only weakly (it could be a boxing ring or a phone call). With one shared space that is impossible: the dot product x_ring·x_bride is the same both ways. Give queries (the pulled words) and keys (the pulling words) their own transformations W_Q and W_K, and the two pulls come apart.' }),
      tex(String.raw`\text{pull of } j \text{ on } i = q_i\cdot k_j = (x_i W_Q)\cdot(x_j W_K) \;\neq\; q_j \cdot k_i \text{ in general}`, true),
    );
    const sep = toggle('separate W_Q and W_K (off: one shared space, W_K = W_Q)', store.state.asymSeparate, (v) => store.update({ asymSeparate: v }), 'asym-separate');
    const cols = ['col 1', 'col 2'];
    const wSpec = (name: string, caption: string, key: 'asymWq' | 'asymWk', editable: boolean): MatrixSpec => ({
      name, caption, rows: 2, cols: 2, values: new Float32Array(4), rowLabels: ['row 1', 'row 2'], colLabels: cols, palette: 'div', showLegend: false, limit: INTUITION_LIMITS.kvAbs,
      onEdit: editable ? (r, c, v) => store.update({ [key]: store.state[key].map((x, j) => (j === r * 2 + c ? v : x)) }) : undefined,
    });
    const wq = new MatrixTable(wSpec('asym-Wq', 'W_Q (queries: pulled)', 'asymWq', true));
    const wk = new MatrixTable(wSpec('asym-Wk', 'W_K (keys: pulling)', 'asymWk', true));
    const keySpace = new SpacePlane('asym-keys');
    const querySpace = new SpacePlane('asym-queries');
    const pulls = el('table', { class: 'plain-table', 'data-table': 'asym-pull' });
    const why = el('div', { class: 'callout', 'data-output': 'asym-why', 'aria-live': 'polite' });
    const heatA = new Heatmap({ name: 'asym-A', label: 'Attention weights A', n, m: n, values: new Float32Array(n * n), rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS });
    const heatD = new Heatmap({ name: 'asym-AmAt', label: 'A − Aᵀ', n, m: n, values: new Float32Array(n * n), rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS, palette: 'div' });
    const tSpec = (name: string, caption: string, palette: MatrixSpec['palette']): MatrixSpec =>
      ({ name, caption, rows: n, cols: n, values: new Float32Array(n * n), rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS, palette });
    const tA = new MatrixTable(tSpec('asym-A', 'A (row = query, column = key)', 'seq'));
    const tS = new MatrixTable(tSpec('asym-SmSt', 'S − Sᵀ (scores)', 'div'));
    const tD = new MatrixTable(tSpec('asym-AmAt', 'A − Aᵀ (weights)', 'div'));
    section.append(
      sep.root,
      el('div', { class: 'matrix-row' }, wq.root, wk.root),
      el('div', { class: 'matrix-row spaces' }, keySpace.root, querySpace.root),
      el('div', { class: 'table-scroll' }, pulls),
      why,
      el('div', { class: 'heat-pair' },
        el('div', {}, el('h3', { text: 'Weights A' }), heatA.root),
        el('div', {}, el('h3', { text: 'A − Aᵀ: how lopsided each pair is' }), heatD.root)),
      disclosure('The numbers as tables: A, S − Sᵀ and A − Aᵀ', el('div', { class: 'matrix-row' }, tA.root, tS.root, tD.root), 'asym-tables'),
    );

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      const mq = Float32Array.from(s.asymWq);
      const mk = s.asymSeparate ? Float32Array.from(s.asymWk) : mq;
      const x = Float32Array.from(ASYM_X);
      const q = engine.matmul(x, mq, { m: n, k: 2, n: 2 });
      const k = s.asymSeparate ? engine.matmul(x, mk, { m: n, k: 2, n: 2 }) : q;
      const r = engine.attention({ q, k, v: x, nq: n, nk: n, dk: 2, dv: 2, scale: 1, returnRawScores: true, returnWeights: true });
      const S = r.rawScores!, A = r.weights!;
      const SmSt = antisym(S, n);
      const AmAt = antisym(A, n);

      const limit = planeLimit(q, k, mq, mk);
      wq.update({ ...wSpec('asym-Wq', 'W_Q (queries: pulled)', 'asymWq', true), values: mq });
      wk.update({ ...wSpec('asym-Wk', s.asymSeparate ? 'W_K (keys: pulling)' : 'W_K = W_Q (shared space)', 'asymWk', s.asymSeparate), values: mk });
      keySpace.update({ title: 'Key space X·W_K (words pulling)', words: ASYM_WORDS, points: k, w: mk, colour: '#b35806', limit });
      querySpace.update({ title: 'Query space X·W_Q (words pulled)', words: ASYM_WORDS, points: q, w: mq, colour: '#5b93c7', limit });
      heatA.update({ name: 'asym-A', label: 'Attention weights A', n, m: n, values: A, rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS });
      heatD.update({ name: 'asym-AmAt', label: 'A − Aᵀ', n, m: n, values: AmAt, rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS, palette: 'div' });
      tA.update({ ...tSpec('asym-A', 'A (row = query, column = key)', 'seq'), values: A, fixedMax: 1 });
      tS.update({ ...tSpec('asym-SmSt', 'S − Sᵀ (scores)', 'div'), values: SmSt });
      tD.update({ ...tSpec('asym-AmAt', 'A − Aᵀ (weights)', 'div'), values: AmAt });

      const B = 0, R = 1; // bride, ring
      clear(pulls);
      pulls.append(
        el('caption', { text: 'The two pulls' }),
        el('thead', {}, el('tr', {}, el('td'), ...['score q·k', 'weight'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {},
          el('tr', {}, el('th', { scope: 'row', text: 'bride pulls ring (q_ring · k_bride)' }),
            el('td', { 'data-col': 'score-br', 'data-value': exact(S[R * n + B]), text: fmt(S[R * n + B], 4) }),
            el('td', { 'data-col': 'weight-br', 'data-value': exact(A[R * n + B]), text: fmtProb(A[R * n + B]) })),
          el('tr', {}, el('th', { scope: 'row', text: 'ring pulls bride (q_bride · k_ring)' }),
            el('td', { 'data-col': 'score-rb', 'data-value': exact(S[B * n + R]), text: fmt(S[B * n + R], 4) }),
            el('td', { 'data-col': 'weight-rb', 'data-value': exact(A[B * n + R]), text: fmtProb(A[B * n + R]) }))),
      );

      // Why the weights can differ even when the scores agree: each weight is a share of its own row.
      const lead = (row: number) => {
        let best = 0;
        for (let j = 1; j < n; j++) if (S[row * n + j] > S[row * n + best]) best = j;
        return `${best === row ? `${ASYM_WORDS[row]} itself` : `“${ASYM_WORDS[best]}”`} (score ${fmt(S[row * n + best], 2)})`;
      };
      clear(why);
      if (s.asymSeparate) {
        why.append(el('strong', { text: 'Two spaces, two different scores. ' }),
          `With its own W_K, the key space is turned against the query space, so q_ring·k_bride = ${fmt(S[R * n + B], 3)} but q_bride·k_ring = ${fmt(S[B * n + R], 3)}: bride pulls ring with weight ${fmtProb(A[R * n + B])}, ring pulls bride with only ${fmtProb(A[B * n + R])}. Switch it off to share one space.`);
      } else {
        why.append(el('strong', { text: 'One space: the scores are equal, the weights are not. ' }),
          `Both scores are ${fmt(S[R * n + B], 3)}. But a weight is a share of one row: softmax divides each score by the sum over everything in that row. Ring’s row is led by ${lead(R)}, bride’s row by ${lead(B)}. Same score, different competition: bride gets ${fmtProb(A[R * n + B])} of ring’s attention, ring gets ${fmtProb(A[B * n + R])} of bride’s. S − Sᵀ (in the tables below) is exactly 0; A − Aᵀ is not.`);
      }
      ctx.reportTiming('asym', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (changed.has('asymSeparate') || changed.has('asymWq') || changed.has('asymWk')) render(); });
    render();
  },
};
