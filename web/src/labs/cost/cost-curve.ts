// The cost lab's measured curve: the engine runs attention at growing n in a Web Worker, on both paths —
// materialized (returnWeights keeps the n×n matrix) and streaming (online softmax over 32×128 tiles) — and the
// page plots time and wasm memory against n on log-log axes. Each point is timed on one thread and on the
// package's worker pool (init({ threads })); the page says how many threads ran and what each took.
import { el, clear } from '../../ui/dom';
import { wasmFiles } from '../../engine-files';
import { field, select as selectControl } from '../../ui/controls';
import { disclosure } from '../../ui/disclosure';
import { LogLogChart, decades, legendItem } from '../../ui/loglog-chart';
import { squareBytes, formatBinary, shortSI, CURVE_D, MAX_MATERIALIZED_MIB, MAX_MATERIALIZED_N, TILE_KEYS, TILE_ROWS } from '../../model/cost';
import { MAX_PAGE_THREADS, pageThreads } from '../page-threads';
import { CURVE_TIMING } from '../../workers/timing';
import type { CurveMessage, CurvePath, CurvePoint, CurveRequest } from '../../workers/curve-worker';
// Keep exactly this `?worker` form: the offline build (singleFile in web/vite.config.ts) rewrites it to
// `?worker&inline`, so the worker travels inside the single HTML file.
import CurveWorker from '../../workers/curve-worker.ts?worker';
import { COLOURS, PATH_LABEL } from './cost-palette';

const MAX_N_OPTIONS = [256, 512, 1024, 2048, 4096, 8192];
const CURVE_SEED = 2024;

const fmtMs = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toPrecision(3) : ms.toPrecision(2));
const tickMs = (ms: number) => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);
const plural = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;

/** How a threaded time compares with one thread's, in words read off the two numbers. */
export function speedWords(one: number, threaded: number): string {
  const r = one / threaded;
  const x = `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`;
  return r >= 1.1 ? `${x} as fast` : r <= 0.9 ? `slower (${x} the speed)` : `about the same (${x})`;
}


export function mountCurve(section: HTMLElement): void {
  let maxN = 4096;
  const maxSelect = selectControl(MAX_N_OPTIONS.map((v) => ({
    value: String(v), label: v > MAX_MATERIALIZED_N ? `${v} (streaming only above ${MAX_MATERIALIZED_N})` : String(v),
  })), String(maxN), (v) => { maxN = Number(v); }, 'cost-max-n');
  const measure = el('button', { type: 'button', class: 'chip cost-run', 'data-control': 'cost-measure', text: 'Measure in this browser' });
  const cancel = el('button', { type: 'button', class: 'chip', 'data-control': 'cost-cancel', text: 'Cancel', disabled: true });
  const progress = el('progress', { class: 'cost-progress', 'data-progress': 'cost-curve', max: 1, value: 0, 'aria-label': 'Measurement progress' });
  const status = el('p', { class: 'cost-status', role: 'status', 'aria-live': 'polite', 'data-status': 'cost-curve', text: 'Not measured yet.' });
  const timeChart = new LogLogChart('cost-time', 'n (tokens)', 'time per call');
  const memChart = new LogLogChart('cost-memory', 'n (tokens)', 'wasm memory');
  const table = el('table', { class: 'plain-table', 'data-table': 'cost-curve' });
  const planned = pageThreads(); // the threaded timing's pool
  const threadsIntro = el('p', { class: 'intro', 'data-figure': 'cost-threads-intro', text: planned >= 2
    ? `Every point is timed twice: on the worker’s own thread (lab.attention), and through the package’s async call on a pool of ${planned} workers (init({ threads: ${planned} }) and attentionAsync: one worker per logical core this browser reports, at most ${MAX_PAGE_THREADS}). The package hands an async call to its workers in as many parts as it can cut it into, and copies the inputs and results to and from them (no shared memory): the two times below show what that buys at each n on this machine.`
    : 'This browser reports one logical core, so every point is timed on one thread only (a pool of workers would share that core).' });
  // Computed from the measured points: how many threads ran, and what each took at the largest n of each path.
  const threadsNote = el('p', { class: 'cost-threads', 'data-figure': 'cost-threads', role: 'status', 'aria-live': 'polite' });
  let threadsRan = 0;
  let threadsError = '';

  section.append(
    el('h3', { text: 'Measured in this browser' }),
    el('p', { class: 'intro', text: `The engine runs one attention call, q, k, v of n × ${CURVE_D} (fixed random numbers), at n = 64, 128, … on both paths. Materialized asks for the weights, so the engine builds the n × n matrix and hands it back; streaming asks for the output only, so the engine walks the keys in ${TILE_ROWS} × ${TILE_KEYS} tiles with an online softmax and never holds more than a tile of scores. It runs in a Web Worker, so this page stays responsive.` }),
    threadsIntro,
    disclosure('How it is measured', el('p', { class: 'cost-counts', text: `Memory is measured: every point gets a fresh engine instance (wasm memory grows and never shrinks) and reports its memory after the calls, starting from 1 MiB; the threaded timing’s workers are separate instances and are not in it. In the memory chart the dashed line is the theory for one n × n float32 matrix, 4n² bytes. The materialized instance ends near twice that line: the engine keeps the scores and the weights in two n × n buffers. Streaming grows too, but linearly: q, k, v, the output and a packed copy of Kᵀ, about 5 · n · ${CURVE_D} floats (the copy of Kᵀ rounds n up to a multiple of 128 keys). Time: a warm-up (at least one call, at least ${CURVE_TIMING.warmupMs} ms), then the median of up to ${CURVE_TIMING.maxBatches} timed batches within about ${tickMs(CURVE_TIMING.budgetMs)} per point (small n repeat the call within a batch). A materialized call also copies its n × n weights out to a new JavaScript array, and that copy is in its time. The threaded time is the same call through attentionAsync on a pool of workers made once per run, timed the same way (each call awaited before the next); it includes copying q, k and v to the workers and the results back. Sizes stay bounded: the materialized path stops at n = ${MAX_MATERIALIZED_N} (${MAX_MATERIALIZED_MIB} MiB of scores, twice that with the copy handed back), and a path whose single call takes over ${tickMs(CURVE_TIMING.maxCallMs)} skips its larger n. Streaming can go to ${MAX_N_OPTIONS[MAX_N_OPTIONS.length - 1]}.` }), 'cost-curve-how'),
    el('div', { class: 'cost-run-row' },
      field('largest n', maxSelect),
      el('div', { class: 'button-group', role: 'group', 'aria-label': 'Measurement' }, measure, cancel)),
    el('div', { class: 'cost-progress-row' }, progress, status),
    el('ul', { class: 'cost-legend', 'aria-label': 'Legend of the measured charts' },
      legendItem(COLOURS.materialized, PATH_LABEL.materialized, { marker: true }),
      legendItem(COLOURS.streaming, PATH_LABEL.streaming, { marker: true }),
      legendItem(COLOURS.theory, 'memory chart: one n × n float32 matrix, 4n² B (theory)', { dashed: true }),
      ...(planned >= 2 ? [legendItem('#3d4150', `time chart, dashed with points: the same call on ${planned} threads`, { dashed: true, marker: true })] : [])),
    threadsNote,
    el('div', { class: 'two-col cost-charts' },
      el('figure', { class: 'panel cost-figure' }, el('figcaption', { text: 'Time per attention call (log-log)' }), timeChart.root),
      el('figure', { class: 'panel cost-figure' }, el('figcaption', { text: 'Wasm memory after the call (log-log)' }), memChart.root)),
    el('details', { class: 'cost-numbers' }, el('summary', { text: 'The measured numbers' }), el('div', { class: 'table-scroll' }, table)),
  );

  const points = new Map<string, CurvePoint>();
  let worker: Worker | null = null;
  let backend = '';

  function describeThreads(all: CurvePoint[]): string {
    if (threadsError) return `The worker pool could not start (${threadsError}), so every point was timed on one thread.`;
    if (!threadsRan) return all.length ? '' : planned >= 2 ? `Not measured yet: each point will be timed on 1 thread and on ${planned}.` : '';
    if (threadsRan < 2) return 'Timed on 1 thread (this browser reports one logical core).';
    const parts = (['streaming', 'materialized'] as CurvePath[]).flatMap((p) => {
      const last = all.filter((q) => q.path === p && q.threaded).sort((a, b) => b.n - a.n)[0];
      if (!last?.threaded) return [];
      return [`${p} at n = ${last.n}: 1 thread ${fmtMs(last.ms)} ms, ${threadsRan} threads ${fmtMs(last.threaded.ms)} ms, ${speedWords(last.ms, last.threaded.ms)}`];
    });
    return `${plural(threadsRan, 'thread')} ran the async calls (the dashed lines).${parts.length ? ` Largest n measured: ${parts.join('; ')}.` : ''}`;
  }

  const setState = (s: 'idle' | 'running' | 'done' | 'cancelled' | 'error') => {
    section.dataset.curveState = s;
    measure.disabled = s === 'running';
    cancel.disabled = s !== 'running';
    maxSelect.disabled = s === 'running';
  };
  setState('idle');

  function draw(): void {
    const all = [...points.values()].sort((a, b) => a.n - b.n);
    const of = (p: CurvePath) => all.filter((q) => q.path === p);
    const xs = all.map((p) => p.n);
    const xMax = Math.max(maxN, ...xs);
    const xTicks: number[] = [];
    for (let m = 64; m <= xMax; m *= 2) xTicks.push(m);
    const x: [number, number] = [48, xMax * 1.35];
    // Axes fit the data (empty charts get a plausible frame) and always span whole decades.
    const threadedSeries = (['materialized', 'streaming'] as CurvePath[]).map((p) => ({
      key: `${p}-threads`, label: `${PATH_LABEL[p]}, ${threadsRan} threads`, colour: COLOURS[p], markers: true, dashed: true,
      points: of(p).filter((q) => q.threaded).map((q) => ({ x: q.n, y: q.threaded!.ms })),
    })).filter((s) => s.points.length);
    const times = all.flatMap((p) => (p.threaded ? [p.ms, p.threaded.ms] : [p.ms]));
    const t = times.length ? decades(Math.min(...times), Math.max(...times)) : decades(0.01, 1000);
    timeChart.update({
      series: [...(['materialized', 'streaming'] as CurvePath[]).map((p) => ({
        key: p, label: `${PATH_LABEL[p]}, 1 thread`, colour: COLOURS[p], markers: true, points: of(p).map((q) => ({ x: q.n, y: q.ms })),
      })), ...threadedSeries],
      x, y: t.domain, xTicks, yTicks: t.ticks, xFormat: String, yFormat: tickMs,
      label: `Time per attention call against n, log-log. ${all.map((p) => `${p.path} n=${p.n}: ${fmtMs(p.ms)} ms on 1 thread${p.threaded ? `, ${fmtMs(p.threaded.ms)} ms on ${threadsRan}` : ''}`).join('; ') || 'No points yet.'}`,
    });
    const theory = [64, xMax].map((m) => ({ x: m, y: squareBytes(m) }));
    const m = decades(Math.min(2 ** 14, ...all.map((p) => p.memoryBytes)), Math.max(squareBytes(xMax), ...all.map((p) => p.memoryBytes)));
    memChart.update({
      series: [
        { key: 'theory', label: 'one n×n float32 matrix', colour: COLOURS.theory, dashed: true, points: theory },
        ...(['materialized', 'streaming'] as CurvePath[]).map((p) => ({
          key: p, label: PATH_LABEL[p], colour: COLOURS[p], markers: true, points: of(p).map((q) => ({ x: q.n, y: q.memoryBytes })),
        })),
      ],
      x, y: m.domain, xTicks, yTicks: m.ticks, xFormat: String, yFormat: (v) => shortSI(v, 'B'),
      label: `Wasm memory after the call against n, log-log. ${all.map((p) => `${p.path} n=${p.n}: ${formatBinary(BigInt(p.memoryBytes))}`).join('; ') || 'No points yet.'}`,
    });

    threadsNote.textContent = describeThreads(all);
    const withThreads = threadsRan >= 2;
    clear(table);
    table.append(
      el('caption', { text: `Attention at d = ${CURVE_D}${backend ? `, ${backend} engine` : ''}, one head, in a Web Worker: on 1 thread${withThreads ? ` and on ${threadsRan} (attentionAsync)` : ''}` }),
      el('thead', {}, el('tr', {}, ...['n', 'path', 'median time per call, 1 thread', 'calls timed',
        ...(withThreads ? [`median time per call, ${threadsRan} threads`, `${threadsRan} threads vs 1`] : []),
        'wasm memory after (measured, 1 thread)', 'n × n float32 (theory)']
        .map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, ...all.map((p) => el('tr', { 'data-path': p.path, 'data-n': p.n },
        el('th', { scope: 'row', text: String(p.n) }),
        el('td', { text: p.path }),
        el('td', { 'data-col': 'ms', 'data-value': String(p.ms), text: `${fmtMs(p.ms)} ms` }),
        el('td', { 'data-col': 'calls', 'data-value': String(p.batches * p.reps), text: `${p.batches} × ${p.reps}` }),
        ...(withThreads ? [
          el('td', { 'data-col': 'ms-threads', 'data-value': p.threaded ? String(p.threaded.ms) : undefined, 'data-calls': p.threaded ? String(p.threaded.batches * p.threaded.reps) : undefined,
            text: p.threaded ? `${fmtMs(p.threaded.ms)} ms` : '—' }),
          el('td', { 'data-col': 'speedup', 'data-value': p.threaded ? String(p.ms / p.threaded.ms) : undefined, text: p.threaded ? speedWords(p.ms, p.threaded.ms) : '—' }),
        ] : []),
        el('td', { 'data-col': 'memory', 'data-value': String(p.memoryBytes), text: formatBinary(BigInt(p.memoryBytes)) }),
        el('td', { 'data-col': 'theory', 'data-value': String(squareBytes(p.n)), text: formatBinary(BigInt(squareBytes(p.n))) })))),
    );
  }
  draw();

  measure.addEventListener('click', () => {
    if (worker) return;
    const plan: CurveRequest['points'] = [];
    for (let n = 64; n <= maxN; n *= 2) {
      if (n <= MAX_MATERIALIZED_N) plan.push({ n, path: 'materialized' });
      plan.push({ n, path: 'streaming' });
    }
    points.clear();
    threadsRan = 0;
    threadsError = '';
    draw();
    progress.max = plan.length;
    progress.value = 0;
    status.textContent = 'Starting the worker…';
    // Measure is disabled while running: focus moves to Cancel instead of being lost.
    const hadFocus = document.activeElement === measure;
    setState('running');
    if (hadFocus) cancel.focus();
    const w = new CurveWorker();
    worker = w;
    const finish = (state: 'done' | 'error', text: string) => {
      w.terminate();
      if (worker === w) worker = null;
      status.textContent = text;
      const onCancel = document.activeElement === cancel;
      setState(state);
      if (onCancel) measure.focus(); // Cancel is about to be disabled
    };
    w.addEventListener('message', (e: MessageEvent<CurveMessage>) => {
      if (worker !== w) return; // a message queued before Cancel
      const msg = e.data;
      if (msg.type === 'threads') {
        threadsRan = msg.threads;
        threadsError = msg.error ?? '';
        draw();
      } else if (msg.type === 'start') {
        status.textContent = `n = ${msg.n}, ${msg.path} (${msg.index + 1}/${msg.total})`;
      } else if (msg.type === 'point') {
        progress.value = msg.index + 1;
        backend = msg.point.backend;
        points.set(`${msg.point.path}:${msg.point.n}`, msg.point);
        draw();
      } else if (msg.type === 'skip') {
        progress.value = msg.index + 1;
        status.textContent = `n = ${msg.n}, ${msg.path} skipped: ${msg.reason} (${msg.index + 1}/${msg.total})`;
      } else if (msg.type === 'done') {
        progress.value = progress.max;
        finish('done', `Done: ${points.size} points measured (${backend}${threadsRan >= 2 ? `, on 1 and on ${threadsRan} threads` : ', on 1 thread'}).`);
      } else {
        finish('error', `The measurement failed: ${msg.message}`);
      }
    });
    w.addEventListener('error', (e) => finish('error', `The worker failed: ${e.message || 'could not start'}`));
    w.postMessage({ type: 'run', points: plan, d: CURVE_D, seed: CURVE_SEED, budgetMs: CURVE_TIMING.budgetMs, maxCallMs: CURVE_TIMING.maxCallMs, threads: planned, wasm: wasmFiles } satisfies CurveRequest);
  });

  cancel.addEventListener('click', () => {
    if (!worker) return;
    // terminate() stops the worker mid-call: nothing more arrives, and the points so far stay plotted.
    worker.terminate();
    worker = null;
    status.textContent = `Cancelled after ${points.size} of ${progress.max} points; those stay plotted.`;
    setState('cancelled');
    measure.focus();
  });
}
