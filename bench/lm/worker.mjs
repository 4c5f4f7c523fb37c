// One process per runtime and weight type (forked by bench/lm/run.mjs with --expose-gc): loads its checkpoint
// once, then runs what the orchestrator asks, one request at a time.
//   node bench/lm/worker.mjs RUNTIME     (attnlab, ort, tfjs)
const runtime = process.argv[2];
const adapters = {
  attnlab: () => import('./adapters/attnlab.mjs'),
  ort: () => import('./adapters/ort.mjs'),
  tfjs: () => import('./adapters/tfjs.mjs'),
};
const send = (msg) => new Promise((resolve) => process.send(msg, resolve));
const error = (e) => String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ');
const gc = globalThis.gc ?? (() => {});
const rss = () => process.memoryUsage().rss;

/** Rows of a [n × vocab] logits array, as plain arrays (what crosses the IPC channel). */
const pickRows = (logits, rows, vocab) => rows.map((r) => Array.from(logits.subarray(r * vocab, (r + 1) * vocab)));

const handlers = {
  async load(lib, { dir }) {
    const t0 = performance.now();
    await lib.load(dir);
    const loadMs = performance.now() - t0;
    gc();
    return { loadMs, rssAfterLoad: rss(), memory: lib.memory() };
  },
  // `reps` timed forwards over `ids` from an empty cache (each after a gc(), outside the timing); the logits of
  // `rows` from the last one.
  async prefill(lib, { ids, reps, warmup, rows, vocab }) {
    for (let i = 0; i < warmup; ++i) await lib.prefill(ids);
    const samples = [];
    let logits = null;
    for (let i = 0; i < reps; ++i) {
      logits = null;
      gc();
      const t0 = performance.now();
      logits = await lib.prefill(ids);
      samples.push(performance.now() - t0);
    }
    return { samples, rows: rows ? pickRows(logits, rows, vocab) : null };
  },
  // Greedy generation of `steps` tokens after `ids`: the time to the first token (the prefill) and between
  // tokens (one decode step each); with keepLogits, every step's logits row where the runtime hands it over.
  async generate(lib, { ids, steps, keepLogits }) {
    gc();
    const times = [], stepLogits = [];
    const t0 = performance.now();
    const tokens = await lib.generate(ids, steps, (id, row) => {
      times.push(performance.now());
      if (keepLogits && row) stepLogits.push(Array.from(row));
    });
    const intervals = times.slice(1).map((t, i) => t - times[i]);
    return { tokens: Array.from(tokens), firstMs: times[0] - t0, intervals, stepLogits: keepLogits && stepLogits.length ? stepLogits : null,
      memory: lib.memory(), rss: rss() };
  },
};

let lib;
try {
  const made = await (await adapters[runtime]()).create();
  if (made.missing) {
    await send({ type: 'missing', reason: made.missing });
    process.exit(0);
  }
  lib = made;
  await send({ type: 'ready', info: lib.info, dtypes: lib.dtypes });
} catch (e) {
  await send({ type: 'failed', reason: error(e) });
  process.exit(0);
}

process.on('message', async (msg) => {
  if (msg.type === 'exit') {
    await lib.dispose?.();
    process.exit(0);
  }
  let result;
  const cpu0 = process.cpuUsage();
  try {
    result = await handlers[msg.type](lib, msg);
  } catch (e) {
    result = { failed: error(e) };
  }
  const cpu = process.cpuUsage(cpu0);
  result.handlerCpuMs = (cpu.user + cpu.system) / 1000;
  await send({ type: 'result', seq: msg.seq, result });
});
