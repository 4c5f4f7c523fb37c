// "How fast is it in this browser?": plain JS vs the engine's scalar and SIMD128 modules, and the SIMD module on
// the package's worker pool (init({ threads })), timed live in a Web Worker (web/src/workers/bench-worker.ts) so the page keeps scrolling and answering clicks while it runs.
// The page only shows what the worker measured; the timing policy and the inputs live in the worker.
import '../../styles/bench.css';
// Keep this exact `?worker` form: the single-file build step looks for it to inline the worker.
import BenchWorker from '../../workers/bench-worker.ts?worker';
import type { BenchMessage, BenchRequest, Impl, ImplInfo, Measurement, Sizes, TaskSpec } from '../../workers/bench-worker';
import type { Lab, LabContext } from '../lab';
import { el, clear } from '../../ui/dom';
import { MAX_PAGE_THREADS, pageThreads } from '../page-threads';
import { BENCH_TIMING } from '../../workers/timing';
import { wasmFiles } from '../../engine-files';
import { select } from '../../ui/controls';
import { disclosure } from '../../ui/disclosure';
import { scaleLinear, select as d3select } from 'd3';

const IMPLS: Impl[] = ['js', 'scalar', 'simd', 'threads'];
/** The pool's size for the threads column (page-threads.ts). */
const PLANNED = pageThreads();
// The threads column's name says how many ran (the pool's size, known before any run).
const IMPL_NAME: Record<Impl, string> = { js: 'plain JS', scalar: 'wasm scalar', simd: 'wasm SIMD', threads: `wasm SIMD, ${PLANNED} threads` };
const IMPL_SHORT: Record<Impl, string> = { js: 'JS', scalar: 'scalar', simd: 'SIMD', threads: `${PLANNED} thr.` };
const IMPL_COLOUR: Record<Impl, string> = { js: '#b35806', scalar: '#21918c', simd: '#1f4e89', threads: '#5e3c99' };

/** How the pool's time compares with one thread's, in words read off the two numbers. */
function versusOne(one: number, pooled: number): string {
  const r = one / pooled;
  const x = `${r.toFixed(r >= 10 ? 0 : 2)}×`;
  return r >= 1.1 ? `${x} as fast` : r <= 0.9 ? `slower (${x})` : `about the same (${x})`;
}

type State = 'idle' | 'running' | 'done' | 'cancelled' | 'error';

const taskLabel = (t: TaskSpec) => `${t.kind} n=${t.n}${t.causal ? ' causal' : ''}${t.heads > 1 ? ` ×${t.heads} heads` : ''}`;
// No-break spaces: on a phone the cell may wrap, but only after a comma.
const sizeLabel = (t: TaskSpec) => (t.kind === 'softmax' ? `${t.n}\u00a0×\u00a0${t.n}`
  : `n\u00a0=\u00a0${t.n}, d\u00a0=\u00a0${t.d}${t.heads > 1 ? `, ${t.heads}\u00a0heads` : ''}`);
/** GFLOP/s for attention (dense 4·n²·d per head, as the project's benchmark counts causal too), M elements/s for softmax. */
const rate = (t: TaskSpec, ms: number) => (t.kind === 'attention' ? t.work / ms / 1e6 : t.work / ms / 1e3);
const unitOf = (kind: TaskSpec['kind']) => (kind === 'attention' ? 'GFLOP/s' : 'M elements/s');

const fmtMs = (v: number) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));
const fmtRate = (v: number) => (v >= 1000 ? v.toFixed(0) : v.toPrecision(3));
const fmtDiff = (v: number) => (v === 0 ? '0' : v.toExponential(1));

interface UAData { brands?: { brand: string; version: string }[]; platform?: string }

/** "Chrome 124 on Linux" from User-Agent Client Hints where the browser has them, else from the UA string. */
function browserName(): string {
  const data = (navigator as Navigator & { userAgentData?: UAData }).userAgentData;
  const brands = data?.brands?.filter((b) => !/not.?a.?brand/i.test(b.brand)) ?? [];
  const pick = brands.find((b) => b.brand !== 'Chromium') ?? brands[0];
  if (pick) return `${pick.brand} ${pick.version}${data?.platform ? ` on ${data.platform}` : ''}`;
  const ua = navigator.userAgent;
  const m = /(Firefox|Edg|OPR|Chrome)\/([\d.]+)/.exec(ua);
  if (m) return `${m[1] === 'Edg' ? 'Edge' : m[1] === 'OPR' ? 'Opera' : m[1]} ${m[2]}`;
  const s = /Version\/([\d.]+).*Safari/.exec(ua);
  return s ? `Safari ${s[1]}` : 'unknown browser';
}

export const benchLab: Lab = {
  id: 'speed',
  nav: 'Speed',
  mount(section: HTMLElement, ctx: LabContext) {
    const page = ctx.engine.buildInfo();
    section.dataset.state = 'idle';
    section.append(
      el('h2', { text: 'Appendix: how fast is it in this browser?' }),
      el('p', { class: 'intro', text: `Press Run to time softmax and attention right here: a careful plain-JavaScript version, the engine compiled to ordinary (scalar) WebAssembly and the engine compiled with WebAssembly SIMD, each on one thread, ${PLANNED >= 2 ? `and the SIMD engine again on ${PLANNED} threads: the package’s async calls (softmaxAsync, attentionAsync) on a pool of ${PLANNED} workers, one per logical core this browser reports (at most ${MAX_PAGE_THREADS})` : 'and no threaded run: this browser reports one logical core'}. The timing runs in a background worker, so the page stays usable meanwhile.` }),
      disclosure('What the implementations are', el('p', { class: 'bench-explain', text: 'SIMD128 is WebAssembly’s vector instruction set: one instruction works on a 128-bit register holding 4 float32 numbers, so a multiply-add does 4 lanes of work at once. All three run the same algorithm for attention: tiles of keys (64 in JS, 128 in the engine) with an online softmax, never building the n × n matrix. What differs is the code: the plain-JS version computes in float64 JavaScript numbers through a JIT, the scalar module in float32 one number per instruction (about as fast: a JIT compiles a careful typed-array loop well), and the SIMD module four float32 lanes per instruction, which is where the several-fold speed-up comes from. The threads column runs the SIMD engine in several workers at once: the package cuts a call into parts it can compute apart (softmax by rows, attention by batch item and head, for instance), copies each part’s inputs to a worker and its results back (no shared memory), and joins them. Whether that pays depends on the size of the call and on how many parts it gives: the last column shows what it bought here.' }), 'speed-what'),
    );

    let sizes: Sizes = 'full';
    const sizeSelect = select([
      { value: 'full', label: 'full (about 20 s)' },
      { value: 'quick', label: 'quick (about 5 s)' },
    ], sizes, (v) => { sizes = v === 'quick' ? 'quick' : 'full'; }, 'speed-sizes');
    sizeSelect.id = 'speed-sizes';
    sizeSelect.setAttribute('aria-describedby', 'speed-sizes-help');
    const runBtn = el('button', { type: 'button', class: 'chip bench-run', 'data-control': 'speed-run', text: 'Run' });
    const cancelBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'speed-cancel', text: 'Cancel', disabled: true });
    const progress = el('progress', { class: 'bench-progress', max: 1, value: 0, 'aria-label': 'Benchmark progress', 'data-progress': 'speed' });
    const progressText = el('p', { class: 'bench-progress-text', role: 'status', 'aria-live': 'polite', text: 'Not run yet.' });
    const env = el('dl', { class: 'bench-env' });
    const table = el('table', { class: 'plain-table bench-table', 'data-table': 'speed' });
    const tableNote = el('p', { class: 'bench-table-note', 'aria-hidden': 'true' });
    const threadsNote = el('p', { class: 'bench-threads', 'data-figure': 'speed-threads' });
    const attChart = el('div', { class: 'bench-chart', 'data-chart': 'speed-attention' });
    const softChart = el('div', { class: 'bench-chart', 'data-chart': 'speed-softmax' });

    // The results appear once a run has started; before that the section is its controls and text.
    const resultsBox = el('div', { class: 'bench-results', hidden: true },
      threadsNote,
      tableNote,
      el('div', { class: 'table-scroll' }, table),
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' }, el('h3', { text: 'Attention, GFLOP/s by implementation' }), attChart),
        el('div', { class: 'panel' }, el('h3', { text: 'Softmax, million elements/s by implementation' }), softChart)));
    section.append(
      // The size choice and the buttons on one line, the choice's explanation under both.
      el('div', { class: 'field bench-controls' },
        el('label', { for: 'speed-sizes', text: 'Sizes' }),
        el('div', { class: 'bench-control-row' }, sizeSelect,
          el('div', { class: 'button-group', role: 'group', 'aria-label': 'Benchmark' }, runBtn, cancelBtn)),
        el('p', { class: 'help', id: 'speed-sizes-help', text: 'Full: softmax of 256² and 1024² logits, attention at n = 64, 256, 1024 and causal 1024, and one call of 8 heads at n = 256. Quick: softmax 256², attention at n = 64 and causal 256, and 4 heads at n = 64.' })),
      el('div', { class: 'bench-progress-row' }, progress, progressText),
      env,
      resultsBox,
      disclosure('How it is timed', el('div', {},
        el('p', { class: 'help', text: `Each number is the median time of one call, after a warm-up, over repeated batches totalling at least ${BENCH_TIMING.minTotalMs} ms and at least ${BENCH_TIMING.minSamples} batches; the same random inputs go to every implementation, and each writes into an output array allocated once, so no call pays for a fresh output array; the engine’s times still include copying its inputs into wasm memory, as any caller’s would. Attention GFLOP/s counts 4·n²·d per head per call (Q·Kᵀ and P·V; softmax not counted); causal calls are counted with the same dense 4·n²·d, so the masked work the engine skips shows up as a higher, effective rate, as in the project’s own benchmark. Softmax is mostly exponentials, which are not single operations, so it is reported in elements per second instead. max |Δ| is the largest difference from the plain-JS output: a sanity check, not an accuracy test (plain JS computes in float64 and rounds to float32).` }),
        el('p', { class: 'help', text: 'Numbers vary with the machine, the browser and its version, the power mode and whatever else is running: compare the columns with each other rather than your numbers with someone else’s. The project’s measurements against other libraries (onnxruntime-web, TensorFlow.js) are in its documentation, docs/performance.md.' })), 'speed-how'),
    );

    let state: State = 'idle';
    let worker: Worker | undefined;
    let tasks: TaskSpec[] = [];
    let impls: ImplInfo[] = [];
    let results = new Map<string, Partial<Record<Impl, Measurement>>>();
    let running: { task: string; impl: Impl } | undefined;
    let done = 0;
    let total = 0;

    const setState = (s: State) => {
      state = s;
      section.dataset.state = s;
      const onCancel = document.activeElement === cancelBtn;
      runBtn.disabled = s === 'running';
      cancelBtn.disabled = s !== 'running';
      if (onCancel && s !== 'running') runBtn.focus(); // a disabled Cancel would drop keyboard focus
      sizeSelect.disabled = s === 'running';
      table.setAttribute('aria-busy', String(s === 'running'));
    };

    const renderEnv = () => {
      clear(env);
      const implText = (id: Impl) => {
        const i = impls.find((x) => x.id === id);
        if (id === 'js') return 'a careful plain-JavaScript version (the same as in the project’s benchmark)';
        if (!i) return 'loads when the run starts';
        if (!i.available) return `unavailable: ${i.note ?? 'not supported'}`;
        return `attnlab ${i.version}, kernels ${i.kernels}, SIMD ${i.simd ? 'on' : 'off'}${i.threads ? `, ${i.threads} workers (init({ threads: ${i.threads} }))` : ''}`;
      };
      const row = (k: string, v: string, attrs: Record<string, string | boolean | undefined> = {}) =>
        el('div', { class: 'bench-env-row', ...attrs }, el('dt', { text: k }), el('dd', { text: v }));
      const simdInfo = impls.find((i) => i.id === 'simd');
      const scalarInfo = impls.find((i) => i.id === 'scalar');
      const threadsInfo = impls.find((i) => i.id === 'threads');
      env.append(
        row('Browser', `${browserName()} · ${navigator.hardwareConcurrency || '?'} logical cores${crossOriginIsolated ? '' : ' · timer coarsened to ~0.1 ms (batches absorb it)'}`, { 'data-env': 'browser' }),
        row('User agent', navigator.userAgent, { 'data-env': 'ua' }),
        row('Page engine', `attnlab ${page.version}, ${page.backend}, kernels ${page.kernels ?? '?'}`, { 'data-env': 'page-engine' }),
        row(IMPL_NAME.js, implText('js'), { 'data-impl': 'js' }),
        row(IMPL_NAME.scalar, implText('scalar'), { 'data-impl': 'scalar', 'data-backend': scalarInfo?.backend, 'data-simd': scalarInfo?.available ? String(!!scalarInfo.simd) : undefined }),
        row(IMPL_NAME.simd, implText('simd'), { 'data-impl': 'simd', 'data-backend': simdInfo?.backend, 'data-simd': simdInfo?.available ? String(!!simdInfo.simd) : undefined }),
        row(IMPL_NAME.threads, implText('threads'), { 'data-impl': 'threads', 'data-backend': threadsInfo?.backend, 'data-simd': threadsInfo?.available ? String(!!threadsInfo.simd) : undefined,
          'data-threads': threadsInfo?.available ? String(threadsInfo.threads) : undefined }),
      );
    };

    // The caption stays in the table for screen readers; the visible copy sits above the scroll box, so on a
    // phone it wraps at the screen's width instead of running off with the wide table.
    const pool = () => impls.find((i) => i.id === 'threads' && i.available)?.threads;
    const captionText = () => {
      if (!tasks.length) return 'Results appear here as each measurement finishes.';
      const k = pool();
      return `Median time per call and throughput (${tasks.length} tasks; plain JS, wasm scalar and wasm SIMD on one thread each${k ? `, wasm SIMD also on ${k} threads` : ''})`;
    };
    /** What the pool bought, task by task, from the measured times (said only once both were measured). */
    const threadsText = (): string => {
      const info = impls.find((i) => i.id === 'threads');
      if (!info) return '';
      if (!info.available) return `Threads: not measured (${info.note ?? 'unavailable'}).`;
      const done = tasks.flatMap((t) => { const r = results.get(t.id); return r?.simd && r.threads ? [`${taskLabel(t)}: ${fmtMs(r.simd.ms)} ms on 1 thread, ${fmtMs(r.threads.ms)} ms on ${info.threads}, ${versusOne(r.simd.ms, r.threads.ms)}`] : []; });
      return done.length ? `Threads: ${info.threads} workers ran the last column. Against the SIMD engine on one thread: ${done.join('; ')}.` : `Threads: ${info.threads} workers will run the last column.`;
    };
    const renderTable = () => {
      clear(table);
      tableNote.textContent = captionText();
      threadsNote.textContent = threadsText();
      const th = (text: string, attrs: Record<string, string | number> = {}) => el('th', { scope: 'col', text, ...attrs });
      table.append(
        el('caption', { class: 'visually-hidden', text: captionText() }),
        el('thead', {},
          el('tr', {}, th('task', { rowspan: 2 }), th('size', { rowspan: 2 }), th('median ms per call', { colspan: IMPLS.length, scope: 'colgroup' }),
            th('throughput', { colspan: IMPLS.length, scope: 'colgroup' }), th('SIMD speed-up over JS', { rowspan: 2 }), th(`${PLANNED} threads vs 1 (SIMD)`, { rowspan: 2 }),
            th('max |Δ| vs plain JS', { colspan: 3, scope: 'colgroup' })),
          el('tr', {}, ...IMPLS.map((i) => th(IMPL_NAME[i])), ...IMPLS.map((i) => th(IMPL_NAME[i])), th(IMPL_NAME.scalar), th(IMPL_NAME.simd), th(IMPL_NAME.threads))),
      );
      const body = el('tbody');
      let kind: TaskSpec['kind'] | undefined;
      for (const t of tasks) {
        const r = results.get(t.id);
        if (!r) continue; // a row appears once its first measurement starts
        if (t.kind !== kind) {
          kind = t.kind;
          body.append(el('tr', { class: 'bench-group' }, el('th', { colspan: 4 + 2 * IMPLS.length + 3, scope: 'rowgroup', text: kind === 'softmax'
            ? 'Softmax of n × n logits, row by row: throughput in million elements per second'
            : 'Attention, n queries × n keys, d = 64: throughput in GFLOP/s (4·n²·d per head per call; causal counted dense, an effective rate)' })));
        }
        const avail = (i: Impl) => impls.find((x) => x.id === i)?.available ?? false;
        const pending = (i: Impl) => (running?.task === t.id && running.impl === i ? '…' : avail(i) ? '—' : 'n/a');
        const info = (i: Impl) => impls.find((x) => x.id === i);
        const msCell = (i: Impl) => {
          const m = r[i];
          const b = info(i);
          return el('td', { 'data-col': `ms-${i}`, 'data-value': m ? String(m.ms) : undefined, 'data-calls': m?.calls,
            'data-backend': m ? b?.backend ?? 'js' : undefined, 'data-simd': m && b?.backend ? String(!!b.simd) : undefined,
            title: m ? `${m.calls} calls timed` : undefined, text: m ? fmtMs(m.ms) : pending(i) });
        };
        const rateCell = (i: Impl) => {
          const m = r[i];
          const v = m ? rate(t, m.ms) : undefined;
          return el('td', { 'data-col': `rate-${i}`, 'data-value': v === undefined ? undefined : String(v), title: v === undefined ? undefined : unitOf(t.kind), text: v === undefined ? pending(i) : fmtRate(v) });
        };
        const diffCell = (i: Impl) => {
          const m = r[i];
          return el('td', { 'data-col': `diff-${i}`, 'data-value': m ? String(m.maxDiff) : undefined, text: m ? fmtDiff(m.maxDiff) : pending(i) });
        };
        const sp = r.js && r.simd ? r.js.ms / r.simd.ms : undefined;
        const tp = r.simd && r.threads ? r.simd.ms / r.threads.ms : undefined;
        const complete = IMPLS.every((i) => !avail(i) || r[i]);
        body.append(el('tr', { 'data-task': t.id, 'data-kind': t.kind, 'data-complete': String(complete) },
          el('th', { scope: 'row', text: `${t.kind}${t.causal ? ' (causal)' : ''}${t.heads > 1 ? ` (${t.heads} heads)` : ''}` }),
          el('td', { class: 'bench-size', text: sizeLabel(t) }),
          ...IMPLS.map(msCell), ...IMPLS.map(rateCell),
          el('td', { 'data-col': 'speedup', 'data-value': sp === undefined ? undefined : String(sp), class: 'bench-speedup', text: sp === undefined ? (avail('simd') ? '—' : 'n/a') : `${sp.toFixed(1)}×` }),
          el('td', { 'data-col': 'threads-speedup', 'data-value': tp === undefined ? undefined : String(tp), class: 'bench-speedup', text: tp === undefined ? (avail('threads') ? '—' : 'n/a') : versusOne(r.simd!.ms, r.threads!.ms) }),
          diffCell('scalar'), diffCell('simd'), diffCell('threads')));
      }
      table.append(body);
    };

    const renderCharts = () => {
      drawChart(attChart, tasks.filter((t) => t.kind === 'attention'), results, impls, 'GFLOP/s');
      drawChart(softChart, tasks.filter((t) => t.kind === 'softmax'), results, impls, 'M elements/s');
    };

    const render = () => {
      resultsBox.hidden = tasks.length === 0;
      renderTable();
      renderCharts();
    };

    const stop = () => {
      worker?.terminate();
      worker = undefined;
      running = undefined;
    };

    const onMessage = (msg: BenchMessage) => {
      switch (msg.type) {
        case 'start':
          tasks = msg.tasks; impls = msg.impls; total = msg.total;
          progress.max = total;
          renderEnv();
          break;
        case 'step': {
          running = { task: msg.task, impl: msg.impl };
          const t = tasks.find((x) => x.id === msg.task);
          if (!results.has(msg.task)) results.set(msg.task, {});
          progressText.textContent = `${t ? taskLabel(t) : msg.task} · ${IMPL_NAME[msg.impl]} (${msg.index}/${msg.total})`;
          break;
        }
        case 'result':
          (results.get(msg.m.task) ?? results.set(msg.m.task, {}).get(msg.m.task)!)[msg.m.impl] = msg.m;
          done = msg.done;
          progress.value = done;
          running = undefined;
          break;
        case 'done':
          stop();
          setState('done');
          progressText.textContent = `Done: ${done} measurements in ${(msg.elapsedMs / 1000).toFixed(1)} s.`;
          break;
        case 'error':
          stop();
          setState('error');
          progressText.textContent = `The benchmark failed: ${msg.message}`;
          break;
      }
      if (msg.type !== 'start') render();
    };

    runBtn.addEventListener('click', () => {
      if (state === 'running') return;
      tasks = []; impls = []; results = new Map(); done = 0; total = 0; running = undefined;
      progress.max = 1; progress.value = 0;
      progressText.textContent = 'Loading the engine in the worker…';
      // Run is disabled while running: focus moves to Cancel instead of being lost.
      const hadFocus = document.activeElement === runBtn;
      setState('running');
      if (hadFocus) cancelBtn.focus();
      renderEnv();
      render();
      worker = new BenchWorker();
      worker.addEventListener('message', (e: MessageEvent<BenchMessage>) => onMessage(e.data));
      worker.addEventListener('error', (e) => onMessage({ type: 'error', message: e.message || 'the worker did not start' }));
      const req: BenchRequest = { type: 'run', sizes, threads: PLANNED, wasm: wasmFiles };
      worker.postMessage(req);
    });

    cancelBtn.addEventListener('click', () => {
      if (state !== 'running') return;
      // terminate() stops the worker mid-loop; finished measurements stay on the page.
      stop();
      setState('cancelled');
      progressText.textContent = `Cancelled after ${done} of ${total || '?'} measurements.`;
      render();
    });

    renderEnv();
    render();
  },
};

/** Grouped horizontal bars: one group per task, one bar per implementation. Drawn in a fixed 360-unit viewBox
 *  that scales with its box, so it fits a 390 px phone and stays crisp on a wide screen. */
function drawChart(root: HTMLElement, tasks: TaskSpec[], results: Map<string, Partial<Record<Impl, Measurement>>>,
  impls: ImplInfo[], unit: string): void {
  const W = 360, labelW = 48, valueW = 64, bar = 14, gap = 4, title = 18, groupGap = 10;
  const shown = tasks.filter((t) => results.has(t.id));
  const groupH = title + IMPLS.length * (bar + gap) + groupGap;
  const H = Math.max(40, shown.length * groupH + 4);
  const values = shown.flatMap((t) => IMPLS.map((i) => { const m = results.get(t.id)?.[i]; return m ? rate(t, m.ms) : 0; }));
  const x = scaleLinear().domain([0, Math.max(1e-9, ...values)]).nice().range([labelW, W - valueW]);
  const svg = d3select(root).selectAll<SVGSVGElement, null>('svg').data([null]).join('svg')
    .attr('class', 'bench-chart-svg').attr('viewBox', `0 0 ${W} ${H}`).attr('role', 'img');
  svg.selectAll('*').remove();
  if (!shown.length) {
    svg.attr('aria-label', `No ${unit} measurements yet`);
    svg.append('text').attr('class', 'bench-chart-empty').attr('x', W / 2).attr('y', 24).attr('text-anchor', 'middle').text('Press Run to measure.');
    return;
  }
  const parts: string[] = [];
  shown.forEach((t, gi) => {
    const g = svg.append('g').attr('transform', `translate(0,${gi * groupH})`);
    g.append('text').attr('class', 'bench-chart-title').attr('x', 0).attr('y', 12).text(taskLabel(t));
    IMPLS.forEach((impl, ii) => {
      const y = title + ii * (bar + gap);
      const m = results.get(t.id)?.[impl];
      const available = impls.find((i) => i.id === impl)?.available ?? false;
      const v = m ? rate(t, m.ms) : undefined;
      g.append('text').attr('class', 'bench-chart-label').attr('x', labelW - 6).attr('y', y + bar / 2).attr('text-anchor', 'end')
        .attr('dominant-baseline', 'central').text(IMPL_SHORT[impl]);
      if (v !== undefined) {
        g.append('rect').attr('class', `bench-bar bench-bar-${impl}`).attr('x', labelW).attr('y', y)
          .attr('width', Math.max(1, x(v) - labelW)).attr('height', bar).attr('fill', IMPL_COLOUR[impl]);
      }
      g.append('text').attr('class', 'bench-chart-value').attr('x', v === undefined ? labelW + 4 : x(v) + 4).attr('y', y + bar / 2)
        .attr('dominant-baseline', 'central').text(v === undefined ? (available ? '—' : 'n/a') : fmtRate(v));
      parts.push(`${taskLabel(t)} ${IMPL_NAME[impl]} ${v === undefined ? 'not measured' : `${fmtRate(v)} ${unit}`}`);
    });
  });
  svg.attr('aria-label', `${unit} by implementation: ${parts.join('; ')}`);
}
