// lab.createGPT and lab.loadGPT: a small GPT (nanoGPT's architecture) that lives in wasm memory, trains with
// AdamW and generates with its KV cache. The engine validates every size and value; this file checks types and
// unknown options, moves tokens and tensors in and out of wasm memory, and frees the model on dispose() or when
// the GPT object is garbage-collected.
import { engineCall, option } from './call.js';
import { checkKeys, describe, flag, int32Array, isF32, number, optionalNumber, options, required } from './checks.js';
import { dropReplicas, killWorker, modelChanged, syncModel, trainStepAsync } from './gpt-async.js';
import { trainArgs } from './gpt-train-args.js';

/** lab-threads.js gives every model its lab's workers through this method. */
export const USE_THREADS = Symbol('attnlab.threads');

export const GPT_CONFIG_OPTIONS = ['vocabSize', 'context', 'dModel', 'heads', 'kvHeads', 'layers', 'mlp', 'position', 'tied', 'bias', 'seed'];
// The configuration's fields in gptCreate's and gptInfo's descriptors: required ones, then optional ones (the
// engine fills in their defaults). position is an index into POSITIONS, the flags 0 or 1.
const CONFIG_SIZES = [['vocabSize', 'vocab_size'], ['context', 'context'], ['dModel', 'd_model'], ['heads', 'heads'], ['layers', 'layers']];
const CONFIG_OPTIONAL = [['kvHeads', 'kv_heads'], ['mlp', 'mlp'], ['position', 'position'], ['tied', 'tied'], ['bias', 'bias'], ['seed', 'seed']];
const POSITIONS = ['learned', 'rope'];


// A configuration ({ vocabSize, …, position: its index }; undefined: left out) into a descriptor's fields.
function writeConfig(d, F, c) {
  for (const [key, field] of CONFIG_SIZES) d[F[field]] = c[key];
  for (const [key, field] of CONFIG_OPTIONAL) option(d, F[field], typeof c[key] === 'boolean' ? Number(c[key]) : c[key]);
}

// The engine calls of the small GPT on module m (src/wasm/gpt_bindings.cpp); each takes the model's handle.
function gptCalls(m) {
  const calls = {};
  for (const name of ['gptCreate', 'gptLoad', 'gptFree', 'gptInfo', 'gptTensor', 'gptTrainStep', 'gptParameters', 'gptApplyGradients',
    'gptForward', 'gptGenerate', 'gptSetWeights', 'gptSafetensors', 'gptPartialGradients', 'gptReduceSlice', 'gptUpdateSlice', 'gptWriteState',
    'gptReadState'])
    calls[name] = engineCall(m, name);
  /** A descriptor of `call` on the model whose handle is h. */
  calls.on = (call, h) => {
    const d = call.descriptor();
    d[call.F.model] = h;
    return d;
  };
  return calls;
}

// The engine's model of a collected GPT is freed here (it holds the model's wasm memory), and its replicas on the
// workers (replicas: { threads, trainer } once it trained there; nothing that refers to the GPT).
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ calls, handle, replicas }) => {
    calls.gptFree.call('GPT.dispose', calls.on(calls.gptFree, handle));
    if (replicas.trainer) dropReplicas(replicas);
  })
  : null;

class GPT {
  #m;
  #calls;
  #h;       // the engine's handle (0 once disposed)
  #config;
  #threads; // the lab's { pool, closed() }
  #async;   // trainStepAsync's state (gpt-async.js), from the first call
  #replicas = { threads: null, trainer: null }; // what the finalizer needs to free the workers' replicas

  [USE_THREADS](threads) {
    this.#threads = threads;
    return this;
  }

  // While a trainStepAsync runs, what would change the weights under it is refused.
  #idle(fn) {
    if (this.#async?.busy) throw new Error(`${fn}: a trainStepAsync is still running on this model; await it first`);
  }

  constructor(m, calls, handle) {
    this.#m = m;
    this.#calls = calls;
    this.#h = handle;
    const { F } = calls.gptInfo, d = this.#info('config'), c = {};
    for (const [key, field] of [...CONFIG_SIZES, ...CONFIG_OPTIONAL]) c[key] = d[F[field]];
    for (const key of ['mlp', 'tied', 'bias']) c[key] = c[key] === 1;
    c.position = POSITIONS[c.position];
    this.#config = Object.freeze(Object.fromEntries(GPT_CONFIG_OPTIONS.map((key) => [key, c[key]])));
    registry?.register(this, { calls, handle, replicas: this.#replicas }, this);
  }

  #handle(fn) {
    if (!this.#h) throw new Error(`GPT.${fn}: this model was disposed`);
    return this.#h;
  }

  // A descriptor of `name` on this model (GPT.fn throws once it was disposed). Every call on the model goes through
  // here: the model first takes the state its trainStepAsync steps left on the workers (gpt-async.js).
  #on(name, fn) {
    const h = this.#handle(fn);
    if (this.#async) syncModel(this.#async);
    return this.#calls.on(this.#calls[name], h);
  }

  // The model's counts and configuration (gptInfo's fields).
  #info(fn) {
    const d = this.#on('gptInfo', fn);
    this.#calls.gptInfo.call(`GPT.${fn}`, d);
    return d;
  }

  /** The model's configuration, defaults filled in. */
  get config() {
    return this.#config;
  }
  get parameterCount() {
    return this.#info('parameterCount')[this.#calls.gptInfo.F.parameter_count];
  }
  /** AdamW updates applied so far. */
  get steps() {
    return this.#info('steps')[this.#calls.gptInfo.F.steps];
  }
  /** Bytes of wasm memory the model holds: parameters, gradients, Adam moments, activations, KV cache. */
  get memoryBytes() {
    return this.#info('memoryBytes')[this.#calls.gptInfo.F.memory_bytes];
  }
  /** The state dict's shapes, as PyTorch has them: `{ name: [rows, cols] | [rows] }`. */
  get shapes() {
    const r = {};
    for (const { name, rows, cols } of this.#tensors('shapes', false)) r[name] = cols ? [rows, cols] : [rows];
    return r;
  }

  // The state dict's entries in order: { name, rows, cols, data (with wantData) }.
  #tensors(fn, wantData) {
    const { gptInfo, gptTensor } = this.#calls, { F } = gptTensor;
    const count = this.#info(fn)[gptInfo.F.tensor_count], list = [];
    for (let i = 0; i < count; ++i) {
      const d = this.#on('gptTensor', fn);
      d[F.index] = i, d[F.want_data] = wantData ? 1 : 0;
      const o = gptTensor.call(`GPT.${fn}`, d);
      list.push({ name: new TextDecoder().decode(o.name), rows: d[F.rows], cols: d[F.cols], data: o.data });
    }
    return list;
  }

  trainStep(tokens, targets, opts = {}) {
    const fn = 'GPT.trainStep', call = this.#calls.gptTrainStep, d = this.#on('gptTrainStep', 'trainStep');
    const given = trainArgs(fn, call, d, tokens, targets, opts);
    this.#idle(fn);
    if (this.#async) modelChanged(this.#async);
    call.call(fn, d, given);
    return d[call.F.loss];
  }

  /** trainStep with the batch's sequences split across the lab's workers (gpt-async.js). */
  trainStepAsync(tokens, targets, opts = {}) {
    this.#async ??= {
      calls: this.#calls, config: this.#config, threads: this.#threads, busy: 0, last: null, trainer: null, replicas: this.#replicas, handle: () => this.#h,
      sync: (t, y, o) => this.trainStep(t, y, o),
      // The replicas' shape: a gptCreate descriptor of this configuration, seed left out (worker-gpt.js).
      shape: () => {
        const d = this.#calls.gptCreate.descriptor();
        writeConfig(d, this.#calls.gptCreate.F, { ...this.#config, position: POSITIONS.indexOf(this.#config.position), seed: undefined });
        return d.slice(); // (posted with each part: the call's descriptor is scratch)
      },
    };
    return trainStepAsync(this.#async, tokens, targets, opts);
  }

  // For tests: ends the worker holding slice `slot` of this model's training state as if it had crashed.
  [Symbol.for('attnlab.killWorker')](slot) {
    killWorker(this.#async, slot);
  }

  forward(tokens, opts = {}) {
    const fn = 'GPT.forward', call = this.#calls.gptForward, { F } = call, d = this.#on('gptForward', 'forward');
    int32Array(fn, 'tokens', tokens);
    options(fn, opts);
    checkKeys(fn, opts, ['batch', 'returnAttention']);
    option(d, F.batch, optionalNumber(fn, 'batch', opts.batch));
    d[F.return_attention] = flag(fn, 'returnAttention', opts.returnAttention);
    const o = call.call(fn, d, { tokens });
    const result = { logits: o.logits };
    if (o.attention) {
      const L = this.#config.layers, per = o.attention.length / L;
      result.attention = Array.from({ length: L }, (_, l) => o.attention.slice(l * per, (l + 1) * per));
    }
    return result;
  }

  generate(prompt, opts) {
    const fn = 'GPT.generate', call = this.#calls.gptGenerate, { F } = call, d = this.#on('gptGenerate', 'generate');
    int32Array(fn, 'prompt', prompt);
    if (opts === undefined) throw new TypeError(`${fn}: options with maxTokens are required, got undefined`);
    options(fn, opts);
    checkKeys(fn, opts, ['maxTokens', 'temperature', 'topK', 'seed']);
    d[F.max_tokens] = required(fn, 'maxTokens', opts.maxTokens);
    option(d, F.temperature, optionalNumber(fn, 'temperature', opts.temperature));
    option(d, F.top_k, optionalNumber(fn, 'topK', opts.topK));
    // Without a seed, a random one: the sampler's only source of randomness.
    d[F.seed] = opts.seed === undefined ? Math.floor(Math.random() * 2 ** 53) : number(fn, 'seed', opts.seed);
    return call.call(fn, d, { prompt }).tokens ?? new Int32Array(0);
  }

  getWeights() {
    const r = {};
    for (const { name, data } of this.#tensors('getWeights', true)) r[name] = data;
    return r;
  }

  setWeights(weights) {
    const fn = 'GPT.setWeights', call = this.#calls.gptSetWeights, d = this.#on('gptSetWeights', 'setWeights');
    this.#idle(fn);
    if (weights === null || typeof weights !== 'object') throw new TypeError(`${fn}: expected an object of { name: Float32Array }, got ${describe(weights)}`);
    const entries = Object.entries(weights);
    for (const [name, v] of entries) if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
    if (!entries.length) return; // (nothing to set)
    if (this.#async) modelChanged(this.#async);
    // The names' bytes end to end, and the tensors', with their lengths: laid out in wasm memory by the call.
    const names = entries.map(([name]) => new TextEncoder().encode(name));
    call.call(fn, d, {
      names, nameLengths: Int32Array.from(names, (n) => n.length),
      data: entries.map(([, v]) => v), dataLengths: Int32Array.from(entries, ([, v]) => v.length),
    });
  }

  toSafetensors() {
    const fn = 'GPT.toSafetensors';
    return this.#calls.gptSafetensors.call(fn, this.#on('gptSafetensors', 'toSafetensors')).file;
  }

  /** Frees the model's wasm memory now (it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    if (!this.#h) return;
    registry?.unregister(this);
    if (this.#async) dropReplicas(this.#async);
    this.#calls.gptFree.call('GPT.dispose', this.#calls.on(this.#calls.gptFree, this.#h));
    this.#h = 0;
  }
}

// Without init({ gpt: true }) the lab has no model: both entry points say how to get one.
function needsGpt(fn) {
  return () => {
    throw new Error(`${fn}: this lab was loaded without the small GPT; load it with init({ gpt: true })`);
  };
}

export function makeGPT(m, enabled) {
  if (!enabled) return { createGPT: needsGpt('createGPT'), loadGPT: needsGpt('loadGPT') };
  const calls = gptCalls(m);
  return {
    createGPT(config) {
      const fn = 'createGPT', call = calls.gptCreate, { F } = call, d = call.descriptor();
      options(fn, config);
      checkKeys(fn, config, GPT_CONFIG_OPTIONS);
      const c = {};
      for (const [key] of CONFIG_SIZES) {
        if (config[key] === undefined) throw new TypeError(`${fn}: config.${key} is required, got undefined`);
        c[key] = number(fn, key, config[key]);
      }
      c.kvHeads = optionalNumber(fn, 'kvHeads', config.kvHeads);
      for (const key of ['mlp', 'tied', 'bias']) c[key] = config[key] === undefined ? undefined : flag(fn, key, config[key]);
      if (config.position !== undefined) {
        const p = config.position;
        if (typeof p !== 'string') throw new TypeError(`${fn}: position must be 'learned' or 'rope', got ${describe(p)}`);
        if (!POSITIONS.includes(p)) throw new RangeError(`${fn}: position must be 'learned' or 'rope', got ${describe(p)}`);
        c.position = POSITIONS.indexOf(p);
      }
      c.seed = optionalNumber(fn, 'seed', config.seed);
      writeConfig(d, F, c);
      call.call(fn, d);
      return new GPT(m, calls, d[F.model]);
    },
    loadGPT(bytes) {
      const fn = 'loadGPT', call = calls.gptLoad;
      let view;
      if (bytes instanceof ArrayBuffer) view = new Uint8Array(bytes);
      else if (bytes instanceof Uint8Array || Object.prototype.toString.call(bytes) === '[object Uint8Array]') view = bytes;
      else throw new TypeError(`${fn}: bytes must be a Uint8Array or an ArrayBuffer, got ${describe(bytes)}`);
      const d = call.descriptor();
      call.call(fn, d, { bytes: view });
      return new GPT(m, calls, d[call.F.model]);
    },
  };
}
