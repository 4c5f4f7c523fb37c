// lab.loadModel: a real decoder-only checkpoint (GPT-2, Llama, Qwen2, Mistral) in the engine's wasm memory. The
// engine validates the files and every call (lm/ in the core); this file reads and moves bytes (load-model.js),
// checks types, turns token streams into an async iterator, and frees the model on dispose() or when the Model
// object is garbage-collected. The language-model engine is in the modules with the small GPT; a lab running the
// operators' module loads that module the first time it needs it (model-module.js).
import { checkKeys, describe, flag, int32s, options } from './checks.js';
import { arena, checkKind } from './memory.js';
import { source, streamModel } from './load-model.js';
import { moduleWithModels } from './model-module.js';
import { loadTokenizerFrom } from './tokenizer.js';

// The descriptors' field names (lm_call.h), per module: { loader: [...], forward: [...], generate: [...] }.
const fieldCache = new WeakMap();
function fieldsOf(m) {
  let f = fieldCache.get(m);
  if (!f) {
    f = Object.fromEntries(m.lmCallFields().split(';').map((part) => {
      const [name, list] = part.split(':');
      return [name, list.split(',').filter(Boolean)];
    }));
    fieldCache.set(m, f);
  }
  return f;
}

// A dropped Model's engine object is freed here; `held` is { m, handle, live }.
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => {
    held.m.lmModelFree(held.handle);
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
    checkKind(m, 'loadModel', m.lmModelCheckVocabulary(handle, tokenizer.vocabSize - 1, file));
  } catch (e) {
    tokenizer.dispose();
    throw e;
  }
  return tokenizer;
}

const GENERATE_KEYS = ['maxTokens', 'temperature', 'topK', 'topP', 'seed', 'stop', 'signal'];

class Model {
  #m;
  #h;
  #live;
  #config;
  #tokenizer;
  #epoch = 0;  // bumped by every generation: an older iterator then ends

  constructor(m, handle, tokenizer, live) {
    this.#m = m;
    this.#h = handle;
    this.#live = live;
    this.#tokenizer = tokenizer;
    this.#config = deepFreeze(JSON.parse(m.lmModelConfig(handle)));
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
  /** Bytes of wasm memory the model holds: weights, KV caches, activations. */
  get memoryBytes() {
    return this.#m.lmModelMemory(this.#handle('Model.memoryBytes'));
  }
  /** Bytes of the weights alone, as stored (F16 and BF16 matrices at 2 bytes a weight). */
  get weightBytes() {
    return this.#m.lmModelWeightBytes(this.#handle('Model.weightBytes'));
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
    const fn = 'Model.forward', h = this.#handle(fn), m = this.#m;
    const tokens = this.#ids(fn, 'ids', ids);
    options(fn, opts);
    checkKeys(fn, opts, ['attention']);
    const wantAttention = flag(fn, 'attention', opts.attention);
    const { vocabSize: V, layers: L, heads: H } = this.#config;
    const n = tokens.length, F = fieldsOf(m).forward;
    const a = arena(m, fn, [
      { name: 'call', length: F.length, type: 'f64' },
      { name: 'ids', length: n, data: tokens, type: 'i32' },
      { name: 'logits', length: n * V },
      { name: 'attention', length: wantAttention ? L * H * n * n : 0 },
    ]);
    try {
      const call = a.view(0);
      const set = (field, value) => (call[F.indexOf(field)] = value);
      set('model', h), set('ids', a.at(1)), set('ids_len', n);
      set('logits', a.at(2)), set('logits_len', n * V), set('attention', a.at(3)), set('attention_len', wantAttention ? L * H * n * n : 0);
      checkKind(m, fn, m.lmModelForward(a.at(0)));
      const result = { logits: a.read(2), shape: [n, V] };
      if (wantAttention) {
        const all = a.view(3);
        result.attention = Array.from({ length: L }, (_, l) =>
          Array.from({ length: H }, (_, hh) => all.slice((l * H + hh) * n * n, (l * H + hh + 1) * n * n)));
      }
      return result;
    } finally {
      a.free();
    }
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
    const m = this.#m, h = this.#handle(fn), F = fieldsOf(m).generate;
    if (plan.signal?.aborted) throw abortError(plan.signal);
    const epoch = ++this.#epoch;
    const a = arena(m, fn, [
      { name: 'call', length: F.length, type: 'f64' },
      { name: 'prompt', length: plan.ids.length, data: plan.ids, type: 'i32' },
      { name: 'stop', length: plan.stopIds.length, data: Int32Array.from(plan.stopIds), type: 'i32' },
    ]);
    try {
      const call = a.view(0);
      const set = (field, value) => (call[F.indexOf(field)] = value);
      set('model', h), set('prompt', a.at(1)), set('prompt_len', plan.ids.length), set('max_tokens', plan.maxTokens);
      set('temperature', plan.temperature), set('top_k', plan.topK), set('top_p', plan.topP), set('seed', plan.seed);
      set('stop', a.at(2)), set('stop_len', plan.stopIds.length);
      checkKind(m, fn, m.lmModelBegin(a.at(0)));
    } finally {
      a.free();
    }
    const generated = [];
    let text = '';
    for (let index = 0; ; ++index) {
      const token = m.lmModelNext(this.#handle(fn));
      if (token < 0) checkKind(m, fn, 1);
      const more = m.lmModelActive(h);
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
    return this.#m.lmModelReadWeights(this.#handle('Model.readWeights'));
  }

  /** Frees the model's wasm memory now (it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    if (!this.#h) return;
    registry?.unregister(this);
    this.#m.lmModelFree(this.#h);
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
    const { handle, tokenizerFiles } = await streamModel(mm, fn, src, { onProgress, signal, fields: fieldsOf(mm).loader });
    let tokenizer;
    try {
      tokenizer = await loadTokenizer(mm, handle, tokenizerFiles);
    } catch (e) {
      mm.lmModelFree(handle);
      throw e;
    }
    return new Model(mm, handle, tokenizer, live);
  };
}
