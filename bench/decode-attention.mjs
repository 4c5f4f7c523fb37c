// A language model's decode-step attention alone, by hand (not a test): GPT-2 small's shape (12 layers, each 12 heads
// of 64 over its own KV cache), one query position over POSITIONS cached ones, the caches coming from memory as in a
// real step (between two layers a model streams megabytes of weights; here a plain read of EVICT MiB in JS, outside
// the timing, pushes the cache out). Prints the wall time of the 12 attention calls of a token, median and quartiles
// over the tokens. Given several builds of the package (`node bench/decode-attention.mjs dist /tmp/other-dist`), their
// rounds interleave, so that each is measured under the same load; the load average is printed beside each line.
//   --positions=N  cached positions (default 160: the middle of bench:lm's decode)
//   --evict=MiB    read between layers (default 40; 0: nothing, and what of the caches fits stays in the CPU's caches)
//   --tokens=N     tokens per round (default 200), --rounds=N rounds (default 3)
//   --check        only check each build: its output over the cache, the same bits as over the keys and values
//                  given to the call directly (the general path, which packs them itself); exits 1 if not
import os from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const opt = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const positions = opt('positions', 160), evictMiB = opt('evict', 40), tokens = opt('tokens', 200), rounds = opt('rounds', 3);
const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const builds = await Promise.all((dirs.length ? dirs : ['dist']).map(async (d) => {
  const { init } = await import(pathToFileURL(resolve(d, 'index.js')).href);
  return { dir: d, lab: await init({ simd: true }) };
}));

const LAYERS = 12, HEADS = 12, D = 64;
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
const k = Float32Array.from({ length: positions * HEADS * D }, random), v = Float32Array.from({ length: positions * HEADS * D }, random);
const q = Float32Array.from({ length: HEADS * D }, random), out = new Float32Array(HEADS * D);
if (process.argv.includes('--check')) {
  let bad = 0;
  for (const b of builds) {
    const cache = b.lab.kvCache({ kvHeads: HEADS, dk: D, dv: D, capacity: positions, layout: 'bshd' }).append(k, v);
    const over = b.lab.attention({ q, cache, heads: HEADS, causal: true }).output;
    const direct = b.lab.attention({ q, k, v, nq: 1, nk: positions, heads: HEADS, dk: D, dv: D, layout: 'bshd', causal: true }).output;
    const same = over.every((x, i) => Object.is(x, direct[i]));
    bad += !same;
    console.log(`${b.dir}: decode attention over the cache ${same ? 'ok' : 'DIFFERS from the same keys and values given directly'}`);
    cache.dispose();
  }
  process.exit(bad ? 1 : 0);
}
for (const b of builds) {
  b.caches = Array.from({ length: LAYERS }, () =>
    b.lab.kvCache({ kvHeads: HEADS, dk: D, dv: D, capacity: positions, layout: 'bshd' }).append(k, v));
  b.step = (c) => b.lab.attention({ q, cache: c, heads: HEADS, causal: true, out });
  for (let t = 0; t < 50; ++t) for (const c of b.caches) b.step(c);  // V8 optimizes the hot functions first
  b.ms = [];
}
const evict = new Float64Array(evictMiB * 2 ** 17).fill(1);
let sink = 0;

console.log(`decode attention: ${LAYERS} layers × ${HEADS} heads × ${D}, ${positions} cached positions, ${evictMiB} MiB read ` +
  `between layers; ${os.cpus()[0].model}, Node ${process.version}`);
for (let r = 0; r < rounds; ++r)
  for (const b of builds) {
    for (let t = 0; t < tokens; ++t) {
      let ms = 0;
      for (const c of b.caches) {
        for (let i = 0; i < evict.length; i += 8) sink += evict[i];  // one float of every 64-byte line
        const t0 = performance.now();
        b.step(c);
        ms += performance.now() - t0;
      }
      b.ms.push(ms);
    }
    const s = b.ms.slice(-tokens).sort((x, y) => x - y), at = (f) => s[Math.floor(f * (s.length - 1))].toFixed(3);
    console.log(`  ${b.dir.padEnd(24)} round ${r + 1}: ${at(0.5)} ms a token (quartiles ${at(0.25)}–${at(0.75)})   ` +
      `load ${os.loadavg()[0].toFixed(2)}`);
  }
if (sink === 0) console.log('(no memory was read)');
