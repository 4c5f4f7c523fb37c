// attnlab: softmax, scaled dot-product and multi-head attention in WebAssembly, as plain functions over
// Float32Array. Hand-written ESM wrapper around the Embind module (dist/attnlab-{simd,scalar}.mjs).
// This file loads the module; lab.js assembles the functions, one file per operation (softmax.js, …). They
// check types and sizes (TypeError / RangeError naming the argument, checks.js), copy each tensor into wasm
// memory in one bulk copy (memory.js), call the engine, copy results out and free everything, error or not.
// Values (NaN, +Infinity) and overflow are checked by the engine itself; its status becomes the exception.
import { checkKeys, describe } from './checks.js';
import { makeLab } from './lab.js';

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

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

// Node cannot fetch file: URLs, so there the bytes come from disk. The specifier is a variable (and marked
// ignored) so that bundlers building for the web neither resolve nor bundle node:fs.
async function readBytes(where) {
  if (where instanceof URL && where.protocol !== 'file:') return new Uint8Array(await (await fetch(where)).arrayBuffer());
  const fsName = 'node:fs/promises';
  const fs = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName);
  return fs.readFile(where);
}

// A wasmUrl as given: URL objects and absolute URLs stay URLs; any other string is a file path in Node
// (read as is) and a URL relative to the page or worker in browsers.
function locate(where) {
  if (where instanceof URL) return where;
  if (typeof where !== 'string') throw new TypeError(`init: wasmUrl must give a string or URL, got ${describe(where)}`);
  if (/^(https?|file|data|blob):/i.test(where)) return new URL(where);
  return isNode ? where : new URL(where, globalThis.location?.href);
}

/**
 * Loads the engine and resolves with a {@link Lab}. See index.d.ts for the options.
 * @param {import('./index.js').InitOptions} [options]
 */
export async function init(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`init: options must be an object, got ${describe(options)}`);
  checkKeys('init', options, ['simd', 'wasmUrl', 'wasmBinary']);
  const { simd: wantSimd, wasmUrl, wasmBinary } = options;
  if (wantSimd !== undefined && typeof wantSimd !== 'boolean') throw new TypeError(`init: simd must be a boolean, got ${describe(wantSimd)}`);
  if (wasmBinary !== undefined && !(wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(wasmBinary)))
    throw new TypeError(`init: wasmBinary must be an ArrayBuffer or a typed array, got ${describe(wasmBinary)}`);
  const simd = wantSimd ?? simdSupported();
  if (simd && !simdSupported()) throw new Error('init: simd: true was requested but this engine does not support wasm SIMD128');

  // Literal specifiers and `new URL('./…', import.meta.url)`: bundlers see both files and emit them.
  const file = simd ? 'attnlab-simd.wasm' : 'attnlab-scalar.wasm';
  const factory = (simd ? await import('./attnlab-simd.mjs') : await import('./attnlab-scalar.mjs')).default;
  const beside = simd ? new URL('./attnlab-simd.wasm', import.meta.url) : new URL('./attnlab-scalar.wasm', import.meta.url);
  const where = wasmUrl === undefined ? beside : locate(typeof wasmUrl === 'function' ? wasmUrl(file) : wasmUrl);

  const moduleArgs = {};
  if (wasmBinary !== undefined) moduleArgs.wasmBinary = wasmBinary;
  else if (isNode) moduleArgs.wasmBinary = await readBytes(where);
  else moduleArgs.locateFile = () => where.href; // the glue streams and compiles it (instantiateStreaming)
  return makeLab(await factory(moduleArgs));
}
