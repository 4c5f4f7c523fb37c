// Multi-head lab: several heads attend in parallel in their own d_k-wide spaces, their outputs are
// concatenated and W_O projects the concatenation back to d_model, the shape of X ("The Mechanics of Causal Self
// Attention" and the words-pulling-words article). One engine call: multiHeadAttention with its intermediates.
import type { Lab, LabContext } from '../lab';
import type { AppState } from '../../state/app-state';
import { LIMITS } from '../../state/params';
import { ATTENTION_LIMITS } from './state';
import { el, clear } from '../../ui/dom';
import { tex, setTex } from '../../ui/katex';
import { field, randomDraw, select, toggle } from '../../ui/controls';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { Heatmap } from '../../ui/heatmap';
import { tokenize } from '../../text/tokenize';
import { embed } from '../../text/embeddings';
import { applyEdits, seededMatrix } from '../../model/weights';
import { legend } from '../../ui/legend';
import { makeScale } from '../../ui/palette';
import { multiHeadNumpy, type MultiHeadCodeInput } from '../../model/numpy-code';
import { codePanel } from '../../ui/code-panel';
import { disclosure } from '../../ui/disclosure';
import { onTrainedChange, trainedInput, trainedModel, trainedName } from '../../model/trained';
import { headPattern } from './head-pattern';
import { loadShippedModel, realModel, onRealModel } from '../../model/real-model';
import { describeModel, headSlice, onRealRun, plainToken, realRun } from '../../model/real-head';
import { realPicker } from './real-picker';

const KEYS: (keyof AppState)[] = ['text', 'embSeed', 'xEdits', 'heads', 'headDim', 'mhSeed', 'mhCausal', 'mhTrained', 'mhReal', 'realLayer', 'woEdits'];

const blank = (name: string, caption: string, palette: MatrixSpec['palette'] = 'div') =>
  new MatrixTable({ name, caption, rows: 0, cols: 0, values: [], rowLabels: [], colLabels: [], palette });

interface HeadView {
  root: HTMLElement;
  heat: Heatmap;
  picked: HTMLElement;
  weights: MatrixTable;
  output: MatrixTable;
}

export const multiheadLab: Lab = {
  id: 'multihead',
  nav: 'Multi-head',
  mount(section: HTMLElement, ctx: LabContext) {
    const { store, engine } = ctx;
    const s0 = store.state;
    const opts = (max: number) => Array.from({ length: max }, (_, i) => ({ value: String(i + 1), label: String(i + 1) }));
    const heads = select(opts(ATTENTION_LIMITS.heads.max), String(s0.heads), (v) => store.update({ heads: Number(v) }), 'heads');
    const headDim = select(opts(ATTENTION_LIMITS.headDim.max), String(s0.headDim), (v) => store.update({ headDim: Number(v) }), 'head-dim');
    const draw = randomDraw('random weights', s0.mhSeed, (v) => store.update({ mhSeed: v }), 'mh-seed', () => store.state.mhSeed);
    const seed = draw.input;
    const causal = toggle('causal mask', s0.mhCausal, (v) => store.update({ mhCausal: v }), 'mh-causal');
    const trainedToggle = toggle('trained weights', s0.mhTrained, (v) => store.update({ mhTrained: v }), 'mh-trained', 'Layer 1 of a small GPT the engine trained on the words corpus (see “Watch attention learn”): its heads, widths, embeddings and weights.');
    const weightsNote = el('p', { class: 'help', 'data-figure': 'mh-weights-note' });
    const resetWo = el('button', { type: 'button', class: 'chip', 'data-control': 'reset-wo', text: 'reset edited W_O cells' });
    resetWo.addEventListener('click', () => store.update({ woEdits: new Map() }));
    const dmodelTex = el('div', { class: 'step-formula' });

    const x = blank('mh-X', 'X');
    const wq = blank('mh-Wq', 'W_Q (all heads)');
    const wk = blank('mh-Wk', 'W_K (all heads)');
    const wv = blank('mh-Wv', 'W_V (all heads)');
    const wo = blank('mh-Wo', 'W_O');
    const concat = blank('mh-concat', 'Concat(head₁ … head_h)');
    const output = blank('mh-output', 'output');
    const headsGrid = el('div', { class: 'heads-grid' });
    const shapeCheck = el('p', { class: 'shape-check', 'aria-live': 'polite' });
    // Why the two size menus are greyed: a model's sizes are its own, and which switch frees them.
    const sizeNote = el('p', { class: 'help', 'data-figure': 'mh-size-note' });
    const ownSizes = (model: string, sw: string, hd?: [number, number]) =>
      `The ${model}’s own${hd ? `: ${hd[0]} heads of width ${hd[1]}` : ' sizes'}. Switch off “${sw}” to choose them.`;
    let views: HeadView[] = [];
    // The inputs of the last run, for "Copy as NumPy code".
    let last: MultiHeadCodeInput | undefined;

    const picker = realPicker(store, 'mh', (st) => st.mhReal, (v) => ({ mhReal: v, ...(v ? { mhCausal: true } : {}) }), false);
    const xBox = disclosure('Input X: the attention lab’s sentence, d_model = h · d_k wide', x.root, 'mh-x');
    const wBox = el('details', { class: 'disclosure weights-details', 'data-disclosure': 'mh-weights' }, el('summary', { text: 'Weights W_Q, W_K, W_V (columns grouped by head)' }),
      el('div', { class: 'matrix-row' }, wq.root, wk.root, wv.root));
    const woTitle = el('h3', { text: 'Concatenate, then project with W_O (editable)' });
    const woRow = el('div', { class: 'matrix-row product-row' }, concat.root, el('span', { class: 'op', 'aria-hidden': 'true', text: '·' }), wo.root,
      el('span', { class: 'op', 'aria-hidden': 'true', text: '=' }), output.root);
    const code = codePanel('multihead', () => last && multiHeadNumpy(last));
    section.append(
      el('h2', { text: 'Multi-head attention' }),
      el('p', { class: 'intro', text: 'One head can only learn one way for words to pull each other. Several heads look at the same tokens through their own W_Q, W_K, W_V (the words-pulling-words article imagines a “semantic” head and a “grammar” head), each in a narrower space of d_k = d_model / h. Their outputs are put side by side and W_O mixes them back into d_model numbers per token: the same shape as X, ready for the next layer.' }),
      tex(String.raw`\begin{gathered} \text{head}_h = \operatorname{softmax}\!\Big(\frac{Q_h K_h^{\top}}{\sqrt{d_k}}+M\Big)V_h \\ \operatorname{MultiHead}(X) = \operatorname{Concat}(\text{head}_1,\dots,\text{head}_H)\,W_O \end{gathered}`, true),
      el('div', { class: 'controls' },
        el('fieldset', { class: 'control-group' }, el('legend', { text: 'Heads' }),
          field('Number of heads h', heads), field('Width of each head d_k = d_v', headDim), dmodelTex, sizeNote),
        el('fieldset', { class: 'control-group' }, el('legend', { text: 'Weights and mask' }),
          picker.root, trainedToggle.root, draw.root, weightsNote, el('div', { class: 'field' }, causal.root), resetWo,
          el('p', { class: 'help', text: 'Tokens and embeddings come from the attention lab’s sentence.' }))),
      code, xBox, wBox,
      el('h3', { text: 'Each head’s attention weights' }),
      legend(makeScale('seq', [], 1), 'weight', true), headsGrid,
      woTitle, woRow,
      shapeCheck,
    );

    const ensureViews = (h: number) => {
      if (views.length === h) return;
      clear(headsGrid);
      views = Array.from({ length: h }, (_, i) => {
        const heat = new Heatmap({ name: `head${i + 1}`, label: `Head ${i + 1} weights`, n: 0, m: 0, values: [], rowLabels: [], colLabels: [] });
        const weights = blank(`mh-head${i + 1}-weights`, `head ${i + 1} weights`, 'seq');
        const out = blank(`mh-head${i + 1}-output`, `head ${i + 1} output`);
        const picked = el('p', { class: 'head-picked', 'data-figure': `mh-head${i + 1}-pattern` });
        const root = el('figure', { class: 'head-card' },
          el('figcaption', { text: `Head ${i + 1}` }), picked, heat.root,
          el('details', { class: 'disclosure', 'data-disclosure': `mh-head${i + 1}-table` }, el('summary', { text: `Head ${i + 1} as tables` }), weights.root, out.root));
        headsGrid.appendChild(root);
        return { root, heat, picked, weights, output: out };
      });
    };
    const showSize = (sel: HTMLSelectElement, v: number) => {
      if (![...sel.options].some((o) => o.value === String(v))) sel.appendChild(el('option', { value: String(v), text: String(v) }));
      sel.value = String(v);
    };
    const renderReal = (s: AppState) => {
      heads.disabled = headDim.disabled = true;
      sizeNote.textContent = ownSizes('real model', 'real model');
      draw.setDisabled(true);
      last = undefined;
      const m = realModel()?.model;
      const run = m && realRun(m, s.text);
      if (!m || !run || 'error' in run) {
        weightsNote.textContent = !m ? 'Loading the model…' : run && 'error' in run ? `The model could not run on this text: ${run.error}` : 'Running the model on your text…';
        section.classList.toggle('is-empty', true);
        shapeCheck.textContent = '';
        return;
      }
      section.classList.toggle('is-empty', false);
      const c = m.config;
      const layer = Math.min(s.realLayer, c.layers - 1);
      const h = c.heads, d = c.headDim, n = run.n;
      sizeNote.textContent = ownSizes('real model', 'real model', [h, d]);
      showSize(heads, h);
      showSize(headDim, d);
      setTex(dmodelTex, String.raw`d_{\text{model}} = h\cdot d_k = ${h}\cdot ${d} = ${c.dModel}`, true);
      const tok = run.tokens.map((w, i) => `${i + 1} ${w}`);
      const plain = run.tokens.map(plainToken);
      ensureViews(h);
      let worst = 0;
      for (let i = 0; i < h; i++) {
        const hs = headSlice(run, layer, i);
        const r = engine.attention({ q: hs.q, k: hs.k, v: hs.v, nq: n, nk: n, dk: d, dv: d, causal: s.mhCausal, scale: hs.scale, returnScores: true, returnWeights: true });
        const w = r.weights!;
        if (s.mhCausal) for (let z = 0; z < w.length; z++) worst = Math.max(worst, Math.abs(w[z] - hs.weights[z]));
        const v = views[i];
        const maskedCells = Array.from(r.scores!, (z) => z === Number.NEGATIVE_INFINITY);
        v.picked.textContent = headPattern(w, n, plain, s.mhCausal, false);
        v.heat.update({ name: `head${i + 1}`, label: `Head ${i + 1} weights`, n, m: n, values: w, rowLabels: tok, colLabels: tok, masked: maskedCells, maxCell: 34 });
        v.weights.update({ name: `mh-head${i + 1}-weights`, caption: `head ${i + 1} weights (${n} × ${n})`, rows: n, cols: n, values: w, rowLabels: tok, colLabels: tok, palette: 'seq', fixedMax: 1, showLegend: false, maskedCells });
        v.output.update({ name: `mh-head${i + 1}-output`, caption: `head ${i + 1} output (${n} × ${d})`, rows: n, cols: d, values: r.output, rowLabels: tok, colLabels: Array.from({ length: d }, (_, z) => `o${z + 1}`), palette: 'div', showLegend: false });
      }
      weightsNote.textContent = `Layer ${layer + 1} of the real model (${describeModel(m)}), on the attention lab’s text cut into its ${n} tokens: every head’s weights, recomputed by the engine from the queries and keys the model made. ${s.mhCausal ? `With the causal mask on they are the model’s own: its run ${worst === 0 ? 'gives exactly the same weights' : `gives the same to within ${worst.toExponential(1)}`}.` : 'The model never sees later tokens: turn the causal mask on to see its own weights.'}`;
      shapeCheck.textContent = `Concat(head₁ … head${sub(h)}) is ${n} × ${h * d}; the model’s W_O (${h * d} × ${c.dModel}) maps it back to X’s shape, ${n} × ${c.dModel}. Both are too wide to draw here.`;
    };

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      heads.value = String(s.heads);
      headDim.value = String(s.headDim);
      causal.input.checked = s.mhCausal;
      trainedToggle.input.checked = s.mhTrained;
      picker.sync(s);
      // On a real model: every head of the chosen layer; its X, W and W_O are too wide to draw.
      for (const e of [code, xBox, wBox, woTitle, woRow, trainedToggle.root, draw.root, resetWo]) { e.dataset.realHide = ''; e.hidden = s.mhReal; }
      if (s.mhReal) { renderReal(s); ctx.reportTiming('multihead', performance.now() - t0); return; }
      if (document.activeElement !== seed) seed.value = String(s.mhSeed);
      const model = s.mhTrained ? trainedModel() : undefined;
      heads.disabled = headDim.disabled = !!model;
      draw.setDisabled(!!model);
      const h = model ? model.heads : s.heads;
      const d = model ? model.dk : s.headDim;
      const dModel = h * d;
      if (model) { heads.value = String(h); headDim.value = String(d); }
      sizeNote.textContent = model ? ownSizes('trained model', 'trained weights', [h, d]) : '';
      weightsNote.textContent = model
        ? `Trained: layer 1 of ${trainedName(model)}. ${s.mhCausal ? 'With the causal mask on, each head’s weights below are the model’s own.' : 'The model never sees later words: turn the causal mask on to see its own weights.'}`
        : 'W_Q, W_K, W_V and W_O are random here: a trained model learns them (switch on “trained weights”).';
      setTex(dmodelTex, String.raw`d_{\text{model}} = h\cdot d_k = ${h}\cdot ${d} = ${dModel}`, true);
      const tokens = tokenize(s.text, LIMITS.tokens).words;
      const ti = model ? trainedInput(model, tokens) : undefined;
      const words = ti ? ti.words : tokens;
      const n = words.length;
      section.classList.toggle('is-empty', n === 0);
      if (n === 0) { last = undefined; ctx.reportTiming('multihead', performance.now() - t0); return; }
      const emb = ti ? { x: ti.x } : embed(words, dModel, s.embSeed, s.xEdits);
      // The trained model's per-head slices side by side: column block i is head i, as multiHeadAttention reads them.
      const joined = (parts: Float32Array[]) => {
        const m = new Float32Array(dModel * h * d);
        parts.forEach((p, i) => { for (let r = 0; r < dModel; r++) for (let c = 0; c < d; c++) m[r * h * d + i * d + c] = p[r * d + c]; });
        return m;
      };
      const mq = model ? joined(model.wq) : seededMatrix('mq', dModel, h * d, s.mhSeed);
      const mk = model ? joined(model.wk) : seededMatrix('mk', dModel, h * d, s.mhSeed);
      const mv = model ? joined(model.wv) : seededMatrix('mv', dModel, h * d, s.mhSeed);
      const mo = applyEdits(model ? model.wo : seededMatrix('mo', h * d, dModel, s.mhSeed), h * d, dModel, s.woEdits);
      const r = engine.multiHeadAttention({
        x: emb.x, n, dModel, heads: h, kvHeads: h, dk: d, dv: d, wq: mq, wk: mk, wv: mv, wo: mo.m,
        causal: s.mhCausal, returnIntermediates: true,
      });
      last = { text: s.text, words, n, heads: h, headDim: d, x: emb.x, wq: mq, wk: mk, wv: mv, wo: mo.m, causal: s.mhCausal };

      const tok = words.map((w, i) => `${i + 1} ${w}`);
      const dimLabels = (k: number, p: string) => Array.from({ length: k }, (_, i) => `${p}${i + 1}`);
      const headCols = Array.from({ length: h * d }, (_, c) => `h${Math.floor(c / d) + 1}.${(c % d) + 1}`);
      const groups: [string, number][] = Array.from({ length: h }, (_, i) => [`head ${i + 1}`, d]);
      x.update({ name: 'mh-X', caption: `X (${n} × ${dModel})`, rows: n, cols: dModel, values: emb.x, rowLabels: tok, colLabels: dimLabels(dModel, 'd'), palette: 'div' });
      const wSpec = (name: string, caption: string, m: Float32Array): MatrixSpec => ({
        name, caption, rows: dModel, cols: h * d, values: m, rowLabels: dimLabels(dModel, 'd'), colLabels: headCols, palette: 'div', colGroups: groups, showLegend: false,
      });
      wq.update(wSpec('mh-Wq', `W_Q (${dModel} × ${h * d})`, mq));
      wk.update(wSpec('mh-Wk', `W_K (${dModel} × ${h * d})`, mk));
      wv.update(wSpec('mh-Wv', `W_V (${dModel} × ${h * d})`, mv));
      wo.update({
        name: 'mh-Wo', caption: `W_O (${h * d} × ${dModel})`, rows: h * d, cols: dModel, values: mo.m, rowLabels: headCols, colLabels: dimLabels(dModel, 'd'),
        palette: 'div', edited: mo.edited,
        onEdit: (row, col, v) => {
          const edits = new Map(store.state.woEdits);
          edits.set(`${row}.${col}`, v);
          store.update({ woEdits: edits });
        },
      });

      ensureViews(h);
      r.heads?.forEach((hd, i) => {
        const v = views[i];
        const maskedCells = Array.from(hd.scores, (z) => z === Number.NEGATIVE_INFINITY);
        v.picked.textContent = headPattern(hd.weights, n, words, s.mhCausal, !model);
        v.heat.update({
          name: `head${i + 1}`, label: `Head ${i + 1} weights`, n, m: n, values: hd.weights, rowLabels: tok, colLabels: tok,
          masked: maskedCells, maxCell: 34,
        });
        v.weights.update({ name: `mh-head${i + 1}-weights`, caption: `head ${i + 1} weights (${n} × ${n})`, rows: n, cols: n, values: hd.weights, rowLabels: tok, colLabels: tok, palette: 'seq', fixedMax: 1, showLegend: false, maskedCells });
        v.output.update({ name: `mh-head${i + 1}-output`, caption: `head ${i + 1} output (${n} × ${d})`, rows: n, cols: d, values: hd.output, rowLabels: tok, colLabels: dimLabels(d, 'o'), palette: 'div', showLegend: false });
      });
      concat.update({ name: 'mh-concat', caption: `Concat(head₁ … head${sub(h)}) (${n} × ${h * d})`, rows: n, cols: h * d, values: r.concat ?? new Float32Array(n * h * d), rowLabels: tok, colLabels: headCols, palette: 'div', colGroups: groups });
      output.update({ name: 'mh-output', caption: `output = Concat · W_O (${n} × ${dModel})`, rows: n, cols: dModel, values: r.output, rowLabels: tok, colLabels: dimLabels(dModel, 'd'), palette: 'div' });
      shapeCheck.textContent = `Output shape ${n} × ${dModel} = X’s shape ${n} × ${dModel}: (${n} × ${h * d}) · (${h * d} × ${dModel}).`;
      ctx.reportTiming('multihead', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (KEYS.some((k) => changed.has(k))) render(); });
    onTrainedChange(() => { if (store.state.mhTrained && !store.state.mhReal) render(); });
    onRealModel(() => { if (store.state.mhReal) render(); });
    onRealRun(() => { if (store.state.mhReal) render(); });
    if (s0.mhReal && !realModel()) loadShippedModel().catch(() => { /* the note says so */ });
    render();
  },
};

function sub(n: number): string {
  return String(n).replace(/\d/g, (c) => '₀₁₂₃₄₅₆₇₈₉'[Number(c)]);
}
