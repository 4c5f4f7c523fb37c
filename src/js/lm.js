// lab.loadModel: a real decoder-only checkpoint (GPT-2, Llama, Qwen2, Mistral) in the engine's wasm memory. The
// engine validates the files and every call (lm/ in the core); this file reads and moves bytes (load-model.js),
// checks types, turns token streams into an async iterator, and frees the model on dispose() or when the Model
// object is garbage-collected. The language-model engine is in the modules with the small GPT; a lab running the
// operators' module loads that module the first time it needs it (model-module.js).
import { engineCall } from './call.js';
import { checkKeys, describe, flag, int32s, options } from './checks.js';
import { source, streamModel } from './load-model.js';
import { moduleWithModels } from './model-module.js';
import { loadTokenizerFrom } from './tokenizer.js';

// The model's engine calls on module m (src/wasm/lm_bindings.cpp), each taking the model's handle.
const callCache = new WeakMap();
function callsOf(m) {
  let c = callCache.get(m);
  if (!c) {
    c = {};
    for (const name of ['lmModelConfig', 'lmModelInfo', 'lmModelForward', 'lmModelBegin', 'lmModelNext', 'lmModelReadWeights', 'lmModelFree'])
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

// A dropped Model's engine object is freed here; `held` is { m, handle, live }.
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => {
    const c = callsOf(held.m);
    c.lmModelFree.call('Model.dispose', c.on(c.lmModelFree, held.handle));
    held.live.count -= 1;
  })
  : null;

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
// file name → bytes), in the model's module; the engine then checks that its largest id is a row of the embeddings
// (a tokenizer may have fewer ids than the embeddings have rows, never more). A folder without tokenizer files loads
// without one (token ids in and out). The tokenizer belongs to the model: Model.dispose() frees it too.
async function loadTokenizer(m, handle, files) {
  if (!files['tokenizer.json'] && !(files['vocab.json'] && files['merges.txt'])) return null;
  const tokenizer = await loadTokenizerFrom(m, files, null);
  try {
    const file = files['tokenizer.json'] ? 'tokenizer.json' : 'vocab.json';
    const check = engineCall(m, 'lmModelCheckVocabulary'), d = check.descriptor();
    d[check.F.model] = handle, d[check.F.largest] = tokenizer.vocabSize - 1;
    check.call('loadModel', d, { file: new TextEncoder().encode(file) });
  } catch (e) {
    tokenizer.dispose();
    throw e;
  }
  return tokenizer;
}

const GENERATE_KEYS = ['maxTokens', 'temperature', 'topK', 'topP', 'seed', 'stop', 'signal'];

class Model {
  #h;
  #live;
  #config;
  #tokenizer;
  #epoch = 0;  // bumped by every generation: an older iterator then ends

  #calls;

  constructor(m, handle, tokenizer, live) {
    this.#calls = callsOf(m);
    this.#h = handle;
    this.#live = live;
    this.#tokenizer = tokenizer;
    const { lmModelConfig: config, on } = this.#calls;
    this.#config = deepFreeze(JSON.parse(new TextDecoder().decode(config.call('Model.config', on(config, handle)).json)));
    live.count += 1;
    registry?.register(this, { m, handle, live }, this);
  }

  #handle(fn) {
    if (!this.#h) throw new Error(`${fn}: this model was disposed`);
    return this.#h;
  }

  /** The checkpoint's configuration as the engine read it (config.json, generation_config.json). */
  get config() {
    return this.#config;
  }
  /** The tokenizer, or null when the model was loaded without one. */
  get tokenizer() {
    return this.#tokenizer;
  }
  // The model's counts (lmModelInfo's fields).
  #info(fn) {
    const { lmModelInfo: info, on } = this.#calls, d = on(info, this.#handle(fn));
    info.call(fn, d);
    return { memoryBytes: d[info.F.memory_bytes], weightBytes: d[info.F.weight_bytes] };
  }
  /** Bytes of wasm memory the model holds: weights, KV caches, activations. */
  get memoryBytes() {
    return this.#info('Model.memoryBytes').memoryBytes;
  }
  /** Bytes of the weights alone, as stored (F16 and BF16 matrices at 2 bytes a weight). */
  get weightBytes() {
    return this.#info('Model.weightBytes').weightBytes;
  }
  get disposed() {
    return !this.#h;
  }

  // Token ids from an Int32Array, an array of integers, or a string (through the tokenizer).
  #ids(fn, name, v) {
    if (typeof v === 'string') {
      if (!this.#tokenizer) throw new TypeError(`${fn}: ${name} is a string, but this model was loaded without a tokenizer: pass token ids (an Int32Array or an array of integers)`);
      return this.#tokenizer.encode(v);
    }
    return int32s(fn, name, v);
  }

  forward(ids, opts = {}) {
    const fn = 'Model.forward', h = this.#handle(fn);
    const tokens = this.#ids(fn, 'ids', ids);
    options(fn, opts);
    checkKeys(fn, opts, ['attention']);
    const { lmModelForward: call, on } = this.#calls, d = on(call, h);
    d[call.F.want_attention] = flag(fn, 'attention', opts.attention);
    const o = call.call(fn, d, { ids: tokens });
    const { vocabSize: V, layers: L, heads: H } = this.#config;
    const n = tokens.length;
    const result = { logits: o.logits, shape: [n, V] };
    if (o.attention) {
      result.attention = Array.from({ length: L }, (_, l) =>
        Array.from({ length: H }, (_, hh) => o.attention.slice((l * H + hh) * n * n, (l * H + hh + 1) * n * n)));
    }
    return result;
  }

  // generate's and stream's arguments checked; the options with the defaults filled in.
  #plan(fn, prompt, opts) {
    this.#handle(fn);
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
      plan.stopIds = list.filter((s) => typeof s !== 'string');
      plan.stopStrings = list.filter((s) => typeof s === 'string');
      plan.stopIds = Array.from(int32s(fn, 'stop', plan.stopIds));
      if (plan.stopStrings.length && !this.#tokenizer)
        throw new TypeError(`${fn}: stop strings need a tokenizer, and this model was loaded without one: give stop token ids`);
    }
    return plan;
  }

  async *#tokens(fn, plan) {
    const h = this.#handle(fn), { lmModelBegin: begin, lmModelNext: next, on } = this.#calls;
    if (plan.signal?.aborted) throw abortError(plan.signal);
    const epoch = ++this.#epoch;
    const d = on(begin, h), { F } = begin;
    d[F.max_tokens] = plan.maxTokens, d[F.temperature] = plan.temperature, d[F.top_k] = plan.topK, d[F.top_p] = plan.topP;
    d[F.seed] = plan.seed;
    begin.call(fn, d, { prompt: plan.ids, stop: plan.stopIds.length ? Int32Array.from(plan.stopIds) : undefined });
    const generated = [];
    let text = '';
    for (let index = 0; ; ++index) {
      const step = on(next, this.#handle(fn));
      next.call(fn, step);
      const token = step[next.F.token], more = step[next.F.active] === 1;
      generated.push(token);
      let piece;
      if (this.#tokenizer) {  // the text so far, decoded whole: a piece may complete a character the last one began
        const all = this.#tokenizer.decode(Int32Array.from(generated));
        piece = all.slice(text.length);
        text = all;
      }
      const stopString = plan.stopStrings.length > 0 && plan.stopStrings.some((s) => text.includes(s));
      plan.stoppedByString = stopString;
      yield { id: token, index, text: piece, last: !more || stopString };
      if (!more || stopString) return;
      await nextTask();
      if (epoch !== this.#epoch) throw new Error(`${fn}: another generate() or stream() on this model started; this one ended`);
      if (plan.signal?.aborted) throw abortError(plan.signal);
    }
  }

  /**
   * Tokens one at a time as an async iterator: `for await (const t of model.stream(prompt, { maxTokens }))`.
   * The options are checked now; the prompt runs through the model at the first step.
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
    let last;
    for await (const t of this.#tokens(fn, plan)) {
      tokens.push(t.id);
      last = t;
      plan.onToken?.(t);
    }
    const ids = Int32Array.from(tokens);
    const stopped = plan.stopIds.includes(last.id) || plan.stoppedByString;
    const result = { tokens: ids, reason: stopped ? 'stop' : 'maxTokens' };
    if (this.#tokenizer) result.text = this.#tokenizer.decode(ids);
    return result;
  }

  // For bench/lm-decode.mjs: reads every weight byte once, the plainest way (what a decode step must stream).
  [Symbol.for('attnlab.readWeights')]() {
    const { lmModelReadWeights: call, on } = this.#calls, d = on(call, this.#handle('Model.readWeights'));
    call.call('Model.readWeights', d);
    return d[call.F.checksum];
  }

  /** Frees the model's wasm memory now (it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    if (!this.#h) return;
    registry?.unregister(this);
    this.#calls.lmModelFree.call('Model.dispose', this.#calls.on(this.#calls.lmModelFree, this.#h));
    this.#h = 0;
    this.#live.count -= 1;
    this.#tokenizer?.dispose();
    ++this.#epoch;
  }
}

function deepFreeze(o) {
  for (const v of Object.values(o)) if (v !== null && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}

/** lab.loadModel for a lab on module `m`; `live` counts the models alive. */
export function makeLoadModel(m, live) {
  return async function loadModel(given, opts = {}) {
    const fn = 'loadModel';
    options(fn, opts);
    checkKeys(fn, opts, ['onProgress', 'signal']);
    const { onProgress, signal } = opts;
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError(`${fn}: onProgress must be a function, got ${describe(onProgress)}`);
    if (signal !== undefined && (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean'))
      throw new TypeError(`${fn}: signal must be an AbortSignal, got ${describe(signal)}`);
    const src = source(fn, given, signal);
    const mm = await moduleWithModels(m, fn);
    const { handle, tokenizerFiles } = await streamModel(mm, fn, src, { onProgress, signal });
    let tokenizer;
    try {
      tokenizer = await loadTokenizer(mm, handle, tokenizerFiles);
    } catch (e) {
      const c = callsOf(mm);
      c.lmModelFree.call(fn, c.on(c.lmModelFree, handle));
      throw e;
    }
    return new Model(mm, handle, tokenizer, live);
  };
}
