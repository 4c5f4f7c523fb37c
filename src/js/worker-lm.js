// A worker's part of a model placed on the lab's workers (lm-workers.js): the shards it holds (src/core/lm/shard.h),
// each loaded from the bytes the calling thread routes to it, and their steps, which this worker runs phase by
// phase, exchanging the partial sums with the other workers itself (lm-exchange.js) — the calling thread sends one
// message per step, never one per layer. Only in the workers' script (worker.js).
import { arena, checkKind } from './memory.js';
import { fieldsOf, setter } from './lm-fields.js';
import { PeerFailed, PortExchange, SharedExchange } from './lm-exchange.js';
import { hasLm } from './variant.js';

const STAGING = 1 << 20;  // bytes of this worker's wasm memory a routed piece passes through

/**
 * The ops of the workers' script for models: `main()` is the worker's module, `instantiate(module)` makes another
 * (the language-model module, when the worker's own lacks the engine: a lab on the operators' module).
 */
export function makeLmWorker(main, instantiate) {
  let lm = null;          // the module with the language-model engine
  const shards = new Map();  // sid → { m, loader, handle, staging, scratch, rank, ranks, plan, exchange, ports, greedy }
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
    const { m } = s;
    if (s.loader) m.lmLoaderFree(s.loader);
    if (s.handle) m.lmModelFree(s.handle);
    if (s.staging) m._free(s.staging);
    if (s.scratch) m._free(s.scratch);
    s.loader = s.handle = s.staging = s.scratch = 0;
    s.exchange?.close();
    for (const port of s.ports ?? []) port?.close();
    s.exchange = null, s.ports = null;
  };
  // What a shard reports: its memory, and where its time went (steps, the milliseconds they took here, and of those
  // the ones spent waiting at exchanges for the other workers).
  const stats = (s) => ({
    memoryBytes: s.m.lmModelMemory(s.handle), weightBytes: s.m.lmModelWeightBytes(s.handle), wasmBytes: s.m.HEAPU8.byteLength,
    phases: s.m.lmModelPhases(s.handle), steps: s.steps ?? 0, stepMs: s.stepMs ?? 0, waitedMs: s.waitedMs ?? 0,
    shards: shards.size,  // of every model (and load in progress) on this worker
  });

  // A piece of a file through the staging buffer into the shard's loader.
  function feed(s, fn, bytes) {
    const { m } = s;
    for (let at = 0; at < bytes.length; at += STAGING) {
      const part = bytes.subarray(at, Math.min(at + STAGING, bytes.length));
      m.HEAPU8.set(part, s.staging);
      checkKind(m, fn, m.lmLoaderFeed(s.loader, s.staging, part.length));
    }
  }

  async function step(s, msg) {
    if (!s.exchange) s.exchange = new SharedExchange(msg.shared, s.rank, s.ranks, s.d);
    const { fn, kind } = msg, { m, handle: h, exchange: ex, plan } = s;
    ex.start(msg.step);
    if (msg.vocab) ex.vocab = new Float32Array(msg.vocab);
    const t0 = performance.now();
    let a;
    try {
      if (kind === 'forward') {
        const F = fieldsOf(m).forward, n = msg.ids.length;
        const V = plan.vocab[1] - plan.vocab[0], H = plan.heads[1] - plan.heads[0], maps = msg.attention ? s.layers * H * n * n : 0;
        a = arena(m, fn, [
          { name: 'call', length: F.length, type: 'f64' }, { name: 'ids', length: n, data: msg.ids, type: 'i32' },
          { name: 'logits', length: n * V }, { name: 'attention', length: maps },
        ]);
        const set = setter(a.view(0), F);
        set('model', h), set('ids', a.at(1)), set('ids_len', n), set('logits', a.at(2)), set('logits_len', n * V);
        set('attention', a.at(3)), set('attention_len', maps);
        checkKind(m, fn, m.lmShardForward(a.at(0)));
      } else if (kind === 'begin') {
        const F = fieldsOf(m).generate;
        const b = arena(m, fn, [
          { name: 'call', length: F.length, type: 'f64' }, { name: 'prompt', length: msg.ids.length, data: msg.ids, type: 'i32' },
          { name: 'stop', length: msg.stop.length, data: msg.stop, type: 'i32' },
        ]);
        try {
          const set = setter(b.view(0), F);
          set('model', h), set('prompt', b.at(1)), set('prompt_len', msg.ids.length), set('max_tokens', msg.maxTokens);
          set('temperature', msg.temperature), set('top_k', msg.topK), set('top_p', msg.topP), set('seed', msg.seed);
          set('stop', b.at(2)), set('stop_len', msg.stop.length);
          checkKind(m, fn, m.lmShardBegin(b.at(0)));  // (the engine keeps its copy of the prompt)
        } finally {
          b.free();
        }
        s.greedy = msg.temperature === 0;
      } else {
        checkKind(m, fn, m.lmShardNext(h));
      }
      const last = m.lmShardLastPhase(h);
      for (let p = 0; p <= last; ++p) {
        checkKind(m, fn, m.lmShardPhase(h, p));
        if (p < last) {
          const r = ex.allReduce(m, m.lmShardParts(h) >>> 2, m.lmShardRows(h));
          if (r) await r;
        }
      }
      const timing = () => {
        s.steps = (s.steps ?? 0) + 1, s.stepMs = (s.stepMs ?? 0) + performance.now() - t0, s.waitedMs = (s.waitedMs ?? 0) + ex.take();
        return {};
      };
      if (kind === 'forward') return { logits: a.read(2), attention: msg.attention ? a.read(3) : null, ...timing(), ...stats(s) };
      let token;
      if (s.greedy) {
        m.lmShardBest(h, s.scratch);
        token = ex.best(m.HEAPF32[s.scratch >>> 2], m.HEAP32[(s.scratch >>> 2) + 1]);
      } else {
        const V = plan.vocab[1] - plan.vocab[0], all = m.lmShardVocabLogits(h);
        token = ex.gather(m, m.lmShardLogits(h) >>> 2, plan.vocab[0], V, all >>> 2, s.vocabSize);
        if (token) await token;
        token = m.lmShardSample(h);
      }
      if (typeof token !== 'number') token = await token;
      const done = m.lmShardAccept(h, token);
      if (done < 0) checkKind(m, fn, 1);
      return { token, done: done === 1, ...timing(), ...stats(s) };
    } catch (e) {
      if (!(e instanceof PeerFailed)) ex.fail();
      throw e;
    } finally {
      a?.free();
    }
  }

  const ops = {
    // The language-model module for a worker whose own module lacks it.
    lmModule: async ({ module }) => {
      if (!lm && !hasLm(main())) lm = await instantiate(module);
      return true;
    },
    // A shard's loader: config.json (and generation_config.json) as bytes; ports to the other workers when their
    // memory cannot be shared.
    lmCreate: ({ sid, fn, rank, ranks, config, generation, ports }) => {
      const m = engine(), F = fieldsOf(m).loader;
      const s = { m, loader: 0, handle: 0, staging: 0, scratch: 0, rank, ranks, ports };
      const a = arena(m, fn, [
        { name: 'call', length: F.length, type: 'f64' }, { name: 'config', length: config.length, data: config, type: 'u8' },
        { name: 'generation', length: generation?.length ?? 0, data: generation ?? undefined, type: 'u8' },
      ]);
      try {
        const set = setter(a.view(0), F);
        set('config', a.at(1)), set('config_len', config.length), set('generation', a.at(2)), set('generation_len', generation?.length ?? 0);
        set('rank', rank), set('ranks', ranks);
        s.loader = m.lmLoaderCreate(a.at(0));
        checkKind(m, fn, s.loader ? 0 : m.lastStatus().kind);
      } finally {
        a.free();
      }
      s.staging = m._malloc(STAGING);
      if (!s.staging) {
        free(s);
        throw new Error(`${fn}: out of memory allocating ${STAGING} bytes of a worker's wasm memory`);
      }
      shards.set(sid, s);
      return { files: m.lmLoaderFiles(s.loader).split('\n').filter(Boolean) };
    },
    lmIndex: ({ sid, fn, bytes }) => {
      const s = shard(sid, fn), { m } = s;
      const at = m._malloc(bytes.length);
      if (!at) throw new Error(`${fn}: out of memory allocating ${bytes.length} bytes of wasm memory`);
      try {
        m.HEAPU8.set(bytes, at);
        checkKind(m, fn, m.lmLoaderIndex(s.loader, at, bytes.length));
      } finally {
        m._free(at);
      }
      return { files: m.lmLoaderFiles(s.loader).split('\n').filter(Boolean) };
    },
    lmBeginFile: ({ sid, fn, name }) => {
      const s = shard(sid, fn);
      checkKind(s.m, fn, s.m.lmLoaderBegin(s.loader, name));
      return true;
    },
    // The bytes of a file routed to this shard. While the header comes in (`header`), the reply ends with the
    // shard's routes of the file once it is read: [begin, end) offsets.
    lmFeed: ({ sid, fn, bytes, header }) => {
      const s = shard(sid, fn), { m } = s;
      feed(s, fn, bytes);
      if (!header || !m.lmLoaderHeaderDone(s.loader)) return null;
      const count = m.lmLoaderRouteCount(s.loader), at = m.lmLoaderRoutes(s.loader) >>> 2;
      const words = m.HEAPU32, routes = new Float64Array(count);
      for (let i = 0; i < count; ++i) routes[i] = words[at + 2 * i] + words[at + 2 * i + 1] * 2 ** 32;
      return routes;
    },
    lmEndFile: ({ sid, fn, total }) => {
      const s = shard(sid, fn);
      checkKind(s.m, fn, s.m.lmLoaderEnd(s.loader, total));
      return true;
    },
    lmFinish: ({ sid, fn }) => {
      const s = shard(sid, fn), { m } = s;
      s.handle = m.lmLoaderFinish(s.loader);
      checkKind(m, fn, s.handle ? 0 : m.lastStatus().kind);
      m.lmLoaderFree(s.loader);
      m._free(s.staging);
      s.loader = s.staging = 0;
      s.scratch = m._malloc(8);
      if (!s.scratch) throw new Error(`${fn}: out of memory in a worker`);
      s.plan = JSON.parse(m.lmShardPlan(s.handle));
      const config = JSON.parse(m.lmModelConfig(s.handle));
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
      const s = shard(sid, fn);
      checkKind(s.m, fn, s.m.lmModelCheckVocabulary(s.handle, largest, file));
      return true;
    },
    // Every shard reads its weights once, the plainest way (what a decode step must stream), all starting together.
    lmRead: ({ sid, fn, start }) => {
      const s = shard(sid, fn), c = new Int32Array(start);
      Atomics.add(c, 0, 1);
      while (Atomics.load(c, 0) < s.ranks) Atomics.wait(c, 0, Atomics.load(c, 0), 1);
      const t0 = performance.now();
      const sum = s.m.lmModelReadWeights(s.handle);
      return { ms: performance.now() - t0, bytes: s.m.lmModelWeightBytes(s.handle), sum };
    },
  };
  // A message the calling thread sends while this worker runs (no reply): the step of a model given up (dispose, a
  // worker that died), for shards whose exchange waits on messages (shared memory has its own abort flag).
  const control = ({ sid, step }) => shards.get(sid)?.exchange?.abort?.(step);
  return { ops, control };
}
