// lab.loadModel's bytes: where a model folder's files come from and how they reach the engine. The engine
// (lmLoader*) parses and validates everything; this file finds the files, reads them in pieces and hands each piece
// to a sink: this thread's engine, through a small staging buffer in wasm memory from which it places the weights
// (engineSink), or the lab's workers, each sent the bytes of its slices (lm-workers.js). The files:
//   files: a Record or Map of file name → Uint8Array | ArrayBuffer | Blob (a File is a Blob): Blobs are read slice
//          by slice, so a 500 MB file never sits in JS memory whole;
//   URL:   a base URL laid out as a Hugging Face repository's resolve/main/ folder; each response body streams in.
// Progress ({ file, loaded, total }) is reported per piece; an AbortSignal stops the load between pieces (and
// aborts the fetches); any error frees what the engine holds.
import { engineCall } from './call.js';
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
/** The files a tokenizer is made of: any one of them given means a tokenizer was meant. */
export const TOKENIZER_MAKERS = [TOKENIZER_JSON[0], ...TOKENIZER_BPE];

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
  // A tokenizer was meant, in a form the package does not read: said before any weights are read, rather than a
  // model that loads without one (a URL's folder is not listed, so there it loads without one, as documented).
  if (files.has('tokenizer.model') && !TOKENIZER_MAKERS.some((f) => files.has(f)))
    throw new RangeError(`${fn}: tokenizer.model is SentencePiece's own model file, which attnlab does not read: give the folder's tokenizer.json too (transformers writes one with the tokenizer's save_pretrained), or leave tokenizer.model out to load the model without a tokenizer`);
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

const byName = "pass the folder's files by name instead: { 'config.json': bytes, 'model.safetensors': bytes, … }";

function urlSource(fn, base, signal) {
  let root;
  try {
    root = new URL(base.endsWith('/') ? base : `${base}/`, globalThis.location?.href);
  } catch (e) {
    throw new TypeError(`${fn}: ${JSON.stringify(base)} is not a URL${globalThis.location ? '' : ` (relative URLs need a page to resolve against; for a folder on disk, ${byName})`}`);
  }
  // The Hugging Face hub serves a repository's files under resolve/<revision>/; its other paths (the repository's
  // page, a file's page under blob/, a folder's under tree/) are web pages, whose HTML would come back as config.json.
  if (/^(huggingface\.co|hf\.co)$/.test(root.hostname) && !root.pathname.includes('/resolve/')) {
    const page = root.pathname.match(/^(.*?)\/(blob|tree)\/([^/]+)\/(.*)$/);  // a folder's page, or a file's (its folder)
    const folder = page && (page[2] === 'blob' ? page[4].replace(/[^/]*\/$/, '') : page[4]);
    const files = page ? `${root.origin}${page[1]}/resolve/${page[3]}/${folder}` : `${root.href}resolve/main/`;
    throw new TypeError(`${fn}: ${root.href} is not where the hub serves a repository's files; they are under resolve/<revision>/: ${files}`);
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
        // Node's fetch reads no file: URLs (nor do browsers' from most pages): say what works instead.
        const advice = root.protocol === 'file:' ? `: this fetch reads no file: URLs; ${byName}` : '';
        throw new Error(`${fn}: could not fetch ${url} (${e?.message ?? e})${advice}`, { cause: e });
      }
      // No file of a model folder is a web page: a text/html answer is a server's page for a file it does not have
      // (a dev server's single-page-app fallback, Vite's among them, answers every missing path with index.html and
      // 200). For a file that may be missing, that is its absence, as a 404 is; for one that must be there, the error
      // says what came instead of the parser's "not valid JSON" / "not a safetensors file".
      const page = /^\s*text\/html\b/i.test(response.headers.get('Content-Type') ?? '');
      if ((response.status === 404 || (page && response.ok)) && optional) {
        await response.body?.cancel();
        return null;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`${fn}: could not fetch ${url} (HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''})`);
      }
      if (page) {
        await response.body?.cancel();
        throw new Error(`${fn}: ${url} answered with a web page (Content-Type text/html), not the file: the server does not have it (a dev server answers a missing file with its index page)`);
      }
      // No Content-Length (a chunked response) is an unknown size, not 0 (Number(null) is 0); nor is one that is
      // the compressed size (Content-Encoding), nor one that is not a plain count of bytes.
      const header = response.headers.get('Content-Length')?.trim();
      const size = response.headers.get('Content-Encoding') || !/^\d+$/.test(header ?? '') ? undefined : Number(header);
      return {
        size,
        async *chunks() {
          const reader = response.body.getReader();
          let loaded = 0, done = false;
          try {
            for (;;) {
              let step;
              try {
                step = await reader.read();
              } catch (e) {
                if (signal?.aborted) throw abortError(signal);
                throw new Error(`${fn}: the download of ${url} failed after ${loaded}${size === undefined ? '' : ` of ${size}`} bytes (${e?.message ?? e})`, { cause: e });
              }
              if (step.done) {
                done = true;
                return;
              }
              loaded += step.value.length;
              yield step.value;
            }
          } finally {
            // A load that stops before the body's end (a bad file, a throwing onProgress) ends the download: a body
            // merely left unread keeps its connection open, and the server sending, until it is collected.
            if (!done) await reader.cancel().catch(() => {});
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
      const bytes = await readAll(indexFile);
      report(INDEX, bytes.length, bytes.length);
      abortCheck();
      files = await sink.index(bytes);
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
    const fetchAll = async (list) => {
      for (const name of list) {
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
 * The sink of a model loaded on this thread: a loader of module `m`'s engine, each step one engine call
 * (src/wasm/lm_bindings.cpp) on the loader's handle, each piece of a file crossing as one (at most STAGING bytes at
 * a time in wasm memory). finish() gives { handle }.
 */
export function engineSink(m, fn) {
  const [create, index, files, begin, feed, end, finish, free] = ['lmLoaderCreate', 'lmLoaderIndex', 'lmLoaderFiles',
    'lmLoaderBegin', 'lmLoaderFeed', 'lmLoaderEnd', 'lmLoaderFinish', 'lmLoaderFree'].map((name) => engineCall(m, name));
  let loader = 0;
  // A call of `c` on the loader (its descriptor: scratch, used at once).
  const on = (c) => {
    const d = c.descriptor();
    d[c.F.loader] = loader;
    return d;
  };
  const names = () => new TextDecoder().decode(files.call(fn, on(files)).names ?? new Uint8Array(0)).split('\n').filter(Boolean);
  const release = () => {
    if (loader) free.call(fn, on(free)); // after finish it holds nothing; after an error, everything goes here
    loader = 0;
  };
  return {
    async create(config, generation) {
      const d = create.descriptor();
      create.call(fn, d, { config, generation: generation ?? undefined });
      loader = d[create.F.loader];
      return names();
    },
    async index(bytes) {
      index.call(fn, on(index), { bytes });
      return names();
    },
    async begin(name) {
      begin.call(fn, on(begin), { bytes: new TextEncoder().encode(name) });
    },
    async feed(piece) {
      for (let at = 0; at < piece.length; at += STAGING) feed.call(fn, on(feed), { bytes: piece.subarray(at, Math.min(at + STAGING, piece.length)) });
    },
    async end(total) {
      const d = on(end);
      d[end.F.total] = total;
      end.call(fn, d);
    },
    async finish() {
      const d = on(finish);
      finish.call(fn, d);
      const handle = d[finish.F.model];
      release();
      return { handle };
    },
    free: release,
  };
}
