// What every operator's cases share: output buffers of every kind, wrong values of every type for an option, and
// the shape of a mutation — one thing wrong with a valid call, the error class it must raise and the names its
// message may use for the argument.

// What an `out` holds before a call: a call that throws must leave exactly this.
export const SENTINEL = -7.25;

/** An output buffer of `length` floats: plain, backed by a SharedArrayBuffer, or a view inside a larger array. */
export function outBuffer(r, length) {
  const kind = r.pick(['plain', 'plain', 'shared', 'view']);
  if (kind === 'shared') return new Float32Array(new SharedArrayBuffer(4 * length)).fill(SENTINEL);
  if (kind === 'view') {
    const before = r.int(1, 5), after = r.int(0, 5);
    return new Float32Array(before + length + after).fill(SENTINEL).subarray(before, before + length);
  }
  return new Float32Array(length).fill(SENTINEL);
}

/**
 * A mutation: `args` (the call with one thing wrong), the class it must throw (`cls`: 'TypeError', 'RangeError' or
 * 'Error'), `names`: the message must name one of them (the argument, or the sizes its length is made of), and a
 * `tag` for families that share a cause (known.mjs matches on it).
 */
export const bad = (name, args, cls, names, tag) => ({ name, args, cls, names, ...(tag ? { tag } : {}) });

/** Something that is not a Float32Array, and the class its refusal must have. */
export function notF32(r, x) {
  return r.pick([
    () => ({ value: Array.from(x ?? [1]), cls: 'TypeError' }),
    () => ({ value: Float64Array.from(x ?? [1]), cls: 'TypeError' }),
    () => ({ value: 'x', cls: 'TypeError' }),
    () => ({ value: 3, cls: 'TypeError' }),
  ])();
}

/** A value no size option accepts. */
export function badSize(r) {
  return r.pick([
    { value: 0, cls: 'RangeError' }, { value: -1, cls: 'RangeError' }, { value: 1.5, cls: 'RangeError' },
    { value: Number.NaN, cls: 'RangeError' }, { value: Infinity, cls: 'RangeError' }, { value: 2 ** 32 + 1, cls: 'RangeError' },
    { value: '2', cls: 'TypeError' }, { value: null, cls: 'TypeError' },
  ]);
}

/** A value no boolean option accepts. */
export const badFlag = (r) => r.pick([1, 'true', null, 0]);

/** An unknown option name, near a real one or not. */
export const unknownKey = (r, known) => r.pick([...known.slice(0, 3).map((k) => `${k}s`), 'foo', 'causual', 'Scale', 'mask_shape']);

/** x with one entry replaced by a value the engine refuses (NaN or +Infinity; -Infinity where only it is allowed). */
export function poisoned(r, x, { negInf = false } = {}) {
  const y = Float32Array.from(x);
  y[r.int(0, y.length - 1)] = r.pick(negInf ? [Number.NaN, Infinity] : [Number.NaN, Infinity, -Infinity]);
  return y;
}

/** x one element shorter (a view) or longer (a copy). */
export function offByOne(r, x) {
  if (x.length > 1 && r.bool()) return x.slice(0, x.length - 1);
  const y = new x.constructor(x.length + 1);
  y.set(x);
  return y;
}

/** Picks one applicable mutation (each a function (r) → mutation or null) at random. */
export function pickMutation(r, candidates) {
  const order = candidates.map((f) => [r.next(), f]).sort((a, b) => a[0] - b[0]).map(([, f]) => f);
  for (const f of order) {
    const m = f(r);
    if (m) return m;
  }
  return null;
}

/** Transposes a row-major [rows × cols] matrix. */
export function transpose(x, rows, cols) {
  const t = new Float32Array(x.length);
  for (let i = 0; i < rows; ++i) for (let j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}

/** The bounds must be real numbers, or a check `err > bound` would pass vacuously. */
export function checked(ref, label) {
  for (let i = 0; i < ref.bound.length; ++i)
    if (!(ref.bound[i] >= 0)) throw new Error(`${label}: reference bound[${i}] is ${ref.bound[i]} (the case cannot be checked)`);
  return ref;
}
