// attnlab: softmax, scaled dot-product and multi-head attention in WebAssembly, as plain functions over
// Float32Array. Hand-written ESM wrapper around the Embind module (dist/attnlab-{simd,scalar}.mjs).
// This layer checks types and sizes (TypeError / RangeError naming the argument), copies each tensor into
// wasm memory in one bulk copy (softmax into a new array: in chunks of whole rows), calls the engine, copies
// results out and frees everything, error or not.
// Values (NaN, +Infinity) and overflow are checked by the engine itself; its status becomes the exception.

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

// ---- argument checks (before anything touches wasm memory) ----

function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'function') return 'a function';
  return v.constructor?.name ?? typeof v;
}

function isF32(v) {
  return v instanceof Float32Array || Object.prototype.toString.call(v) === '[object Float32Array]';
}

function checkKeys(fn, obj, allowed) {
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)} (expected one of ${allowed.join(', ')})`);
}

function tensor(fn, name, v) {
  if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
  if (v.length === 0) throw new RangeError(`${fn}: ${name} must not be empty, got length 0`);
  return v;
}

function optionalTensor(fn, name, v) {
  return v === undefined || v === null ? undefined : tensor(fn, name, v);
}

// Sizes are integers ≥ 1 that also fit the engine's 32-bit size_t.
function size(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  if (!Number.isInteger(v) || v < 1 || v > 0x7fffffff) throw new RangeError(`${fn}: ${name} must be an integer >= 1, got ${v}`);
  return v;
}

function flag(fn, name, v) {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${describe(v)}`);
  return v;
}

function positive(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${fn}: ${name} must be finite and > 0, got ${v}`);
  // The engine computes in float32: the value must survive the conversion.
  const f = Math.fround(v);
  if (f === 0 || f === Infinity) throw new RangeError(`${fn}: ${name} must be within float32 range (1.4e-45 … 3.4e38), got ${v}`);
  return v;
}

// `total` elements split in rows of `per`: the row count, or a RangeError naming both.
function quotient(fn, name, total, per, perName) {
  const q = total / per;
  if (!Number.isInteger(q)) throw new RangeError(`${fn}: ${name}.length must be a multiple of ${perName} = ${per}, got ${total}`);
  return q;
}

function length(fn, name, v, want, shape) {
  if (v.length !== want) throw new RangeError(`${fn}: ${name} must have ${shape} = ${want} elements, got ${v.length}`);
}

// An optional caller-provided output buffer: a Float32Array of exactly the output's length. Reusing one
// across calls skips allocating (and, in browsers, page-faulting in) a fresh output array every call.
function outBuffer(fn, v, want, shape) {
  if (v === undefined || v === null) return undefined;
  if (!isF32(v)) throw new TypeError(`${fn}: out must be a Float32Array, got ${describe(v)}`);
  if (v.length !== want) throw new RangeError(`${fn}: out must have ${shape} = ${want} elements, got ${v.length}`);
  return v;
}

function options(fn, opts) {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`${fn}: expected an options object, got ${describe(opts)}`);
  return opts;
}

// ---- the instance ----

// Above this a call can never fit in wasm32 memory (2 GiB maximum): refuse before allocating.
const MAX_BYTES = 2 ** 31;
// Softmax into a new array goes through wasm memory in chunks of whole rows of about this many floats (256 KiB).
const SOFTMAX_CHUNK_FLOATS = 1 << 16;

function makeLab(m) {
  // One allocation per call for every tensor (inputs and outputs), each 16-byte aligned for the SIMD loads.
  // Returns { at(i) → byte address of tensor i, read(i) → copy of output i }; frees in finally via free().
  function arena(fn, parts) {
    const offsets = [];
    let floats = 0;
    for (const p of parts) {
      offsets.push(floats);
      floats += Math.ceil(p.length / 4) * 4;
    }
    if (floats * 4 > MAX_BYTES) {
      const big = parts.reduce((a, b) => (b.length > a.length ? b : a));
      throw new RangeError(`${fn}: this call needs ${floats * 4} bytes of wasm memory (${big.name} alone has ${big.length} floats); the limit is 2 GiB`);
    }
    const base = m._malloc(floats * 4);
    if (!base) throw new Error(`${fn}: out of memory allocating ${floats * 4} bytes of wasm memory`);
    // _malloc may have grown memory: take the heap view only now, once for all copies.
    const heap = m.HEAPF32;
    parts.forEach((p, i) => {
      if (p.data) heap.set(p.data, (base >>> 2) + offsets[i]);
    });
    return {
      at: (i) => (parts[i].length ? base + offsets[i] * 4 : 0),
      // The call may have grown memory too: read through the current view.
      read: (i) => m.HEAPF32.slice((base >>> 2) + offsets[i], (base >>> 2) + offsets[i] + parts[i].length),
      // Output i into the caller's buffer, or a new copy when there is none.
      readInto: (i, out) => {
        if (!out) return m.HEAPF32.slice((base >>> 2) + offsets[i], (base >>> 2) + offsets[i] + parts[i].length);
        out.set(m.HEAPF32.subarray((base >>> 2) + offsets[i], (base >>> 2) + offsets[i] + parts[i].length));
        return out;
      },
      free: () => m._free(base),
    };
  }

  function check(fn, status) {
    if (status.kind === 0) return;
    const message = `${fn}: ${status.message}`;
    throw status.kind === 1 ? new RangeError(message) : new Error(message);
  }

  const info = m.buildInfo();
  const backend = info.simd ? 'wasm-simd' : 'wasm';

  function softmax(x, opts = {}) {
    const fn = 'softmax';
    tensor(fn, 'x', x);
    options(fn, opts);
    checkKeys(fn, opts, ['cols', 'temperature', 'log', 'out']);
    const cols = opts.cols === undefined ? x.length : size(fn, 'cols', opts.cols);
    quotient(fn, 'x', x.length, cols, 'cols');
    const temperature = opts.temperature === undefined ? 1 : positive(fn, 'temperature', opts.temperature);
    const log = flag(fn, 'log', opts.log);
    const out = outBuffer(fn, opts.out, x.length, 'x.length');
    // Into the caller's buffer: all of x is staged in wasm memory first, so that a bad value in the last row
    // still leaves out untouched. In place there (the engine allows out = x): half the memory and cache.
    if (out) {
      const a = arena(fn, [{ name: 'x', length: x.length, data: x }]);
      try {
        check(fn, m.softmax(a.at(0), x.length, cols, temperature, log, a.at(0), 0));
        return a.readInto(0, out); // out may be x itself: x was copied in before the call
      } finally {
        a.free();
      }
    }
    // A new array is never seen when the call throws, so it is filled chunk by chunk of whole rows: the wasm
    // memory needed stays at one chunk of 256 KiB (or one row, when a row is longer) instead of all of x, and
    // wasm memory never shrinks. As fast as staging (npm run bench, 1024 × 1024: 1.42 ms either way).
    const result = new Float32Array(x.length);
    const chunk = Math.max(1, Math.floor(SOFTMAX_CHUNK_FLOATS / cols)) * cols;
    const a = arena(fn, [{ name: 'x', length: Math.min(chunk, x.length) }]);
    try {
      for (let i = 0; i < x.length; i += chunk) {
        const len = Math.min(chunk, x.length - i), at = a.at(0);
        m.HEAPF32.set(x.subarray(i, i + len), at >>> 2);
        check(fn, m.softmax(at, len, cols, temperature, log, at, i)); // i: a bad value is named x[i + …]
        result.set(m.HEAPF32.subarray(at >>> 2, (at >>> 2) + len), i);
      }
      return result;
    } finally {
      a.free();
    }
  }

  function attention(opts) {
    const fn = 'attention';
    options(fn, opts);
    checkKeys(fn, opts, ['q', 'k', 'v', 'nq', 'nk', 'dk', 'dv', 'causal', 'scale', 'mask', 'returnScores', 'returnWeights', 'returnRawScores', 'out']);
    const q = tensor(fn, 'q', opts.q), k = tensor(fn, 'k', opts.k), v = tensor(fn, 'v', opts.v);
    const mask = optionalTensor(fn, 'mask', opts.mask);
    // Sizes: any left out are inferred from the lengths, dk first (from nq or nk when it is not given).
    let { nq, nk, dk, dv } = opts;
    if (nq !== undefined) size(fn, 'nq', nq);
    if (nk !== undefined) size(fn, 'nk', nk);
    if (dv !== undefined) size(fn, 'dv', dv);
    if (dk !== undefined) size(fn, 'dk', dk);
    else if (nq !== undefined) dk = quotient(fn, 'q', q.length, nq, 'nq');
    else if (nk !== undefined) dk = quotient(fn, 'k', k.length, nk, 'nk');
    else throw new TypeError(`${fn}: dk is required (or nq or nk, to infer it from q.length or k.length), got undefined`);
    nq ??= quotient(fn, 'q', q.length, dk, 'dk');
    nk ??= quotient(fn, 'k', k.length, dk, 'dk');
    dv ??= quotient(fn, 'v', v.length, nk, 'nk');
    length(fn, 'q', q, nq * dk, `nq·dk = ${nq}·${dk}`);
    length(fn, 'k', k, nk * dk, `nk·dk = ${nk}·${dk}`);
    length(fn, 'v', v, nk * dv, `nk·dv = ${nk}·${dv}`);
    if (mask) length(fn, 'mask', mask, nq * nk, `nq·nk = ${nq}·${nk}`);
    const scale = opts.scale === undefined ? undefined : positive(fn, 'scale', opts.scale);
    const causal = flag(fn, 'causal', opts.causal);
    const wantScores = flag(fn, 'returnScores', opts.returnScores);
    const wantWeights = flag(fn, 'returnWeights', opts.returnWeights);
    const wantRaw = flag(fn, 'returnRawScores', opts.returnRawScores);
    const out = outBuffer(fn, opts.out, nq * dv, `nq·dv = ${nq}·${dv}`);
    // nq·nk only matters (and only has to fit) when one of the score matrices is wanted.
    const nn = wantScores || wantWeights || wantRaw ? nq * nk : 0;

    const a = arena(fn, [
      { name: 'q', length: q.length, data: q },
      { name: 'k', length: k.length, data: k },
      { name: 'v', length: v.length, data: v },
      { name: 'mask', length: mask ? mask.length : 0, data: mask },
      { name: 'output', length: nq * dv },
      { name: 'rawScores', length: wantRaw ? nn : 0 },
      { name: 'scores', length: wantScores ? nn : 0 },
      { name: 'weights', length: wantWeights ? nn : 0 },
    ]);
    try {
      check(fn, m.attention(nq, nk, dk, dv, scale !== undefined, scale ?? 0, causal,
        a.at(0), q.length, a.at(1), k.length, a.at(2), v.length, a.at(3), mask ? mask.length : 0,
        a.at(4), nq * dv, a.at(5), a.at(6), a.at(7), nn));
      const result = { output: a.readInto(4, out) };
      if (wantScores) result.scores = a.read(6);
      if (wantWeights) result.weights = a.read(7);
      if (wantRaw) result.rawScores = a.read(5);
      return result;
    } finally {
      a.free();
    }
  }

  function multiHeadAttention(opts) {
    const fn = 'multiHeadAttention';
    options(fn, opts);
    checkKeys(fn, opts, ['x', 'n', 'dModel', 'heads', 'kvHeads', 'dk', 'dv', 'wq', 'wk', 'wv', 'wo', 'causal', 'scale', 'mask', 'returnIntermediates', 'out']);
    const x = tensor(fn, 'x', opts.x);
    const wq = tensor(fn, 'wq', opts.wq), wk = tensor(fn, 'wk', opts.wk), wv = tensor(fn, 'wv', opts.wv), wo = tensor(fn, 'wo', opts.wo);
    const mask = optionalTensor(fn, 'mask', opts.mask);
    let { n, dModel } = opts;
    if (n !== undefined) size(fn, 'n', n);
    if (dModel !== undefined) size(fn, 'dModel', dModel);
    else if (n !== undefined) dModel = quotient(fn, 'x', x.length, n, 'n');
    else throw new TypeError(`${fn}: dModel is required (or n, to infer it from x.length), got undefined`);
    n ??= quotient(fn, 'x', x.length, dModel, 'dModel');
    if (opts.heads === undefined) throw new TypeError(`${fn}: heads is required, got undefined`);
    const heads = size(fn, 'heads', opts.heads);
    const kvHeads = opts.kvHeads === undefined ? heads : size(fn, 'kvHeads', opts.kvHeads);
    if (kvHeads > heads || heads % kvHeads !== 0)
      throw new RangeError(`${fn}: kvHeads must divide heads = ${heads}, got ${kvHeads}`);
    const perHead = (name) => {
      if (opts[name] !== undefined) return size(fn, name, opts[name]);
      if (dModel % heads === 0) return dModel / heads;
      throw new RangeError(`${fn}: ${name} must be given when dModel is not a multiple of heads (it defaults to dModel / heads), got dModel = ${dModel}, heads = ${heads}`);
    };
    const dk = perHead('dk'), dv = perHead('dv');
    length(fn, 'x', x, n * dModel, `n·dModel = ${n}·${dModel}`);
    length(fn, 'wq', wq, dModel * heads * dk, `dModel·heads·dk = ${dModel}·${heads}·${dk}`);
    length(fn, 'wk', wk, dModel * kvHeads * dk, `dModel·kvHeads·dk = ${dModel}·${kvHeads}·${dk}`);
    length(fn, 'wv', wv, dModel * kvHeads * dv, `dModel·kvHeads·dv = ${dModel}·${kvHeads}·${dv}`);
    length(fn, 'wo', wo, heads * dv * dModel, `heads·dv·dModel = ${heads}·${dv}·${dModel}`);
    if (mask) length(fn, 'mask', mask, n * n, `n·n = ${n}·${n}`);
    const scale = opts.scale === undefined ? undefined : positive(fn, 'scale', opts.scale);
    const causal = flag(fn, 'causal', opts.causal);
    const inter = flag(fn, 'returnIntermediates', opts.returnIntermediates);
    const out = outBuffer(fn, opts.out, n * dModel, `n·dModel = ${n}·${dModel}`);

    const qLen = n * heads * dk, kLen = n * kvHeads * dk, vLen = n * kvHeads * dv, cLen = n * heads * dv, hnn = heads * n * n;
    const a = arena(fn, [
      { name: 'x', length: x.length, data: x },
      { name: 'wq', length: wq.length, data: wq },
      { name: 'wk', length: wk.length, data: wk },
      { name: 'wv', length: wv.length, data: wv },
      { name: 'wo', length: wo.length, data: wo },
      { name: 'mask', length: mask ? mask.length : 0, data: mask },
      { name: 'output', length: n * dModel },
      { name: 'q', length: inter ? qLen : 0 },
      { name: 'k', length: inter ? kLen : 0 },
      { name: 'v', length: inter ? vLen : 0 },
      { name: 'scores', length: inter ? hnn : 0 },
      { name: 'weights', length: inter ? hnn : 0 },
      { name: 'concat', length: inter ? cLen : 0 },
    ]);
    let result;
    try {
      check(fn, m.multiHeadAttention(n, dModel, heads, kvHeads, dk, dv, scale !== undefined, scale ?? 0, causal,
        a.at(0), x.length, a.at(1), wq.length, a.at(2), wk.length, a.at(3), wv.length, a.at(4), wo.length,
        a.at(5), mask ? mask.length : 0, a.at(6), n * dModel,
        a.at(7), inter ? qLen : 0, a.at(8), inter ? kLen : 0, a.at(9), inter ? vLen : 0,
        a.at(10), a.at(11), inter ? hnn : 0, a.at(12), inter ? cLen : 0));
      result = { output: a.readInto(6, out) };
      if (!inter) return result;
      Object.assign(result, { q: a.read(7), k: a.read(8), v: a.read(9), concat: a.read(12) });
      result.heads = splitHeads(result, a.read(10), a.read(11), { n, heads, kvHeads, dk, dv });
      return result;
    } finally {
      a.free();
    }
  }

  return {
    backend,
    softmax,
    attention,
    multiHeadAttention,
    buildInfo: () => ({ version: info.version, backend, simd: info.simd, kernels: info.kernels }),
    get memoryBytes() {
      return m.HEAPU8.byteLength;
    },
  };
}

// Column block `index` (width w) of a row-major [rows × cols] matrix, as its own [rows × w] matrix.
function columns(src, rows, cols, index, w) {
  const out = new Float32Array(rows * w);
  for (let r = 0; r < rows; ++r) out.set(src.subarray(r * cols + index * w, r * cols + index * w + w), r * w);
  return out;
}

// Per-head views of the engine's stacked intermediates; query head h reads K/V head h / (heads / kvHeads).
function splitHeads(r, scores, weights, { n, heads, kvHeads, dk, dv }) {
  const group = heads / kvHeads;
  const list = [];
  for (let h = 0; h < heads; ++h) {
    const g = Math.floor(h / group);
    list.push({
      q: columns(r.q, n, heads * dk, h, dk),
      k: columns(r.k, n, kvHeads * dk, g, dk),
      v: columns(r.v, n, kvHeads * dv, g, dv),
      scores: scores.slice(h * n * n, (h + 1) * n * n),
      weights: weights.slice(h * n * n, (h + 1) * n * n),
      output: columns(r.concat, n, heads * dv, h, dv),
    });
  }
  return list;
}
