// What the entries share: init()'s option checks, compiling the .wasm from a URL, a file or bytes, and
// instantiating it through the Emscripten glue. The entries differ only in where the module's bytes come from
// by default: index.js fetches (or reads) the file beside it and, where that file is not there, imports the copy
// inside the package's JS; inline.js and inline-gpt.js carry their copies inside the JS.
// This file holds no import.meta, so a CommonJS bundle of the inline entry carries none either.
import { checkKeys, describe } from './checks.js';
import { makeLab } from './lab.js';
import { hasGpt, hasLm, inlineEntry, moduleFile } from './variant.js';
import { withThreads } from './lab-threads.js';
import { canShare } from './threads.js';
import { setModelModule } from './model-module.js';

// Smallest module that needs SIMD128: (func (result v128) (i32x4.splat (i32.const 0))), hand-assembled.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, //       type section: () -> v128
  0x03, 0x02, 0x01, 0x00, //                         function section: one function of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x11, 0x0b, // code: i32.const 0; i32x4.splat; end
]);

/** True when this engine validates wasm SIMD128 code. */
export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// Node (and runtimes that emulate it) read local files from disk. Detected by process.versions.node, not by
// the absence of `window`: jsdom (Vitest, Jest) defines window inside Node, where fetch cannot read file: URLs.
const isNode = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

// The specifiers are variables (and marked ignored) so that bundlers building for the web neither resolve nor
// bundle Node's modules; this code only runs in Node.
async function nodeModule(name) {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ name);
}

const hint = {
  // What to do when neither the file beside the package's JS (the URL entry's default) nor its copy inside the
  // package's JS could be loaded.
  beside: (file) =>
    `The file ships in the package as attnlab/${file}: serve it at that URL (as application/wasm), pass init({ wasmUrl }) ` +
    `with the URL it is served at, or import { init } from '${inlineEntry(file)}', which carries the module inside its JS.`,
  given: (file) => `init's wasmUrl must point to ${file} as shipped in the package (attnlab/${file}).`,
};

/**
 * Checks init()'s options; resolves `simd` to the module that will run.
 * @returns {{ simd: boolean, gpt: boolean, wasmUrl: unknown, wasmBinary: ArrayBuffer | ArrayBufferView | undefined, threads: number }}
 */
function checkOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError(`init: options must be an object, got ${describe(options)}`);
  checkKeys('init', options, ['simd', 'gpt', 'wasmUrl', 'wasmBinary', 'threads', 'exchange']);
  const { simd: wantSimd, gpt = false, wasmUrl, wasmBinary, threads = 1, exchange } = options;
  if (exchange !== undefined && exchange !== 'shared' && exchange !== 'message')
    throw new TypeError(`init: exchange must be 'shared' or 'message', got ${describe(exchange)}`);
  if (exchange === 'shared' && !canShare())
    throw new Error("init: exchange 'shared' needs SharedArrayBuffer, which this page cannot share with workers (it is not cross-origin isolated)");
  if (typeof threads !== 'number') throw new TypeError(`init: threads must be a number, got ${describe(threads)}`);
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) throw new RangeError(`init: threads must be an integer from 1 to 256, got ${threads}`);
  if (typeof gpt !== 'boolean') throw new TypeError(`init: gpt must be a boolean, got ${describe(gpt)}`);
  if (wantSimd !== undefined && typeof wantSimd !== 'boolean') throw new TypeError(`init: simd must be a boolean, got ${describe(wantSimd)}`);
  if (wasmBinary !== undefined && !(wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(wasmBinary)))
    throw new TypeError(`init: wasmBinary must be an ArrayBuffer or a typed array, got ${describe(wasmBinary)}`);
  if (wasmUrl !== undefined && typeof wasmUrl !== 'function') where(wasmUrl); // type errors before anything loads
  const simd = wantSimd ?? simdSupported();
  if (simd && !simdSupported()) throw new Error('init: simd: true was requested but this engine does not support wasm SIMD128');
  return { simd, gpt, wasmUrl, wasmBinary, threads, exchange };
}

// A wasmUrl as given: URL objects (anything with a string href, so a URL from another realm, e.g. jsdom's, works)
// and absolute URLs stay URLs; any other string is a file path in Node and a URL relative to the page or worker
// in browsers. Returns { url } or { path }.
function where(given) {
  if (given !== null && typeof given === 'object' && typeof given.href === 'string') return { url: given.href };
  if (typeof given !== 'string') throw new TypeError(`init: wasmUrl must give a string or URL, got ${describe(given)}`);
  if (/^[a-z][a-z\d+.-]+:/i.test(given)) return { url: given }; // a scheme of two letters or more (C:\ is a path)
  if (isNode) return { path: given };
  const base = globalThis.location?.href;
  if (base === undefined) throw new TypeError(`init: wasmUrl ${JSON.stringify(given)} is relative and this context has no location to resolve it against`);
  return { url: new URL(given, base).href };
}

// The advice that ends a loading error, if any (none where the entry tries its inline copy next).
const then = (advice) => (advice ? ` ${advice}` : '');

const isWasm = (bytes) => bytes.length >= 4 && bytes[0] === 0x00 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;

async function compileBytes(bytes, from, advice) {
  const view = bytes instanceof Uint8Array ? bytes : ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  if (!isWasm(view)) {
    const head = Array.from(view.subarray(0, 16), (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    const page = view[0] === 0x3c ? ', probably a page served in its place: the file is not at that URL' : ''; // '<'
    throw new Error(`init: ${from} is not a wasm module (${view.length} bytes starting ${JSON.stringify(head)}, not "\\0asm"${page}).${then(advice)}`);
  }
  try {
    return await WebAssembly.compile(view);
  } catch (e) {
    throw new Error(`init: ${from} did not compile: ${e?.message ?? e}.${then(advice)}`, { cause: e });
  }
}

async function readFile(path, shown, advice) {
  const fs = await nodeModule('node:fs/promises');
  try {
    return await fs.readFile(path);
  } catch (e) {
    throw new Error(`init: could not read the wasm module at ${shown} (${e?.code ?? e?.message ?? e}).${then(advice)}`, { cause: e });
  }
}

// One request per module. A server that sends application/wasm gets a streaming compile; any other type (or no
// compileStreaming) compiles from the same response's bytes: a wrong MIME type never costs a second download.
async function fetchAndCompile(url, advice) {
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`init: could not fetch the wasm module from ${url} (${e?.message ?? e}).${then(advice)}`, { cause: e });
  }
  if (!response.ok) {
    throw new Error(`init: could not fetch the wasm module from ${url} (HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}).${then(advice)}`);
  }
  const type = response.headers.get('Content-Type') ?? '';
  if (/^application\/wasm\s*(;|$)/i.test(type) && typeof WebAssembly.compileStreaming === 'function') {
    try {
      return await WebAssembly.compileStreaming(response);
    } catch (e) {
      throw new Error(`init: the wasm module from ${url} did not compile: ${e?.message ?? e}.${then(advice)}`, { cause: e });
    }
  }
  let bytes;
  try {
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (e) {
    throw new Error(`init: could not download the wasm module from ${url} (${e?.message ?? e}).${then(advice)}`, { cause: e });
  }
  return compileBytes(bytes, `what ${url} sent (Content-Type ${JSON.stringify(type)})`, advice);
}

/** Compiles the module at a URL or a path ({ url } or { path }, from where()). */
async function compileAt(at, advice) {
  if (at.path !== undefined) return compileBytes(await readFile(at.path, at.path, advice), at.path, advice);
  if (isNode && /^file:/i.test(at.url)) {
    const { fileURLToPath } = await nodeModule('node:url');
    const path = fileURLToPath(at.url);
    return compileBytes(await readFile(path, at.url, advice), at.url, advice);
  }
  return fetchAndCompile(at.url, advice);
}

/**
 * The module init(options) runs, without loading anything: `{ simd, gpt, file }` (file: the .wasm's name in the
 * package). Throws init's own errors for bad options. For code that must run the same module as a lab.
 */
export function variant(options = {}) {
  const { simd, gpt } = checkOptions(options);
  return { simd, gpt, file: moduleFile({ simd, gpt }) };
}

/**
 * init() of one entry.
 * @param {object} options init's options, unchecked.
 * @param {(args: object) => Promise<object>} factory the Emscripten glue's factory (attnlab.mjs: one glue runs
 *   all four modules, checked by scripts/build-wasm.sh).
 * @param {{ module: (file: string) => Promise<{ module: WebAssembly.Module, source: 'file' | 'inline', fallback?: string }>,
 *   workerScript: () => Promise<{ text: string, fallback?: string }> }} own the entry's own copies: `module`
 *   compiles the chosen module (file: its name, from moduleFile), `workerScript` gives the text of the threads'
 *   worker script (asked for only with threads > 1); `fallback` says why the file beside the JS was not used
 *   when the copy inside the JS was.
 */
export async function start(options, factory, own) {
  const { simd, gpt, wasmUrl, wasmBinary, threads, exchange } = checkOptions(options);
  const file = moduleFile({ simd, gpt });
  let module, source;
  const fallbacks = [];
  if (wasmBinary !== undefined) {
    module = await compileBytes(wasmBinary, "init's wasmBinary", `wasmBinary must hold the bytes of ${file}.`);
    source = 'wasmBinary';
  } else if (wasmUrl !== undefined) {
    module = await compileAt(where(typeof wasmUrl === 'function' ? wasmUrl(file) : wasmUrl), hint.given(file));
    source = 'wasmUrl';
  } else {
    const got = await own.module(file);
    ({ module, source } = got);
    if (got.fallback) fallbacks.push(got.fallback);
  }
  const m = await instantiate(factory, module);
  if (gpt && !hasGpt(m)) {
    // Only a module the caller gave can lack it: the operators' module where the GPT's was needed.
    const given = wasmBinary !== undefined ? "init's wasmBinary holds" : 'wasmUrl points to';
    throw new Error(`init: gpt: true needs ${file}, the module with the small GPT, but ${given} a module without it (${file.replace('gpt-', '')}?).`);
  }
  const lab = makeLab(m, { gpt });
  // Where the module came from, and every fallback: a copy that ran because a file was missing is no silent one.
  const info = lab.buildInfo;
  lab.buildInfo = () => ({ ...info(), source, ...(fallbacks.length ? { fallback: fallbacks.join(' ') } : {}) });
  const workerScript = async () => {
    const got = await own.workerScript();
    if (got.fallback) fallbacks.push(got.fallback);
    return got.text;
  };
  // lab.loadModel on the operators' module: the module with the language-model engine, loaded when first needed
  // (from a wasmUrl function when one was given, else the entry's own copy of it; a fallback to the copy inside the JS is recorded like the first module's), and
  // compiled once for this thread and the workers alike.
  if (!hasLm(m)) {
    setModelModule(m, {
      compile: async () => {
        const lmFile = moduleFile({ simd, gpt: true });
        // A wasmUrl function names every file the lab needs (a page whose files are hashed or inlined as data: URLs).
        if (typeof wasmUrl === 'function') return compileAt(where(wasmUrl(lmFile)), hint.given(lmFile));
        const got = await own.module(lmFile);
        if (got.fallback) fallbacks.push(got.fallback);
        return got.module;
      },
      instantiate: (module) => instantiate(factory, module),
    });
  }
  // threads: the workers get the same compiled module (the same variant and backend, nothing downloaded twice).
  return withThreads(lab, { threads, module, gpt, workerScript, exchange });
}

const noImportMeta = 'import.meta.url is not available here (was the package bundled to CommonJS?)';
const reason = (e) => String(e?.message ?? e).replace(/^init: (threads: )?/, '').replace(/\.$/, '');
const ranInstead = (file, why) => `${file}: ${why}; its copy inside the package's JS ran instead.`;

/**
 * The URL entry's default module: the file beside the package's JS, at `url` (a literal
 * new URL('./…', import.meta.url); undefined where import.meta.url is empty, as in a CommonJS bundle). Where the
 * file cannot be loaded (a bundler that copies no assets, such as esbuild or Rollup without an asset plugin, or
 * no import.meta.url), its copy inside the package's JS: `inline()` imports it only then, so bundlers that emit
 * the file keep the copy in a chunk that is never fetched. The lab's buildInfo() says which ran, and why.
 */
export async function compileBesideOrInline(url, file, inline) {
  let why = noImportMeta;
  if (url !== undefined) {
    try {
      return { module: await compileAt({ url: url.href }, ''), source: 'file' };
    } catch (e) {
      why = reason(e);
    }
  }
  let text;
  try {
    ({ default: text } = await inline());
  } catch (e) {
    throw new Error(`init: could not load ${file}: ${why}; nor its copy inside the package's JS (${e?.message ?? e}). ${hint.beside(file)}`, { cause: e });
  }
  return { module: await compileBase64(text, file), source: 'inline', fallback: ranInstead(file, why) };
}

/**
 * The URL entry's worker script for init({ threads }): the text of attnlab-worker.js beside the package's JS, or,
 * where it cannot be loaded, its copy inside the package's JS (as compileBesideOrInline).
 */
export async function readBesideOrInline(url, file, inline) {
  let why = noImportMeta;
  if (url !== undefined) {
    try {
      return { text: await readText(url.href) };
    } catch (e) {
      why = `could not load ${url.href} (${e?.message ?? e})`;
    }
  }
  try {
    return { text: (await inline()).default, fallback: ranInstead(file, why) };
  } catch (e) {
    throw new Error(
      `init: threads: could not load ${file}: ${why}; nor its copy inside the package's JS (${e?.message ?? e}). ` +
        `The file ships in the package as attnlab/${file}: serve it beside attnlab's JS, or import { init } from 'attnlab/inline', which carries it inside the JS.`,
      { cause: e },
    );
  }
}

async function readText(href) {
  let text;
  if (isNode && /^file:/i.test(href)) {
    const [{ readFile: read }, { fileURLToPath }] = await Promise.all([nodeModule('node:fs/promises'), nodeModule('node:url')]);
    text = await read(fileURLToPath(href), 'utf8');
  } else {
    const response = await fetch(href);
    if (!response.ok) throw new Error(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    text = await response.text();
  }
  // A host that answers every path with its page (a single-page app's fallback) sends HTML, not the script.
  if (/^\s*</.test(text)) throw new Error('got a page, not the script: the file is not at that URL');
  return text;
}

/** The inline entry's default: the module's bytes from base64 text. */
export function compileBase64(text, file) {
  const bytes = typeof Uint8Array.fromBase64 === 'function' ? Uint8Array.fromBase64(text) : Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return compileBytes(bytes, `the inline copy of ${file}`, 'The package is damaged: reinstall it.');
}

// The glue calls instantiateWasm instead of fetching anything; a failure there (an import mismatch, no memory
// for the instance) rejects init() instead of leaving the glue's ready promise pending.
function instantiate(factory, module) {
  return new Promise((resolve, reject) => {
    factory({
      instantiateWasm(imports, done) {
        WebAssembly.instantiate(module, imports).then((instance) => done(instance, module), reject);
        return {};
      },
    }).then(resolve, reject);
  });
}
