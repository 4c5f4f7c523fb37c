// A model placed on the lab's workers (lab.loadModel with threads > 1): the calling thread holds none of its
// weights. Each worker holds one shard — a slice of every weight matrix (src/core/lm/shard.h) — so the weights are
// in memory once across the workers, and runs its part of every step itself (worker-lm.js), exchanging partial sums
// with the others per layer (lm-exchange.js); this thread sends one message per step (a forward, a generation's
// prompt, each next token) and gets the results.
//   Loading (workersSink, for load-model.js's streamModel): every file's first 8 + header-length bytes go to every
//     worker, whose engine reads the header and answers with the byte ranges of its slices (its routes); every
//     later piece of the file is cut here into each worker's ranges and sent to that worker only. No thread ever
//     holds a whole file; each worker's memory grows by its share.
//   Steps (WorkerEngine): one at a time per model, on all its workers at once (threads.js queues them together).
//     A worker that dies ends the model: the others are told, their shards freed, and every later call says so.
import { abortShared, resetShared, sharedBuffers } from './lm-exchange.js';

export { canShare } from './lm-exchange.js';

let nextId = 1;

// The workers' answers to one message each, or the first failure in rank order — leaving out the workers that
// only stopped because another one failed (PeerFailed), whose error is the one to report.
async function settle(runs) {
  const done = await Promise.allSettled(runs);
  const failed = done.filter((d) => d.status === 'rejected').map((d) => d.reason);
  if (failed.length) throw failed.find((e) => e?.name !== 'PeerFailed') ?? failed[0];
  return done.map((d) => d.value);
}

// The bytes of `piece` (file offsets [start, start + length)) inside `routes` ([begin, end) pairs, in order),
// from `cursor.k` on, laid end to end; the cursor moves past the routes the piece finishes.
function cut(routes, cursor, piece, start) {
  const end = start + piece.length;
  let total = 0;
  for (let k = cursor.k; k < routes.length && routes[k] < end; k += 2) {
    total += Math.max(0, Math.min(routes[k + 1], end) - Math.max(routes[k], start));
    if (routes[k + 1] > end) break;
  }
  const out = new Uint8Array(total);
  let at = 0, k = cursor.k;
  for (; k < routes.length && routes[k] < end; k += 2) {
    const b = Math.max(routes[k], start), e = Math.min(routes[k + 1], end);
    if (e > b) out.set(piece.subarray(b - start, e - start), at), (at += e - b);
    if (routes[k + 1] > end) break;
  }
  cursor.k = k;
  return out;
}

/**
 * The sink that places a model on `workers` (members of `pool`): `exchange` is 'shared' or 'message';
 * `lmModule()` resolves with the compiled language-model module for workers whose own module lacks it (null when
 * theirs has it). finish() gives { placed: { id, workers, plans, config, stats } }.
 */
export function workersSink(pool, workers, fn, { exchange, lmModule }) {
  const id = nextId++, P = workers.length;
  const all = (make, transfers) => settle(pool.runOn(workers, workers.map((_, r) => ({ sid: id, fn, ...make(r) })), transfers));
  let created = false;
  // The file being sent.
  let head, headLength, pos, routes, cursors, pending;
  const sendHeader = async (bytes) => all(() => ({ op: 'lmFeed', bytes, header: true }));
  return {
    async create(config, generation) {
      const module = await lmModule();
      const missing = module ? workers.filter((w) => !w.hasLm) : [];
      if (missing.length) {
        await settle(pool.runOn(missing, missing.map(() => ({ op: 'lmModule', module }))));
        for (const w of missing) w.hasLm = true;
      }
      // Where memory cannot be shared: a port between every two workers.
      const ports = workers.map(() => Array(P).fill(null));
      if (exchange === 'message')
        for (let i = 0; i < P; ++i)
          for (let j = i + 1; j < P; ++j) {
            const { port1, port2 } = new MessageChannel();
            ports[i][j] = port1, ports[j][i] = port2;
          }
      created = true;
      const [first] = await all((r) => ({ op: 'lmCreate', rank: r, ranks: P, config, generation, ports: exchange === 'message' ? ports[r] : null }),
        ports.map((list) => list.filter(Boolean)));
      return first.files;
    },
    async index(bytes) {
      return (await all(() => ({ op: 'lmIndex', bytes })))[0].files;
    },
    async begin(name) {
      await all(() => ({ op: 'lmBeginFile', name }));
      head = new Uint8Array(0), headLength = -1, pos = 0, routes = null, pending = [];
    },
    async feed(piece) {
      let at = 0;
      while (!routes && at < piece.length) {  // the header's length, then the header: to every worker
        const want = headLength < 0 ? 8 : headLength;
        const take = Math.min(want - head.length, piece.length - at);
        const grown = new Uint8Array(head.length + take);
        grown.set(head), grown.set(piece.subarray(at, at + take), head.length);
        head = grown, at += take;
        if (head.length < want) break;
        if (headLength < 0) {
          await sendHeader(head);  // the engine refuses a length past its limit here
          headLength = Number(new DataView(head.buffer).getBigUint64(0, true));
        } else {
          routes = await sendHeader(head);
          if (routes.some((r) => !(r instanceof Float64Array))) throw new Error(`${fn}: a worker did not read the header of a file it was sent`);
          cursors = workers.map(() => ({ k: 0 }));
        }
        head = new Uint8Array(0);
      }
      if (routes && at < piece.length) {
        // Each worker its bytes of the piece; the previous piece's sends are awaited now (two pieces in flight).
        const part = piece.subarray(at), start = pos + at, sent = [];
        for (let r = 0; r < P; ++r) {
          const mine = cut(routes[r], cursors[r], part, start);
          if (mine.length) sent.push(pool.runOn([workers[r]], [{ sid: id, fn, op: 'lmFeed', bytes: mine }], [[mine.buffer]])[0]);
        }
        const before = pending;
        pending = sent;
        await settle(before);
      }
      pos += piece.length;
    },
    async end(total) {
      if (head.length) await sendHeader(head);  // a file that ended inside its header: the engine says so
      await settle(pending);
      pending = [];
      await all(() => ({ op: 'lmEndFile', total }));
    },
    async finish() {
      const got = await all(() => ({ op: 'lmFinish' }));
      return { placed: { id, workers, plans: got.map((g) => g.plan), config: got[0].config, stats: got, exchange } };
    },
    free() {
      if (created) all(() => ({ op: 'lmFree' })).catch(() => {});
    },
  };
}

/** A model on workers, as lm.js's Model drives it (async: forward, begin, next; stats, read, free). */
export class WorkerEngine {
  #pool;
  #workers;
  #id;
  #shared = null;
  #vocab = null;
  #step = 0;
  #last = Promise.resolve();
  #failed = null;
  #freed = false;
  #unlisten;
  #stats;
  #counts;

  // counts: the lab's threadStats (async.js): each worker's step that succeeds is a part a worker served (a step
  // that fails is never run again on the calling thread).
  constructor(pool, { id, workers, plans, config, stats, exchange }, counts = null) {
    this.#pool = pool;
    this.#counts = counts;
    this.#workers = workers;
    this.#id = id;
    this.plans = plans;
    this.config = config;
    this.exchange = exchange;
    this.#stats = stats;
    if (exchange === 'shared') this.#shared = sharedBuffers(workers.length, config.dModel);
    this.#unlisten = pool.onFailure((w, e) => {
      if (this.#workers.includes(w)) this.#lost(e);
    });
  }

  get threads() {
    return this.#workers.length;
  }
  get memoryBytes() {
    return this.#stats.reduce((a, s) => a + s.memoryBytes, 0);
  }
  get weightBytes() {
    return this.#stats.reduce((a, s) => a + s.weightBytes, 0);
  }

  // A worker of this model died: the others' step ends, their shards go.
  #lost(e) {
    if (this.#failed || this.#freed) return;
    this.#failed = e?.message ?? String(e);
    this.#abort();
    this.#release();
  }

  #abort() {
    if (this.#shared) abortShared(this.#shared.control);
    else for (const w of this.#workers) this.#pool.signal(w, { op: 'lmAbort', sid: this.#id, step: this.#step });
  }

  #release() {
    this.#unlisten();
    const alive = this.#workers.filter((w) => !w.dead);
    settle(this.#pool.runOn(alive, alive.map(() => ({ op: 'lmFree', sid: this.#id })))).catch(() => {});
  }

  // One step on every worker, after the previous one of this model.
  #run(fn, kind, fields) {
    const run = this.#last.then(async () => {
      if (this.#freed) throw new Error(`${fn}: this model was disposed`);
      if (this.#failed) throw new Error(`${fn}: a worker holding this model failed (${this.#failed}); load the model again`);
      const step = ++this.#step;
      if (this.#shared) resetShared(this.#shared.control);  // (no step of this model runs now)
      const msg = { op: 'lmStep', sid: this.#id, fn, step, kind, shared: this.#shared, ...fields };
      const values = await settle(this.#pool.runOn(this.#workers, this.#workers.map(() => msg)));
      if (this.#counts) this.#counts.workerParts += values.length;
      this.#stats = values;
      return values;
    });
    this.#last = run.catch(() => {});
    return run;
  }

  async forward(fn, ids, attention, qkv = false) {
    const values = await this.#run(fn, 'forward', { ids, attention, qkv });
    const { vocabSize: V, layers: L, heads: H, kvHeads: G, headDim: dh, attentionScales } = this.config, n = ids.length;
    const logits = new Float32Array(n * V);
    values.forEach(({ logits: part }, r) => {
      const [v0, v1] = this.plans[r].vocab, w = v1 - v0;
      for (let i = 0; i < n; ++i) logits.set(part.subarray(i * w, (i + 1) * w), i * V + v0);
    });
    const result = { logits, shape: [n, V] };
    if (attention) {
      result.attention = Array.from({ length: L }, () => Array(H));
      values.forEach(({ attention: maps }, r) => {
        const [h0, h1] = this.plans[r].heads, w = h1 - h0;
        for (let l = 0; l < L; ++l)
          for (let h = h0; h < h1; ++h) result.attention[l][h] = maps.slice((l * w + h - h0) * n * n, (l * w + h - h0 + 1) * n * n);
      });
    }
    if (qkv) {
      // Each shard's layer is its heads' q [n, h1 − h0, dh], then its K/V heads' k and v [n, g1 − g0, dh]: every
      // row's slice goes to its heads' place in the whole [n, heads, dh] / [n, kvHeads, dh].
      result.qkv = Array.from({ length: L }, (_, l) => ({
        q: new Float32Array(n * H * dh), k: new Float32Array(n * G * dh), v: new Float32Array(n * G * dh), scale: attentionScales[l],
      }));
      values.forEach(({ qkv: part }, r) => {
        const [h0, h1] = this.plans[r].heads, [g0, g1] = this.plans[r].kvHeads;
        const qw = (h1 - h0) * dh, kw = (g1 - g0) * dh, layer = n * (qw + 2 * kw);
        if (!layer) return;
        for (let l = 0; l < L; ++l) {
          const { q, k, v } = result.qkv[l], at = l * layer;
          for (let i = 0; i < n; ++i) {
            q.set(part.subarray(at + i * qw, at + (i + 1) * qw), (i * H + h0) * dh);
            k.set(part.subarray(at + n * qw + i * kw, at + n * qw + (i + 1) * kw), (i * G + g0) * dh);
            v.set(part.subarray(at + n * (qw + kw) + i * kw, at + n * (qw + kw) + (i + 1) * kw), (i * G + g0) * dh);
          }
        }
      });
    }
    return result;
  }

  #token(values) {
    const { token, done } = values[0];
    if (values.some((v) => v.token !== token || v.done !== done)) throw new Error('attnlab: the workers of a model chose different tokens');
    return { token, done };
  }

  async begin(fn, plan) {
    // Sampling gathers the whole vocabulary's logits (shared memory: one buffer for all).
    if (plan.temperature > 0 && this.#shared && !this.#vocab) this.#vocab = new SharedArrayBuffer(4 * this.config.vocabSize);
    return this.#token(await this.#run(fn, 'begin', {
      ids: plan.ids, maxTokens: plan.maxTokens, temperature: plan.temperature, topK: plan.topK, topP: plan.topP, seed: plan.seed,
      stop: Int32Array.from(plan.stopIds), vocab: plan.temperature > 0 ? this.#vocab : null,
    }));
  }

  async next(fn) {
    return this.#token(await this.#run(fn, 'next', {}));
  }

  /** Each worker's share now: { rank, memoryBytes, weightBytes, wasmBytes, phases } (after any step in progress). */
  async workers(fn) {
    const values = await this.#runEach(fn, { op: 'lmStats' });
    return values.map((v, rank) => ({ rank, ...v, plan: this.plans[rank] }));
  }

  // A message to every worker, after the steps before it.
  #runEach(fn, message) {
    const run = this.#last.then(() => {
      if (this.#freed) throw new Error(`${fn}: this model was disposed`);
      if (this.#failed) throw new Error(`${fn}: a worker holding this model failed (${this.#failed}); load the model again`);
      return settle(this.#pool.runOn(this.#workers, this.#workers.map(() => ({ ...message, sid: this.#id, fn }))));
    });
    this.#last = run.catch(() => {});
    return run;
  }

  /** Every worker reads its weights once, all starting together: { bytes, ms } (ms: the slowest worker's). */
  async read(fn) {
    const start = new SharedArrayBuffer(4);
    const values = await this.#runEach(fn, { op: 'lmRead', start });
    return { bytes: values.reduce((a, v) => a + v.bytes, 0), ms: Math.max(...values.map((v) => v.ms)), workers: values };
  }

  /** The tokenizer's largest id must be a row of the embeddings (the engine's check, on the first worker). */
  async checkVocabulary(largest, file) {
    const fn = 'loadModel';
    await settle(this.#pool.runOn([this.#workers[0]], [{ op: 'lmCheckVocabulary', sid: this.#id, fn, largest, file }]));
  }

  kill(rank) {
    this.#pool.kill(this.#workers[rank]);
  }

  /** Frees every worker's shard (a step in progress ends first). Idempotent. */
  free() {
    if (this.#freed) return;
    this.#freed = true;
    if (this.#failed) return;  // (freed when the worker died)
    this.#abort();
    this.#release();
  }
}
