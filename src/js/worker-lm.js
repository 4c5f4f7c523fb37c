// A worker's part of a model placed on the lab's workers (lm-workers.js): the shards it holds (src/core/lm/shard.h),
// each loaded from the bytes the calling thread routes to it, and their steps, which this worker runs phase by
// phase, exchanging the partial sums with the other workers itself (lm-exchange.js) — the calling thread sends one
// message per step, never one per layer. Only in the workers' script (worker.js).
import { engineCall, option } from './call.js';
import { PeerFailed, PortExchange, SharedExchange } from './lm-exchange.js';
import { hasLm } from './variant.js';

const STAGING = 1 << 20;  // the most bytes of this worker's wasm memory a routed piece passes through at once

// The engine calls a shard makes on module m (src/wasm/lm_bindings.cpp), and `on(call, handle)`: a descriptor of the
// call on that handle (scratch: used at once).
const callCache = new WeakMap();
function callsOf(m) {
  let c = callCache.get(m);
  if (!c) {
    c = {};
    for (const name of ['lmLoaderCreate', 'lmLoaderIndex', 'lmLoaderFiles', 'lmLoaderBegin', 'lmLoaderFeed', 'lmLoaderRanges',
      'lmLoaderEnd', 'lmLoaderFinish', 'lmLoaderFree', 'lmModelConfig', 'lmModelInfo', 'lmModelCheckVocabulary',
      'lmModelReadWeights', 'lmModelFree', 'lmShardPlan', 'lmShardForward', 'lmShardBegin', 'lmShardNext', 'lmShardPhase',
      'lmShardPick'])
      c[name] = engineCall(m, name);
    c.on = (call, h) => {
      const d = call.descriptor();
      d[call.F.loader ?? call.F.model] = h;
      return d;
    };
    callCache.set(m, c);
  }
  return c;
}
const text = (bytes) => new TextDecoder().decode(bytes ?? new Uint8Array(0));

/**
 * The ops of the workers' script for models: `main()` is the worker's module, `instantiate(module)` makes another
 * (the language-model module, when the worker's own lacks the engine: a lab on the operators' module).
 */
export function makeLmWorker(main, instantiate) {
  let lm = null;          // the module with the language-model engine
  const shards = new Map();  // sid → { m, c (its calls), loader, handle, rank, ranks, plan, exchange, ports, greedy }
  const engine = () => {
    if (lm) return lm;
    if (hasLm(main())) return (lm = main());
    throw new Error('loadModel: this worker has no language-model engine (the module was not sent)');
  };
  const shard = (sid, fn) => {
    const s = shards.get(sid);
    if (!s) throw new Error(`${fn}: this model was disposed`);
    return s;
  };
  const free = (s) => {
    const { c } = s, fn = 'Model.dispose';
    if (s.loader) c.lmLoaderFree.call(fn, c.on(c.lmLoaderFree, s.loader));
    if (s.handle) c.lmModelFree.call(fn, c.on(c.lmModelFree, s.handle));
    s.loader = s.handle = 0;
    s.exchange?.close();
    for (const port of s.ports ?? []) port?.close();
    s.exchange = null, s.ports = null;
  };
  // What a shard reports: its memory, and where its time went (steps, the milliseconds they took here, and of those
  // the ones spent waiting at exchanges for the other workers).
  const stats = (s) => {
    const { c } = s, d = c.on(c.lmModelInfo, s.handle), { F } = c.lmModelInfo;
    c.lmModelInfo.call('Model.workers', d);
    return {
      memoryBytes: d[F.memory_bytes], weightBytes: d[F.weight_bytes], wasmBytes: s.m.HEAPU8.byteLength,
      phases: d[F.phases], steps: s.steps ?? 0, stepMs: s.stepMs ?? 0, waitedMs: s.waitedMs ?? 0,
      shards: shards.size,  // of every model (and load in progress) on this worker
    };
  };
  const files = (s, fn) => text(s.c.lmLoaderFiles.call(fn, s.c.on(s.c.lmLoaderFiles, s.loader)).names).split('\n').filter(Boolean);

  // A piece of a file into the shard's loader, at most STAGING bytes a call.
  function feed(s, fn, bytes) {
    const { lmLoaderFeed: call, on } = s.c;
    for (let at = 0; at < bytes.length; at += STAGING) call.call(fn, on(call, s.loader), { bytes: bytes.subarray(at, Math.min(at + STAGING, bytes.length)) });
  }

  async function step(s, msg) {
    if (!s.exchange) s.exchange = new SharedExchange(msg.shared, s.rank, s.ranks, s.d);
    const { fn, kind } = msg, { m, c, handle: h, exchange: ex, plan } = s;
    ex.start(msg.step);
    if (msg.vocab) ex.vocab = new Float32Array(msg.vocab);
    const t0 = performance.now();
    let held = null;  // a forward's logits, attention and qkv, in wasm memory until the last phase wrote them
    try {
      const { lmShardPhase: phase, on } = c;
      const d = on(phase, h);
      if (kind === 'forward') {
        const call = c.lmShardForward, f = on(call, h);
        f[call.F.want_attention] = msg.attention ? 1 : 0;
        f[call.F.want_qkv] = msg.qkv ? 1 : 0;
        held = call.open(fn, f, { ids: msg.ids });
      } else if (kind === 'begin') {
        const call = c.lmShardBegin, b = on(call, h), { F } = call;
        b[F.max_tokens] = msg.maxTokens, b[F.temperature] = msg.temperature, b[F.top_k] = msg.topK, b[F.top_p] = msg.topP;
        b[F.seed] = msg.seed;
        call.call(fn, b, { prompt: msg.ids, stop: msg.stop.length ? msg.stop : undefined });  // (the engine keeps its copy of the prompt)
        s.greedy = msg.temperature === 0;
      } else {
        c.lmShardNext.call(fn, on(c.lmShardNext, h));
      }
      // Phase by phase: each returns the last phase's number, the step's rows and where the partial sums go.
      const { F } = phase;
      for (let p = 0, last = 0; p <= last; ++p) {
        d[F.model] = h, d[F.phase] = p;
        phase.call(fn, d);
        last = d[F.last];
        if (p < last) {
          const r = ex.allReduce(m, d[F.parts] >>> 2, d[F.rows]);
          if (r) await r;
        }
      }
      const timing = () => {
        s.steps = (s.steps ?? 0) + 1, s.stepMs = (s.stepMs ?? 0) + performance.now() - t0, s.waitedMs = (s.waitedMs ?? 0) + ex.take();
        return {};
      };
      if (kind === 'forward') {
        const o = held.outputs();
        // (a shard without heads has no attention weights or qkv: empty)
        return { logits: o.logits, attention: msg.attention ? o.attention : null, qkv: msg.qkv ? o.qkv ?? new Float32Array(0) : null,
          ...timing(), ...stats(s) };
      }
      const pick = c.lmShardPick, P = pick.F, look = on(pick, h);
      pick.call(fn, look);
      let token = -1;  // greedy: the best of every shard's best; sampling: drawn by the engine from the gathered logits
      if (s.greedy) {
        token = ex.best(look[P.value], look[P.token]);
        if (typeof token !== 'number') token = await token;
      } else {
        const V = plan.vocab[1] - plan.vocab[0], logits = look[P.logits], all = look[P.vocab];
        const gathered = ex.gather(m, logits >>> 2, plan.vocab[0], V, all >>> 2, s.vocabSize);
        if (gathered) await gathered;
      }
      const a = on(pick, h);
      a[P.accept] = 1, a[P.sample] = s.greedy ? 0 : 1, a[P.token] = token;
      pick.call(fn, a);
      return { token: a[P.token], done: a[P.done] === 1, ...timing(), ...stats(s) };
    } catch (e) {
      if (!(e instanceof PeerFailed)) ex.fail();
      throw e;
    } finally {
      held?.close();
    }
  }

  const ops = {
    // The language-model module for a worker whose own module lacks it.
    lmModule: async ({ module }) => {
      if (!lm && !hasLm(main())) lm = await instantiate(module);
      return true;
    },
    // A shard's loader: config.json (and generation_config.json) as bytes; ports to the other workers when their
    // memory cannot be shared. The engine checks rank and ranks before it reads anything.
    lmCreate: ({ sid, fn, rank, ranks, config, generation, ports }) => {
      const m = engine(), c = callsOf(m), call = c.lmLoaderCreate, d = call.descriptor();
      option(d, call.F.rank, rank), option(d, call.F.ranks, ranks);
      call.call(fn, d, { config, generation: generation ?? undefined });
      const s = { m, c, loader: d[call.F.loader], handle: 0, rank, ranks, ports };
      shards.set(sid, s);
      return { files: files(s, fn) };
    },
    lmIndex: ({ sid, fn, bytes }) => {
      const s = shard(sid, fn);
      s.c.lmLoaderIndex.call(fn, s.c.on(s.c.lmLoaderIndex, s.loader), { bytes });
      return { files: files(s, fn) };
    },
    lmBeginFile: ({ sid, fn, name }) => {
      const s = shard(sid, fn);
      s.c.lmLoaderBegin.call(fn, s.c.on(s.c.lmLoaderBegin, s.loader), { bytes: new TextEncoder().encode(name) });
      return true;
    },
    // The bytes of a file routed to this shard. While the header comes in (`header`), the reply ends with the
    // shard's routes of the file once it is read: [begin, end) offsets.
    lmFeed: ({ sid, fn, bytes, header }) => {
      const s = shard(sid, fn);
      feed(s, fn, bytes);
      if (!header) return null;
      const call = s.c.lmLoaderRanges, d = s.c.on(call, s.loader);
      const { ranges } = call.call(fn, d);
      return d[call.F.header_done] ? ranges ?? new Float64Array(0) : null;
    },
    lmEndFile: ({ sid, fn, total }) => {
      const s = shard(sid, fn), call = s.c.lmLoaderEnd, d = s.c.on(call, s.loader);
      d[call.F.total] = total;
      call.call(fn, d);
      return true;
    },
    lmFinish: ({ sid, fn }) => {
      const s = shard(sid, fn), { c } = s;
      const d = c.on(c.lmLoaderFinish, s.loader);
      c.lmLoaderFinish.call(fn, d);
      s.handle = d[c.lmLoaderFinish.F.model];
      c.lmLoaderFree.call(fn, c.on(c.lmLoaderFree, s.loader));
      s.loader = 0;
      s.plan = JSON.parse(text(c.lmShardPlan.call(fn, c.on(c.lmShardPlan, s.handle)).json));
      const config = JSON.parse(text(c.lmModelConfig.call(fn, c.on(c.lmModelConfig, s.handle)).json));
      s.layers = config.layers, s.vocabSize = config.vocabSize, s.d = config.dModel;
      // Ports now; shared memory comes with the first step.
      if (s.ports) s.exchange = new PortExchange(s.ports, s.rank, s.ranks, s.d);
      return { plan: s.plan, config: s.rank === 0 ? config : null, ...stats(s) };
    },
    lmFree: ({ sid }) => {
      const s = shards.get(sid);
      if (s) free(s), shards.delete(sid);
      return true;
    },
    lmStep: (msg) => step(shard(msg.sid, msg.fn), msg),
    lmStats: ({ sid, fn }) => stats(shard(sid, fn)),
    lmCheckVocabulary: ({ sid, fn, largest, file }) => {
      const s = shard(sid, fn), call = s.c.lmModelCheckVocabulary, d = s.c.on(call, s.handle);
      d[call.F.largest] = largest;
      call.call(fn, d, { file: new TextEncoder().encode(file) });
      return true;
    },
    // Every shard reads its weights once, the plainest way (what a decode step must stream), all starting together.
    lmRead: ({ sid, fn, start }) => {
      const s = shard(sid, fn), c = new Int32Array(start);
      Atomics.add(c, 0, 1);
      while (Atomics.load(c, 0) < s.ranks) Atomics.wait(c, 0, Atomics.load(c, 0), 1);
      const call = s.c.lmModelReadWeights, d = s.c.on(call, s.handle);
      const t0 = performance.now();
      call.call(fn, d);
      const ms = performance.now() - t0, sum = d[call.F.checksum];
      return { ms, bytes: stats(s).weightBytes, sum };
    },
  };
  // A message the calling thread sends while this worker runs (no reply): the step of a model given up (dispose, a
  // worker that died), for shards whose exchange waits on messages (shared memory has its own abort flag).
  const control = ({ sid, step }) => shards.get(sid)?.exchange?.abort?.(step);
  return { ops, control };
}
