// lab.createGPT and lab.loadGPT: a small GPT (nanoGPT's architecture) that lives in wasm memory, trains with
// AdamW and generates with its KV cache. The engine validates every size and value; this file checks types and
// unknown options, moves tokens and tensors in and out of wasm memory, and frees the model on dispose() or when
// the GPT object is garbage-collected.
import { checkKeys, describe, flag, isF32, options, size } from './checks.js';
import { arena, check } from './memory.js';
import { trainStepAsync } from './gpt-async.js';

/** lab-threads.js gives every model its lab's workers through this method. */
export const USE_THREADS = Symbol('attnlab.threads');

const CONFIG_KEYS = ['vocabSize', 'context', 'dModel', 'heads', 'kvHeads', 'layers', 'mlp', 'position', 'tied', 'bias', 'seed'];
const TRAIN_KEYS = ['lr', 'weightDecay', 'beta1', 'beta2', 'eps', 'gradClip'];
// PyTorch's torch.optim.AdamW defaults; gradClip 0 = no clipping.
const TRAIN_DEFAULTS = { lr: 1e-3, weightDecay: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClip: 0 };

// The engine's handle of a collected GPT is deleted here (it holds the model's wasm memory).
const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((handle) => handle.delete()) : null;

function isI32(v) {
  return v instanceof Int32Array || Object.prototype.toString.call(v) === '[object Int32Array]';
}

function int32s(fn, name, v) {
  if (!isI32(v)) throw new TypeError(`${fn}: ${name} must be an Int32Array, got ${describe(v)}`);
  return v;
}

function number(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  return v;
}

// A non-negative integer (0 allowed), below 2³¹.
function count(fn, name, v) {
  number(fn, name, v);
  if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) throw new RangeError(`${fn}: ${name} must be an integer >= 0, got ${v}`);
  return v;
}

// trainStep's arguments checked (types, unknown options, lengths); its options with the defaults filled in.
function trainArgs(fn, tokens, targets, opts = {}) {
  int32s(fn, 'tokens', tokens);
  int32s(fn, 'targets', targets);
  options(fn, opts);
  checkKeys(fn, opts, TRAIN_KEYS);
  const o = { ...TRAIN_DEFAULTS };
  for (const key of TRAIN_KEYS) if (opts[key] !== undefined) o[key] = number(fn, key, opts[key]);
  if (targets.length !== tokens.length) throw new RangeError(`${fn}: targets must have tokens.length = ${tokens.length} elements, got ${targets.length}`);
  return o;
}

function configArgs(fn, config) {
  options(fn, config);
  checkKeys(fn, config, CONFIG_KEYS);
  for (const key of ['vocabSize', 'context', 'dModel', 'heads', 'layers'])
    if (config[key] === undefined) throw new TypeError(`${fn}: config.${key} is required, got undefined`);
  const c = {
    vocabSize: size(fn, 'vocabSize', config.vocabSize),
    context: size(fn, 'context', config.context),
    dModel: size(fn, 'dModel', config.dModel),
    heads: size(fn, 'heads', config.heads),
    kvHeads: config.kvHeads === undefined ? 0 : size(fn, 'kvHeads', config.kvHeads),
    layers: size(fn, 'layers', config.layers),
    mlp: config.mlp === undefined ? true : flag(fn, 'mlp', config.mlp),
    tied: config.tied === undefined ? true : flag(fn, 'tied', config.tied),
    bias: config.bias === undefined ? true : flag(fn, 'bias', config.bias),
    position: config.position ?? 'learned',
    seed: config.seed ?? 0,
  };
  if (typeof c.position !== 'string') throw new TypeError(`${fn}: position must be 'learned' or 'rope', got ${describe(c.position)}`);
  if (c.position !== 'learned' && c.position !== 'rope') throw new RangeError(`${fn}: position must be 'learned' or 'rope', got ${describe(c.position)}`);
  number(fn, 'seed', c.seed);
  if (!Number.isInteger(c.seed) || c.seed < 0 || c.seed > 0xffffffff) throw new RangeError(`${fn}: seed must be an integer in 0…4294967295, got ${c.seed}`);
  return c;
}

class GPT {
  #m;
  #h;
  #config;
  #threads; // the lab's { pool, closed() }
  #async;   // trainStepAsync's state (gpt-async.js), from the first call

  [USE_THREADS](threads) {
    this.#threads = threads;
    return this;
  }

  // While a trainStepAsync runs, what would change the weights under it is refused.
  #idle(fn) {
    if (this.#async?.busy) throw new Error(`${fn}: a trainStepAsync is still running on this model; await it first`);
  }

  constructor(m, handle) {
    this.#m = m;
    this.#h = handle;
    const c = handle.config();
    this.#config = Object.freeze({ ...c });
    registry?.register(this, handle, this);
  }

  #handle(fn) {
    if (!this.#h) throw new Error(`GPT.${fn}: this model was disposed`);
    return this.#h;
  }

  /** The model's configuration, defaults filled in. */
  get config() {
    return this.#config;
  }
  get parameterCount() {
    return this.#handle('parameterCount').parameterCount();
  }
  /** AdamW updates applied so far. */
  get steps() {
    return this.#handle('steps').steps();
  }
  /** Bytes of wasm memory the model holds: parameters, gradients, Adam moments, activations, KV cache. */
  get memoryBytes() {
    return this.#handle('memoryBytes').memoryBytes();
  }
  /** The state dict's shapes, as PyTorch has them: `{ name: [rows, cols] | [rows] }`. */
  get shapes() {
    const h = this.#handle('shapes');
    const r = {};
    for (let i = 0; i < h.tensorCount(); ++i) {
      const cols = h.tensorCols(i);
      r[h.tensorName(i)] = cols ? [h.tensorRows(i), cols] : [h.tensorRows(i)];
    }
    return r;
  }

  trainStep(tokens, targets, opts = {}) {
    const fn = 'GPT.trainStep', h = this.#handle('trainStep');
    const o = trainArgs(fn, tokens, targets, opts);
    this.#idle(fn);
    const a = arena(this.#m, fn, [{ name: 'tokens', length: tokens.length }, { name: 'targets', length: targets.length }]);
    try {
      putInts(this.#m, a.at(0), tokens);
      putInts(this.#m, a.at(1), targets);
      check(fn, h.trainStep(a.at(0), a.at(1), tokens.length, this.#config.context, o.lr, o.weightDecay, o.beta1, o.beta2, o.eps, o.gradClip));
      return h.lastLoss();
    } finally {
      a.free();
    }
  }

  /** trainStep with the batch's sequences split across the lab's workers (gpt-async.js). */
  trainStepAsync(tokens, targets, opts = {}) {
    this.#async ??= {
      m: this.#m, config: this.#config, threads: this.#threads, busy: 0, last: null,
      handle: () => this.#h, args: trainArgs, sync: (t, y, o) => this.trainStep(t, y, o),
    };
    return trainStepAsync(this.#async, tokens, targets, opts);
  }

  forward(tokens, opts = {}) {
    const fn = 'GPT.forward', h = this.#handle('forward');
    int32s(fn, 'tokens', tokens);
    options(fn, opts);
    checkKeys(fn, opts, ['batch', 'returnAttention']);
    const batch = opts.batch === undefined ? 1 : size(fn, 'batch', opts.batch);
    const wantAttention = flag(fn, 'returnAttention', opts.returnAttention);
    if (tokens.length === 0 || tokens.length % batch !== 0)
      throw new RangeError(`${fn}: tokens.length must be a positive multiple of batch = ${batch}, got ${tokens.length}`);
    const t = tokens.length / batch, { vocabSize: V, heads: H, layers: L } = this.#config;
    const perLayer = batch * H * t * t;
    const a = arena(this.#m, fn, [
      { name: 'tokens', length: tokens.length },
      { name: 'logits', length: tokens.length * V },
      { name: 'attention', length: wantAttention ? L * perLayer : 0 },
    ]);
    try {
      putInts(this.#m, a.at(0), tokens);
      check(fn, h.forward(a.at(0), tokens.length, t, a.at(1), tokens.length * V, a.at(2), wantAttention ? L * perLayer : 0));
      const result = { logits: a.read(1) };
      if (wantAttention) {
        const all = a.read(2);
        result.attention = Array.from({ length: L }, (_, l) => all.slice(l * perLayer, (l + 1) * perLayer));
      }
      return result;
    } finally {
      a.free();
    }
  }

  generate(prompt, opts) {
    const fn = 'GPT.generate', h = this.#handle('generate');
    int32s(fn, 'prompt', prompt);
    if (opts === undefined) throw new TypeError(`${fn}: options with maxTokens are required, got undefined`);
    options(fn, opts);
    checkKeys(fn, opts, ['maxTokens', 'temperature', 'topK', 'seed']);
    if (opts.maxTokens === undefined) throw new TypeError(`${fn}: maxTokens is required, got undefined`);
    const maxTokens = count(fn, 'maxTokens', opts.maxTokens);
    const temperature = opts.temperature === undefined ? 1 : number(fn, 'temperature', opts.temperature);
    const topK = opts.topK === undefined ? 0 : count(fn, 'topK', opts.topK);
    let seed = opts.seed;
    if (seed === undefined) seed = Math.floor(Math.random() * 2 ** 53);
    else if (typeof seed !== 'number') throw new TypeError(`${fn}: seed must be a number, got ${describe(seed)}`);
    else if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`${fn}: seed must be an integer in 0…2⁵³ − 1, got ${seed}`);
    const a = arena(this.#m, fn, [{ name: 'prompt', length: prompt.length }, { name: 'tokens', length: maxTokens }]);
    try {
      putInts(this.#m, a.at(0), prompt);
      check(fn, h.generate(a.at(0), prompt.length, maxTokens, temperature, topK, seed, a.at(1)));
      return new Int32Array(this.#m.HEAP32.slice(a.at(1) >>> 2, (a.at(1) >>> 2) + maxTokens));
    } finally {
      a.free();
    }
  }

  getWeights() {
    const h = this.#handle('getWeights');
    const r = {};
    for (let i = 0; i < h.tensorCount(); ++i) {
      const rows = h.tensorRows(i), cols = h.tensorCols(i) || 1;
      const a = arena(this.#m, 'GPT.getWeights', [{ name: 'tensor', length: rows * cols }]);
      try {
        h.readTensor(i, a.at(0));
        r[h.tensorName(i)] = a.read(0);
      } finally {
        a.free();
      }
    }
    return r;
  }

  setWeights(weights) {
    const fn = 'GPT.setWeights', h = this.#handle('setWeights');
    this.#idle(fn);
    if (weights === null || typeof weights !== 'object') throw new TypeError(`${fn}: expected an object of { name: Float32Array }, got ${describe(weights)}`);
    const entries = Object.entries(weights);
    for (const [name, v] of entries) if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
    const names = entries.map(([name]) => new TextEncoder().encode(name));
    // Names, tensors and a table of (name address, name bytes, data address, data length) in one allocation.
    const parts = [{ name: 'table', length: 4 * entries.length }];
    names.forEach((n, i) => parts.push({ name: entries[i][0], length: Math.ceil(n.length / 4) }));
    entries.forEach(([name, v]) => parts.push({ name, length: v.length, data: v }));
    const a = arena(this.#m, fn, parts);
    try {
      const table = new Uint32Array(4 * entries.length);
      entries.forEach(([, v], i) => {
        const nameAt = a.at(1 + i), dataAt = a.at(1 + entries.length + i);
        this.#m.HEAPU8.set(names[i], nameAt);
        table.set([nameAt, names[i].length, dataAt, v.length], 4 * i);
      });
      this.#m.HEAPU32.set(table, a.at(0) >>> 2);
      check(fn, h.setWeights(a.at(0), entries.length));
    } finally {
      a.free();
    }
  }

  toSafetensors() {
    const fn = 'GPT.toSafetensors', h = this.#handle('toSafetensors');
    const bytes = h.safetensorsSize();
    const a = arena(this.#m, fn, [{ name: 'file', length: Math.ceil(bytes / 4) }]);
    try {
      h.writeSafetensors(a.at(0), bytes);
      return this.#m.HEAPU8.slice(a.at(0), a.at(0) + bytes);
    } finally {
      a.free();
    }
  }

  /** Frees the model's wasm memory now (it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    if (!this.#h) return;
    registry?.unregister(this);
    this.#h.delete();
    this.#h = null;
  }
}

// Token ids go in as their int32 bits (memory.js's arena copies through the float view, which would convert them).
function putInts(m, at, ints) {
  if (ints.length) m.HEAP32.set(ints, at >>> 2);
}

// Without init({ gpt: true }) the lab has no model: both entry points say how to get one.
function needsGpt(fn) {
  return () => {
    throw new Error(`${fn}: this lab was loaded without the small GPT; load it with init({ gpt: true })`);
  };
}

export function makeGPT(m, enabled) {
  if (!enabled) return { createGPT: needsGpt('createGPT'), loadGPT: needsGpt('loadGPT') };
  return {
    createGPT(config) {
      const fn = 'createGPT';
      const c = configArgs(fn, config);
      const handle = new m.GPTModel();
      try {
        check(fn, handle.create(c.vocabSize, c.context, c.dModel, c.heads, c.kvHeads, c.layers, c.mlp, c.position === 'rope', c.tied, c.bias, c.seed));
      } catch (e) {
        handle.delete();
        throw e;
      }
      return new GPT(m, handle);
    },
    loadGPT(bytes) {
      const fn = 'loadGPT';
      let view;
      if (bytes instanceof ArrayBuffer) view = new Uint8Array(bytes);
      else if (bytes instanceof Uint8Array || Object.prototype.toString.call(bytes) === '[object Uint8Array]') view = bytes;
      else throw new TypeError(`${fn}: bytes must be a Uint8Array or an ArrayBuffer, got ${describe(bytes)}`);
      const handle = new m.GPTModel();
      const a = arena(m, fn, [{ name: 'bytes', length: Math.ceil(view.length / 4) }]);
      try {
        m.HEAPU8.set(view, a.at(0));
        check(fn, handle.load(a.at(0), view.length));
      } catch (e) {
        handle.delete();
        throw e;
      } finally {
        a.free();
      }
      return new GPT(m, handle);
    },
  };
}
