// The language-model engine on the lab's workers (loadModel with init({ threads })), GPT-2 small's shape (12 layers,
// d 768, vocab 50257; random weights from tests/lm/checkpoints.py --small), in Node, by hand (not a test):
// `node bench/lm-threads.mjs [--dtype F32] [--threads 1,2,N] [--tokens 32] [--rounds 3] [--exchange shared] [--dist DIR]`.
// For each thread count (default 1, 2 and os.availableParallelism()), with the load average beside every number:
//   stream read  every worker reads its share of the weights at once, the plainest way (1 thread: the calling
//                thread reads them all): what a decode step must stream, in GB/s — the ceiling of decode;
//   decode       tokens/s after a 16-token prompt (greedy, the KV caches), wall and per CPU-second of the whole
//                process (every thread), the GB/s of weights that implies and its share of the stream read's rate
//                in the same rounds (each decode round followed by a stream read, so both see the same load);
//   prefill 128  a 128-token prompt into the caches (generate, maxTokens 1), tokens/s, and its speedup over 1 thread;
//   serial part  per token, from the workers' own clocks: the calling thread's round trip (a token's wall time less
//                the slowest worker's step) and the time a worker waits at the exchanges (2·layers + 1 per token:
//                the other workers' lateness, the barrier's wake-ups, the copies), which no thread count shortens;
//   exchange     the exchange alone (lm-exchange.js) between threads that do nothing else, and a message's round
//                trip to a worker: under load the median waits for a core, the best rounds are the mechanism's cost;
//   projection   to 4, 8 and 16 threads (no machine with more cores here): one thread's work split P ways plus
//                the round trip and 25 exchanges as measured alone, grown with P; and the ceiling that a machine's
//                memory bandwidth sets, which this formula does not know.
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { openAsBlob, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const dtype = arg('dtype', 'F32');
const all = availableParallelism();
const counts = [...new Set(arg('threads', `1,2,${all}`).split(',').map(Number))].sort((a, b) => a - b);
const decodeTokens = Number(arg('tokens', '32'));
const rounds = Number(arg('rounds', '3'));
const exchange = arg('exchange', 'shared');
const load = () => `load ${loadavg()[0].toFixed(2)}`;
const dist = resolve(arg('dist', join(repo, 'dist')));  // another build of the package, to compare on one machine
const { init } = await import(pathToFileURL(join(dist, 'index.js')).href);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuMs = (c0) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

console.log(`attnlab language models on workers: GPT-2 small shape, ${dtype}, random weights; ${cpus()[0].model}, ${cpus().length} cores ` +
  `(availableParallelism ${all}); Node ${process.version}; exchange ${exchange}`);

// The exchange alone (dist/lm-exchange.js, as the workers run it), on P threads of this process with nothing else to
// do: R all-reduces of d_model = 768 floats, each thread timing each one; and a message's round trip to a worker and
// back (what the calling thread costs a token). Under load, the median includes waiting for a core; the best rounds
// are the exchange's own cost.
async function exchangeAlone(P, mode, R = 2000) {
  const url = pathToFileURL(join(dist, 'lm-exchange.js')).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(${JSON.stringify(url)}).then(async ({ SharedExchange, PortExchange }) => {
      const { rank, P, R, mode, shared, ports } = workerData;
      const m = { HEAPF32: new Float32Array(P * 768).fill(rank) };
      const ex = mode === 'shared' ? new SharedExchange(shared, rank, P, 768) : new PortExchange(ports, rank, P, 768);
      const times = new Float64Array(R);
      ex.start(1);
      for (let i = 0; i < R; ++i) {
        const t0 = performance.now();
        const r = ex.allReduce(m, 0, 1);
        if (r) await r;
        times[i] = performance.now() - t0;
      }
      ex.close();
      parentPort.postMessage(times, [times.buffer]);
    });`;
  const { sharedBuffers } = await import(url);
  const shared = sharedBuffers(P, 768);
  const ports = Array.from({ length: P }, () => Array(P).fill(null));
  for (let i = 0; i < P; ++i) for (let j = i + 1; j < P; ++j) {
    const { port1, port2 } = new MessageChannel();
    ports[i][j] = port1, ports[j][i] = port2;
  }
  const runs = Array.from({ length: P }, (_, rank) => new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { rank, P, R, mode, shared: mode === 'shared' ? shared : null, ports: ports[rank] },
      transferList: ports[rank].filter(Boolean) });
    w.once('message', (t) => (resolve(t), w.terminate()));
    w.once('error', reject);
  }));
  const times = await Promise.all(runs);
  const per = Array.from({ length: R }, (_, i) => Math.max(...times.map((t) => t[i]))).slice(R / 10);  // after warming up
  per.sort((a, b) => a - b);
  return { median: per[Math.floor(per.length / 2)] * 1000, best: per[Math.floor(per.length / 100)] * 1000 };  // µs; best: 1st percentile
}

async function roundTrip(R = 2000) {
  const w = new Worker(`require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));`, { eval: true });
  const times = [];
  for (let i = 0; i < R; ++i) {
    const t0 = performance.now();
    await new Promise((resolve) => (w.once('message', resolve), w.postMessage(i)));
    times.push(performance.now() - t0);
  }
  await w.terminate();
  const per = times.slice(R / 10).sort((a, b) => a - b);
  return { median: per[Math.floor(per.length / 2)] * 1000, best: per[Math.floor(per.length / 100)] * 1000 };
}

const dir = mkdtempSync(join(tmpdir(), 'attnlab-lm-threads-'));
const results = {};
try {
  const w = spawnSync(process.env.PYTHON || '/usr/bin/python3', [join(repo, 'tests/lm/checkpoints.py'), dir, '--small', '--dtype', dtype], { encoding: 'utf8' });
  if (w.status !== 0) throw new Error(w.stderr);
  const files = new Map(await Promise.all(readdirSync(dir).map(async (f) => [f, await openAsBlob(join(dir, f))])));
  const lab = await init({ gpt: true, threads: Math.max(...counts, 2) });
  const prompt = Int32Array.from({ length: 16 }, (_, i) => 100 + i * 37);
  const long = Int32Array.from({ length: 128 }, (_, i) => (i * 7919) % 50257);
  for (const threads of counts) {
    const t0 = performance.now();
    const model = await lab.loadModel(files, { threads, exchange });
    const loadMs = performance.now() - t0;
    const weights = model.weightBytes;
    console.log(`\n== ${threads} thread${threads > 1 ? 's' : ''}${threads > 1 ? ` (workers; ${model.split.exchange} memory)` : ' (the calling thread)'}: ` +
      `${(weights / 2 ** 20).toFixed(1)} MiB of weights, load ${loadMs.toFixed(0)} ms   (${load()})`);
    if (threads > 1) {
      const ws = await model.workers();
      console.log(`  per worker     ${ws.map((x) => `${(x.weightBytes / 2 ** 20).toFixed(1)} MiB of weights, wasm ${(x.wasmBytes / 2 ** 20).toFixed(1)} MiB`).join('; ')}`);
    }
    // The plainest read of the same bytes, all workers at once.
    const read = async () => {
      const c0 = process.cpuUsage(), s = performance.now();
      const r = model[Symbol.for('attnlab.readWeights')]();
      const wall = performance.now() - s;
      const got = r instanceof Promise ? await r : null;
      return { ms: got ? got.ms : wall, cpu: cpuMs(c0) };
    };
    const reads = [];
    for (let i = 0; i < 7; ++i) reads.push(await read());
    const streamGBs = weights / median(reads.map((r) => r.ms)) / 1e6;
    console.log(`  stream read    ${streamGBs.toFixed(2)} GB/s (over ${(weights / 1e6).toFixed(0)} MB, median of 7)   (${load()})`);

    const stats = async () => (threads > 1 ? model.workers() : null);
    await model.generate(prompt, { maxTokens: 16, temperature: 0, stop: [] });  // V8 tiers the hot functions up
    const perToken = [], perTokenCpu = [], ratios = [], trips = [], waits = [];
    for (let r = 0; r < rounds; ++r) {
      const stamps = [];
      let c0, w0;
      const onToken = () => {
        stamps.push(performance.now());
        if (stamps.length === 1) c0 = process.cpuUsage();
      };
      // The workers' clocks from the second token on (the first carries the prompt).
      const s0 = await stats();
      await model.generate(prompt, { maxTokens: decodeTokens + 1, temperature: 0, stop: [], onToken: (t) => {
        onToken(t);
        if (t.index === 0 && s0) w0 = stats();
      } });
      const cpu = cpuMs(c0);
      const wall = (stamps.at(-1) - stamps[0]) / decodeTokens;
      perToken.push(wall);
      perTokenCpu.push(cpu / decodeTokens);
      if (s0) {
        const [a, b] = [await w0, await stats()];
        // (the first token's step ran before w0 was read: a and b bracket the decode steps alone, give or take one)
        const steps = b[0].steps - a[0].steps;
        const slowest = Math.max(...b.map((x, i) => (x.stepMs - a[i].stepMs) / steps));
        trips.push(wall - slowest);
        waits.push(b.reduce((sum, x, i) => sum + (x.waitedMs - a[i].waitedMs) / steps, 0) / b.length);
      }
      const s = await read();
      ratios.push((weights / wall) / (weights / s.ms));
    }
    const ms = median(perToken), msCpu = median(perTokenCpu);
    const res = { threads, ms, msCpu, stream: streamGBs, ratio: median(ratios), trip: trips.length ? median(trips) : 0, wait: waits.length ? median(waits) : 0 };
    console.log(`  decode         ${(1000 / ms).toFixed(2)} tokens/s wall (${ms.toFixed(1)} ms/token), ${(1000 / msCpu).toFixed(2)} per CPU-second of the ` +
      `process (${msCpu.toFixed(1)} ms): ${(weights / ms / 1e6).toFixed(2)} GB/s of weights, ${(100 * res.ratio).toFixed(0)} % of the stream read's ` +
      `rate in the same rounds (median of ${rounds})   (${load()})`);
    if (threads > 1)
      console.log(`  serial part    per token: the calling thread's round trip ${res.trip.toFixed(2)} ms, a worker's wait at the ` +
        `${2 * 12 + 1} exchanges ${res.wait.toFixed(2)} ms (${((1000 * res.wait) / 25).toFixed(0)} µs each)   (${load()})`);

    const pre = [];
    for (let r = 0; r < rounds; ++r) {
      const c0 = process.cpuUsage(), s = performance.now();
      await model.generate(long, { maxTokens: 1, temperature: 0 });
      pre.push({ wall: performance.now() - s, cpu: cpuMs(c0) });
    }
    res.prefill = median(pre.map((p) => p.wall));
    res.prefillCpu = median(pre.map((p) => p.cpu));
    console.log(`  prefill 128    ${(128000 / res.prefill).toFixed(1)} tokens/s wall (${res.prefill.toFixed(0)} ms), ${(128000 / res.prefillCpu).toFixed(1)} per ` +
      `CPU-second of the process${results[1] ? `; ${(results[1].prefill / res.prefill).toFixed(2)}× one thread's wall time` : ''}   (${load()})`);
    results[threads] = res;
    model.dispose();
  }
  lab.dispose();

  // The exchange and the round trip alone.
  const alone = {};
  console.log(`\n== the exchange alone (${exchange} memory): an all-reduce of 768 floats between threads that do nothing else, µs`);
  for (const P of [...new Set([2, 3, 4, ...counts.filter((c) => c > 1)])].sort((a, b) => a - b)) {
    alone[P] = await exchangeAlone(P, exchange);
    console.log(`  ${P} threads   median ${alone[P].median.toFixed(1)} µs, best 1 % ${alone[P].best.toFixed(1)} µs   (${load()})`);
  }
  const trip = await roundTrip();
  console.log(`  a message to a worker and back: median ${trip.median.toFixed(1)} µs, best 1 % ${trip.best.toFixed(1)} µs   (${load()})`);

  // The projection. A token on P threads: one thread's work split P ways, plus what no thread count shortens — the
  // calling thread's round trip and 2·layers + 1 exchanges, each a barrier (its cost at 2 threads, measured above,
  // plus one cache line's transfer per further thread for the shared count) and the copies of P − 1 parts in.
  const one = results[1];
  if (one) {
    const d = 768, exchanges = 25, copyGBs = 10;  // memcpy within a core's cache, conservatively
    const barrier = (P) => alone[2].best + 0.1 * (P - 2);
    const copies = (P, rows) => ((P - 1) * rows * d * 4) / (copyGBs * 1e3);  // µs
    const serial = (P, rows) => (trip.best + exchanges * (barrier(P) + copies(P, rows))) / 1000;  // ms
    console.log(`\n== projected, not measured (no machine with more cores here): T(P) = T₁ / P + round trip + 25 × (barrier(P) + copies(P)), ` +
      `T₁ one thread's CPU time (decode ${one.msCpu.toFixed(1)} ms a token, prefill ${one.prefillCpu.toFixed(0)} ms), the round trip and the ` +
      `2-thread barrier their best measured above, +0.1 µs a thread for the barrier's shared count, copies at ${copyGBs} GB/s. Ideal only while the ` +
      `machine's memory bandwidth keeps up with P cores streaming (decode) — a bound this formula does not know:`);
    for (const P of [2, 4, 8, 16]) {
      const dec = one.msCpu / P + serial(P, 1), pre = one.prefillCpu / P + serial(P, 128);
      console.log(`  ${String(P).padStart(2)} threads  decode ${(1000 / dec).toFixed(1)} tokens/s, ${(one.msCpu / dec).toFixed(2)}× one thread (serial ` +
        `${(1000 * serial(P, 1)).toFixed(0)} µs of ${dec.toFixed(2)} ms); prefill 128 ${(one.prefillCpu / pre).toFixed(2)}× (serial ${serial(P, 128).toFixed(2)} ms)`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
