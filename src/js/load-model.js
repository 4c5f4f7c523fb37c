// lab.loadModel's bytes: where a model folder's files come from and how they reach the engine. The engine
// (lmLoader*) parses and validates everything; this file finds the files, reads them in pieces and hands each piece
// to a sink: this thread's engine, through a small staging buffer in wasm memory from which it places the weights
// (engineSink), or the lab's workers, each sent the bytes of its slices (lm-workers.js). The files:
//   files: a Record or Map of file name → Uint8Array | ArrayBuffer | Blob (a File is a Blob): Blobs are read slice
//          by slice, so a 500 MB file never sits in JS memory whole;
//   URL:   a base URL laid out as a Hugging Face repository's resolve/main/ folder; each response body streams in.
// Progress ({ file, loaded, total }) is reported per piece; an AbortSignal stops the load between pieces (and
// aborts the fetches); any error frees what the engine holds.
import { describe } from './checks.js';

const STAGING = 1 << 20;      // bytes of wasm memory a piece passes through
const BLOB_SLICE = 4 << 20;   // bytes read from a Blob at once
const CONFIG = 'config.json';
const GENERATION = 'generation_config.json';
const INDEX = 'model.safetensors.index.json';
// The tokenizer's files, as a repository holds them: tokenizer.json (with tokenizer_config.json), or GPT-2's
// vocab.json and merges.txt.
const TOKENIZER_JSON = ['tokenizer.json', 'tokenizer_config.json'];
const TOKENIZER_BPE = ['vocab.json', 'merges.txt'];

// A Blob or File (any object with a size and slices that read as ArrayBuffers: Node's and the DOM's alike).
function isBlob(v) {
  return v !== null && typeof v === 'object' && typeof v.size === 'number' && typeof v.slice === 'function' && !ArrayBuffer.isView(v);
}

function abortError(signal) {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/**
 * Where the files come from: `{ open(name, optional) → Promise<{ size, chunks() } | null>, describe(name) }`.
 * chunks() is an async iterable of Uint8Array pieces.
 */
export function source(fn, given, signal) {
  if (typeof given === 'string' || (given !== null && typeof given === 'object' && typeof given.href === 'string' && !(given instanceof Map)))
    return urlSource(fn, typeof given === 'string' ? given : given.href, signal);
  if (given instanceof Map) return filesSource(fn, given, signal);
  if (given !== null && typeof given === 'object' && !Array.isArray(given) && !ArrayBuffer.isView(given) && !isBlob(given))
    return filesSource(fn, new Map(Object.entries(given)), signal);
  throw new TypeError(`${fn}: expected a base URL (string or URL) or the model's files (a Record or Map of file name → Uint8Array, ArrayBuffer or Blob), got ${describe(given)}`);
}

function filesSource(fn, files, signal) {
  for (const [name, v] of files) {
    if (typeof name !== 'string') throw new TypeError(`${fn}: file names must be strings, got ${describe(name)}`);
    if (!(v instanceof Uint8Array || v instanceof ArrayBuffer || isBlob(v)))
      throw new TypeError(`${fn}: ${name} must be a Uint8Array, an ArrayBuffer or a Blob, got ${describe(v)}`);
  }
  return {
    where: 'the files given',
    has: (name) => files.has(name),
    async open(name, optional) {
      const v = files.get(name);
      if (v === undefined) {
        if (optional) return null;
        throw new Error(`${fn}: ${name} is missing from the files given (${[...files.keys()].join(', ') || 'none'})`);
      }
      if (!isBlob(v)) {
        const bytes = v instanceof Uint8Array ? v : new Uint8Array(v);
        return { size: bytes.length, async *chunks() { yield bytes; } };
      }
      return {
        size: v.size,
        async *chunks() {
          for (let at = 0; at < v.size; at += BLOB_SLICE) {
            if (signal?.aborted) throw abortError(signal);
            let piece;
            try {
              piece = new Uint8Array(await v.slice(at, Math.min(at + BLOB_SLICE, v.size)).arrayBuffer());
            } catch (e) {
              throw new Error(`${fn}: reading ${name} failed after ${at} of ${v.size} bytes: ${e?.message ?? e}`, { cause: e });
            }
            yield piece;
          }
        },
      };
    },
  };
}

function urlSource(fn, base, signal) {
  let root;
  try {
    root = new URL(base.endsWith('/') ? base : `${base}/`, globalThis.location?.href);
  } catch (e) {
    throw new TypeError(`${fn}: ${JSON.stringify(base)} is not a URL${globalThis.location ? '' : ' (relative URLs need a page to resolve against)'}`);
  }
  return {
    where: root.href,
    has: () => true,
    async open(name, optional) {
      const url = new URL(name, root).href;
      let response;
      try {
        response = await fetch(url, { signal });
      } catch (e) {
        if (signal?.aborted) throw abortError(signal);
        throw new Error(`${fn}: could not fetch ${url} (${e?.message ?? e})`, { cause: e });
      }
      if (response.status === 404 && optional) {
        await response.body?.cancel();
        return null;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`${fn}: could not fetch ${url} (HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''})`);
      }
      const length = Number(response.headers.get('Content-Length'));
      const size = response.headers.get('Content-Encoding') || !(length >= 0) ? undefined : length;
      return {
        size,
        async *chunks() {
          const reader = response.body.getReader();
          let loaded = 0;
          try {
            for (;;) {
              let step;
              try {
                step = await reader.read();
              } catch (e) {
                if (signal?.aborted) throw abortError(signal);
                throw new Error(`${fn}: the download of ${url} failed after ${loaded}${size === undefined ? '' : ` of ${size}`} bytes (${e?.message ?? e})`, { cause: e });
              }
              if (step.done) return;
              loaded += step.value.length;
              yield step.value;
            }
          } finally {
            reader.releaseLock();
          }
        },
      };
    },
  };
}

// A whole (small) file's bytes.
async function readAll(file) {
  const parts = [];
  let n = 0;
  for await (const p of file.chunks()) parts.push(p), (n += p.length);
  if (parts.length === 1) return parts[0];
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) all.set(p, at), (at += p.length);
  return all;
}

/**
 * Streams a model folder into `sink` and returns what its finish() gives (and the tokenizer files found, by name).
 * A sink is where the bytes go — this thread's engine (engineSink) or the lab's workers (lm-workers.js):
 *   create(config, generation) → the safetensors files to send;  index(bytes) → the same, from the index;
 *   begin(name);  feed(piece) (pieces of any size, in order);  end(total bytes of the file);  finish();
 *   free() after an error (nothing of the load may stay).
 */
export async function streamModel(fn, src, sink, { onProgress, signal }) {
  const abortCheck = () => {
    if (signal?.aborted) throw abortError(signal);
  };
  const report = (file, loaded, total) => onProgress?.({ file, loaded, total });

  abortCheck();
  const configFile = await src.open(CONFIG, false);
  const config = await readAll(configFile);
  report(CONFIG, config.length, config.length);
  const genFile = await src.open(GENERATION, true);
  const generation = genFile ? await readAll(genFile) : null;
  if (generation) report(GENERATION, generation.length, generation.length);
  abortCheck();

  try {
    let files = await sink.create(config, generation);
    const indexFile = await src.open(INDEX, true);
    if (indexFile) {
      const index = await readAll(indexFile);
      report(INDEX, index.length, index.length);
      abortCheck();
      files = await sink.index(index);
    }

    for (const name of files) {
      abortCheck();
      const file = await src.open(name, false);
      await sink.begin(name);
      let loaded = 0;
      report(name, 0, file.size);
      for await (const piece of file.chunks()) {
        await sink.feed(piece);
        loaded += piece.length;
        report(name, loaded, file.size);
        abortCheck();
      }
      await sink.end(loaded);
    }

    // The tokenizer's files, as they are (the tokenizer reads them).
    const tokenizerFiles = {};
    const fetchAll = async (names) => {
      for (const name of names) {
        abortCheck();
        const file = src.has(name) ? await src.open(name, true) : null;
        if (file) {
          tokenizerFiles[name] = await readAll(file);
          report(name, tokenizerFiles[name].length, tokenizerFiles[name].length);
        }
      }
    };
    await fetchAll(TOKENIZER_JSON);
    if (!tokenizerFiles['tokenizer.json']) await fetchAll(TOKENIZER_BPE);
    abortCheck();
    return { ...(await sink.finish()), tokenizerFiles };
  } catch (e) {
    sink.free();
    throw e;
  }
}

/**
 * The sink of a model loaded on this thread: a loader of module `m`'s engine, fed through a small staging buffer
 * in wasm memory. `fields`: the loader descriptor's field names (lm_call.h). finish() gives { handle }.
 */
export function engineSink(m, fn, fields) {
  const check = (kind) => {
    if (kind !== 0) {
      const s = m.lastStatus();
      const message = `${fn}: ${s.message}`;
      throw s.kind === 1 ? new RangeError(message) : new Error(message);
    }
  };
  let loader = 0, staging = 0;
  const files = () => m.lmLoaderFiles(loader).split('\n').filter(Boolean);
  const release = () => {
    if (loader) m.lmLoaderFree(loader);  // after finish it holds nothing; after an error, everything goes here
    if (staging) m._free(staging);
    loader = staging = 0;
  };
  return {
    async create(config, generation) {
      // The loader's descriptor and the JSON files in one allocation.
      const callBytes = fields.length * 8;
      const total = callBytes + config.length + (generation?.length ?? 0);
      staging = m._malloc(Math.max(total, STAGING));
      if (!staging) throw new Error(`${fn}: out of memory allocating ${STAGING} bytes of wasm memory`);
      m.HEAPU8.set(config, staging + callBytes);
      if (generation) m.HEAPU8.set(generation, staging + callBytes + config.length);
      const call = m.HEAPF64.subarray(staging / 8, staging / 8 + fields.length);
      call.fill(0);
      call[fields.indexOf('config')] = staging + callBytes;
      call[fields.indexOf('config_len')] = config.length;
      call[fields.indexOf('generation')] = generation ? staging + callBytes + config.length : 0;
      call[fields.indexOf('generation_len')] = generation?.length ?? 0;
      call[fields.indexOf('ranks')] = 1;
      loader = m.lmLoaderCreate(staging);
      check(loader ? 0 : m.lastStatus().kind);
      return files();
    },
    async index(index) {
      const at = index.length > STAGING ? m._malloc(index.length) : staging;
      if (!at) throw new Error(`${fn}: out of memory allocating ${index.length} bytes of wasm memory`);
      try {
        m.HEAPU8.set(index, at);
        check(m.lmLoaderIndex(loader, at, index.length));
      } finally {
        if (at !== staging) m._free(at);
      }
      return files();
    },
    async begin(name) {
      check(m.lmLoaderBegin(loader, name));
    },
    async feed(piece) {
      for (let at = 0; at < piece.length; at += STAGING) {
        const part = piece.subarray(at, Math.min(at + STAGING, piece.length));
        m.HEAPU8.set(part, staging);  // the engine may have grown memory: HEAPU8 is read fresh each time
        check(m.lmLoaderFeed(loader, staging, part.length));
      }
    },
    async end(total) {
      check(m.lmLoaderEnd(loader, total));
    },
    async finish() {
      const handle = m.lmLoaderFinish(loader);
      check(handle ? 0 : m.lastStatus().kind);
      release();
      return { handle };
    },
    free: release,
  };
}
