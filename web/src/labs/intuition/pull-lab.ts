// "Words pulling words", from the article of that image: in the fruit/tech plane, every word pulls the chosen word ("apple") with
// a strength softmax(x_apple · x_j), and the updated apple is the weighted average of all the words. Applying
// attention again pulls every word with the already-updated vectors. All numbers: engine.attention with
// Q = K = V = X and scale 1 (the article's plain dot product).
import type { Lab, LabContext } from '../lab';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { disclosure } from '../../ui/disclosure';
import { exact, fmt, fmtProb } from '../../ui/format';
import { buttonGroup, field, select as selectControl } from '../../ui/controls';
import { tokenize } from '../../text/tokenize';
import { wordVector } from '../../text/embeddings';
import { PullPlane } from './pull-plane';
import type { Engine } from '../../engine';
import type { AppState } from '../../state/app-state';
import { LIMITS } from '../../state/params';
import { INTUITION_LIMITS, PULL_SENTENCES } from './state';

const EMB_SEED = 1; // the attention lab's default seed: the same words sit in the same places

export interface PullState {
  words: string[];
  /** Positions after pullIters applications (n × 2). */
  x: Float32Array;
  /** Positions one application earlier (for the animation), when pullIters > 0. */
  prev?: Float32Array;
  chosen: number;
  raw: Float32Array;
  weights: Float32Array;
  output: Float32Array;
}

/** The chosen sentence's words and their (edited) 2-D embeddings X₀. */
export function pullEmbeddings(s: AppState): { words: string[]; x: Float32Array } {
  const { words } = tokenize(PULL_SENTENCES[s.pullSentence], LIMITS.tokens);
  const x = new Float32Array(words.length * 2);
  words.forEach((w, i) => {
    const v = wordVector(w, 2, EMB_SEED);
    for (let c = 0; c < 2; c++) x[i * 2 + c] = s.pullEdits.get(`${w}.${c}`) ?? v[c];
  });
  return { words, x };
}

export function runPull(engine: Engine, s: AppState): PullState {
  const e = pullEmbeddings(s);
  const { words } = e;
  const n = words.length;
  let x: Float32Array = e.x;
  const attend = (m: Float32Array, extra = false) => engine.attention({
    q: m, k: m, v: m, nq: n, nk: n, dk: 2, dv: 2, scale: 1, returnRawScores: extra, returnWeights: extra,
  });
  let prev: Float32Array | undefined;
  for (let t = 0; t < s.pullIters; t++) {
    prev = x;
    x = attend(x).output;
  }
  const r = attend(x, true);
  return { words, x, prev, chosen: Math.min(s.pullWord, n - 1), raw: r.rawScores!, weights: r.weights!, output: r.output };
}

export const pullLab: Lab = {
  id: 'pull',
  nav: 'Pulling',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Words pulling words' }),
      el('p', { class: 'intro', text: '“Apple” sits between the fruits and the tech words: it is both. In a sentence, the other words pull it towards the meaning they share with it. The pull of each word is its softmax weight, softmax of the dot products with apple, and the new apple is the weighted average of all the words. Drag a word (or focus it and use the arrow keys, Shift for bigger steps); click or press Enter on a word to watch it being pulled instead.' }),
      tex(String.raw`\text{apple}' = \sum_j \operatorname{softmax}_j(x_{\text{apple}}\cdot x_j)\; x_j`, true),
    );
    const plane = new PullPlane();
    const chooser = el('div', { class: 'pull-chooser' });
    const status = el('p', { class: 'pull-status', 'aria-live': 'polite' });
    const collapse = el('p', { class: 'callout', 'data-output': 'pull-collapse', 'aria-live': 'polite' });
    const table = el('table', { class: 'plain-table', 'data-table': 'pull' });
    let animateNext = false;
    const controls = buttonGroup('Pull controls', [
      { label: '▶ Animate the pull', name: 'pull-animate', onClick: () => plane.playMove() },
      { label: 'Apply attention again', name: 'pull-apply', title: 'Move every word to its updated vector, then pull again', onClick: () => {
        if (store.state.pullIters < INTUITION_LIMITS.pullIters) { animateNext = true; store.update({ pullIters: store.state.pullIters + 1 }); }
      } },
      { label: 'Back to the embeddings', name: 'pull-reset', onClick: () => store.update({ pullIters: 0 }) },
      { label: 'Reset positions', name: 'pull-reset-edits', onClick: () => store.update({ pullEdits: new Map(), pullIters: 0 }) },
    ]);
    section.append(chooser, controls, status, collapse,
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' }, plane.root, el('p', { class: 'help', text: 'Line width = how hard each word pulls. The arrow goes from the word to its updated vector (the ring).' })),
        // The numbers behind the picture: beside it on a wide screen, folded under it on a phone.
        el('div', { class: 'panel' }, disclosure('The pulls as a table', el('div', { class: 'table-scroll' }, table), 'pull-table',
          window.matchMedia('(min-width: 900px)').matches))));

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      const p = runPull(engine, s);
      const n = p.words.length;
      const i = p.chosen;
      clear(chooser);
      chooser.append(
        field('Sentence', selectControl(PULL_SENTENCES.map((t, k) => ({ value: String(k), label: t })), String(s.pullSentence), (v) => {
          const words = tokenize(PULL_SENTENCES[Number(v)], LIMITS.tokens).words;
          store.update({ pullSentence: Number(v), pullWord: Math.max(0, words.indexOf('apple')), pullIters: 0 });
        }, 'pull-sentence')),
        field('Word being pulled', selectControl(p.words.map((w, k) => ({ value: String(k), label: w })), String(i), (v) => store.update({ pullWord: Number(v) }), 'pull-word')),
      );
      const w = p.weights.subarray(i * n, (i + 1) * n);
      const u: [number, number] = [p.output[2 * i], p.output[2 * i + 1]];
      plane.update({
        words: p.words, points: p.x, from: animateNext ? p.prev : undefined, chosen: i, weights: w, updated: u,
        onMove: (j, x, y) => {
          const edits = new Map(store.state.pullEdits);
          edits.set(`${p.words[j]}.0`, x);
          edits.set(`${p.words[j]}.1`, y);
          store.update({ pullEdits: edits, pullIters: 0 });
        },
        onChoose: (j) => store.update({ pullWord: j }),
      });
      animateNext = false;

      let best = -1;
      w.forEach((v, j) => { if (j !== i && (best < 0 || v > w[best])) best = j; });
      collapse.hidden = s.pullIters === 0;
      collapse.textContent = s.pullIters === 0 ? '' : `Applied ${s.pullIters} time${s.pullIters > 1 ? 's' : ''}. Each application moves every word to a weighted average of all the words, and an average of averages draws them together: apply it a few more times and the words bunch into one knot. That collapse is expected from repeating a plain average. In a real model attention is one layer among many, each adding its result to the word’s own vector, with learned W_Q, W_K, W_V, so the words keep their differences. “Back to the embeddings” undoes it.`;
      // Lead with the largest weight in the row, the word's own when it is largest.
      const pull = w[i] >= w[best]
        ? `the largest weight of “${p.words[i]}” is on itself (${fmtProb(w[i])}); of the other words “${p.words[best]}” pulls it hardest (${fmtProb(w[best])}). It moves`
        : `“${p.words[i]}” is pulled hardest by “${p.words[best]}” (${fmtProb(w[best])}, its own weight ${fmtProb(w[i])}) and moves`;
      status.textContent = `${s.pullIters === 0 ? 'Original embeddings' : `After applying attention ${s.pullIters} time${s.pullIters > 1 ? 's' : ''}`}: ${pull} from (${fmt(p.x[2 * i], 3)}, ${fmt(p.x[2 * i + 1], 3)}) to (${fmt(u[0], 3)}, ${fmt(u[1], 3)}).`;

      clear(table);
      table.append(
        el('caption', { text: `How each word pulls “${p.words[i]}”` }),
        el('thead', {}, el('tr', {},
          el('th', { scope: 'col', text: 'word' }), el('th', { scope: 'col', text: 'fruit' }), el('th', { scope: 'col', text: 'tech' }),
          el('th', { scope: 'col', text: `x·${p.words[i]}` }), el('th', { scope: 'col', text: 'pull' }))),
      );
      const body = el('tbody');
      for (let j = 0; j < n; j++) {
        body.appendChild(el('tr', { class: j === i ? 'chosen' : undefined },
          el('th', { scope: 'row', text: p.words[j] }),
          el('td', { 'data-col': 'x0', 'data-value': exact(p.x[2 * j]), text: fmt(p.x[2 * j], 3) }),
          el('td', { 'data-col': 'x1', 'data-value': exact(p.x[2 * j + 1]), text: fmt(p.x[2 * j + 1], 3) }),
          el('td', { 'data-col': 'score', 'data-value': exact(p.raw[i * n + j]), text: fmt(p.raw[i * n + j], 3) }),
          el('td', { 'data-col': 'weight', 'data-value': exact(w[j]), text: fmtProb(w[j]) })));
      }
      body.appendChild(el('tr', { class: 'sum-row' }, el('th', { scope: 'row', text: `new ${p.words[i]}` }),
        el('td', { 'data-col': 'new0', 'data-value': exact(u[0]), text: fmt(u[0], 3) }),
        el('td', { 'data-col': 'new1', 'data-value': exact(u[1]), text: fmt(u[1], 3) }), el('td'), el('td', { text: '1' })));
      table.appendChild(body);
      ctx.reportTiming('pull', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (['pullSentence', 'pullWord', 'pullEdits', 'pullIters'].some((k) => changed.has(k as never))) render(); });
    render();
  },
};
