// Seed 003's asymmetric pull: with one shared space the score of "bride pulls ring" equals that of "ring
// pulls bride" (x_ring·x_bride is symmetric); separate query and key transformations break the symmetry.
// Keys pull, queries are pulled: "bride pulls ring" is q_ring · k_bride. All numbers from the engine: the
// projections (multiHeadAttention), S = QKᵀ and A (attention), and S − Sᵀ, A − Aᵀ as raw scores of stacked
// rows ([M | I]·[I | −M]ᵀ = M − Mᵀ: one rounding per cell, so a symmetric M gives exactly 0).
import type { Lab, LabContext } from '../lab';
import { LIMITS } from '../../state/app-state';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { exact, fmt, fmtProb } from '../../ui/format';
import { toggle } from '../../ui/controls';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { Heatmap } from '../../ui/heatmap';
import { project } from '../../model/project';
import { SpacePlane } from './space-plane';
import type { Engine } from '../../engine';

export const ASYM_WORDS = ['bride', 'ring', 'wedding', 'boxing'];
/** One shared 2-D space (seed 003): bride and wedding together, ring between them and boxing. */
export const ASYM_X = [2, 0.2, 0.6, 1.8, 2.2, -0.4, -0.4, 1.8];

/** A − Aᵀ for an n × n matrix by the engine: raw scores of [A | I] against [I | −A]. */
export function antisym(engine: Engine, a: Float32Array, n: number): Float32Array {
  const left = new Float32Array(n * 2 * n);
  const right = new Float32Array(n * 2 * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      left[i * 2 * n + j] = a[i * n + j];
      right[i * 2 * n + n + j] = -a[i * n + j]; // a sign flip is exact
    }
    left[i * 2 * n + n + i] = 1;
    right[i * 2 * n + i] = 1;
  }
  return engine.attention({ q: left, k: right, v: new Float32Array(n), nq: n, nk: n, dk: 2 * n, dv: 1, scale: 1, returnRawScores: true }).rawScores!;
}

export const asymLab: Lab = {
  id: 'asym',
  nav: 'Asymmetric pull',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    const n = ASYM_WORDS.length;
    section.append(
      el('h2', { text: 'Asymmetric pull: bride and ring' }),
      el('p', { class: 'intro', text: '“Bride” should pull “ring” strongly (a bride suggests a wedding ring), but “ring” should pull “bride” only weakly (it could be a boxing ring or a phone call). With one shared space that is impossible: the dot product x_ring·x_bride is the same both ways. Give queries (the pulled words) and keys (the pulling words) their own transformations W_Q and W_K, and the two pulls come apart (seed 003).' }),
      tex(String.raw`\text{pull of } j \text{ on } i = q_i\cdot k_j = (x_i W_Q)\cdot(x_j W_K) \;\neq\; q_j \cdot k_i \text{ in general}`, true),
    );
    const sep = toggle('separate W_Q and W_K (off: one shared space, W_K = W_Q)', store.state.asymSeparate, (v) => store.update({ asymSeparate: v }), 'asym-separate');
    const cols = ['col 1', 'col 2'];
    const wSpec = (name: string, caption: string, key: 'asymWq' | 'asymWk', editable: boolean): MatrixSpec => ({
      name, caption, rows: 2, cols: 2, values: new Float32Array(4), rowLabels: ['row 1', 'row 2'], colLabels: cols, palette: 'div', showLegend: false,
      onEdit: editable ? (r, c, v) => store.update({ [key]: store.state[key].map((x, j) => (j === r * 2 + c ? Math.max(-LIMITS.kvAbs, Math.min(LIMITS.kvAbs, v)) : x)) }) : undefined,
    });
    const wq = new MatrixTable(wSpec('asym-Wq', 'W_Q (queries: pulled)', 'asymWq', true));
    const wk = new MatrixTable(wSpec('asym-Wk', 'W_K (keys: pulling)', 'asymWk', true));
    const keySpace = new SpacePlane('asym-keys');
    const querySpace = new SpacePlane('asym-queries');
    const pulls = el('table', { class: 'plain-table', 'data-table': 'asym-pull' });
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
      el('div', { class: 'heat-pair' },
        el('div', {}, el('h3', { text: 'Weights A' }), heatA.root),
        el('div', {}, el('h3', { text: 'A − Aᵀ: how lopsided each pair is' }), heatD.root)),
      el('p', { class: 'help', text: 'With one shared space S − Sᵀ is exactly 0; A − Aᵀ is not quite 0 even then, because softmax normalises each row on its own (a word with many close neighbours shares its attention more).' }),
      el('div', { class: 'matrix-row' }, tA.root, tS.root, tD.root),
    );

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      const mq = Float32Array.from(s.asymWq);
      const mk = s.asymSeparate ? Float32Array.from(s.asymWk) : mq;
      const x = Float32Array.from(ASYM_X);
      const { q, k } = project(engine, x, n, 2, mq, mk, mq);
      const r = engine.attention({ q, k, v: x, nq: n, nk: n, dk: 2, dv: 2, scale: 1, returnRawScores: true, returnWeights: true });
      const S = r.rawScores!, A = r.weights!;
      const SmSt = antisym(engine, S, n);
      const AmAt = antisym(engine, A, n);

      wq.update({ ...wSpec('asym-Wq', 'W_Q (queries: pulled)', 'asymWq', true), values: mq });
      wk.update({ ...wSpec('asym-Wk', s.asymSeparate ? 'W_K (keys: pulling)' : 'W_K = W_Q (shared space)', 'asymWk', s.asymSeparate), values: mk });
      keySpace.update({ title: 'Key space X·W_K (words pulling)', words: ASYM_WORDS, points: k, w: mk, colour: '#b35806' });
      querySpace.update({ title: 'Query space X·W_Q (words pulled)', words: ASYM_WORDS, points: q, w: mq, colour: '#5b93c7' });
      heatA.update({ name: 'asym-A', label: 'Attention weights A', n, m: n, values: A, rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS });
      heatD.update({ name: 'asym-AmAt', label: 'A − Aᵀ', n, m: n, values: AmAt, rowLabels: ASYM_WORDS, colLabels: ASYM_WORDS, palette: 'div' });
      tA.update({ ...tSpec('asym-A', 'A (row = query, column = key)', 'seq'), values: A, fixedMax: 1 });
      tS.update({ ...tSpec('asym-SmSt', 'S − Sᵀ (scores)', 'div'), values: SmSt });
      tD.update({ ...tSpec('asym-AmAt', 'A − Aᵀ (weights)', 'div'), values: AmAt });

      const B = 0, R = 1; // bride, ring
      clear(pulls);
      pulls.append(
        el('caption', { text: 'The two pulls' }),
        el('thead', {}, el('tr', {}, ...['', 'score q·k', 'weight'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {},
          el('tr', {}, el('th', { scope: 'row', text: 'bride pulls ring (q_ring · k_bride)' }),
            el('td', { 'data-col': 'score-br', 'data-value': exact(S[R * n + B]), text: fmt(S[R * n + B], 4) }),
            el('td', { 'data-col': 'weight-br', 'data-value': exact(A[R * n + B]), text: fmtProb(A[R * n + B]) })),
          el('tr', {}, el('th', { scope: 'row', text: 'ring pulls bride (q_bride · k_ring)' }),
            el('td', { 'data-col': 'score-rb', 'data-value': exact(S[B * n + R]), text: fmt(S[B * n + R], 4) }),
            el('td', { 'data-col': 'weight-rb', 'data-value': exact(A[B * n + R]), text: fmtProb(A[B * n + R]) }))),
      );
      ctx.reportTiming('asym', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (changed.has('asymSeparate') || changed.has('asymWq') || changed.has('asymWk')) render(); });
    render();
  },
};
