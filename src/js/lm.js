// lab.loadModel: a real decoder-only checkpoint (GPT-2, Llama, Qwen2, Mistral) in the engine's wasm memory. The
// engine validates the files and every call (lm/ in the core); this file reads and moves bytes (load-model.js),
// checks types, turns token streams into an async iterator, and frees the model on dispose() or when the Model
// object is garbage-collected. The language-model engine is in the modules with the small GPT; a lab running the
// operators' module loads that module the first time it needs it (model-module.js).
import { engineCall } from './call.js';
import { checkKeys, describe, flag, int32, options, tokenIds } from './checks.js';
import { TOKENIZER_MAKERS, engineSink, source, streamModel } from './load-model.js';
import { compiledModelModule, moduleWithModels } from './model-module.js';
import { loadTokenizerFrom } from './tokenizer.js';

// The model's engine calls on module m (src/wasm/lm_bindings.cpp), each taking the model's handle.
const callCache = new WeakMap();
function callsOf(m) {
  let c = callCache.get(m);
  if (!c) {
    c = {};
    for (const name of ['lmModelConfig', 'lmModelInfo', 'lmModelForward', 'lmModelBegin', 'lmModelNext', 'lmModelReadWeights',
      'lmModelCheckVocabulary', 'lmModelFree'])
      c[name] = engineCall(m, name);
    // A descriptor of `call` on the model whose handle is h (scratch: used at once).
    c.on = (call, h) => {
      const d = call.descriptor();
      d[call.F.model] = h;
      return d;
    };
    callCache.set(m, c);
  }
  return c;
}

// Lets the event loop run between two tokens (rendering, input, other tasks) without setTimeout's 4 ms clamp.
function nextTask() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(null);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function abortError(signal) {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

// ---------------------------------------------------------------------------------------------------- tokenizer
// The tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt) is built from the files loadModel found (`files`:
// file name → bytes), in the module `module()` gives (one with the models); the engine then checks that its largest
// id is a row of the embeddings (a tokenizer may have fewer ids than the embeddings have rows, never more):
// `check(largestId, fileName)`. A folder without tokenizer files loads without one (token ids in and out); half of
// GPT-2's pair (vocab.json without merges.txt, or the reverse) is the tokenizer's error, not a model without one. The
// tokenizer belongs to the model: Model.dispose() frees it too.
// A model on workers keeps its tokenizer here, on the calling thread, like a whole model: encode, decode and tokens
// stay synchronous calls with no message per token (generate decodes the text after every token), and its few
// megabytes are not weights, which alone are cut across the workers; the check runs on the first worker's shard.
async function loadTokenizer(fn, module, files, check) {
  if (!TOKENIZER_MAKERS.some((f) => files[f])) return null;
  const tokenizer = await loadTokenizerFrom(await module(), files, null, fn);
  try {
    await check(tokenizer.vocabSize - 1, files['tokenizer.json'] ? 'tokenizer.json' : 'vocab.json');
  } catch (e) {
    tokenizer.dispose();
    throw e;
  }
  return tokenizer;
}

// The text that generated tokens add to the prompt's (generate's and stream's `text`), piece by piece. The tokens are
// decoded after the prompt's last few, less those tokens' own text: decoded alone, the first token would lose the
// space it begins with under a SentencePiece-style decoder (it strips the space a text starts with), and prompt + text
// would read "Once upon a timethere". A character whose bytes span tokens comes whole, in one piece: the U+FFFD its
// first bytes decode to is held back until the rest arrive (or the generation ends, which gives what is left). A
// token past the tokenizer's ids (a row the embeddings have beyond them: Qwen2's padding, nanoGPT's 50304) has no
// text and adds none, as Hugging Face's decode skips it. add(token) → the generated text so far; piece(last) → the
// text not yet given out; restarts → how often it had to decode every id again (never expected: its test checks).
// (Exported for that test and bench/generated-text.mjs.)
const CONTEXT_TOKENS = 4;
export function generatedText(tokenizer, prompt) {
  // The prompt's last ids that have text (a prompt may hold rows past the tokenizer's, as generated tokens may).
  const context = [];
  for (let i = prompt.length - 1; i >= 0 && context.length < CONTEXT_TOKENS; --i) if (prompt[i] < tokenizer.vocabSize) context.unshift(prompt[i]);
  // (a character the prompt's last bytes began is the generated tokens' to complete)
  const before = withoutReplacements(tokenizer.decode(context));
  const decoded = decodedText(tokenizer, context);  // the context, then the tokens that have text
  let text = '', given = 0;
  return {
    add(token) {
      const all = token < tokenizer.vocabSize ? decoded.push(token) : decoded.text;
      let from = 0;  // where the context's text ends (a decoder's clean-up may join the two at the seam)
      while (from < before.length && all[from] === before[from]) ++from;
      text = all.slice(from);
      return text;
    },
    get restarts() {
      return decoded.restarts;
    },
    piece(last) {
      const ready = last ? text : withoutReplacements(text);
      const piece = ready.slice(given);
      given = Math.max(given, ready.length);
      return piece;
    },
  };
}

// The text less the U+FFFD it ends with (a regular expression anchored at the end would scan the whole text).
function withoutReplacements(text) {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0xFFFD) --end;
  return text.slice(0, end);
}

// The decode of ids that grow one at a time, equal at every step to decoding them all, which would cost the square of
// a generation's length (seconds over 4096 tokens). The text is `settled` (the decode of the ids before a cut) then
// the decode of a window that starts CONTEXT_TOKENS ids before the cut, less the window's text before the cut: those
// ids give the window's start what a decoder does at a text's start (a space stripped, Metaspace's first mark
// dropped, a character's bytes begun earlier), so what it adds past the cut is what a whole decode adds. The cut
// moves only where nothing can join the text before it to the text after (moveCut).
function decodedText(tokenizer, ids) {
  const decode = (from, to, raw) => tokenizer.decode(Int32Array.from(ids.slice(from, to)), raw ? { cleanUpTokenizationSpaces: false } : {});
  let settled = '', start = 0, cut = 0, prefix = '', rawPrefix = '';
  const state = { text: decode(0), restarts: 0 };
  state.push = (id) => {
    ids.push(id);
    let window = decode(start);
    if (!window.startsWith(prefix)) {  // (a decoder the cut's rules do not know: back to decoding every id)
      settled = prefix = rawPrefix = '', start = cut = 0;
      window = decode(0);
      state.restarts += 1;
    }
    state.text = settled + window.slice(prefix.length);
    if (ids.length - cut >= 2 * CONTEXT_TOKENS) moveCut();
    return state.text;
  };
  // Moves the cut to the end where the text ends settled, in the text since the window's start (past the old cut) and
  // in the new window's, both as decoded before the clean-up of spaces.
  const cleans = tokenizer.cleanUpTokenizationSpaces;
  const moveCut = () => {
    const at = ids.length, from = at - CONTEXT_TOKENS;
    if (isByteToken(tokenizer, ids[at - 1])) return;
    const raw = decode(start, at, true);
    if (!raw.startsWith(rawPrefix) || !settledEnd(raw.slice(rawPrefix.length), cleans)) return;
    const rawWindow = decode(from, at, true);
    if (!settledEnd(rawWindow, cleans)) return;
    settled = state.text, prefix = decode(from, at), rawPrefix = rawWindow, start = from, cut = at;
  };
  return state;
}

// Whether text decoded without the clean-up of spaces ends where later ids cannot change it: not in a U+FFFD (bytes a
// later token may complete), and, where the tokenizer cleans up spaces, not in the start of one of transformers'
// patterns (" ." " ?" " !" " ," " ' " " n't" " 'm" " 's" " 've" " 're"), which the text after could complete.
const PATTERN_STARTS = /(?: | '| n| n'| 'v| 'r)$/;
function settledEnd(raw, cleans) {
  return raw.length >= 3 && raw.charCodeAt(raw.length - 1) !== 0xFFFD && !(cleans && PATTERN_STARTS.test(raw));
}

// A "<0xAB>" token: ByteFallback decodes a run of them together (all U+FFFD when its bytes are not UTF-8), so a later
// byte may change the text of the ones before it.
function isByteToken(tokenizer, id) {
  return /^<0x..>$/.test(tokenizer.tokenOf(id) ?? '');
}

// Model's method that lab.dispose() calls on the models placed on the lab's workers.
const LAB_DISPOSED = Symbol('attnlab.labDisposed');

const GENERATE_KEYS = ['maxTokens', 'temperature', 'topK', 'topP', 'seed', 'stop', 'signal'];

// The models of one lab: freed by dispose(), or — dropped without it — by this registry. `held`: { free, live }.
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => {
    held.free();
    held.live.count -= 1;
  })
  : null;

// What the registry keeps of a model (nothing that holds the Model itself).
const held = (engine, live) => ({ free: () => engine.free(), live });

// A model on this thread: module m's engine object at `handle` (its forward is synchronous).
function localEngine(m, handle) {
  const calls = callsOf(m), { lmModelConfig: config, lmModelInfo: info, lmModelFree: free, on } = calls;
  // The model's counts (lmModelInfo's fields).
  const counts = (fn) => {
    const d = on(info, handle);
    info.call(fn, d);
    return { memoryBytes: d[info.F.memory_bytes], weightBytes: d[info.F.weight_bytes], phases: d[info.F.phases] };
  };
  return {
    threads: 1,
    config: JSON.parse(new TextDecoder().decode(config.call('Model.config', on(config, handle)).json)),
    m,
    handle,
    calls,
    info: counts,
    get memoryBytes() {
      return counts('Model.memoryBytes').memoryBytes;
    },
    get weightBytes() {
      return counts('Model.weightBytes').weightBytes;
    },
    free: () => free.call('Model.dispose', on(free, handle)),
  };
}

class Model {
  #e;  // the engine: this thread's (localEngine) or the workers' (lm-workers.js)
  #live;
  #config;
  #split;
  #tokenizer;
  #disposed = false;
  #gone = 'this model was disposed';  // what a call says once it was: lab.dispose() says why
  #epoch = 0;  // bumped by every generation: an older iterator then ends

  constructor(engine, tokenizer, live) {
    this.#e = engine;
    this.#live = live;
    this.#tokenizer = tokenizer;
    this.#config = deepFreeze(engine.config);
    this.#split = deepFreeze(splitOf(engine));
    live.count += 1;
    registry?.register(this, held(engine, live), this);
  }

  #engine(fn) {
    if (this.#disposed) throw this.#goneError(fn);
    return this.#e;
  }

  #goneError(fn) {
    return new Error(`${fn}: ${this.#gone}`);
  }

  /** The checkpoint's configuration as the engine read it (config.json, generation_config.json). */
  get config() {
    return this.#config;
  }
  /** Where the model runs: the calling thread (threads 1) or the lab's workers, and each worker's slices. */
  get split() {
    return this.#split;
  }
  /** The tokenizer, or null when the model was loaded without one. */
  get tokenizer() {
    return this.#tokenizer;
  }
  /**
   * Bytes of wasm memory the model holds: weights, KV caches, activations (on workers: all of theirs together, as
   * of the last call that finished).
   */
  get memoryBytes() {
    return this.#engine('Model.memoryBytes').memoryBytes;
  }
  /** Bytes of the weights alone, as stored (F16 and BF16 matrices at 2 bytes a weight). */
  get weightBytes() {
    return this.#engine('Model.weightBytes').weightBytes;
  }
  get disposed() {
    return this.#disposed;
  }

  // Token ids as the tokenizer takes them (checks.js's tokenIds), or a string (through the tokenizer).
  #ids(fn, name, v) {
    if (typeof v === 'string') {
      if (!this.#tokenizer) throw new TypeError(`${fn}: ${name} is a string, but this model was loaded without a tokenizer: pass token ids (an Int32Array or an array of integers)`);
      return this.#tokenizer.encode(v);
    }
    return tokenIds(fn, name, v);
  }

  #forwardArgs(fn, ids, opts) {
    const tokens = this.#ids(fn, 'ids', ids);
    options(fn, opts);
    checkKeys(fn, opts, ['attention', 'qkv']);
    return { tokens, wantAttention: flag(fn, 'attention', opts.attention), wantQkv: flag(fn, 'qkv', opts.qkv) };
  }

  forward(ids, opts = {}) {
    const fn = 'Model.forward', e = this.#engine(fn);
    if (e.threads > 1)
      throw new Error(`${fn}: this model runs on ${e.threads} workers (loadModel's threads): use forwardAsync(), or load it with { threads: 1 }`);
    const { tokens, wantAttention, wantQkv } = this.#forwardArgs(fn, ids, opts);
    const { lmModelForward: call, on } = e.calls, d = on(call, e.handle);
    d[call.F.want_attention] = wantAttention;
    d[call.F.want_qkv] = wantQkv;
    const o = call.call(fn, d, { ids: tokens });
    const { vocabSize: V, layers: L, heads: H, kvHeads: G, headDim: dh, attentionScales } = this.#config;
    const n = tokens.length;
    const result = { logits: o.logits, shape: [n, V] };
    if (o.attention) {
      result.attention = Array.from({ length: L }, (_, l) =>
        Array.from({ length: H }, (_, hh) => o.attention.slice((l * H + hh) * n * n, (l * H + hh + 1) * n * n)));
    }
    if (o.qkv) {  // per layer q, k, v laid end to end (lm/model.h): views of the one array read back
      const qw = n * H * dh, kw = n * G * dh, at = (l) => l * (qw + 2 * kw);
      result.qkv = Array.from({ length: L }, (_, l) => ({
        q: o.qkv.subarray(at(l), at(l) + qw), k: o.qkv.subarray(at(l) + qw, at(l) + qw + kw),
        v: o.qkv.subarray(at(l) + qw + kw, at(l + 1)), scale: attentionScales[l],
      }));
    }
    return result;
  }

  /**
   * forward() as a promise: on the workers for a model placed on them (the calling thread stays free), else on
   * this thread.
   */
  async forwardAsync(ids, opts = {}) {
    const fn = 'Model.forward', e = this.#engine(fn);
    if (e.threads === 1) return this.forward(ids, opts);
    const { tokens, wantAttention, wantQkv } = this.#forwardArgs(fn, ids, opts);
    try {
      return await e.forward(fn, tokens, wantAttention, wantQkv);
    } catch (err) {
      throw this.#disposed ? this.#goneError(fn) : err;
    }
  }

  // generate's and stream's arguments checked; the options with the defaults filled in.
  #plan(fn, prompt, opts) {
    this.#engine(fn);
    const ids = this.#ids(fn, 'prompt', prompt);
    if (opts === undefined) throw new TypeError(`${fn}: options with maxTokens are required, got undefined`);
    options(fn, opts);
    const { onToken, ...rest } = opts;
    checkKeys(fn, rest, GENERATE_KEYS);
    if (onToken !== undefined && typeof onToken !== 'function') throw new TypeError(`${fn}: onToken must be a function, got ${describe(onToken)}`);
    if (rest.maxTokens === undefined) throw new TypeError(`${fn}: maxTokens is required, got undefined`);
    const d = this.#config.defaults;
    const num = (name, fallback) => {
      const v = rest[name] === undefined ? fallback : rest[name];
      if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
      return v;
    };
    const plan = {
      ids, onToken,
      maxTokens: num('maxTokens'), temperature: num('temperature', d.temperature), topK: num('topK', d.topK),
      topP: num('topP', d.topP), seed: num('seed', Math.floor(Math.random() * 2 ** 53)),
      stopIds: this.#config.eos, stopStrings: [], signal: rest.signal,
    };
    if (rest.signal !== undefined && (rest.signal === null || typeof rest.signal !== 'object' || typeof rest.signal.aborted !== 'boolean'))
      throw new TypeError(`${fn}: signal must be an AbortSignal, got ${describe(rest.signal)}`);
    if (rest.stop !== undefined) {
      const list = Array.isArray(rest.stop) ? rest.stop : [rest.stop];
      const at = (i) => (Array.isArray(rest.stop) ? `stop[${i}]` : 'stop');  // named as given, strings and ids mixed
      list.forEach((s, i) => {
        if (typeof s !== 'string') int32(fn, at(i), s);
        // Every text contains '': it would end the generation at its first token.
        else if (s === '') throw new RangeError(`${fn}: ${at(i)} is an empty string, which every text contains; give the text to stop at`);
      });
      plan.stopIds = list.filter((s) => typeof s !== 'string');
      plan.stopStrings = list.filter((s) => typeof s === 'string');
      plan.stopNames = list.map((s, i) => (typeof s === 'string' ? null : at(i))).filter((name) => name !== null);
      if (plan.stopStrings.length && !this.#tokenizer)
        throw new TypeError(`${fn}: stop strings need a tokenizer, and this model was loaded without one: give stop token ids`);
    }
    return plan;
  }

  // The engine names a bad stop id by its index among the ids it was sent (stop[k]); the caller's list may mix
  // strings in, or be one id: the error names the entry as given.
  #stopError(fn, plan, err) {
    const prefix = `${fn}: stop[`;
    if (!(err instanceof RangeError) || !plan.stopNames || !err.message.startsWith(prefix)) return err;
    const k = /^(\d+)\]/.exec(err.message.slice(prefix.length));
    const name = k && plan.stopNames[Number(k[1])];
    return name ? new RangeError(`${fn}: ${name}${err.message.slice(prefix.length + k[0].length)}`) : err;
  }

  // This thread's engine: the prompt through the model (begin), then one token per next().
  #localSteps(fn, plan) {
    const { calls: { lmModelBegin: begin, lmModelNext: next, on }, handle: h } = this.#e;
    const d = on(begin, h), { F } = begin;
    d[F.max_tokens] = plan.maxTokens, d[F.temperature] = plan.temperature, d[F.top_k] = plan.topK, d[F.top_p] = plan.topP;
    d[F.seed] = plan.seed;
    begin.call(fn, d, { prompt: plan.ids, stop: plan.stopIds.length ? Int32Array.from(plan.stopIds) : undefined });
    return () => {
      const step = on(next, this.#engine(fn).handle);
      next.call(fn, step);
      return { token: step[next.F.token], done: step[next.F.active] !== 1 };
    };
  }

  async *#tokens(fn, plan) {
    const e = this.#engine(fn);
    if (plan.signal?.aborted) throw abortError(plan.signal);
    const epoch = ++this.#epoch;
    // The workers' steps: the first runs the prompt and gives the first token, each next one more.
    const workerStep = async (first) => {
      try {
        return await (first ? e.begin(fn, plan) : e.next(fn));
      } catch (err) {
        if (this.#disposed) throw this.#goneError(fn);
        throw first ? this.#stopError(fn, plan, err) : err;
      }
    };
    let next = null;
    try {
      if (e.threads === 1) next = this.#localSteps(fn, plan);
    } catch (err) {
      throw this.#stopError(fn, plan, err);
    }
    const text = this.#tokenizer ? generatedText(this.#tokenizer, plan.ids) : null;
    for (let index = 0; ; ++index) {
      const { token, done } = next ? next() : await workerStep(index === 0);
      const soFar = text?.add(token) ?? '';
      const stopString = plan.stopStrings.length > 0 && plan.stopStrings.some((s) => soFar.includes(s));
      plan.stoppedByString = stopString;
      yield { id: token, index, text: text?.piece(done || stopString), last: done || stopString };
      if (done || stopString) return;
      if (next) await nextTask();
      if (this.#disposed) throw this.#goneError(fn);
      if (epoch !== this.#epoch) throw new Error(`${fn}: another generate() or stream() on this model started; this one ended`);
      if (plan.signal?.aborted) throw abortError(plan.signal);
    }
  }

  /**
   * Tokens one at a time as an async iterator: `for await (const t of model.stream(prompt, { maxTokens }))`.
   * Types are checked now; values by the engine at the first step, where the prompt runs through the model.
   */
  stream(prompt, opts) {
    const fn = 'Model.stream';
    const plan = this.#plan(fn, prompt, opts);
    if (plan.onToken) throw new TypeError(`${fn}: onToken is generate()'s option; stream() yields each token`);
    return this.#tokens(fn, plan);
  }

  /** All tokens at once (each also passed to onToken as it comes). */
  async generate(prompt, opts) {
    const fn = 'Model.generate';
    const plan = this.#plan(fn, prompt, opts);
    const tokens = [];
    let last, text = '';
    for await (const t of this.#tokens(fn, plan)) {
      tokens.push(t.id);
      last = t;
      if (this.#tokenizer) text += t.text;
      plan.onToken?.(t);
    }
    const ids = Int32Array.from(tokens);
    const stopped = plan.stopIds.includes(last.id) || plan.stoppedByString;
    const result = { tokens: ids, reason: stopped ? 'stop' : 'maxTokens' };
    if (this.#tokenizer) result.text = text;  // the pieces together: what the tokens add to the prompt's text
    return result;
  }

  /**
   * Each worker's share of a model placed on workers, as the workers count it now: { rank, memoryBytes (what the
   * shard holds), weightBytes, wasmBytes (the worker's whole wasm memory), phases (steps' phases it ran), plan }.
   * For a model on the calling thread: one entry, rank 0, that thread's.
   */
  async workers() {
    const fn = 'Model.workers', e = this.#engine(fn);
    if (e.threads > 1) return e.workers(fn);
    const { memoryBytes, weightBytes, phases } = e.info(fn);
    return [{ rank: 0, memoryBytes, weightBytes, wasmBytes: e.m.HEAPU8.byteLength, phases, plan: this.#split.ranks[0] }];
  }

  // For bench/lm-decode.mjs and bench/lm-threads.mjs: reads every weight byte once, the plainest way (what a decode
  // step must stream); on workers, all of them at once: a promise of { bytes, ms }.
  [Symbol.for('attnlab.readWeights')]() {
    const e = this.#engine('Model.readWeights');
    if (e.threads > 1) return e.read('Model.readWeights');
    const { lmModelReadWeights: call, on } = e.calls, d = on(call, e.handle);
    call.call('Model.readWeights', d);
    return d[call.F.checksum];
  }

  // For tests: ends one of the model's workers as if it had crashed.
  [Symbol.for('attnlab.killWorker')](rank) {
    this.#engine('Model.killWorker').kill(rank);
  }

  /** Frees the model's wasm memory now (every worker's share; it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    if (this.#disposed) return;
    registry?.unregister(this);
    this.#disposed = true;
    this.#e.free();
    this.#live.count -= 1;
    this.#tokenizer?.dispose();
    ++this.#epoch;
  }

  // lab.dispose(): the workers that hold this model are ending.
  [LAB_DISPOSED]() {
    if (this.#disposed) return;
    this.#gone = 'this model was disposed with its lab (lab.dispose() ended the workers that held it)';
    this.dispose();
  }
}

// model.split: { threads, exchange, ranks: [{ rank, heads, kvHeads, ffn, vocab, positions }] } ([begin, end) ranges).
function splitOf(e) {
  const c = e.config;
  if (e.threads === 1) {
    return { threads: 1, exchange: 'none', ranks: [{ rank: 0, heads: [0, c.heads], kvHeads: [0, c.kvHeads], ffn: [0, c.ffnDim],
      vocab: [0, c.vocabSize], positions: [0, c.modelType === 'gpt2' ? c.context : 0] }] };
  }
  return { threads: e.threads, exchange: e.exchange, ranks: e.plans.map(({ rank, heads, kvHeads, ffn, vocab, positions }) => ({ rank, heads, kvHeads, ffn, vocab, positions })) };
}

function deepFreeze(o) {
  for (const v of Object.values(o)) if (v !== null && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}

// The lab's workers, for models placed on them (lab-threads.js sets it): { pool, closed(), stats } (stats: the
// lab's threadStats, which counts the workers' steps).
export const USE_POOL = Symbol('attnlab.modelThreads');

// The workers' side of models (lm-workers.js, lm-exchange.js), needed only for a model placed on workers: each
// entry says how to get it — attnlab as a dynamic import (a bundler makes it a chunk of its own), the inline
// entries as a static one (no dynamic import anywhere in their graph, so Rollup's output.file still makes one file).
let lmWorkers = () => Promise.reject(new Error('attnlab: this entry cannot place models on workers'));
export function setLmWorkers(load) {
  lmWorkers = load;
}

/** lab.loadModel for a lab on module `m`; `live` counts the models alive. */
export function makeLoadModel(m, live) {
  let threads = null;  // { pool, closed(), stats, onDispose(end) }, from lab-threads.js
  // The models placed on the lab's workers, which end with them (lab.dispose()): held weakly, so that one dropped
  // without dispose() is still collected and freed by the registry.
  const placed = new Set();
  const hold = typeof WeakRef === 'function' ? (model) => new WeakRef(model) : (model) => ({ deref: () => model });
  const place = (model) => {
    for (const ref of placed) if (ref.deref()?.disposed !== false) placed.delete(ref);
    placed.add(hold(model));
    return model;
  };
  async function loadModel(given, opts = {}) {
    const fn = 'loadModel';
    options(fn, opts);
    checkKeys(fn, opts, ['onProgress', 'signal', 'threads', 'exchange']);
    const { onProgress, signal } = opts;
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError(`${fn}: onProgress must be a function, got ${describe(onProgress)}`);
    if (signal !== undefined && (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean'))
      throw new TypeError(`${fn}: signal must be an AbortSignal, got ${describe(signal)}`);
    const pool = threads?.pool;
    const count = placement(fn, opts, pool);
    if (opts.exchange !== undefined && opts.exchange !== 'shared' && opts.exchange !== 'message')
      throw new TypeError(`${fn}: exchange must be 'shared' or 'message', got ${describe(opts.exchange)}`);
    const src = source(fn, given, signal);
    const labGone = () => new Error(`attnlab: this lab was disposed${threads.pool ? '; its workers are gone' : ''} (loadModel needs a new init())`);
    if (threads?.closed()) throw labGone();
    if (count > 1) {
      const { WorkerEngine, workersSink, canShare } = await lmWorkers();
      const exchange = opts.exchange ?? (canShare() ? 'shared' : 'message');
      if (exchange === 'shared' && !canShare())
        throw new Error(`${fn}: exchange 'shared' needs SharedArrayBuffer, which this page cannot share with workers (it is not cross-origin isolated)`);
      // On the workers: their own module runs it when it has the engine (a GPT lab); else they get the module with it.
      const sink = workersSink(pool, pool.members.slice(0, count), fn, { exchange, lmModule: () => compiledModelModule(m, fn) });
      const { placed, tokenizerFiles } = await streamModel(fn, src, sink, { onProgress, signal });
      const engine = new WorkerEngine(pool, placed, threads.stats);
      let tokenizer;
      try {
        tokenizer = await loadTokenizer(fn, () => moduleWithModels(m, fn), tokenizerFiles, (largest, file) => engine.checkVocabulary(largest, file));
      } catch (e) {
        engine.free();
        throw e;
      }
      if (threads.closed()) {  // (disposed since the check above: the model would not be among those it ended)
        engine.free();
        tokenizer?.dispose();
        throw labGone();
      }
      return place(new Model(engine, tokenizer, live));
    }
    const mm = await moduleWithModels(m, fn);
    const { handle, tokenizerFiles } = await streamModel(fn, src, engineSink(mm, fn), { onProgress, signal });
    let tokenizer;
    try {
      tokenizer = await loadTokenizer(fn, () => mm, tokenizerFiles, (largest, file) => {
        const { lmModelCheckVocabulary: check, on } = callsOf(mm), d = on(check, handle);
        d[check.F.largest] = largest;
        check.call(fn, d, { file: new TextEncoder().encode(file) });
      });
    } catch (e) {
      const c = callsOf(mm);
      c.lmModelFree.call(fn, c.on(c.lmModelFree, handle));
      throw e;
    }
    return new Model(localEngine(mm, handle), tokenizer, live);
  }
  loadModel[USE_POOL] = (t) => {
    threads = t;
    t.onDispose(() => {
      for (const ref of placed) ref.deref()?.[LAB_DISPOSED]();
      placed.clear();
    });
    return loadModel;
  };
  return loadModel;
}

// loadModel's threads: 1 (this thread) to the pool's size; by default all of the lab's workers.
function placement(fn, opts, pool) {
  const size = pool?.size ?? 1;
  if (opts.threads === undefined) return size;
  const t = opts.threads;
  if (typeof t !== 'number') throw new TypeError(`${fn}: threads must be a number, got ${describe(t)}`);
  if (!Number.isInteger(t) || t < 1) throw new RangeError(`${fn}: threads must be an integer >= 1, got ${t}`);
  if (t > size)
    throw new RangeError(pool ? `${fn}: threads = ${t} is more than the lab's ${size} workers (init({ threads }))`
      : `${fn}: threads = ${t} needs a lab with workers: init({ threads: ${t} }) (this lab runs on the calling thread alone)`);
  return t;
}
