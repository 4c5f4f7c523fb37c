// lab.loadTokenizer: a Hugging Face tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt) that lives in
// the engine, which parses and validates the files and names the file and field at fault. This file checks types,
// reads Blobs, moves bytes (text as UTF-8, ids as int32) through one call descriptor per call (src/js/call.js,
// src/wasm/tokenizer_bindings.cpp), and frees the tokenizer on dispose() or when it is garbage-collected.
// The model loader builds its model.tokenizer with loadTokenizerFrom(m, files).
import { checkKeys, describe, flag, options, tokenIds } from './checks.js';
import { engineCall } from './call.js';
import { moduleWithModels } from './model-module.js';

/** The files a tokenizer reads, by name; other files of a model folder are ignored. */
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.json', 'merges.txt'];

const utf8 = new TextEncoder();
const text = new TextDecoder('utf-8', { ignoreBOM: true }); // a leading U+FEFF is text too

// A Blob, File or anything that reads its bytes the same way (a Blob of another realm: jsdom's, undici's).
function isBlob(v) {
  return v !== null && typeof v === 'object' && typeof v.arrayBuffer === 'function';
}

// A file's bytes: Uint8Array (as it is), ArrayBuffer, or Blob (read).
async function bytesOf(fn, name, v) {
  if (v instanceof Uint8Array || Object.prototype.toString.call(v) === '[object Uint8Array]') return v;
  if (v instanceof ArrayBuffer || Object.prototype.toString.call(v) === '[object ArrayBuffer]') return new Uint8Array(v);
  if (isBlob(v)) return blobBytes(fn, name, v);
  throw new TypeError(`${fn}: files[${JSON.stringify(name)}] must be a Uint8Array, an ArrayBuffer or a Blob, got ${describe(v)}`);
}

async function blobBytes(fn, name, v) {
  const buffer = await v.arrayBuffer();
  if (!(buffer instanceof ArrayBuffer || Object.prototype.toString.call(buffer) === '[object ArrayBuffer]'))
    throw new TypeError(`${fn}: files[${JSON.stringify(name)}].arrayBuffer() must resolve with an ArrayBuffer, got ${describe(buffer)}`);
  return new Uint8Array(buffer);
}

// The tokenizer's engine calls on module m (src/wasm/tokenizer_bindings.cpp), each taking the tokenizer's handle.
const callCache = new WeakMap();
function callsOf(m) {
  let c = callCache.get(m);
  if (!c) {
    c = {};
    for (const name of ['tokenizerLoad', 'tokenizerEncode', 'tokenizerDecode', 'tokenizerTokens', 'tokenizerIdOf', 'tokenizerTokenOf', 'tokenizerInfo', 'tokenizerFree'])
      c[name.slice(9)] = engineCall(m, name); // Load, Encode, …
    callCache.set(m, c);
  }
  return c;
}

// A descriptor of `call` on the tokenizer whose handle is h (the call's scratch: used at once).
function on(call, h) {
  const d = call.descriptor();
  d[call.F.tokenizer] = h;
  return d;
}

function free(m, h) {
  const c = callsOf(m);
  c.Free.call('Tokenizer.dispose', on(c.Free, h));
}

// Tokenizer → its state; only tokenizers made by some lab are in it.
const states = new WeakMap();
const registries = new WeakMap(); // module → FinalizationRegistry freeing its tokenizers

function registryOf(m) {
  if (typeof FinalizationRegistry !== 'function') return null;
  let r = registries.get(m);
  if (!r) {
    // Held value: the handle and the lab's live count; a collected tokenizer is freed here.
    r = new FinalizationRegistry(({ handle, live }) => {
      free(m, handle);
      if (live) live.count -= 1;
    });
    registries.set(m, r);
  }
  return r;
}

function state(t, fn) {
  const s = states.get(t);
  if (!s) throw new TypeError(`${fn}: not a tokenizer made by loadTokenizer()`);
  if (!s.handle) throw new Error(`${fn}: this tokenizer was disposed`);
  return s;
}

// Text the engine left in the tokenizer's buffer (address and length in the descriptor d; valid until its next call).
const textAt = (m, at, len) => text.decode(m.HEAPU8.subarray(at, at + len));

class Tokenizer {
  /** Number of ids: the model's tokens and the added tokens. */
  get vocabSize() {
    return states.get(this).vocabSize;
  }
  /** Whether decode() cleans up spaces by default (tokenizer_config.json's clean_up_tokenization_spaces). */
  get cleanUpTokenizationSpaces() {
    return states.get(this).cleanup;
  }
  /** The model's bos / eos / unk / pad tokens where its files name them. */
  get specialTokens() {
    return states.get(this).specialTokens;
  }
  /** Bytes of wasm memory the tokenizer holds. */
  get memoryBytes() {
    const s = state(this, 'Tokenizer.memoryBytes'), c = s.calls.Info, d = on(c, s.handle);
    c.call('Tokenizer.memoryBytes', d);
    return d[c.F.memory_bytes];
  }
  /** Whether dispose() was called. */
  get disposed() {
    return !states.get(this).handle;
  }

  encode(input, opts = {}) {
    const fn = 'Tokenizer.encode';
    const s = state(this, fn);
    if (typeof input !== 'string') throw new TypeError(`${fn}: text must be a string, got ${describe(input)}`);
    options(fn, opts);
    checkKeys(fn, opts, ['addSpecialTokens']);
    const add = opts.addSpecialTokens === undefined ? true : flag(fn, 'addSpecialTokens', opts.addSpecialTokens);
    const c = s.calls.Encode, d = on(c, s.handle);
    d[c.F.add_special] = add ? 1 : 0;
    c.call(fn, d, { text: utf8.encode(input) });
    const at = d[c.F.ids_at] / 4;
    return s.m.HEAP32.slice(at, at + d[c.F.ids_len]);
  }

  decode(input, opts = {}) {
    const fn = 'Tokenizer.decode';
    const s = state(this, fn);
    const list = tokenIds(fn, 'ids', input);
    options(fn, opts);
    checkKeys(fn, opts, ['skipSpecialTokens', 'cleanUpTokenizationSpaces']);
    const skip = flag(fn, 'skipSpecialTokens', opts.skipSpecialTokens);
    const cleanup = opts.cleanUpTokenizationSpaces === undefined ? s.cleanup : flag(fn, 'cleanUpTokenizationSpaces', opts.cleanUpTokenizationSpaces);
    const c = s.calls.Decode, d = on(c, s.handle);
    d[c.F.skip_special] = skip ? 1 : 0, d[c.F.cleanup] = cleanup ? 1 : 0;
    c.call(fn, d, { ids: list });
    return textAt(s.m, d[c.F.text_at], d[c.F.text_len]);
  }

  tokens(input) {
    const fn = 'Tokenizer.tokens';
    const s = state(this, fn);
    const list = tokenIds(fn, 'ids', input);
    const c = s.calls.Tokens, d = on(c, s.handle);
    c.call(fn, d, { ids: list });
    const base = d[c.F.text_at], at = d[c.F.offsets_at] / 4;
    const offsets = s.m.HEAPU32.subarray(at, at + list.length + 1);
    return Array.from({ length: list.length }, (_, i) => textAt(s.m, base + offsets[i], offsets[i + 1] - offsets[i]));
  }

  idOf(token) {
    const fn = 'Tokenizer.idOf';
    const s = state(this, fn);
    if (typeof token !== 'string') throw new TypeError(`${fn}: token must be a string, got ${describe(token)}`);
    const c = s.calls.IdOf, d = on(c, s.handle);
    c.call(fn, d, { token: utf8.encode(token) });
    return d[c.F.id] < 0 ? undefined : d[c.F.id];
  }

  tokenOf(id) {
    const fn = 'Tokenizer.tokenOf';
    const s = state(this, fn);
    if (typeof id !== 'number') throw new TypeError(`${fn}: id must be a number, got ${describe(id)}`);
    if (!Number.isInteger(id)) return undefined;
    const c = s.calls.TokenOf, d = on(c, s.handle);
    d[c.F.id] = id;
    c.call(fn, d);
    return d[c.F.text_len] < 0 ? undefined : textAt(s.m, d[c.F.text_at], d[c.F.text_len]);
  }

  /** Frees the tokenizer's wasm memory now (it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    const s = states.get(this);
    if (!s.handle) return;
    registryOf(s.m)?.unregister(this);
    free(s.m, s.handle);
    s.handle = 0;
    if (s.live) s.live.count -= 1;
  }
}

/**
 * Loads a tokenizer into module `m` from a model folder's files (a Record or Map from file name to Uint8Array,
 * ArrayBuffer or Blob): tokenizer.json (+ tokenizer_config.json, special_tokens_map.json), or vocab.json +
 * merges.txt. `live` ({ count }) counts the tokenizers alive. The model loader calls this with its own files, and
 * its own name as `fn`, which begins every error (the function the caller called).
 */
export async function loadTokenizerFrom(m, files, live, fn = 'loadTokenizer') {
  const entries = files instanceof Map ? [...files] : files !== null && typeof files === 'object' && !ArrayBuffer.isView(files) && !isBlob(files)
    ? Object.entries(files)
    : null;
  if (!entries) throw new TypeError(`${fn}: files must be an object or a Map from file name to bytes, got ${describe(files)}`);
  const given = new Map();
  for (const [name, value] of entries) {
    if (typeof name !== 'string') throw new TypeError(`${fn}: file names must be strings, got ${describe(name)}`);
    if (TOKENIZER_FILES.includes(name)) given.set(name, await bytesOf(fn, name, value));
  }
  const calls = callsOf(m), c = calls.Load, d = c.descriptor(), tensors = {};
  for (const name of TOKENIZER_FILES) {
    if (!given.has(name)) continue;
    const key = name.replace('.', '_'); // its tensor field in tokenizerLoad's descriptor
    tensors[key] = given.get(name);
    d[c.F[`${key}_given`]] = 1;
  }
  c.call(fn, d, tensors);
  const handle = d[c.F.tokenizer];
  try {
    const ids = Object.fromEntries(['bos', 'eos', 'unk', 'pad'].map((key) => [key, d[c.F[key]]]).filter(([, id]) => id >= 0));
    const t = new Tokenizer();
    const s = { m, calls, handle, live, vocabSize: d[c.F.vocab_size], cleanup: d[c.F.cleanup] === 1, specialTokens: null };
    states.set(t, s);
    s.specialTokens = Object.freeze(Object.fromEntries(Object.entries(ids).map(([key, id]) => [key, Object.freeze({ id, token: t.tokenOf(id) })])));
    registryOf(m)?.register(t, { handle, live }, t);
    if (live) live.count += 1;
    return t;
  } catch (e) {
    free(m, handle);
    throw e;
  }
}

// lab.loadTokenizer: in the lab's module when it has the models, else in the module with them, loaded the first time
// (model-module.js), as lab.loadModel does.
export function makeTokenizers(m, live) {
  return { loadTokenizer: async (files) => loadTokenizerFrom(await moduleWithModels(m, 'loadTokenizer'), files, live) };
}
