// "Watch attention learn": the engine's small GPT trains in a Web Worker (session.ts) on one of two tasks while the
// page draws the loss and every layer × head attention pattern on one example. Induction heads: random blocks
// repeated once, a 2-layer attention-only model; the page measures each head's previous-token and induction scores
// live and names the heads that have them (findings.ts). Words in context: a corpus from a grammar written for this
// page (web/src/text/corpus.ts), in which the articles' sentences recur; the example is a sentence of the reader's
// (example.ts). Your own text: a small GPT on text the learner pastes, or on a sample of the shipped model's text,
// cut by the shipped model's tokenizer (text-input.ts, model/text-task.ts); it writes samples as it trains. Every
// task trains on all the machine's threads (up to the page's cap, page-threads.ts). The task on screen, its model's settings and the words task's sentence live in the URL (state.ts;
// web/URL_STATE.md). This file puts the parts together and keeps them and the URL in step.
import '../../styles/learn.css';
import type { Lab, LabContext } from '../lab';
import { el, clear, reducedMotion } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { TASKS, taskSpec, wordsCorpus, type ModelChoice, type TaskName } from '../../model/train-tasks';
import tokenizerUrl from '../../../models/kjv-fortunes-gpt/tokenizer.json?url';
import { pageThreads } from '../page-threads';
import type { TrainMessage } from '../../workers/train-worker';
import { LearnControls } from './controls';
import { WordsExample } from './example';
import { inductionFindings, wordsFindings, type Eval } from './findings';
import { HeadsPanel } from './heads-panel';
import { LossPanel } from './loss-panel';
import { TrainingSession, type ModelSpec } from './session';
import { TextInput } from './text-input';
import { LEARN_KEYS, learnModel, learnStateOf } from './state';
import { describeTask } from './task-text';

export const learnLab: Lab = {
  id: 'learn',
  nav: 'Watch it learn',
  mount(section: HTMLElement, ctx: LabContext) {
    const models: Record<TaskName, ModelChoice> = { induction: { ...TASKS.induction.defaults }, words: { ...TASKS.words.defaults }, text: { ...TASKS.text.defaults } };
    const s0 = ctx.store.state;
    let task: TaskName = s0.learnTask;
    Object.assign(models[task], learnModel(s0)); // the URL's settings for its task (defaults where it names none)
    let sentence = s0.learnSentence;
    const sizeProblem = (): string => {
      const c = models[task];
      return c.dModel % c.heads !== 0 ? `d_model must be a multiple of the number of heads: ${c.dModel} / ${c.heads} is not whole.` : '';
    };
    const threads = pageThreads();
    const session = new TrainingSession({ message: receive, workerError: (m) => { controls.status.textContent = `The training worker failed: ${m}`; } }, threads);

    // --- the parts, top to bottom --------------------------------------------------------------------------------
    section.append(
      el('h2', { text: 'Watch attention learn' }),
      el('p', { class: 'intro', text: `Every figure above uses weights someone chose. Real models learn theirs. Here the engine trains a small GPT, a stack of causal self-attention layers, right in this tab, in Web Workers (threads of their own, off the page’s), so the page stays responsive: each batch is split across ${threads === 1 ? 'one thread (the browser reports one core)' : `${threads} threads, one per core the browser reports${threads === 8 && (navigator.hardwareConcurrency || 0) > 8 ? ' up to 8' : ''}`}. Press Train and watch the loss fall and the attention patterns of every layer and head form on one example.` }),
    );
    const controls = new LearnControls(task, models[task], {
      task: (name) => { if (task !== name) { task = name; taskChanged(); saveState(); } },
      size: sizeChanged,
      lr: (v) => { models[task].lr = v; session.post({ type: 'lr', lr: v }); saveState(); },
      train: () => { if (ensureWorker()) { session.running = true; session.post({ type: 'run' }); buttons(); } },
      pause: () => { session.running = false; session.post({ type: 'pause' }); buttons(); },
      step: () => { if (ensureWorker()) session.post({ type: 'step', count: 1 }); },
      reset: () => reset(),
    });
    section.append(controls.root);
    // The text task's text, what it became and the samples the model writes: right under the controls.
    const textInput = new TextInput({ use: () => reset() });
    section.append(textInput.root);

    const loss = new LossPanel();
    const findings = el('div', { class: 'learn-findings', 'data-figure': 'learn-findings', 'aria-live': 'polite' });
    const why = el('div', { class: 'learn-why' });
    section.append(el('div', { class: 'two-col' },
      el('div', { class: 'panel' }, el('h3', { text: 'Loss' }), loss.chart.root, loss.legend,
        el('p', { class: 'help', text: 'Loss: the average of −ln(the probability the model gave the right next token), in nats. Lower is better; guessing evenly among the V tokens of its vocabulary scores ln V.' })),
      el('div', { class: 'panel' }, el('h3', { text: 'What the heads learned' }), findings, why)));

    // The example: induction's fixed repeat, or a sentence typed from the vocabulary.
    const corpus = wordsCorpus();
    const example = new WordsExample(corpus, sentence, {
      sentence: (s) => { sentence = s; sendProbe(); saveState(); },
      use: () => session.post({ type: 'export' }),
    });
    const exampleNote = el('p', { class: 'help learn-example-note' });
    const heads = new HeadsPanel(() => draw(true));
    section.append(el('h3', { text: 'Every layer and head, on one example' }), example.root, exampleNote, heads.root);

    // --- the worker ----------------------------------------------------------------------------------------------
    // The model's spec; the text task's only once its text is here (undefined until then: prepareText fetches the sample).
    function spec(): ModelSpec | undefined {
      if (task === 'text') return textInput.current === undefined ? undefined : { task, model: models[task], text: textInput.current, tokenizer: tokenizerUrl };
      return { task, model: models[task], probe: task === 'words' ? example.probe(sentence) : undefined };
    }
    function prepareText(): void {
      textInput.text().then(() => { if (task === 'text') reset(); }, (err: unknown) => textInput.showProblem(err instanceof Error ? err.message : String(err)));
    }
    function ensureWorker(): boolean {
      if (session.started) return true;
      if (sizeProblem()) return false;
      const s = spec();
      if (!s) { prepareText(); return false; }
      session.start(s);
      started();
      return true;
    }
    function reset(): void {
      if (sizeProblem()) return;
      const s = spec();
      if (!s) { prepareText(); return; }
      if (session.started) session.reset(s);
      else session.start(s);
      started();
    }
    function started(): void {
      controls.status.textContent = 'Starting a new model…';
      buttons();
    }
    function sendProbe(): void {
      if (task !== 'words') return;
      const ids = example.probe(sentence);
      if (ids && session.ready) session.post({ type: 'probe', ids });
    }
    function receive(msg: TrainMessage): void {
      switch (msg.type) {
        case 'ready':
          if (task === 'words') sendProbe();
          controls.metrics.params.dd.textContent = msg.parameterCount.toLocaleString('en');
          controls.status.textContent = `This model: ${msg.parameterCount.toLocaleString('en')} parameters, ${(msg.memoryBytes / 1024).toFixed(0)} KiB of wasm memory with its gradients and optimizer state (${msg.backend}). ${threadsText(msg)}`;
          showThreads(msg);
          textInput.showReady(msg);
          break;
        case 'sample':
          schedule();
          break;
        case 'progress':
        case 'eval':
          // (Just switched to the text task, its text still loading: the last task's model is not drawn as this one.)
          if (session.info?.task === task) schedule();
          break;
        case 'weights':
          example.useWeights(msg.bytes, msg.step, () => ctx.store.update({ preset: 'trained', causal: true, mhTrained: true, mhCausal: true }));
          break;
        case 'error':
          if (task === 'text' && !session.ready) textInput.showProblem(msg.message);
          controls.status.textContent = `Training stopped: ${msg.message}`;
          buttons();
          break;
      }
    }

    function threadsText(msg: Extract<TrainMessage, { type: 'ready' }>): string {
      if (msg.threads < 2) {
        return msg.threadsError ? `It trains on one thread: the workers could not start (${msg.threadsError}).` : 'It trains on one thread (the browser reports one core).';
      }
      const how = msg.exchange === 'shared'
        ? 'through memory they share (this page is cross-origin isolated, so the browser allows it)'
        : 'by messages (this copy of the page is not cross-origin isolated, so the browser allows no shared memory)';
      return `Each step runs on ${msg.threads} threads: every worker computes the gradient of its part of the batch and updates its slice of the weights, and they exchange gradients and weights ${how}.`;
    }
    function showThreads(msg: Extract<TrainMessage, { type: 'ready' }>): void {
      const dd = controls.metrics.threads.dd;
      dd.textContent = msg.threads < 2 ? '1' : `${msg.threads} · ${msg.exchange === 'shared' ? 'shared memory' : 'messages'}`;
      dd.dataset.threads = String(msg.threads);
      dd.dataset.exchange = msg.exchange;
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
      if (session.latest) drawHeads(session.latest);
      ctx.reportTiming('learn', performance.now() - t0);
    }
    function drawMetrics(): void {
      const m = controls.metrics, p = session.progress, latest = session.latest;
      if (p) {
        m.step.dd.textContent = String(p.step);
        m.loss.dd.textContent = Number.isFinite(p.loss) ? fmt(p.loss, 3) : '–';
        m.loss.dd.dataset.value = String(p.loss);
        m.rate.dd.textContent = p.running ? p.stepsPerSecond.toFixed(1) : '–';
        // The last step: its time, and how many threads computed a part of it (the package's own count).
        const st = m.stepTime.dd;
        st.textContent = Number.isFinite(p.stepMs) ? `${fmt(p.stepMs, p.stepMs < 10 ? 1 : 0)} ms · ${p.stepThreads} thread${p.stepThreads === 1 ? '' : 's'}` : '–';
        Object.assign(st.dataset, { ms: String(p.stepMs), threads: String(p.stepThreads), workerSteps: String(p.workerSteps), workerParts: String(p.workerParts) });
        if (p.running && p.stepsPerSecond > 0) document.body.dataset.learnRate = p.stepsPerSecond.toFixed(1);
      }
      if (latest) {
        m.first.dd.textContent = latest.firstLoss !== undefined ? fmt(latest.firstLoss, 3) : '–';
        m.repeat.dd.textContent = latest.repeatLoss !== undefined ? fmt(latest.repeatLoss, 3) : '–';
        m.held.dd.textContent = fmt(latest.loss, 3);
      }
      loss.update(task, session, session.info?.vocabSize ?? taskSpec(task).vocabSize);
      if (task === 'text') textInput.showSamples(session.samples);
      buttons();
    }
    function buttons(): void {
      controls.enable({ running: session.running, busy: session.busy, sizeProblem: !!sizeProblem() });
    }
    function drawHeads(e: Eval): void {
      const words = task === 'words' ? Array.from(e.probe.ids, (id) => corpus.vocab[id]) : e.probe.labels ?? [];
      heads.update(e, task, words);
      if (task === 'induction') session.firstInductionStep = inductionFindings(findings, e, session.firstInductionStep);
      else if (task === 'words') wordsFindings(findings, example.nextLine, e, words, (id) => corpus.vocab[id]);
      else wordsFindings(findings, textInput.nextLine, e, words, (_, rank) => e.probe.nextLabels?.[rank] ?? '?');
    }

    // --- task and size -----------------------------------------------------------------------------------------
    function sizeChanged(change: Partial<ModelChoice>): void {
      Object.assign(models[task], change);
      saveState();
      controls.showSizeProblem(sizeProblem());
      buttons();
      if (!sizeProblem() && session.started) reset();
    }
    function taskChanged(): void {
      controls.showTask(task, models[task], sizeProblem());
      example.root.hidden = task !== 'words';
      textInput.root.hidden = task !== 'text';
      describeTask(task, { taskText: controls.taskText, exampleNote, why });
      clear(findings); example.nextLine.textContent = '';
      if (task === 'words') sendProbe();
      if (session.started) reset();
      else drawMetrics();
    }

    // --- the URL state -------------------------------------------------------------------------------------------
    let saving = false;
    function saveState(): void {
      const next = learnStateOf(task, models[task], sentence, !sizeProblem(), ctx.store.state);
      const now = ctx.store.state as unknown as Record<string, unknown>;
      if (!Object.entries(next).some(([k, v]) => now[k] !== v)) return;
      saving = true;
      try { ctx.store.update(next); } finally { saving = false; }
    }
    // A state from elsewhere (a loaded state file): show it, as a new model if the task or its size changed.
    ctx.store.subscribe((st, changed) => {
      if (saving || !LEARN_KEYS.some((k) => changed.has(k))) return;
      const want = learnModel(st);
      const c = models[st.learnTask];
      const sized = st.learnTask !== task || c.layers !== want.layers || c.heads !== want.heads || c.dModel !== want.dModel;
      if (!sized && c.lr === want.lr && st.learnSentence === sentence) return; // this lab's own update
      Object.assign(c, { layers: want.layers, heads: want.heads, dModel: want.dModel, lr: want.lr });
      if (st.learnSentence !== sentence) { sentence = st.learnSentence; example.setSentence(sentence); }
      if (st.learnTask !== task) { task = st.learnTask; taskChanged(); return; } // taskChanged resets a running worker
      controls.showModel(c, sizeProblem());
      session.post({ type: 'lr', lr: c.lr });
      buttons();
      if (sized && !sizeProblem() && session.started) reset();
      else sendProbe();
    });

    // The worker (and its copy of the engine) starts when the section comes near the screen.
    new IntersectionObserver((entries, obs) => {
      if (entries.some((x) => x.isIntersecting)) { obs.disconnect(); ensureWorker(); }
    }, { rootMargin: '400px 0px' }).observe(section);
    taskChanged();
    buttons();
  },
};
