// Where a word is: attention itself cannot tell. Without positions, "the dog chased the cat" and "the cat chased the
// dog" give the same weights, shuffled (computed with the trained model's embeddings and the engine); learned position
// vectors fix that; rotary positions (RoPE) turn each pair of coordinates by an angle that grows with the position,
// so a query–key dot product depends only on their distance (lab.rope, live); and a model trained on n positions,
// measured past them.
import '../../styles/position.css';
import type { Lab, LabContext } from '../lab';
import type { Engine } from '../../engine';
import { el, clear } from '../../ui/dom';
import { wasmFiles } from '../../engine-files';
import { tex } from '../../ui/katex';
import { fmt } from '../../ui/format';
import { Heatmap } from '../../ui/heatmap';
import { legend } from '../../ui/legend';
import { makeScale } from '../../ui/palette';
import { LossChart } from '../../ui/loss-chart';
import { trainedInput, trainedModel, onTrainedChange, type TrainedModel } from '../../model/trained';
import { RopeFigure } from './rope-figure';
import { shippedPositions } from '../../model/shipped-positions';
import type { ContextMessage, ContextRequest } from '../../workers/context-run';
import TrainWorker from '../../workers/train-worker.ts?worker';

const A = ['the', 'dog', 'chased', 'the', 'cat'];
const B = ['the', 'cat', 'chased', 'the', 'dog'];

/** Layer-1 attention of the trained model's head `h` on X (n × d): weights and outputs, all from the engine. */
function attend(engine: Engine, m: TrainedModel, x: Float32Array, n: number, h: number, causal: boolean) {
  const d = m.dModel, dk = m.dk;
  const q = engine.matmul(x, m.wq[h], { m: n, k: d, n: dk });
  const k = engine.matmul(x, m.wk[h], { m: n, k: d, n: dk });
  const v = engine.matmul(x, m.wv[h], { m: n, k: d, n: dk });
  const r = engine.attention({ q, k, v, nq: n, nk: n, dk, dv: dk, causal, returnWeights: true });
  return { weights: r.weights!, output: r.output };
}

/** Cosine similarity of every pair of T position vectors (rows of wpe, d wide): dot products by the engine. */
function cosines(engine: Engine, wpe: Float32Array, T: number, d: number): Float32Array {
  const dots = engine.matmul(wpe.subarray(0, T * d), wpe.subarray(0, T * d), { m: T, k: d, n: T, transposeB: true });
  const cos = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) cos[i * T + j] = dots[i * T + j] / Math.sqrt(dots[i * T + i] * dots[j * T + j]);
  return cos;
}

/** Mean similarity of neighbouring positions and of positions 8 or more apart. */
function nearFar(cos: Float32Array, T: number): { near: number; far: number } {
  let near = 0, nn = 0, far = 0, nf = 0;
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    if (Math.abs(i - j) === 1) { near += cos[i * T + j]; nn++; }
    if (Math.abs(i - j) >= 8) { far += cos[i * T + j]; nf++; }
  }
  return { near: near / nn, far: far / nf };
}

/** X without positions: LayerNorm of the token embeddings alone (a model with no position information). */
function tokensOnly(m: TrainedModel, words: string[]): Float32Array {
  const zero = { ...m, wpe: new Float32Array(m.wpe.length) };
  return trainedInput(zero, words).x;
}

export const positionLab: Lab = {
  id: 'position',
  nav: 'Positions',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine } = ctx;
    section.append(
      el('h2', { text: 'Where is each word? Positions' }),
      el('p', { class: 'intro', text: 'Attention compares every query with every key, but nothing in softmax(QKᵀ/√d_k)V says where a word stands. Shuffle the words and each one gets the same scores with the same neighbours, only in another order. Models add position information to the embeddings (learned position vectors) or turn the queries and keys by their position (rotary positions, RoPE).' }),
    );

    // --- 1. permutation blindness ------------------------------------------------------------------------------
    const permNote = el('p', { class: 'position-claim', 'data-figure': 'perm-claim' });
    const posNote = el('p', { class: 'position-claim', 'data-figure': 'perm-positions-claim' });
    const heatA = new Heatmap({ name: 'perm-a', label: 'Weights without positions: the dog chased the cat', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 40 });
    const heatB = new Heatmap({ name: 'perm-b', label: 'Weights without positions: the cat chased the dog', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 40 });
    const permTable = el('table', { class: 'plain-table', 'data-table': 'perm-outputs' });
    section.append(
      el('h3', { text: 'Without positions, word order is invisible' }),
      el('p', { text: 'The trained model’s embeddings and its layer-1 head 2 (see “Self-attention, step by step” with trained weights), with the position vectors left out and no causal mask: two sentences with the same words in another order.' }),
      el('div', { class: 'two-col' }, el('figure', { class: 'panel' }, el('figcaption', { text: '“the dog chased the cat”' }), heatA.root), el('figure', { class: 'panel' }, el('figcaption', { text: '“the cat chased the dog”' }), heatB.root)),
      permNote, el('div', { class: 'table-scroll' }, permTable), posNote,
    );

    // --- 2. learned positions --------------------------------------------------------------------------------
    const posHeat = new Heatmap({ name: 'pos-cos', label: 'Cosine similarity of the learned position vectors', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 18, palette: 'div' });
    const posClaim = el('p', { class: 'position-claim', 'data-figure': 'learned-claim' });
    // Each grid of cosines as a figure: its title, its colour scale (the heatmap's own: cosines lie in [−1, 1]), the grid.
    const cosFigure = (name: string, heat: Heatmap) => {
      const title = el('figcaption', { 'data-role': `${name}-title` });
      const scale = el('div', { 'data-role': `${name}-legend` });
      const figure = el('figure', { class: 'panel cos-figure', 'data-figure': name }, title, scale, heat.root);
      return {
        figure,
        show(text: string, cos: Float32Array) {
          title.textContent = text;
          clear(scale);
          scale.appendChild(legend(makeScale('div', cos), 'cosine similarity'));
        },
      };
    };
    const posFig = cosFigure('pos-cos', posHeat);
    section.append(
      el('h3', { text: 'Learned positions: one trained vector per place' }),
      el('p', { text: 'GPT-2 and the model here add a learned vector to each token’s embedding: one for position 1, one for position 2, … up to the context length. Nothing says that positions 3 and 4 are neighbours; training has to find it. Below, the cosine similarity of every pair of the trained model’s position vectors (their dot products by the engine, divided by their lengths on the page).' }),
      posFig.figure, posClaim,
    );
    // The real model that ships with the page learned its own position vectors on English text: the same picture, on
    // request (its weights file is fetched then).
    const REAL_SHOWN = 32;
    const realBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'pos-real', text: 'Show the real model’s position vectors' });
    const realHeat = new Heatmap({ name: 'pos-cos-real', label: 'Cosine similarity of the real model’s learned position vectors', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 18, palette: 'div' });
    const realClaim = el('p', { class: 'position-claim', 'data-figure': 'learned-real-claim', 'aria-live': 'polite' });
    const realFig = cosFigure('pos-cos-real', realHeat);
    realFig.figure.hidden = true;
    realBtn.addEventListener('click', () => {
      realBtn.disabled = true;
      realClaim.textContent = 'Loading the model’s weights…';
      shippedPositions().then(({ wpe, positions, dModel }) => {
        const T = Math.min(REAL_SHOWN, positions);
        const cos = cosines(engine, wpe, T, dModel);
        const labels = Array.from({ length: T }, (_, i) => String(i + 1));
        realFig.figure.hidden = false;
        realBtn.hidden = true;  // (done: the figure is there; a greyed "Show" read as if it had not worked)
        realFig.show(`The real model’s first ${T} position vectors: the cosine similarity of every pair (rows and columns: positions)`, cos);
        realHeat.update({ name: 'pos-cos-real', label: 'Cosine similarity of the real model’s learned position vectors', n: T, m: T, values: cos, rowLabels: labels, colLabels: labels, maxCell: 18, palette: 'div' });
        const { near, far } = nearFar(cos, T);
        section.dataset.realPosNear = near.toFixed(4);
        section.dataset.realPosFar = far.toFixed(4);
        realClaim.textContent = `The real model that ships with the page (GPT-2’s layout) has ${positions} learned position vectors of ${dModel} numbers; its first ${T} are drawn. Neighbouring positions there have cosine similarity ${fmt(near, 2)} on average, positions 8 or more apart ${fmt(far, 2)}. ${near > far + 0.1 ? 'Trained on English, it too made neighbours more alike than distant positions.' : 'Neighbours are not much more alike than distant positions here.'}`;
      }).catch((e: Error) => { realClaim.textContent = `The model’s weights did not load: ${e.message}`; realBtn.disabled = false; });
    });
    section.append(realBtn, realFig.figure, realClaim);

    // --- 3. RoPE ---------------------------------------------------------------------------------------------
    const rope = new RopeFigure(engine);
    section.append(
      el('h3', { text: 'Rotary positions: turn each pair of coordinates' }),
      el('p', { text: 'RoPE treats a query or key as pairs of coordinates and turns pair i at position m by the angle m·θᵢ. Turning q by mθ and k by nθ changes their dot product only through the difference: q·k depends on m − n, the distance, not on where the two words are. Here d_k = 2 (one pair, θ = 1 radian per position), rotated by the engine’s lab.rope.' }),
      tex(String.raw`R_{m\theta}\,q \cdot R_{n\theta}\,k \;=\; q^{\top} R_{(n-m)\theta}\, k`, true),
      rope.root,
    );

    // --- 4. the context is full ------------------------------------------------------------------------------
    const TRAINED = 12, CONTEXT = 24, STEPS = 1200;
    const runBtn = el('button', { type: 'button', class: 'chip learn-train', 'data-control': 'context-run', text: 'Measure' });
    const progress = el('p', { class: 'help', role: 'status' });
    const chart = new LossChart('context-loss', 'Loss at each position', 'position in the window');
    const legendList = el('ul', { class: 'learn-legend' });
    for (const [label, colour] of [['learned positions', '#b35806'], ['rotary positions', '#1f4e89']]) {
      const sw = el('span', { class: 'learn-swatch' });
      sw.style.setProperty('--swatch', colour);
      legendList.appendChild(el('li', {}, sw, label));
    }
    const ctxClaim = el('p', { class: 'position-claim', 'data-figure': 'context-claim', 'aria-live': 'polite' });
    section.append(
      el('h3', { text: 'When the context is full' }),
      el('p', { text: `A model only knows the positions it was trained on. Measure it: two small models (one with learned positions, one with rotary positions; 1 layer, d_model 32) train here on the words corpus for ${STEPS.toLocaleString('en')} steps, learning to predict only the first ${TRAINED} words of each window, then predict every word of windows of ${CONTEXT}. Their loss at each position is plotted; positions ${TRAINED + 1}–${CONTEXT} were never trained. That is ${(2 * STEPS).toLocaleString('en')} training steps: a few seconds on a laptop, longer on a busy or small machine. The two models train side by side, each in a Web Worker, so the page stays usable; the line under the button shows each model’s step, the time so far and an estimate of the time left.` }),
      el('div', { class: 'button-group' }, runBtn), progress, chart.root, legendList, ctxClaim,
    );
    const results: Partial<Record<'learned' | 'rope', number[]>> = {};
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const drawContext = () => {
      const series = (['learned', 'rope'] as const).filter((p) => results[p]).map((p) => ({
        key: p, label: p === 'learned' ? 'learned positions' : 'rotary positions', colour: p === 'learned' ? '#b35806' : '#1f4e89',
        points: results[p]!.map((l, t) => [t + 1, l] as [number, number]),
      }));
      chart.update(series, [{ y: Math.log(wordsVocab()), label: 'guessing' }]);
      const parts: string[] = [];
      for (const s of series) {
        const l = results[s.key as 'learned' | 'rope']!;
        const inside = mean(l.slice(1, TRAINED)), past = mean(l.slice(TRAINED));
        const verdict = past > 1.5 * inside ? 'much worse' : past > 1.1 * inside ? 'worse' : 'about as well';
        parts.push(`${s.label}: mean loss ${fmt(inside, 2)} at positions 2–${TRAINED}, ${fmt(past, 2)} at ${TRAINED + 1}–${CONTEXT} (${verdict} past the trained positions)`);
        section.dataset[s.key === 'learned' ? 'contextLearned' : 'contextRope'] = `${inside.toFixed(4)},${past.toFixed(4)}`;
      }
      ctxClaim.textContent = parts.length ? `Measured: ${parts.join('; ')}.` : '';
    };
    let workers: Worker[] = [];
    const stop = () => { workers.forEach((w) => w.terminate()); workers = []; };
    const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
    runBtn.addEventListener('click', () => {
      stop();
      delete results.learned; delete results.rope;
      delete section.dataset.contextLearned; delete section.dataset.contextRope;
      drawContext();
      runBtn.disabled = true;
      const t0 = performance.now();
      const step = { learned: 0, rope: 0 };
      progress.textContent = `Starting two training workers (${STEPS.toLocaleString('en')} steps each)…`;
      const say = () => {
        const ms = performance.now() - t0, done = step.learned + step.rope;
        // Time left from the pace so far (both models train at about the same rate); the held-out loss at the end is
        // one forward pass, small next to the training.
        const left = done > 0 ? ms * (2 * STEPS - done) / done : NaN;
        progress.textContent = `Training, side by side: learned positions step ${step.learned} of ${STEPS}, rotary positions step ${step.rope} of ${STEPS}. ${secs(ms)} so far${Number.isFinite(left) ? `, about ${secs(left)} left` : ''}.`;
      };
      for (const position of ['learned', 'rope'] as const) {
        const worker = new TrainWorker(); // the training worker's script, one instance per model
        workers.push(worker);
        worker.addEventListener('message', (e: MessageEvent<ContextMessage>) => {
          const m = e.data;
          if (m.type === 'progress') { step[m.position] = m.step; say(); }
          else if (m.type === 'result') {
            results[m.position] = m.loss;
            drawContext();
            if (results.learned && results.rope) {
              progress.textContent = `Done in ${secs(performance.now() - t0)}: two models × ${STEPS.toLocaleString('en')} steps, then the loss at every position of 64 held-out windows.`;
              runBtn.disabled = false;
              stop();
            }
          } else if (m.type === 'error') { progress.textContent = `Failed: ${m.message}`; runBtn.disabled = false; stop(); }
        });
        worker.postMessage({ type: 'context', trained: TRAINED, context: CONTEXT, steps: STEPS, positions: [position], wasm: wasmFiles } satisfies ContextRequest);
      }
    });
    drawContext();

    // --- render the trained-model figures ----------------------------------------------------------------------
    const render = () => {
      const t0 = performance.now();
      const m = trainedModel();
      section.classList.toggle('is-empty', !m);
      if (!m) return;
      const h = Math.min(1, m.heads - 1);
      const n = A.length;
      const xa = tokensOnly(m, A), xb = tokensOnly(m, B);
      const ra = attend(engine, m, xa, n, h, false), rb = attend(engine, m, xb, n, h, false);
      const lab = (ws: string[]) => ws.map((w, i) => `${i + 1} ${w}`);
      heatA.update({ name: 'perm-a', label: 'Weights without positions: the dog chased the cat', n, m: n, values: ra.weights, rowLabels: lab(A), colLabels: lab(A), maxCell: 40 });
      heatB.update({ name: 'perm-b', label: 'Weights without positions: the cat chased the dog', n, m: n, values: rb.weights, rowLabels: lab(B), colLabels: lab(B), maxCell: 40 });
      // B is A with positions 2 and 5 swapped: word i of A is word perm[i] of B.
      const perm = [0, 4, 2, 3, 1];
      let wDiff = 0, oDiff = 0;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) wDiff = Math.max(wDiff, Math.abs(ra.weights[i * n + j] - rb.weights[perm[i] * n + perm[j]]));
        for (let c = 0; c < m.dk; c++) oDiff = Math.max(oDiff, Math.abs(ra.output[i * m.dk + c] - rb.output[perm[i] * m.dk + c]));
      }
      section.dataset.permWeightDiff = String(wDiff);
      section.dataset.permOutputDiff = String(oDiff);
      const same = (x: number) => (x === 0 ? 'exactly 0' : `${x.toExponential(1)} (float32 rounding: the sums run in another order)`);
      permNote.textContent = `Every weight of the first sentence reappears in the second, moved with its words: the largest difference between matching weights is ${same(wDiff)}, and between the output rows of the same word ${same(oDiff)}. “dog” gets the same context vector whether it chased or was chased.`;
      clear(permTable);
      const dogA = 1, dogB = 4;
      permTable.append(el('caption', { text: 'The output row of “dog” (head 2), in each sentence' }),
        el('tbody', {},
          el('tr', {}, el('th', { scope: 'row', text: 'the dog chased the cat' }), ...Array.from(ra.output.subarray(dogA * m.dk, (dogA + 1) * m.dk), (v) => el('td', { text: fmt(v, 4) }))),
          el('tr', {}, el('th', { scope: 'row', text: 'the cat chased the dog' }), ...Array.from(rb.output.subarray(dogB * m.dk, (dogB + 1) * m.dk), (v) => el('td', { text: fmt(v, 4) })))));
      // With the model's own input (positions added) and its causal mask, the same word gets different outputs.
      const pa = attend(engine, m, trainedInput(m, A).x, n, h, true), pb = attend(engine, m, trainedInput(m, B).x, n, h, true);
      let pDiff = 0;
      for (let c = 0; c < m.dk; c++) pDiff = Math.max(pDiff, Math.abs(pa.output[dogA * m.dk + c] - pb.output[dogB * m.dk + c]));
      section.dataset.posOutputDiff = String(pDiff);
      posNote.textContent = `Add the model’s position vectors (and its causal mask) and the two “dog”s differ: their output rows are up to ${fmt(pDiff, 3)} apart.`;

      // Learned positions: cosine similarity of wpe rows.
      const T = m.context, d = m.dModel;
      const cos = cosines(engine, m.wpe, T, d);
      const labels = Array.from({ length: T }, (_, i) => String(i + 1));
      posFig.show(`The trained model’s ${T} position vectors: the cosine similarity of every pair (rows and columns: positions)`, cos);
      posHeat.update({ name: 'pos-cos', label: 'Cosine similarity of the learned position vectors', n: T, m: T, values: cos, rowLabels: labels, colLabels: labels, maxCell: 18, palette: 'div' });
      const { near, far } = nearFar(cos, T);
      section.dataset.posNear = near.toFixed(4);
      section.dataset.posFar = far.toFixed(4);
      posClaim.textContent = `Measured on the ${T} learned vectors: neighbouring positions have cosine similarity ${fmt(near, 2)} on average, positions 8 or more apart ${fmt(far, 2)}. ${near > far + 0.1 ? 'Training made neighbours more alike than distant positions, though nothing told it which positions were neighbours.' : 'Neighbours are not much more alike than distant positions here.'}`;
      ctx.reportTiming('position', performance.now() - t0);
    };
    onTrainedChange(render);
    render();
    rope.render();
  },
};

function wordsVocab(): number { return trainedModel()?.vocab.length ?? 59; }
