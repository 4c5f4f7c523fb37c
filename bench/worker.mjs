// One worker process per library (forked by bench/run.mjs). It loads its library once, then measures the cells
// the orchestrator sends, one at a time, reading the shared inputs from the raw float32 files.
import { measure } from './lib/measure.mjs';
import { readF32, readF64, maxAbsError, normals } from './lib/data.mjs';
import { measurePeak, measureFreshMemory } from './lib/peak.mjs';

const id = process.argv[2];
const factories = {
  'attnlab-simd': () => import('./adapters/attnlab.mjs').then((m) => m.create({ simd: true })),
  'attnlab-simd-out': () => import('./adapters/attnlab.mjs').then((m) => m.create({ simd: true, reuseOut: true })),
  'attnlab-threads2': () => import('./adapters/attnlab.mjs').then((m) => m.create({ simd: true, threads: 2 })),
  'ort-threads2': () => import('./adapters/ort.mjs').then((m) => m.create({ variant: 'graph-kt', numThreads: 2 })),
  'attnlab-scalar': () => import('./adapters/attnlab.mjs').then((m) => m.create({ simd: false })),
  'ort-graph-kt': () => import('./adapters/ort.mjs').then((m) => m.create({ variant: 'graph-kt' })),
  'ort-graph-transpose': () => import('./adapters/ort.mjs').then((m) => m.create({ variant: 'graph-transpose' })),
  'ort-mha': () => import('./adapters/ort.mjs').then((m) => m.create({ variant: 'mha' })),
  tfjs: () => import('./adapters/tfjs.mjs').then((m) => m.create()),
  js: () => import('./adapters/plainjs.mjs').then((m) => m.create()),
  peak: async () => ({ info: { library: 'wasm SIMD128 peak kernel' } }),
};

const send = (msg) => new Promise((resolve) => process.send(msg, resolve));
const error = (e) => String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ');

const readAll = (files) => Object.fromEntries(Object.entries(files).map(([name, file]) => [name, readF32(file)]));

function checkError(output, ref) {
  const rows = Int32Array.from(readF64(ref.rowsFile));   // row indices, stored as float64 like the reference
  return maxAbsError(output, readF64(ref.refFile), rows, ref.width);
}

async function timeCell(prepared, msg) {
  if (prepared.unsupported) return { unsupported: prepared.unsupported };
  try {
    const r = await measure(prepared.run, msg.timing, prepared.prepare);
    const err = checkError(r.output, msg.ref);
    delete r.output;
    return { ...r, maxAbsError: err };
  } finally {
    await prepared.dispose?.();
  }
}

const handlers = {
  async attention(lib, msg) {
    const { n, d, causal, scale, files } = msg;
    const prepared = await lib.attention({ q: readF32(files.q), k: readF32(files.k), v: readF32(files.v), n, d, causal, scale });
    return timeCell(prepared, msg);
  },
  async softmax(lib, msg) {
    const prepared = await lib.softmax({ x: readF32(msg.files.x), cols: msg.n });
    return timeCell(prepared, msg);
  },
  // The whole operator (bench/lib/operator.mjs): inputs read from the shared files, one cell each.
  async decode(lib, msg) {
    if (!lib.decode) return { unsupported: 'no decode step in this library' };
    return timeCell(await lib.decode({ ...msg.shape, ...readAll(msg.files) }), msg);
  },
  async prefill(lib, msg) {
    if (!lib.prefill) return { unsupported: 'no batched attention in this library' };
    return timeCell(await lib.prefill({ ...msg.shape, ...readAll(msg.files) }), msg);
  },
  // attnlab only: batch × heads in one call, and the same heads one call each (the sum of their times).
  async batchHeads(lib, msg) {
    if (!lib.batchHeads) return { unsupported: 'attnlab only' };
    const cells = lib.batchHeads({ ...msg.shape, ...readAll(msg.files) });
    const batched = await timeCell(cells.batched, msg);
    const single = await timeCell(cells.single, msg);
    return { batched, single };
  },
  // attnlab with threads only: the async twins' cost per call (bench/lib/threads.mjs).
  async overhead(lib, msg) {
    if (!lib.overhead) return { unsupported: 'attnlab with threads only' };
    return lib.overhead(msg);
  },
  peak: async (_lib, msg) => ({ ...(await measurePeak(msg.options)), freshMemory: measureFreshMemory() }),
  // attnlab only: wasm memory and time of the streaming path in a fresh instance, n growing.
  async streaming(lib, msg) {
    const lab = await lib.freshInstance();
    const rows = [];
    const before = lab.memoryBytes;
    for (const s of msg.sizes) {
      const q = readF32(s.files.q), k = readF32(s.files.k), v = readF32(s.files.v);
      const run = () => lab.attention({ q, k, v, nq: s.n, nk: s.n, dk: s.d, dv: s.d, causal: false, scale: s.scale }).output;
      const r = await measure(run, msg.timing);
      const err = checkError(r.output, s.ref);
      delete r.output;
      rows.push({ n: s.n, d: s.d, ...r, maxAbsError: err, memoryBytes: lab.memoryBytes ?? null });
    }
    return { memoryBytesAtStart: before ?? null, hasMemoryBytes: typeof lab.memoryBytes === 'number', rows };
  },
  // attnlab only: the explorer's call (32 tokens, d_model 64, 4 heads), with and without intermediates.
  async mha(lib, msg) {
    const { n, dModel, heads } = msg;
    const x = normals('mha-x', n * dModel), wq = normals('mha-wq', dModel * dModel, 0.125);
    const wk = normals('mha-wk', dModel * dModel, 0.125), wv = normals('mha-wv', dModel * dModel, 0.125), wo = normals('mha-wo', dModel * dModel, 0.125);
    const out = [];
    for (const returnIntermediates of [true, false]) {
      for (const causal of [false, true]) {
        const run = () => lib.lab.multiHeadAttention({ x, n, dModel, heads, wq, wk, wv, wo, causal, returnIntermediates }).output;
        const r = await measure(run, msg.timing);
        delete r.output;
        delete r.samples;
        out.push({ returnIntermediates, causal, ...r });
      }
    }
    return { n, dModel, heads, rows: out };
  },
};

let lib;
try {
  lib = await factories[id]();
  await send({ type: 'ready', info: lib.info });
} catch (e) {
  await send({ type: 'failed', reason: error(e) });
  process.exit(0);
}

process.on('message', async (msg) => {
  if (msg.type === 'exit') process.exit(0);
  let result;
  const cpu0 = process.cpuUsage();
  try {
    result = await handlers[msg.type](lib, msg);
  } catch (e) {
    result = { failed: error(e) };
  }
  const cpu = process.cpuUsage(cpu0);
  result.handlerCpuMs = (cpu.user + cpu.system) / 1000;   // for the orchestrator's noise meter
  await send({ type: 'result', seq: msg.seq, result });
});
