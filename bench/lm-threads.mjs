// The language-model engine on the lab's workers (loadModel with init({ threads })), GPT-2 small's shape (12 layers,
// d 768, vocab 50257; random weights from tests/lm/checkpoints.py --small), in Node, by hand (not a test):
// `node bench/lm-threads.mjs [--dtype F32] [--threads 1,2,N] [--tokens 32] [--rounds 3] [--exchange shared]`.
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
//   projection   to 4, 8 and 16 threads from those measurements (no machine with more cores here): a token's time
//                as one thread's compute / threads + the serial part measured at the most threads run, the copies
//                of the exchanges grown with the thread count; and the ceiling that a machine's memory bandwidth
//                sets, which this formula does not know.
import { spawnSync } from 'node:child_process';
import { openAsBlob, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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
const { init } = await import(pathToFileURL(join(repo, 'dist/index.js')).href);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuMs = (c0) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

console.log(`attnlab language models on workers: GPT-2 small shape, ${dtype}, random weights; ${cpus()[0].model}, ${cpus().length} cores ` +
  `(availableParallelism ${all}); Node ${process.version}; exchange ${exchange}`);

const dir = mkdtempSync(join(tmpdir(), 'attnlab-lm-threads-'));
const results = {};
try {
  const w = spawnSync('/usr/bin/python3', [join(repo, 'tests/lm/checkpoints.py'), dir, '--small', '--dtype', dtype], { encoding: 'utf8' });
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

  // The projection: T(P) = T₁ / P + serial, the serial part as measured at the most threads, its copies grown.
  const one = results[1], most = results[Math.max(...counts)];
  if (one && most && most.threads > 1) {
    const P0 = most.threads;
    // Each exchange copies (P − 1)·d floats into a worker and d out: the part of the wait that grows with P.
    const copyMs = (P) => 25 * ((P - 1) + 1) * 768 * 4 / (10 * 1e6);  // at 10 GB/s of memcpy
    const serial = (P) => most.trip + most.wait + copyMs(P) - copyMs(P0);
    console.log(`\n== projected (not measured: no machine with more cores here), from one thread's ${one.ms.toFixed(1)} ms a token and the serial ` +
      `part at ${P0} threads (${(most.trip + most.wait).toFixed(2)} ms); ideal only while the machine's memory bandwidth keeps up with P cores:`);
    for (const P of [4, 8, 16]) {
      const t = one.ms / P + serial(P);
      console.log(`  ${String(P).padStart(2)} threads  decode ${(1000 / t).toFixed(1)} tokens/s (${(one.ms / t).toFixed(2)}× one thread); ` +
        `serial ${serial(P).toFixed(2)} ms of ${t.toFixed(2)} ms a token`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
