// Cases as JSON, exactly: typed arrays with their type, their buffer (shared or not, and the view's place in it)
// and every value (NaN, ±Infinity and −0 included); undefined kept where a key is present. A failure prints its
// case this way, and `npm run fuzz:js -- --replay <file>` runs the very same call again.

const TYPED = { Float32Array, Float64Array, Int32Array, Uint8Array, Int8Array, Uint32Array, Int16Array };

// Above this many numbers a case is printed with its arrays' lengths only (its seed and index reproduce it).
export const FULL_LIMIT = 20000;

const num = (x) => (Number.isNaN(x) ? { $num: 'NaN' } : x === Infinity ? { $num: 'Infinity' } : x === -Infinity ? { $num: '-Infinity' }
  : Object.is(x, -0) ? { $num: '-0' } : x);

function count(v) {
  if (ArrayBuffer.isView(v)) return v.buffer.byteLength / v.BYTES_PER_ELEMENT;
  if (Array.isArray(v)) return v.reduce((s, x) => s + count(x), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce((s, x) => s + count(x), 0);
  return 1;
}

function encodeValue(v, full) {
  if (typeof v === 'number') return num(v);
  if (v === undefined) return { $undefined: true };
  if (ArrayBuffer.isView(v)) {
    const shared = typeof SharedArrayBuffer === 'function' && v.buffer instanceof SharedArrayBuffer;
    const whole = new v.constructor(v.buffer);
    const offset = v.byteOffset / v.BYTES_PER_ELEMENT;
    const t = { $typed: v.constructor.name, length: v.length };
    if (shared) t.shared = true;
    if (offset || whole.length !== v.length) Object.assign(t, { offset, bufferLength: whole.length });
    if (full) t.data = Array.from(whole, num);
    return t;
  }
  if (Array.isArray(v)) return v.map((x) => encodeValue(x, full));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encodeValue(x, full)]));
  return v;
}

/** The case as one JSON text; `full` false: typed arrays by type and length only. */
export function encode(c, full = count(c) <= FULL_LIMIT) {
  return JSON.stringify(encodeValue(c, full));
}

function decodeValue(v) {
  if (Array.isArray(v)) return v.map(decodeValue);
  if (!v || typeof v !== 'object') return v;
  if ('$num' in v) return Number(v.$num);
  if (v.$undefined) return undefined;
  if ('$typed' in v) {
    const T = TYPED[v.$typed];
    if (!v.data) throw new Error(`the case holds ${v.$typed}(${v.length}) without its values: reproduce it from its seed and index`);
    const n = v.bufferLength ?? v.length;
    const buffer = v.shared ? new SharedArrayBuffer(n * T.BYTES_PER_ELEMENT) : new ArrayBuffer(n * T.BYTES_PER_ELEMENT);
    const whole = new T(buffer);
    whole.set(v.data.map(decodeValue));
    return new T(buffer, (v.offset ?? 0) * T.BYTES_PER_ELEMENT, v.length);
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decodeValue(x)]));
}

export function decode(text) {
  return decodeValue(JSON.parse(text));
}

/** A deep copy in which every typed array has a buffer of its own (shared stays shared, a view stays a view). */
export function clone(v) {
  if (ArrayBuffer.isView(v)) {
    const shared = typeof SharedArrayBuffer === 'function' && v.buffer instanceof SharedArrayBuffer;
    const buffer = shared ? new SharedArrayBuffer(v.buffer.byteLength) : new ArrayBuffer(v.buffer.byteLength);
    new Uint8Array(buffer).set(new Uint8Array(v.buffer));
    return new v.constructor(buffer, v.byteOffset, v.length);
  }
  if (Array.isArray(v)) return v.map(clone);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)]));
  return v;
}

/** Every typed array under v (once each). */
export function arrays(v, found = new Set()) {
  if (ArrayBuffer.isView(v)) found.add(v);
  else if (Array.isArray(v)) for (const x of v) arrays(x, found);
  else if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) for (const x of Object.values(v)) arrays(x, found);
  return [...found];
}
