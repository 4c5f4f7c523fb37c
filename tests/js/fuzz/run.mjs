// The JS layer's seeded differential fuzzer: each case draws an operator call with valid options (and, half the
// time, the same call with one thing wrong), runs it through the built package's synchronous function, its async
// twin on a pool of 2–3 workers and a float64 reference (check.mjs). Case i of seed S is drawn from its own seed,
// so `--only i` reproduces it alone; every failure prints its seed, its index and the case as JSON.
//
//   npm run fuzz:js -- [--cases N] [--seed S] [--only I] [--ops attention,matmul] [--replay FILE|JSON] [--save DIR]
//                      [--verbose]
//
// Failures listed in known.mjs (KNOWN_OPEN) are counted as expected; any other fails the run (exit status 1).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { dist, init } from '../support/load.mjs';
import { rng } from '../support/random.mjs';
import { attention } from './cases/attention.mjs';
import { attentionBackward } from './cases/attention-backward.mjs';
import { dispose } from './cases/dispose.mjs';
import { gpt } from './cases/gpt.mjs';
import { kvCache } from './cases/kv-cache.mjs';
import { matmul } from './cases/matmul.mjs';
import { multiHeadAttention } from './cases/multihead.mjs';
import { rope } from './cases/rope.mjs';
import { softmax, softmaxBackward } from './cases/softmax.mjs';
import { differs, runCase } from './check.mjs';
import { decode, encode } from './json.mjs';
import { KNOWN_OPEN, knownFor } from './known.mjs';

export const OPS = { attention, attentionBackward, kvCache, softmax, softmaxBackward, matmul, rope, multiHeadAttention, gpt, dispose };
// How often each is drawn (per 100 cases).
const WEIGHTS = { attention: 22, attentionBackward: 12, kvCache: 12, softmax: 8, softmaxBackward: 6, matmul: 11, rope: 9, multiHeadAttention: 9, gpt: 8, dispose: 3 };

// The async twins cut calls above these sizes (src/js/async.js's tuning, measured for speed): lowered so that the
// fuzzer's small calls go through the workers in parts as large calls do.
export const FUZZ_TUNING = { inlineFloats: 1 << 6, minPartFloats: 1 << 5, inlineMatmul: 1e3, inlineWork: 1e3, minPartWork: 3e2 };
// A lab whose memory grew past this (a defect's doing) is replaced, so that one defect does not cascade.
const MEMORY_CAP = 256 << 20;

// Parts really sent to workers, counted where Node posts them (a valid async call that never leaves the calling
// thread would hide every difference between the two paths).
const { Worker } = await import('node:worker_threads');
const postMessage = Worker.prototype.postMessage;
let posted = 0;
Worker.prototype.postMessage = function post(message, transfer) {
  if (message?.op !== 'init') posted += 1;
  return postMessage.call(this, message, transfer);
};

const { tuning } = await import(pathToFileURL(`${dist}async.js`).href);
Object.assign(tuning, FUZZ_TUNING);

/** Case i's own seed: a 32-bit mix of the run's seed and the index. */
export function caseSeed(seed, index) {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Case `index` of `seed` (of the operators in `ops`, when given). */
export function makeCase(seed, index, ops) {
  const r = rng(caseSeed(seed, index));
  const names = ops ?? Object.keys(OPS);
  const total = names.reduce((s, n) => s + WEIGHTS[n], 0);
  let pick = r.next() * total, name = names[names.length - 1];
  for (const n of names) if ((pick -= WEIGHTS[n]) < 0) { name = n; break; }
  const op = OPS[name];
  const c = { seed, index, op: name, backend: r.pick(['simd', 'scalar']), threads: r.pick([2, 3]) };
  c.args = op.draw(r);
  const bad = r.bool(0.5) ? op.mutate(r, c.args) : null;
  if (bad) c.bad = bad;
  if (r.bool(0.15)) c.parallel = r.int(2, 4);
  return c;
}

// Labs by (backend, threads, gpt), made when first needed, with a probe call's bits to check that they keep working.
export function makeEnv() {
  const labs = new Map(), probes = new WeakMap();
  const probeX = Float32Array.from({ length: 96 }, (_, i) => Math.sin(i) * 4);
  const probeA = { q: probeX.subarray(0, 24), k: probeX.subarray(24, 60), v: probeX.subarray(60, 96), nq: 2, nk: 3, dk: 12, heads: 1 };
  const probeOf = (lab) => ({ s: lab.softmax(probeX, { cols: 12 }), a: lab.attention(probeA).output });
  const open = async (c, gptModule) => {
    const lab = await init({ simd: c.backend === 'simd', threads: c.threads, gpt: gptModule });
    probes.set(lab, probeOf(lab));
    return lab;
  };
  const env = {
    internals: { tuning },
    differs,
    sent: () => posted,
    count(op, parts) {
      const c = (env.stats[op] ??= { calls: 0, sent: 0, parts: 0 });
      c.calls += 1, c.sent += parts > 0, c.parts += parts;
    },
    stats: {},
    async lab(c) {
      const gptModule = c.op === 'gpt';
      const key = `${c.backend}/${c.threads}/${gptModule}`;
      let lab = labs.get(key);
      if (lab && lab.memoryBytes > MEMORY_CAP) {
        lab.dispose();
        lab = undefined;
      }
      if (!lab) labs.set(key, (lab = await open(c, gptModule)));
      return lab;
    },
    async otherLab(lab) {
      for (const other of labs.values()) if (other !== lab) return other;
      return env.lab({ backend: 'scalar', threads: 2, op: 'other' });
    },
    freshLab: (c) => open(c, c.op === 'gpt'),
    probe(lab) {
      const want = probes.get(lab);
      try {
        return differs(probeOf(lab), want, 'a probe call');
      } catch (e) {
        return `a probe call throws ${e?.constructor?.name}: ${e?.message}`;
      }
    },
    close() {
      for (const lab of labs.values()) lab.dispose();
      labs.clear();
    },
  };
  return env;
}

const reproduce = (c) => (c.index === undefined ? 'npm run fuzz:js -- --replay <this case>' : `npm run fuzz:js -- --seed ${c.seed} --only ${c.index}${c.ops ? ` --ops ${c.ops}` : ''}`);

/** Runs one case; each failure gets its known entry's id when it has one. */
export async function runOne(env, c) {
  const op = OPS[c.op];
  let failures;
  try {
    failures = op.run ? await op.run(env, c) : await runCase(env, op, c);
  } catch (e) {
    failures = [{ check: 'the fuzzer itself threw', detail: `${e?.stack ?? e}` }];
  }
  return failures.map((f) => {
    const full = { ...f, op: c.op, mutation: c.bad?.name };
    const known = knownFor(full, c, env.internals);
    return known ? { ...full, known: known.id } : full;
  });
}

/**
 * A fuzz run. `cases` from `seed` (or just `only`, or the `replay`ed case), of `ops` when given. Returns
 * { seed, cases, seconds, unexpected: [...], expected: { id: count }, perOp: { op: { cases, seconds } },
 * async: { op: { calls, sent, parts } } } (valid async calls, those that posted to workers, messages posted).
 */
export async function fuzz({ seed = 1, cases = 200, only, ops, replay, save, verbose = false, log = console.log, env: given } = {}) {
  const env = given ?? makeEnv();
  const summary = { seed, cases: 0, seconds: 0, unexpected: [], expected: {}, perOp: {}, async: env.stats };
  const indices = only !== undefined ? [].concat(only) : Array.from({ length: cases }, (_, i) => i);
  const started = performance.now();
  try {
    for (const index of replay ? [undefined] : indices) {
      const c = replay ?? makeCase(seed, index, ops);
      if (ops && !replay) c.ops = ops.join(',');
      const t0 = performance.now();
      const failures = await runOne(env, c);
      const per = (summary.perOp[c.op] ??= { cases: 0, seconds: 0 });
      per.cases += 1, per.seconds += (performance.now() - t0) / 1000;
      summary.cases += 1;
      for (const f of failures) {
        if (f.known) {
          summary.expected[f.known] = (summary.expected[f.known] ?? 0) + 1;
          if (verbose) log(`expected failure (${f.known}) [seed ${c.seed}, case ${c.index}] ${c.op}${f.mutation ? ` (${f.mutation})` : ''}: ${f.check}: ${f.detail}`);
          continue;
        }
        summary.unexpected.push({ ...f, seed: c.seed, index: c.index });
        const json = encode(c);
        log(`FAIL [seed ${c.seed}, case ${c.index}] ${c.op} on ${c.backend}, ${c.threads} threads${f.mutation ? `, with ${f.mutation}` : ''}: ${f.check}: ${f.detail}\n` +
          `  reproduce: ${reproduce(c)}\n  case: ${json.length > 4000 && !save ? `${json.slice(0, 4000)}… (--save DIR writes it whole)` : json}`);
        if (save) {
          mkdirSync(save, { recursive: true });
          writeFileSync(`${save}/seed-${c.seed}-case-${c.index ?? 'replay'}.json`, json);
        }
      }
    }
  } finally {
    if (!given) env.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

function parse(argv) {
  const o = {};
  for (let i = 0; i < argv.length; ++i) {
    const [key, inline] = argv[i].replace(/^--/, '').split('=');
    const value = () => inline ?? argv[++i];
    if (key === 'cases') o.cases = Number(value());
    else if (key === 'seed') o.seed = Number(value());
    else if (key === 'only') o.only = value().split(',').map(Number);
    else if (key === 'ops') o.ops = value().split(',');
    else if (key === 'replay') {
      const v = value();
      o.replay = decode(v.trim().startsWith('{') ? v : readFileSync(v, 'utf8'));
    } else if (key === 'save') o.save = value();
    else if (key === 'verbose') o.verbose = true;
    else throw new Error(`fuzz:js: unknown argument ${argv[i]} (see the head of tests/js/fuzz/run.mjs)`);
  }
  for (const op of o.ops ?? []) if (!OPS[op]) throw new Error(`fuzz:js: no operator ${op} (${Object.keys(OPS).join(', ')})`);
  return o;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const o = parse(process.argv.slice(2));
  o.seed ??= Math.floor(Math.random() * 2 ** 31);
  o.cases ??= 1000;
  const load = (await import('node:os')).loadavg()[0].toFixed(2);
  console.log(`fuzz:js: seed ${o.seed}, ${o.only ? `case ${o.only.join(', ')}` : o.replay ? 'one replayed case' : `${o.cases} cases`}${o.ops ? ` of ${o.ops.join(', ')}` : ''} (load ${load})`);
  const s = await fuzz(o);
  const rate = s.cases / s.seconds;
  console.log(`fuzz:js: ${s.cases} cases in ${s.seconds.toFixed(1)} s (${rate.toFixed(1)} cases/s, load ${(await import('node:os')).loadavg()[0].toFixed(2)})`);
  for (const [op, p] of Object.entries(s.perOp).sort()) {
    const a = s.async?.[op];
    const sent = a ? `  async: ${a.sent} of ${a.calls} valid calls sent to the workers (${a.parts} parts)` : '';
    console.log(`  ${op.padEnd(20)} ${String(p.cases).padStart(6)} cases  ${(p.cases / p.seconds).toFixed(1).padStart(7)} cases/s${sent}`);
  }
  for (const k of KNOWN_OPEN) if (s.expected[k.id]) console.log(`  expected failures (known open, ${k.id}): ${s.expected[k.id]}`);
  console.log(s.unexpected.length ? `fuzz:js: ${s.unexpected.length} failures outside the known list (seed ${s.seed})` : 'fuzz:js: no failure outside the known list');
  process.exitCode = s.unexpected.length ? 1 : 0;
}
