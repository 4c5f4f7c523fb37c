// Argument checks of the JS layer: types, unknown options and what cannot be written into a descriptor as it is
// (an empty array would read as "none", a non-integer cannot be an Int32Array entry). Sizes and values are the
// engine's to check. Each throws a TypeError (wrong type) or RangeError whose message names the function and the
// argument.

export function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'function') return 'a function';
  return v.constructor?.name ?? typeof v;
}

export function isF32(v) {
  return v instanceof Float32Array || Object.prototype.toString.call(v) === '[object Float32Array]';
}

export function isI32(v) {
  return v instanceof Int32Array || Object.prototype.toString.call(v) === '[object Int32Array]';
}

export function checkKeys(fn, obj, allowed) {
  for (const key of Object.keys(obj))
    if (!allowed.includes(key)) throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)} (expected one of ${allowed.join(', ')})`);
}

export function tensor(fn, name, v) {
  if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
  if (v.length === 0) throw new RangeError(`${fn}: ${name} must not be empty, got length 0`);
  return v;
}

export function optionalTensor(fn, name, v) {
  return v === undefined || v === null ? undefined : tensor(fn, name, v);
}

// A number, passed to the engine as it is (the engine checks its value and names it).
export function number(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  return v;
}

// A number that must be given.
export function required(fn, name, v) {
  if (v === undefined) throw new TypeError(`${fn}: ${name} is required, got undefined`);
  return number(fn, name, v);
}

// An optional number: undefined when left out.
export function optionalNumber(fn, name, v) {
  return v === undefined ? undefined : number(fn, name, v);
}

export function flag(fn, name, v) {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${describe(v)}`);
  return v;
}

// An optional caller-provided output buffer (the engine checks its length). Reusing one across calls skips
// allocating (and, in browsers, page-faulting in) a fresh output array every call.
export function outBuffer(fn, v, name = 'out') {
  if (v === undefined || v === null) return undefined;
  if (!isF32(v)) throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(v)}`);
  return v;
}

export function options(fn, opts) {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`${fn}: expected an options object, got ${describe(opts)}`);
  return opts;
}

// A tensor layout option: 'bhsd' → 0, 'bshd' → 1.
export function layoutCode(fn, name, v) {
  if (typeof v !== 'string') throw new TypeError(`${fn}: ${name} must be 'bhsd' or 'bshd', got ${describe(v)}`);
  if (v !== 'bhsd' && v !== 'bshd') throw new RangeError(`${fn}: ${name} must be 'bhsd' or 'bshd', got ${describe(v)}`);
  return v === 'bshd' ? 1 : 0;
}

// An Int32Array and nothing else: the GPT's token batches, which are large and never arrive as arrays.
export function int32Array(fn, name, v) {
  if (!isI32(v)) throw new TypeError(`${fn}: ${name} must be an Int32Array, got ${describe(v)}`);
  return v;
}

// A JS array or Int32Array of integers as an Int32Array (the engine checks the values). An entry an Int32Array
// cannot hold as it is (not an integer, past int32) is refused here: the conversion would change it.
export function int32s(fn, name, v) {
  if (isI32(v)) return v;
  if (!Array.isArray(v)) throw new TypeError(`${fn}: ${name} must be an Int32Array or an array of integers, got ${describe(v)}`);
  return Int32Array.from(v, (x, i) => int32(fn, `${name}[${i}]`, x));
}

// Token ids, for the tokenizer and the models alike (one contract: what decode takes, forward and generate take): an
// Int32Array as it is; another integer typed array or an array of integers copied into one. An entry an Int32Array
// cannot hold as it is (not an integer, past int32: a Uint32Array's 2³¹ and up) is refused naming its index; the
// engine checks that each is a token id. Float and BigInt arrays are refused: ids are integers that fit an int32.
const INTEGER_ARRAYS = new Set(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Uint32Array']);
export function tokenIds(fn, name, v) {
  if (isI32(v)) return v;
  const typed = ArrayBuffer.isView(v) && INTEGER_ARRAYS.has(Object.prototype.toString.call(v).slice(8, -1));
  if (!typed && !Array.isArray(v))
    throw new TypeError(`${fn}: ${name} must be an Int32Array, another integer typed array (Uint32Array, Uint16Array, …) or an array of integers, got ${describe(v)}`);
  return Int32Array.from(v, (x, i) => int32(fn, `${name}[${i}]`, x));
}

// A list that must not be empty: in a descriptor, an empty tensor reads as one left out.
export function nonEmpty(fn, name, v) {
  if (v.length === 0) throw new RangeError(`${fn}: ${name} must not be empty, got length 0`);
  return v;
}

export function int32(fn, name, x) {
  if (typeof x !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(x)}`);
  if (!Number.isInteger(x) || x < -0x80000000 || x > 0x7fffffff) throw new RangeError(`${fn}: ${name} must be an integer (32-bit), got ${x}`);
  return x;
}
