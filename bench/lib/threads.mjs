// The bench's threads cells: batch 1 × 8 heads, n ∈ {1024, 2048}, d = 64, dense and causal, through each
// library's batched attention — attnlab on one thread (lab.attention) and on two workers (init({ threads: 2 }),
// lab.attentionAsync), onnxruntime-web's Attention op (opset 23) with numThreads 1 and 2 — plus the async twins'
// cost per call. Shared by the Node bench (bench/run.mjs, one process per library) and the Chromium one
// (bench/browser.mjs, one page per library): `ask(id, message)` runs a cell in the library's worker.
import { normals } from './data.mjs';
import { headRowsReference } from './operator.mjs';
import { overheadLine } from './overhead.mjs';

export { overheadLine };

export const THREADS = { batch: 1, heads: 8, d: 64, n: [1024, 2048], causal: [false, true] };
export const THREAD_LIBS = [
  { id: 'attnlab-simd', label: 'attnlab, 1 thread' },
  { id: 'attnlab-threads2', label: 'attnlab, threads: 2' },
  { id: 'ort-graph-kt', label: 'ORT Attention, 1 thread' },
  { id: 'ort-threads2', label: 'ORT Attention, numThreads 2' },
];

/** The inputs of every cell ({ n → { q, k, v } }) and their float64 references ({ key → { rows, ref } }, 64 rows). */
export function threadsInputs() {
  const { batch, heads, d } = THREADS;
  const inputs = {}, refs = {};
  for (const n of THREADS.n) {
    const data = Object.fromEntries(['q', 'k', 'v'].map((t) => [t, normals(`threads/${t}/${n}`, batch * heads * n * d)]));
    inputs[n] = data;
    for (const causal of THREADS.causal) {
      const total = batch * heads * n, rows = Int32Array.from({ length: 64 }, (_, i) => Math.round((i * (total - 1)) / 63));
      refs[key(n, causal)] = { rows, ref: headRowsReference(data.q, data.k, data.v, { heads, nq: n, nk: n, d, causal }, rows) };
    }
  }
  return { inputs, refs };
}

export const key = (n, causal) => `${n}${causal ? '-causal' : ''}`;

/**
 * Measures every cell with every library (order rotated per cell, `rounds` interleaved rounds pooled by `pool`).
 * ask(id, { type: 'prefill', shape, n, causal }) → a measured result (ms, cpuMs, maxAbsError, otherCores…).
 */
export async function measureThreads({ ask, libs, rounds = 1, pool, pick, log }) {
  const { batch, heads, d } = THREADS;
  const cells = [];
  let turn = 0;
  for (const n of THREADS.n) {
    for (const causal of THREADS.causal) {
      const shape = { batch, heads, n, d, causal };
      const cell = { n, causal, shape, flops: 4 * batch * heads * n * n * d, results: {} };
      for (let round = 0; round < rounds; ++round) {
        const order = libs.map((_, i) => libs[(i + turn) % libs.length]);
        ++turn;
        for (const id of order) cell.results[id] = pool(cell.results[id], await ask(id, { type: 'prefill', shape, n, causal }));
      }
      for (const r of Object.values(cell.results)) if (pick(r)?.ms) r.gflops = cell.flops / r.ms / 1e6;
      cells.push(cell);
      log?.(threadsLine(cell));
    }
  }
  const overhead = libs.includes('attnlab-threads2') ? await ask('attnlab-threads2', { type: 'overhead' }) : null;
  return { shape: { batch, heads, d }, cells, overhead };
}

const ms = (r) => (r?.ms ? (r.ms >= 100 ? r.ms.toFixed(0) : r.ms.toFixed(1)) : r?.unsupported ? 'n/a' : 'FAILED');
const ratio = (a, b) => (a?.ms && b?.ms ? `${(b.ms / a.ms).toFixed(2)}×` : '—');
const load = (cell) => Math.max(...Object.values(cell.results).map((r) => r.otherCores ?? 0));

export function threadsLine(cell) {
  const r = cell.results;
  return `  n=${String(cell.n).padEnd(5)} ${cell.causal ? 'causal' : 'dense '}  attnlab 1T ${ms(r['attnlab-simd']).padStart(6)} ms  2T ${ms(r['attnlab-threads2']).padStart(6)} ms` +
    `  ORT 1T ${ms(r['ort-graph-kt']).padStart(6)} ms  2T ${ms(r['ort-threads2']).padStart(6)} ms   attnlab 2T vs 1T ${ratio(r['attnlab-threads2'], r['attnlab-simd'])}` +
    `, vs ORT 2T ${ratio(r['attnlab-threads2'], r['ort-threads2'])}   (other load ≤ ${load(cell).toFixed(2)} cores, max |err| ${fmtErr(r['attnlab-threads2']?.maxAbsError)})`;
}

const fmtErr = (e) => (e == null ? '—' : e.toExponential(1));


/** The markdown table of one run (Node or Chromium). */
export function threadsMarkdown(t, where = 'Node') {
  if (!t?.cells?.length) return '';
  const lines = [
    `### Threads (${where}): batch ${t.shape.batch} × ${t.shape.heads} heads, d = ${t.shape.d}, median ms per call`,
    '',
    '| n | mask | attnlab 1 thread | attnlab threads: 2 | ORT 1 thread | ORT numThreads 2 | attnlab 2 vs 1 | attnlab 2 vs ORT 2 | other load (cores) |',
    '|---:|:---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const c of t.cells) {
    const r = c.results;
    lines.push(`| ${c.n} | ${c.causal ? 'causal' : 'dense'} | ${ms(r['attnlab-simd'])} | ${ms(r['attnlab-threads2'])} | ${ms(r['ort-graph-kt'])} | ${ms(r['ort-threads2'])} | ` +
      `${ratio(r['attnlab-threads2'], r['attnlab-simd'])} | ${ratio(r['attnlab-threads2'], r['ort-threads2'])} | ${load(c).toFixed(2)} |`);
  }
  lines.push('', overheadLine(t.overhead).trim(), '');
  return `${lines.join('\n')}\n`;
}
