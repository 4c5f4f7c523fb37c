// Attention lab: text → tokens → embeddings → Q, K, V → scores → weights → output, every step live, and one
// query followed step by step beside the weights heatmap.
import type { Lab, LabContext } from '../lab';
import { el, reducedMotion } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { AttentionControls } from './attention-controls';
import { AttentionSteps } from './attention-steps';
import { QueryStepper } from './query-stepper';
import type { AppState } from '../../state/app-state';
import { runPipeline, runReal, type Pipeline } from '../../model/pipeline';
import { attentionNumpy } from '../../model/numpy-code';
import { codePanel } from '../../ui/code-panel';
import { onTrainedChange } from '../../model/trained';
import { onRealModel, onSelectedHead, realModel, selectHead } from '../../model/real-model';
import { onRealRun } from '../../model/real-head';

const KEYS: (keyof AppState)[] = ['text', 'dModel', 'embSeed', 'xEdits', 'preset', 'trainedHead', 'realLayer', 'realHead', 'wSeed', 'wqEdits', 'wkEdits', 'wvEdits', 'dk', 'dv', 'causal', 'scaled', 'attnTemp', 'query'];

export const attentionLab: Lab = {
  id: 'attention',
  nav: 'Attention',
  mount(section: HTMLElement, ctx: LabContext) {
    const controls = new AttentionControls(ctx);
    const stepper = new QueryStepper(ctx);
    const steps = new AttentionSteps(ctx, stepper);
    // "Copy as NumPy code" regenerates from the last computed pipeline, i.e. exactly what the page shows.
    let last: { s: AppState; p: Pipeline } | undefined;
    const code = codePanel('attention', () => last && attentionNumpy({
      text: last.s.text, words: last.p.words, n: last.p.n, dModel: last.p.dModel, dk: last.p.dk, dv: last.p.dv,
      x: last.p.x, wq: last.p.wq, wk: last.p.wk, wv: last.p.wv,
      causal: last.s.causal, scaled: last.s.scaled, temperature: last.s.attnTemp,
    }));
    const empty = el('p', { class: 'callout', text: 'Type a sentence above to see its attention.' });
    const body = el('div', {}, el('h3', { class: 'pipeline-title', text: 'The pipeline' }), steps.root);
    section.append(
      el('h2', { text: 'Self-attention, step by step' }),
      el('p', { class: 'intro', text: 'Every token asks two questions of every other token: how much do I care about you, and what do you mean? Queries and keys answer the first with a dot product, softmax turns the answers into weights, and the values carry the meaning. Edit the text, any embedding, any weight, and every step below recomputes.' }),
      tex(String.raw`\operatorname{Attention}(Q,K,V) = \operatorname{softmax}\!\Big(\frac{QK^{\top}}{\sqrt{d_k}} + M\Big)\,V`, true),
      controls.root, code, empty, body,
    );

    // A heatmap row click: follow that query, and bring the step-through's top into view when it is off screen
    // (on a phone it sits under the heatmap; beside it, on a wide screen, the page does not move).
    const onSelectRow = (r: number) => {
      ctx.store.update({ query: r });
      const top = stepper.root.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight - 120) stepper.root.scrollIntoView({ block: 'start', behavior: reducedMotion() ? 'auto' : 'smooth' });
    };
    // Switching to a real model changes what a query index counts (the page's words, the tokenizer's tokens): the
    // step-through then starts on the last token, once the tokens are known (the model may still be loading), so it
    // never points past the text or at an arbitrary token, and the URL says so. Switching back restores the word
    // it followed before. (A change that sets the query too, a state file or the back button, keeps its query.)
    let shownReal = ctx.store.state.preset === 'real';
    let pendingQuery: 'last' | number | undefined;
    let wordsQuery: number | undefined;
    const render = (changed?: Set<keyof AppState>) => {
      const t0 = performance.now();
      const s = ctx.store.state;
      const isReal = s.preset === 'real';
      if (changed?.has('preset') && isReal !== shownReal && !changed.has('query')) {
        if (isReal) { wordsQuery = s.query; pendingQuery = 'last'; } else { pendingQuery = wordsQuery ?? 'last'; wordsQuery = undefined; }
      }
      shownReal = isReal;
      const real = s.preset === 'real' ? runReal(ctx.engine, s) : undefined;
      const p = real ? real.pipeline : runPipeline(ctx.engine, s);
      if (p && p.n > 0 && pendingQuery !== undefined) {
        const query = pendingQuery === 'last' ? p.n - 1 : Math.min(pendingQuery, p.n - 1);
        pendingQuery = undefined;
        if (s.query !== query) { ctx.store.update({ query }); return; }  // renders again with it
      }
      last = p && { s, p };
      controls.sync(s, p);
      if (real && !real.pipeline) controls.realWaiting(real.message);
      empty.textContent = real?.message ?? 'Type a sentence above to see its attention.';
      empty.hidden = !!p;
      body.hidden = !p;
      // The NumPy script rebuilds X and the W: a real model's are not on the page.
      code.dataset.realHide = '';
      code.hidden = !!p?.real;
      if (p) {
        steps.update(s, p, onSelectRow);
        stepper.update(s, p, !!changed?.has('query'));
      }
      ctx.reportTiming('attention', performance.now() - t0);
    };
    ctx.store.subscribe((_, changed) => { if (KEYS.some((k) => changed.has(k))) render(changed); });
    onTrainedChange(() => { if (ctx.store.state.preset === 'trained') render(); });
    // The real model's head is one choice across the page (the model view's thumbnails set it too): the state's
    // layer and head follow it, and it follows them. A head chosen elsewhere opens here on the real model.
    let pushing = false;
    const push = () => {
      const c = realModel()?.model.config, st = ctx.store.state;
      if (c && (st.realLayer >= c.layers || st.realHead >= c.heads)) return;  // the views clamp it; the store keeps its head
      pushing = true;
      try { selectHead(st.realLayer, st.realHead); } finally { pushing = false; }
    };
    ctx.store.subscribe((_, changed) => { if (changed.has('realLayer') || changed.has('realHead')) push(); });
    onSelectedHead((h) => {
      const st = ctx.store.state;
      if (!h || pushing || (h.layer === st.realLayer && h.head === st.realHead && st.preset === 'real')) return;
      ctx.store.update({ realLayer: h.layer, realHead: h.head, ...(st.preset === 'real' ? {} : { preset: 'real', causal: true, wqEdits: new Map(), wkEdits: new Map(), wvEdits: new Map() }) });
      AttentionControls.ensureModel();
    });
    push();
    onRealModel(() => { if (ctx.store.state.preset === 'real') render(); });
    onRealRun(() => { if (ctx.store.state.preset === 'real') render(); });
    if (ctx.store.state.preset === 'real') AttentionControls.ensureModel();
    render();
  },
};
