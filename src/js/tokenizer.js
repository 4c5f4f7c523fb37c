// lab.loadTokenizer: a Hugging Face tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt) that lives in
// the engine, which parses and validates the files and names the file and field at fault. This file checks types,
// reads Blobs, moves bytes (text as UTF-8, ids as int32) through one call descriptor per call
// (src/wasm/tokenizer_call.h), and frees the tokenizer on dispose() or when it is garbage-collected.
// The model loader builds its model.tokenizer with loadTokenizerFrom(m, files).
import { checkKeys, describe, flag, int32s, options } from './checks.js';
import { arena, checkKind } from './memory.js';
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

// The descriptors' field indices, per call kind, in the order the binding declares (read once per module).
const fieldsByModule = new WeakMap();
function fieldsOf(m) {
  let kinds = fieldsByModule.get(m);
  if (!kinds) {
    kinds = {};
    for (const kind of ['load', 'encode', 'decode', 'lookup']) {
      const F = Object.fromEntries(m.tokenizerCallFields(kind).split(',').filter(Boolean).map((name, i) => [name, i]));
      kinds[kind] = { F, n: Object.keys(F).length };
    }
    fieldsByModule.set(m, kinds);
  }
  return kinds;
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
      m.tokenizerFree(handle);
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

// Runs one call: the descriptor (float64) and the inputs in one allocation, freed whatever happens.
function call(s, fn, kind, inputs, run) {
  const { F, n } = s.fields[kind];
  const a = arena(s.m, fn, [{ name: 'call', length: n, type: 'f64' }, ...inputs]);
  try {
    const d = a.view(0);
    d.fill(0);
    d[F.handle] = s.handle;
    return run(a, d, F);
  } finally {
    a.free();
  }
}

function ids(fn, v) {
  if (v instanceof Int32Array) return v;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView) && !(typeof v[0] === 'bigint')) v = Array.from(v);
  return int32s(fn, 'ids', v);
}

class Tokenizer {
  /** Number of ids: the model's tokens and the added tokens. */
  get vocabSize() {
    return states.get(this).vocabSize;
  }
  /** The model's bos / eos / unk / pad tokens where its files name them. */
  get specialTokens() {
    return states.get(this).specialTokens;
  }
  /** Bytes of wasm memory the tokenizer holds. */
  get memoryBytes() {
    const s = state(this, 'Tokenizer.memoryBytes');
    return s.m.tokenizerMemoryBytes(s.handle);
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
    const bytes = utf8.encode(input);
    return call(s, fn, 'encode', [{ name: 'text', length: bytes.length, data: bytes, type: 'u8' }], (a, d, F) => {
      d[F.text] = a.at(1), d[F.text_len] = bytes.length, d[F.add_special] = add ? 1 : 0;
      checkKind(s.m, fn, s.m.tokenizerEncode(a.at(0)));
      const at = a.view(0)[F.ids] / 4, len = a.view(0)[F.ids_len];
      return s.m.HEAP32.slice(at, at + len);
    });
  }

  decode(input, opts = {}) {
    const fn = 'Tokenizer.decode';
    const s = state(this, fn);
    const list = ids(fn, input);
    options(fn, opts);
    checkKeys(fn, opts, ['skipSpecialTokens', 'cleanUpTokenizationSpaces']);
    const skip = flag(fn, 'skipSpecialTokens', opts.skipSpecialTokens);
    const cleanup = opts.cleanUpTokenizationSpaces === undefined ? s.cleanup : flag(fn, 'cleanUpTokenizationSpaces', opts.cleanUpTokenizationSpaces);
    return call(s, fn, 'decode', [{ name: 'ids', length: list.length, data: list, type: 'i32' }], (a, d, F) => {
      d[F.ids] = a.at(1), d[F.ids_len] = list.length, d[F.skip_special] = skip ? 1 : 0, d[F.cleanup] = cleanup ? 1 : 0;
      checkKind(s.m, fn, s.m.tokenizerDecode(a.at(0)));
      const r = a.view(0);
      return text.decode(s.m.HEAPU8.subarray(r[F.text], r[F.text] + r[F.text_len]));
    });
  }

  tokens(input) {
    const fn = 'Tokenizer.tokens';
    const s = state(this, fn);
    const list = ids(fn, input);
    return call(s, fn, 'decode', [{ name: 'ids', length: list.length, data: list, type: 'i32' }], (a, d, F) => {
      d[F.ids] = a.at(1), d[F.ids_len] = list.length;
      checkKind(s.m, fn, s.m.tokenizerTokens(a.at(0)));
      const r = a.view(0), base = r[F.text], heap = s.m.HEAPU8;
      const offsets = s.m.HEAPU32.subarray(r[F.offsets] / 4, r[F.offsets] / 4 + list.length + 1);
      return Array.from({ length: list.length }, (_, i) => text.decode(heap.subarray(base + offsets[i], base + offsets[i + 1])));
    });
  }

  idOf(token) {
    const fn = 'Tokenizer.idOf';
    const s = state(this, fn);
    if (typeof token !== 'string') throw new TypeError(`${fn}: token must be a string, got ${describe(token)}`);
    const bytes = utf8.encode(token);
    return call(s, fn, 'lookup', [{ name: 'token', length: bytes.length, data: bytes, type: 'u8' }], (a, d, F) => {
      d[F.text] = a.at(1), d[F.text_len] = bytes.length;
      s.m.tokenizerIdOf(a.at(0));
      const id = a.view(0)[F.id];
      return id < 0 ? undefined : id;
    });
  }

  tokenOf(id) {
    const fn = 'Tokenizer.tokenOf';
    const s = state(this, fn);
    if (typeof id !== 'number') throw new TypeError(`${fn}: id must be a number, got ${describe(id)}`);
    if (!Number.isInteger(id)) return undefined;
    return call(s, fn, 'lookup', [], (a, d, F) => {
      d[F.id] = id;
      s.m.tokenizerTokenOf(a.at(0));
      const r = a.view(0);
      return r[F.text_len] < 0 ? undefined : text.decode(s.m.HEAPU8.subarray(r[F.text], r[F.text] + r[F.text_len]));
    });
  }

  /** Frees the tokenizer's wasm memory now (it is also freed when the object is garbage-collected). Idempotent. */
  dispose() {
    const s = states.get(this);
    if (!s.handle) return;
    registryOf(s.m)?.unregister(this);
    s.m.tokenizerFree(s.handle);
    s.handle = 0;
    if (s.live) s.live.count -= 1;
  }
}

/**
 * Loads a tokenizer into module `m` from a model folder's files (a Record or Map from file name to Uint8Array,
 * ArrayBuffer or Blob): tokenizer.json (+ tokenizer_config.json, special_tokens_map.json), or vocab.json +
 * merges.txt. `live` ({ count }) counts the tokenizers alive. The model loader calls this with its own files.
 */
export async function loadTokenizerFrom(m, files, live) {
  const fn = 'loadTokenizer';
  const entries = files instanceof Map ? [...files] : files !== null && typeof files === 'object' && !ArrayBuffer.isView(files) && !isBlob(files)
    ? Object.entries(files)
    : null;
  if (!entries) throw new TypeError(`${fn}: files must be an object or a Map from file name to bytes, got ${describe(files)}`);
  const given = new Map();
  for (const [name, value] of entries) {
    if (typeof name !== 'string') throw new TypeError(`${fn}: file names must be strings, got ${describe(name)}`);
    if (TOKENIZER_FILES.includes(name)) given.set(name, await bytesOf(fn, name, value));
  }
  const fields = fieldsOf(m);
  const { F, n } = fields.load;
  const parts = [{ name: 'call', length: n, type: 'f64' }];
  for (const name of TOKENIZER_FILES) parts.push({ name, length: given.get(name)?.length ?? 0, data: given.get(name), type: 'u8' });
  const a = arena(m, fn, parts);
  let handle = 0, d;
  try {
    d = a.view(0);
    d.fill(0);
    const keys = ['tokenizer_json', 'tokenizer_config', 'special_tokens_map', 'vocab_json', 'merges_txt'];
    TOKENIZER_FILES.forEach((name, i) => {
      d[F[keys[i]]] = a.at(i + 1);
      d[F[`${keys[i]}_len`]] = given.has(name) ? given.get(name).length : -1;
    });
    checkKind(m, fn, m.tokenizerLoad(a.at(0)));
    d = a.view(0);
    handle = d[F.handle];
    const ids = Object.fromEntries(['bos', 'eos', 'unk', 'pad'].map((key) => [key, d[F[key]]]).filter(([, id]) => id >= 0));
    const t = new Tokenizer();
    const s = { m, handle, fields, live, vocabSize: d[F.vocab_size], cleanup: d[F.cleanup] === 1, specialTokens: null };
    states.set(t, s);
    s.specialTokens = Object.freeze(Object.fromEntries(Object.entries(ids).map(([key, id]) => [key, Object.freeze({ id, token: t.tokenOf(id) })])));
    registryOf(m)?.register(t, { handle, live }, t);
    if (live) live.count += 1;
    return t;
  } catch (e) {
    if (handle) m.tokenizerFree(handle);
    throw e;
  } finally {
    a.free();
  }
}

// lab.loadTokenizer: in the lab's module when it has the models, else in the module with them, loaded the first time
// (model-module.js), as lab.loadModel does.
export function makeTokenizers(m, live) {
  return { loadTokenizer: async (files) => loadTokenizerFrom(await moduleWithModels(m, 'loadTokenizer'), files, live) };
}
