// Argument checks of the JS layer: types, unknown options and what the engine cannot see. Each throws a
// TypeError (wrong type) or RangeError (wrong size or value) whose message names the function and the argument.

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

// Sizes are integers ≥ 1 that also fit the engine's 32-bit size_t.
export function size(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  if (!Number.isInteger(v) || v < 1 || v > 0x7fffffff) throw new RangeError(`${fn}: ${name} must be an integer >= 1, got ${v}`);
  return v;
}

// A number, passed to the engine as it is (the engine checks its value and names it).
export function number(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  return v;
}

export function flag(fn, name, v) {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${describe(v)}`);
  return v;
}

// A positive float option checked in JS (softmaxBackward's temperature; attention and softmax pass theirs to the
// engine, which checks them).
export function positive(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(v)}`);
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${fn}: ${name} must be finite and > 0, got ${v}`);
  // The engine computes in float32: the value must survive the conversion.
  const f = Math.fround(v);
  if (f === 0 || f === Infinity) throw new RangeError(`${fn}: ${name} must be within float32 range (1.4e-45 … 3.4e38), got ${v}`);
  return v;
}

// `total` elements split in rows of `per`: the row count, or a RangeError naming both.
export function quotient(fn, name, total, per, perName) {
  const q = total / per;
  if (!Number.isInteger(q)) throw new RangeError(`${fn}: ${name}.length must be a multiple of ${perName} = ${per}, got ${total}`);
  return q;
}

export function length(fn, name, v, want, shape) {
  if (v.length !== want) throw new RangeError(`${fn}: ${name} must have ${shape} = ${want} elements, got ${v.length}`);
}

// An optional caller-provided output buffer: a Float32Array of exactly the output's length. Reusing one
// across calls skips allocating (and, in browsers, page-faulting in) a fresh output array every call.
export function outBuffer(fn, v, want, shape) {
  if (v === undefined || v === null) return undefined;
  if (!isF32(v)) throw new TypeError(`${fn}: out must be a Float32Array, got ${describe(v)}`);
  if (v.length !== want) throw new RangeError(`${fn}: out must have ${shape} = ${want} elements, got ${v.length}`);
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

// A JS array or Int32Array of integers as an Int32Array (the engine checks the values).
export function int32s(fn, name, v) {
  if (v instanceof Int32Array) return v;
  if (!Array.isArray(v)) throw new TypeError(`${fn}: ${name} must be an Int32Array or an array of integers, got ${describe(v)}`);
  return Int32Array.from(v, (x, i) => {
    if (typeof x !== 'number') throw new TypeError(`${fn}: ${name}[${i}] must be a number, got ${describe(x)}`);
    if (!Number.isInteger(x) || Math.abs(x) > 0x7fffffff) throw new RangeError(`${fn}: ${name}[${i}] must be an integer, got ${x}`);
    return x;
  });
}
