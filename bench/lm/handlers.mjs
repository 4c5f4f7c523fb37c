// What a runtime's process (bench/lm/worker.mjs) or page (bench/lm/browser-page.mjs) does on the orchestrator's
// requests, the same in Node and in Chromium.

import { measureStream } from './stream.mjs';

/** Rows of a [n × vocab] logits array, as plain arrays (what crosses to the orchestrator). */
const pickRows = (logits, rows, vocab) => rows.map((r) => Array.from(logits.subarray(r * vocab, (r + 1) * vocab)));

/** host: gc(), rss() (bytes or null), cpuMs() (this process's CPU time in ms, or NaN where unknown). */
export function makeHandlers(host) {
  return {
    // the ceiling: a plain wasm loop streaming `bytes` (needs no runtime)
    stream: (_lib, { bytes }) => measureStream(bytes, { cpuMs: Number.isNaN(host.cpuMs()) ? null : host.cpuMs }),
    async load(lib, { dir }) {
      const t0 = performance.now();
      await lib.load(dir);
      const loadMs = performance.now() - t0;
      host.gc();
      return { loadMs, rssAfterLoad: host.rss(), memory: lib.memory() };
    },
    // `reps` timed forwards over `ids` from an empty cache (each after a gc(), outside the timing), after `warmup`
    // untimed ones; the logits of `rows` from the last one.
    async prefill(lib, { ids, reps, warmup, rows, vocab }) {
      for (let i = 0; i < warmup; ++i) await lib.prefill(ids);
      const samples = [], cpu = [];
      let logits = null;
      for (let i = 0; i < reps; ++i) {
        logits = null;
        host.gc();
        const c0 = host.cpuMs(), t0 = performance.now();
        logits = await lib.prefill(ids);
        samples.push(performance.now() - t0);
        cpu.push(host.cpuMs() - c0);
      }
      return { samples, cpu: Number.isNaN(cpu[0]) ? null : cpu, rows: rows ? pickRows(logits, rows, vocab) : null };
    },
    // Greedy generation of `steps` tokens after `ids`: the time to the first token (the prefill) and between
    // tokens (one decode step each); with keepLogits, every step's logits row where the runtime hands it over.
    async generate(lib, { ids, steps, keepLogits }) {
      host.gc();
      const times = [], cpu = [], stepLogits = [];
      const t0 = performance.now();
      const tokens = await lib.generate(ids, steps, (id, row) => {
        times.push(performance.now());
        cpu.push(host.cpuMs());
        if (keepLogits && row) stepLogits.push(Array.from(row));
      });
      const intervals = times.slice(1).map((t, i) => t - times[i]);
      const cpuIntervals = Number.isNaN(cpu[0]) ? null : cpu.slice(1).map((c, i) => c - cpu[i]);
      return { tokens: Array.from(tokens), firstMs: times[0] - t0, intervals, cpuIntervals, stepLogits: keepLogits && stepLogits.length ? stepLogits : null,
        memory: lib.memory(), rss: host.rss() };
    },
  };
}

export const adapters = {
  attnlab: () => import('./adapters/attnlab.mjs'),
  ort: () => import('./adapters/ort.mjs'),
  tfjs: () => import('./adapters/tfjs.mjs'),
};
