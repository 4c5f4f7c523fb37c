// "Watch attention learn": the engine's small GPT trains in a Web Worker (web/src/workers/train-worker.ts) on one of
// two tasks while the page draws the loss and every layer × head attention pattern on one example. Induction heads:
// random blocks repeated once, a 2-layer attention-only model; the page measures each head's previous-token and
// induction scores live and names the heads that have them. Words in context: a corpus from a grammar written for
// this page (web/src/text/corpus.ts), in which the articles' sentences recur. The task on screen, its model's
// settings and the words task's sentence live in the URL (web/URL_STATE.md: lt, ll, lh, ld, lr, ls).
import '../../styles/learn.css';
import type { Lab, LabContext } from '../lab';
import { el, clear, reducedMotion } from '../../ui/dom';
import { wasmFiles } from '../../engine-files';
import { field, logSlider, select } from '../../ui/controls';
import { disclosure } from '../../ui/disclosure';
import { fmt } from '../../ui/format';
import { Heatmap } from '../../ui/heatmap';
import { LossChart, type LossSeries } from '../../ui/loss-chart';
import { HeadGrid, score, type HeadTag } from './head-grid';
import { PATTERN_THRESHOLD } from '../attention/head-pattern';
import { encode, UNKNOWN } from '../../text/corpus';
import { INDUCTION, TASKS, taskSpec, wordsCorpus, inductionExample, type ModelChoice, type TaskName } from '../../model/train-tasks';
import type { TrainMessage, TrainRequest } from '../../workers/train-worker';
import TrainWorker from '../../workers/train-worker.ts?worker';
import { useTrained } from '../../model/trained';
import type { AppState } from '../../state/app-state';
import { learnModel } from './state';

const D_MODELS = [16, 32, 48, 64, 96, 128];
/** The URL state's keys of this lab. */
const KEYS: (keyof AppState)[] = ['learnTask', 'learnLayers', 'learnHeads', 'learnDModel', 'learnLr', 'learnSentence'];
const SENTENCES = ['the capital of Spain is', 'I ate a banana and an apple', 'I got a new phone from apple', 'once upon a', 'the dog chased the cat', 'Houston we have a problem'];

type Eval = Extract<TrainMessage, { type: 'eval' }>;

const pct = (p: number): string => (p >= 0.995 ? '≥ 99.5%' : p < 0.001 ? '< 0.1%' : `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`);


export const learnLab: Lab = {
  id: 'learn',
  nav: 'Watch it learn',
  mount(section: HTMLElement, ctx: LabContext) {
    const models: Record<TaskName, ModelChoice> = { induction: { ...TASKS.induction.defaults }, words: { ...TASKS.words.defaults } };
    const s0 = ctx.store.state;
    let task: TaskName = s0.learnTask;
    Object.assign(models[task], learnModel(s0)); // the URL's settings for its task (defaults where it names none)
    let worker: Worker | undefined;
    let running = false;
    let ready = false;
    let sentence = s0.learnSentence;
    let trainLoss: [number, number][] = [];
    let evalPoints: { step: number; loss: number; first?: number; repeat?: number }[] = [];
    let latest: Eval | undefined;
    let progressMsg: Extract<TrainMessage, { type: 'progress' }> | undefined;
    let info: Extract<TrainMessage, { type: 'ready' }> | undefined;
    let firstInductionStep: number | undefined;
    let modelId = 0;

    // --- text and controls -------------------------------------------------------------------------------------
    section.append(
      el('h2', { text: 'Watch attention learn' }),
      el('p', { class: 'intro', text: 'Every figure above uses weights someone chose. Real models learn theirs. Here the engine trains a small GPT, a stack of causal self-attention layers, right in this tab, in a Web Worker, so the page stays responsive. Press Train and watch the loss fall and the attention patterns of every layer and head form on one example.' }),
    );
    const taskButtons = el('div', { class: 'button-group', role: 'group', 'aria-label': 'Task' });
    const taskBtn = (name: TaskName, label: string) => {
      const b = el('button', { type: 'button', class: 'chip', 'data-control': `task-${name}`, 'aria-pressed': String(name === task), text: label });
      b.addEventListener('click', () => { if (task !== name) { task = name; taskChanged(); saveState(); } });
      taskButtons.appendChild(b);
      return b;
    };
    const tb = { induction: taskBtn('induction', 'Induction heads: copying a repeat'), words: taskBtn('words', 'Words in context') };
    const taskText = el('div', { class: 'learn-task-text' });

    const opts = (xs: number[]) => xs.map((x) => ({ value: String(x), label: String(x) }));
    const layersSel = select(opts([1, 2, 3, 4]), String(models[task].layers), (v) => sizeChanged({ layers: Number(v) }), 'learn-layers');
    const headsSel = select(opts([1, 2, 3, 4, 5, 6, 7, 8]), String(models[task].heads), (v) => sizeChanged({ heads: Number(v) }), 'learn-heads');
    const dSel = select(opts(D_MODELS), String(models[task].dModel), (v) => sizeChanged({ dModel: Number(v) }), 'learn-dmodel');
    const lrSlider = logSlider(1e-4, 3e-2, models[task].lr, (v) => { models[task].lr = v; post({ type: 'lr', lr: v }); saveState(); }, 'learn-lr', 'Learning rate');
    const sizeError = el('p', { class: 'warn-text learn-size-error', role: 'status' });

    const button = (label: string, name: string, onClick: () => void, title?: string) => {
      const b = el('button', { type: 'button', class: 'chip', 'data-control': name, text: label, title });
      b.addEventListener('click', onClick);
      return b;
    };
    const trainBtn = button('Train', 'learn-train', () => { if (ensureWorker()) { running = true; post({ type: 'run' }); buttons(); } });
    trainBtn.classList.add('learn-train');
    const pauseBtn = button('Pause', 'learn-pause', () => { running = false; post({ type: 'pause' }); buttons(); });
    const stepBtn = button('Step', 'learn-step', () => { if (ensureWorker()) post({ type: 'step', count: 1 }); }, 'One training step (one batch), then stop');
    const resetBtn = button('Reset', 'learn-reset', () => reset());

    const metric = (name: string, label: string) => {
      const dd = el('dd', { 'data-metric': name, text: '–' });
      return { root: el('div', { class: 'learn-metric' }, el('dt', { text: label }), dd), dd };
    };
    const m = {
      step: metric('step', 'step'), loss: metric('loss', 'loss (this batch)'), rate: metric('steps-per-second', 'steps / s'),
      first: metric('first-loss', 'first copy'), repeat: metric('repeat-loss', 'repeated half'), held: metric('held-out-loss', 'held-out loss'),
      params: metric('parameters', 'parameters'),
    };
    const status = el('p', { class: 'learn-status', role: 'status', 'aria-live': 'polite' });

    section.append(
      el('div', { class: 'controls' },
        el('fieldset', { class: 'control-group wide' }, el('legend', { text: 'Task' }), taskButtons, taskText),
        el('fieldset', { class: 'control-group' }, el('legend', { text: 'Model' }),
          el('div', { class: 'learn-size' }, field('Layers', layersSel), field('Heads per layer', headsSel), field('d_model', dSel)),
          sizeError, lrSlider.root,
          el('p', { class: 'help', text: 'Changing the size starts a new model; the learning rate applies from the next step.' })),
        el('fieldset', { class: 'control-group' }, el('legend', { text: 'Training' }),
          el('div', { class: 'button-group' }, trainBtn, pauseBtn, stepBtn, resetBtn),
          el('dl', { class: 'learn-metrics' }, m.step.root, m.loss.root, m.rate.root, m.first.root, m.repeat.root, m.held.root, m.params.root),
          status),
      ),
    );

    const chart = new LossChart('learn-loss', 'Loss against training step');
    const chartLegend = el('ul', { class: 'learn-legend' });
    const findings = el('div', { class: 'learn-findings', 'data-figure': 'learn-findings', 'aria-live': 'polite' });
    const why = el('div', { class: 'learn-why' });
    section.append(el('div', { class: 'two-col' },
      el('div', { class: 'panel' }, el('h3', { text: 'Loss' }), chart.root, chartLegend),
      el('div', { class: 'panel' }, el('h3', { text: 'What the heads learned' }), findings, why)));

    // The example: induction's fixed repeat, or a sentence typed from the vocabulary.
    const corpus = wordsCorpus();
    const sentenceInput = el('input', { type: 'text', 'data-control': 'learn-sentence', value: sentence, autocomplete: 'off', spellcheck: 'false' });
    sentenceInput.addEventListener('input', () => { sentence = sentenceInput.value; sendProbe(); saveState(); });
    const presets = el('div', { class: 'button-group', role: 'group', 'aria-label': 'Example sentences' },
      ...SENTENCES.map((s) => { const b = el('button', { type: 'button', class: 'chip', text: s }); b.addEventListener('click', () => { sentence = s; sentenceInput.value = s; sendProbe(); saveState(); }); return b; }));
    const unknownNote = el('p', { class: 'learn-unknown', role: 'status' });
    const nextLine = el('p', { class: 'learn-next', 'data-figure': 'learn-next' });
    const vocabList = el('p', { class: 'learn-vocab', text: corpus.vocab.filter((w) => w !== UNKNOWN).join(' · ') });
    const corpusText = el('div', {},
      el('p', { text: `${corpus.sentences.length} sentences (${corpus.ids.length} tokens, ${corpus.vocab.length} words in the vocabulary counting “.” and ${UNKNOWN}), generated with a fixed seed by a small grammar written for this page: 12 sentence shapes from the articles with their words swapped — “I ate a banana and an apple” against “I got a new phone from apple”, “the capital of France is Paris”, “once upon a time”, “the sun is a star”, “Houston we have a problem”, “the dog chased the cat”, “the bride wore a ring”. The model sees windows of ${TASKS.words.context} tokens and learns to predict each next word. The first sentences:` }),
      el('ol', { class: 'learn-sentences' }, ...corpus.sentences.slice(0, 8).map((s) => el('li', { text: s }))),
      el('p', { text: 'The vocabulary:' }), vocabList);
    const useBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'learn-use', text: 'Use this model in the labs above' });
    useBtn.addEventListener('click', () => post({ type: 'export' }));
    const shippedBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'learn-use-shipped', text: 'Back to the page’s trained model', disabled: true });
    shippedBtn.addEventListener('click', () => { useTrained(undefined); shippedBtn.disabled = true; useNote.textContent = 'The labs above show the page’s own trained model again.'; });
    const useNote = el('p', { class: 'help', role: 'status' });
    const wordsBox = el('div', { class: 'learn-words' },
      field('Your sentence (words from the vocabulary below; others show as <unk>)', sentenceInput), presets, unknownNote, nextLine,
      el('div', { class: 'button-group' }, useBtn, shippedBtn), useNote,
      disclosure('The corpus: where these sentences come from', corpusText, 'learn-corpus'));
    const exampleNote = el('p', { class: 'help learn-example-note' });
    const grid = new HeadGrid(() => draw(true));
    const bigCaption = el('h4', { class: 'learn-big-caption', hidden: true }); // shown with its first text (an empty heading is no heading)
    const big = new Heatmap({ name: 'learn-head', label: 'attention weights', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 22 });
    section.append(
      el('h3', { text: 'Every layer and head, on one example' }),
      wordsBox, exampleNote,
      el('div', { class: 'learn-grid-row' }, grid.root, el('div', { class: 'learn-big' }, bigCaption, big.root)),
    );

    // --- worker ------------------------------------------------------------------------------------------------
    function post(m: TrainRequest): void { worker?.postMessage(m); }
    function ensureWorker(): boolean {
      if (worker) return true;
      if (sizeProblem()) return false;
      worker = new TrainWorker();
      worker.addEventListener('message', (e: MessageEvent<TrainMessage & { model: number }>) => { if (e.data.model === modelId || e.data.type === 'error') receive(e.data); });
      worker.addEventListener('error', (e) => { status.textContent = `The training worker failed: ${e.message}`; });
      reset();
      return true;
    }
    function reset(): void {
      if (!worker) { ensureWorker(); return; }
      if (sizeProblem()) return;
      running = false;
      ready = false;
      trainLoss = []; evalPoints = []; latest = undefined; progressMsg = undefined; firstInductionStep = undefined;
      modelId += 1;
      post({ type: 'reset', id: modelId, task, model: models[task], probe: task === 'words' ? probeIds() : undefined, wasm: wasmFiles });
      status.textContent = 'Starting a new model…';
      buttons();
    }
    function probeIds(): Int32Array | undefined {
      const e = encode(corpus, sentence, TASKS.words.context);
      unknownNote.textContent = e.unknown.length
        ? `Not in the vocabulary, shown as ${UNKNOWN} (the model has never seen it, so it carries no meaning): ${e.unknown.join(', ')}.`
        : e.ids.length ? '' : 'Type at least one word.';
      return e.ids.length ? e.ids : undefined;
    }
    function sendProbe(): void {
      if (task !== 'words') return;
      const ids = probeIds();
      if (ids && ready) post({ type: 'probe', ids });
    }
    function receive(msg: TrainMessage): void {
      switch (msg.type) {
        case 'ready':
          info = msg; ready = true;
          if (task === 'words') sendProbe();
          m.params.dd.textContent = msg.parameterCount.toLocaleString('en');
          status.textContent = `A new model: ${msg.parameterCount.toLocaleString('en')} parameters, ${(msg.memoryBytes / 1024).toFixed(0)} KiB of wasm memory with its gradients and optimizer state (${msg.backend}).`;
          break;
        case 'progress':
          progressMsg = msg;
          if (Number.isFinite(msg.loss)) trainLoss.push([msg.step, msg.loss]);
          schedule();
          break;
        case 'eval':
          latest = msg;
          if (!evalPoints.length || evalPoints[evalPoints.length - 1].step !== msg.step) evalPoints.push({ step: msg.step, loss: msg.loss, first: msg.firstLoss, repeat: msg.repeatLoss });
          schedule();
          break;
        case 'weights':
          try {
            useTrained(msg.bytes, msg.step);
            ctx.store.update({ preset: 'trained', mhTrained: true });
            useNote.textContent = `The attention, causal-mask and multi-head labs above now show layer 1 of this model, as trained at step ${msg.step}.`;
            shippedBtn.disabled = false;
          } catch (err) {
            useNote.textContent = `These weights cannot be shown there: ${err instanceof Error ? err.message : String(err)}`;
          }
          break;
        case 'error':
          running = false;
          status.textContent = `Training stopped: ${msg.message}`;
          buttons();
          break;
      }
    }

    // --- drawing, throttled: at most every 250 ms (1 s with reduced motion) ------------------------------------
    let pending = false, lastDraw = 0;
    function schedule(): void {
      if (pending) return;
      pending = true;
      const wait = Math.max(0, lastDraw + (reducedMotion() ? 1000 : 250) - performance.now());
      window.setTimeout(() => requestAnimationFrame(() => { pending = false; lastDraw = performance.now(); draw(false); }), wait);
    }
    function draw(selectionOnly: boolean): void {
      const t0 = performance.now();
      if (!selectionOnly) drawMetrics();
      if (latest) drawHeads(latest);
      ctx.reportTiming('learn', performance.now() - t0);
    }
    function drawMetrics(): void {
      if (progressMsg) {
        m.step.dd.textContent = String(progressMsg.step);
        m.loss.dd.textContent = Number.isFinite(progressMsg.loss) ? fmt(progressMsg.loss, 3) : '–';
        m.rate.dd.textContent = progressMsg.running ? progressMsg.stepsPerSecond.toFixed(1) : '–';
        if (progressMsg.running && progressMsg.stepsPerSecond > 0) document.body.dataset.learnRate = progressMsg.stepsPerSecond.toFixed(1);
      }
      const V = info?.vocabSize ?? taskSpec(task).vocabSize;
      if (latest) {
        m.first.dd.textContent = latest.firstLoss !== undefined ? fmt(latest.firstLoss, 3) : '–';
        m.repeat.dd.textContent = latest.repeatLoss !== undefined ? fmt(latest.repeatLoss, 3) : '–';
        m.held.dd.textContent = fmt(latest.loss, 3);
      }
      const series: LossSeries[] = [{ key: 'train', label: 'each training batch', colour: '#9aa3b5', width: 1.2, points: trainLoss }];
      if (task === 'induction') {
        series.push({ key: 'first', label: 'first copy (random, unpredictable)', colour: '#b35806', points: evalPoints.map((p) => [p.step, p.first!]) });
        series.push({ key: 'repeat', label: 'repeated half', colour: '#1f4e89', width: 2.5, points: evalPoints.map((p) => [p.step, p.repeat!]) });
      } else {
        series.push({ key: 'held', label: 'held-out windows', colour: '#1f4e89', width: 2.5, points: evalPoints.map((p) => [p.step, p.loss]) });
      }
      chart.update(series, [{ y: Math.log(V), label: `guessing: ln ${V} = ${fmt(Math.log(V), 2)}` }]);
      clear(chartLegend);
      for (const s of series) {
        const sw = el('span', { class: 'learn-swatch' });
        sw.style.setProperty('--swatch', s.colour); // CSSOM, not a style attribute: the page's CSP forbids inline styles
        chartLegend.appendChild(el('li', {}, sw, s.label));
      }
      buttons();
    }
    function buttons(): void {
      const busy = !!worker && !ready;
      trainBtn.disabled = running || busy || !!sizeProblem();
      pauseBtn.disabled = !running;
      stepBtn.disabled = running || busy || !!sizeProblem();
      resetBtn.disabled = !!sizeProblem();
    }

    function labelsFor(ids: Int32Array): string[] {
      return task === 'words' ? Array.from(ids, (id, i) => `${i + 1} ${corpus.vocab[id]}`) : Array.from(ids, (id, i) => `${i + 1}: ${id}`);
    }
    function drawHeads(e: Eval): void {
      const heads = e.scores.previous[0].length;
      const t = e.probe.ids.length;
      const layers = e.probe.attention.length;
      const tags: HeadTag[][] = [];
      const words = task === 'words' ? Array.from(e.probe.ids, (id) => corpus.vocab[id]) : [];
      for (let y = 0; y < layers; y++) {
        const row: HeadTag[] = [];
        for (let h = 0; h < heads; h++) {
          const prev = e.scores.previous[y][h];
          if (task === 'induction') {
            const ind = e.scores.induction![y][h];
            const strong = prev >= PATTERN_THRESHOLD || ind >= PATTERN_THRESHOLD;
            row.push({ text: ind > prev ? `induction ${score(ind)}` : `previous ${score(prev)}`, strong });
          } else {
            const a = e.probe.attention[y].subarray(h * t * t + (t - 1) * t, h * t * t + t * t);
            let best = 0;
            for (let j = 1; j < t; j++) if (a[j] > a[best]) best = j;
            row.push({ text: `“${words[t - 1]}” → “${words[best]}” ${score(a[best])}`, strong: a[best] >= PATTERN_THRESHOLD });
          }
        }
        tags.push(row);
      }
      grid.update(e.probe.attention, heads, t, tags);
      const [sy, sh] = grid.selected;
      const labels = labelsFor(e.probe.ids);
      const values = e.probe.attention[sy].subarray(sh * t * t, (sh + 1) * t * t);
      const masked = Array.from({ length: t * t }, (_, k) => (k % t) > Math.floor(k / t));
      big.update({ name: 'learn-head', label: `Layer ${sy + 1}, head ${sh + 1}: attention weights at step ${e.step}`, n: t, m: t, values, rowLabels: labels, colLabels: labels, masked, maxCell: 22 });
      bigCaption.hidden = false;
      bigCaption.textContent = `Layer ${sy + 1}, head ${sh + 1} at step ${e.step} (rows: queries, columns: keys; hatched: the causal mask)`;
      if (task === 'induction') inductionFindings(e); else wordsFindings(e, words);
    }

    function inductionFindings(e: Eval): void {
      const { previous, induction } = e.scores;
      const layers = previous.length, heads = previous[0].length;
      let bestPrev = { s: -1, y: 0, h: 0 }, bestInd = { s: -1, y: 0, h: 0 };
      for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) {
        if (previous[y][h] > bestPrev.s) bestPrev = { s: previous[y][h], y, h };
        if (y > 0 && induction![y][h] > bestInd.s) bestInd = { s: induction![y][h], y, h };
      }
      const prevHeads: string[] = [], indHeads: string[] = [];
      for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) {
        if (previous[y][h] >= PATTERN_THRESHOLD) prevHeads.push(`layer ${y + 1} head ${h + 1} (${score(previous[y][h])})`);
        if (y > 0 && induction![y][h] >= PATTERN_THRESHOLD) indHeads.push(`layer ${y + 1} head ${h + 1} (${score(induction![y][h])})`);
      }
      if (indHeads.length && firstInductionStep === undefined) firstInductionStep = e.step;
      clear(findings);
      findings.dataset.previousHeads = prevHeads.length ? String(prevHeads.length) : '0';
      findings.dataset.inductionHeads = indHeads.length ? String(indHeads.length) : '0';
      findings.dataset.bestInduction = bestInd.s >= 0 ? bestInd.s.toFixed(4) : '';
      findings.dataset.bestPrevious = bestPrev.s.toFixed(4);
      findings.dataset.step = String(e.step);
      findings.append(el('p', { text: `Measured now, on 16 held-out sequences at step ${e.step}: the average weight each head puts on the previous token, and on the token after the previous occurrence of the current token (for queries in the repeat).` }));
      const list = el('ul', {});
      list.appendChild(el('li', { 'data-finding': 'previous', text: prevHeads.length
        ? `Previous-token head${prevHeads.length > 1 ? 's' : ''}: ${prevHeads.join(', ')}. It copies each token’s predecessor into its position.`
        : `No previous-token head yet (the highest score is ${score(bestPrev.s)}, layer ${bestPrev.y + 1} head ${bestPrev.h + 1}; a head is named at ${PATTERN_THRESHOLD}).` }));
      list.appendChild(el('li', { 'data-finding': 'induction', text: layers < 2
        ? 'No induction head can form with one layer: it needs a previous-token head below it. Choose 2 layers.'
        : indHeads.length
          ? `Induction head${indHeads.length > 1 ? 's' : ''}: ${indHeads.join(', ')}. In the repeat it looks back to where the current token appeared before and copies the token that came next${firstInductionStep !== undefined ? ` (first named at step ${firstInductionStep})` : ''}.`
          : `No induction head yet (the highest score in layers 2 and up is ${score(bestInd.s)}, layer ${bestInd.y + 1} head ${bestInd.h + 1}).` }));
      findings.appendChild(list);
      if (e.repeatLoss !== undefined && e.firstLoss !== undefined) {
        findings.appendChild(el('p', { text: `Loss on the first copy ${fmt(e.firstLoss, 2)}, on the repeated half ${fmt(e.repeatLoss, 2)} (guessing: ln 64 = ${fmt(Math.log(64), 2)}).` }));
      }
    }

    function wordsFindings(e: Eval, words: string[]): void {
      clear(findings);
      const t = words.length;
      const heads = e.scores.previous[0].length;
      findings.append(el('p', { text: `Measured now at step ${e.step}. From the last word, “${words[t - 1]}”, where each head looks (its largest weight); choose a head to see its whole pattern.` }));
      const list = el('ul', {});
      for (let y = 0; y < e.probe.attention.length; y++) for (let h = 0; h < heads; h++) {
        const a = e.probe.attention[y].subarray(h * t * t + (t - 1) * t, h * t * t + t * t);
        const order = Array.from(a, (w, j) => ({ w, j })).sort((p, q) => q.w - p.w).slice(0, 2);
        list.appendChild(el('li', { text: `Layer ${y + 1} head ${h + 1}: ${order.map((o) => `“${words[o.j]}” (${o.j + 1}) ${score(o.w)}`).join(', ')}; on held-out text it puts ${score(e.scores.previous[y][h])} on the previous word.` }));
      }
      findings.appendChild(list);
      const next = e.probe.next.map((n) => `“${corpus.vocab[n.id]}” ${pct(n.p)}`).join(' · ');
      nextLine.textContent = `After “${words.join(' ')}” the model predicts: ${next}.`;
    }

    // --- task and size -----------------------------------------------------------------------------------------
    function sizeProblem(): string {
      const c = models[task];
      if (c.dModel % c.heads !== 0) return `d_model must be a multiple of the number of heads: ${c.dModel} / ${c.heads} is not whole.`;
      return '';
    }
    // --- the URL state -------------------------------------------------------------------------------------------
    /**
     * What this lab shows, as URL state: each setting null where it is the task's default (a link names only
     * changes). A size whose heads do not divide d_model is no model: the state keeps the last size of this task
     * that was one (or, just switched to this task, its defaults).
     */
    function stateOf(): Partial<AppState> {
      const c = models[task], d = TASKS[task].defaults;
      const or = (v: number, def: number) => (v === def ? null : v);
      const size = !sizeProblem() ? { learnLayers: or(c.layers, d.layers), learnHeads: or(c.heads, d.heads), learnDModel: or(c.dModel, d.dModel) }
        : ctx.store.state.learnTask === task ? {} : { learnLayers: null, learnHeads: null, learnDModel: null };
      return { learnTask: task, ...size, learnLr: or(c.lr, d.lr), learnSentence: sentence };
    }
    let saving = false;
    function saveState(): void {
      const next = stateOf(), now = ctx.store.state as unknown as Record<string, unknown>;
      if (!Object.entries(next).some(([k, v]) => now[k] !== v)) return;
      saving = true;
      try { ctx.store.update(next); } finally { saving = false; }
    }
    // A state from elsewhere (a loaded state file): show it, as a new model if the task or its size changed.
    ctx.store.subscribe((st, changed) => {
      if (saving || !KEYS.some((k) => changed.has(k))) return;
      const want = learnModel(st);
      const c = models[st.learnTask];
      const sized = st.learnTask !== task || c.layers !== want.layers || c.heads !== want.heads || c.dModel !== want.dModel;
      if (!sized && c.lr === want.lr && st.learnSentence === sentence) return; // this lab's own update
      Object.assign(c, { layers: want.layers, heads: want.heads, dModel: want.dModel, lr: want.lr });
      if (st.learnSentence !== sentence) { sentence = st.learnSentence; sentenceInput.value = sentence; }
      if (st.learnTask !== task) { task = st.learnTask; taskChanged(); return; } // taskChanged resets a running worker
      layersSel.value = String(c.layers); headsSel.value = String(c.heads); dSel.value = String(c.dModel); lrSlider.set(c.lr);
      post({ type: 'lr', lr: c.lr });
      sizeError.textContent = sizeProblem();
      buttons();
      if (sized && !sizeProblem() && worker) reset();
      else sendProbe();
    });

    function sizeChanged(change: Partial<ModelChoice>): void {
      Object.assign(models[task], change);
      saveState();
      sizeError.textContent = sizeProblem();
      buttons();
      if (!sizeProblem() && worker) reset();
    }
    function taskChanged(): void {
      tb.induction.setAttribute('aria-pressed', String(task === 'induction'));
      tb.words.setAttribute('aria-pressed', String(task === 'words'));
      const c = models[task];
      layersSel.value = String(c.layers); headsSel.value = String(c.heads); dSel.value = String(c.dModel); lrSlider.set(c.lr);
      sizeError.textContent = sizeProblem();
      wordsBox.hidden = task !== 'words';
      m.first.root.hidden = m.repeat.root.hidden = task !== 'induction';
      clear(taskText); clear(why); clear(findings); nextLine.textContent = '';
      if (task === 'induction') {
        const ex = inductionExample();
        taskText.append(el('p', { text: `Each sequence is a block of ${INDUCTION.minBlock} to ${INDUCTION.maxBlock} random tokens (numbers 0–${INDUCTION.vocab - 1}), repeated once. The first copy cannot be predicted; the repeat can, by anyone who looks back: find where the current token appeared before and copy the token that followed it. A model of 2 attention-only layers with rotary positions learns exactly that.` }));
        exampleNote.textContent = `The example: a block of ${ex.ids.length / 2} random tokens and its repeat (${Array.from(ex.ids.subarray(0, ex.ids.length / 2)).join(' ')} | ${Array.from(ex.ids.subarray(ex.ids.length / 2)).join(' ')}). A previous-token head lights up the stripe just left of the diagonal. An induction head lights up, in the repeat’s rows (${ex.ids.length / 2 + 1}–${ex.ids.length}), a stripe ${ex.ids.length / 2 - 1} columns left of the diagonal: each of those tokens looks at the token just after its own earlier occurrence.`;
        why.append(
          el('h4', { text: 'Why the loss drops suddenly' }),
          el('p', { text: 'Copying the repeat takes two heads working together. One in layer 1 writes into every position which token came just before it (a previous-token head). One in layer 2 then looks, from the current token, for the position whose predecessor is that same token, the token after its earlier occurrence, and copies it forward (an induction head). Neither helps much without the other, so for hundreds of steps the repeat’s loss stays near the loss of guessing; once the two line up it falls within about a hundred steps. This circuit was found in real language models (“In-context Learning and Induction Heads”, Olsson et al., 2022).' }),
        );
      } else {
        taskText.append(el('p', { text: 'Sentences from a small grammar written for this page, in which the articles’ examples recur. The model learns to predict each next word. Some words can only be predicted by looking back: after “the capital of Spain is” comes “madrid”, and only “spain”, three words earlier, says so. Nobody tells a head where to look; training finds it. Type your own sentence below and see where each head looks from its last word.' }));
        exampleNote.textContent = 'Each small square is one head on your sentence; brighter means more weight. Choose one to see it large with its words.';
        sendProbe();
      }
      if (worker) reset();
      else { drawMetrics(); }
    }

    // The worker (and its copy of the engine) starts when the section comes near the screen.
    new IntersectionObserver((entries, obs) => {
      if (entries.some((x) => x.isIntersecting)) { obs.disconnect(); ensureWorker(); }
    }, { rootMargin: '400px 0px' }).observe(section);
    taskChanged();
    buttons();
  },
};
