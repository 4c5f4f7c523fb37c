// Moving tensors in and out of wasm memory, and turning the engine's status into an exception.

// Above this a call can never fit in wasm32 memory (2 GiB maximum): refuse before allocating.
const MAX_BYTES = 2 ** 31;

const BYTES = { f32: 4, f64: 8, i32: 4, u8: 1 };
const heapOf = (m, type) => (type === 'f64' ? m.HEAPF64 : type === 'i32' ? m.HEAP32 : type === 'u8' ? m.HEAPU8 : m.HEAPF32);

// One allocation per call for every tensor (inputs and outputs), each 16-byte aligned for the SIMD loads.
// A part is { name, length (elements), data?, type? ('f32' default, 'f64', 'i32', 'u8') }.
// Returns { at(i) → byte address of part i (0 when empty), read(i) → copy of part i, readInto(i, out), view(i) },
// freed in finally via free().
export function arena(m, fn, parts) {
  const offsets = [];
  let bytes = 0;
  for (const p of parts) {
    // A length computed from a bad size must never reach _malloc (NaN would allocate 0 bytes and write past them).
    if (!(Number.isSafeInteger(p.length) && p.length >= 0)) throw new RangeError(`${fn}: ${p.name} would need ${p.length} elements`);
    offsets.push(bytes);
    bytes += Math.ceil((p.length * BYTES[p.type ?? 'f32']) / 16) * 16;
  }
  if (bytes > MAX_BYTES) {
    const big = parts.reduce((a, b) => (b.length > a.length ? b : a));
    throw new RangeError(`${fn}: this call needs ${bytes} bytes of wasm memory (${big.name} alone has ${big.length} elements); the limit is 2 GiB`);
  }
  const base = m._malloc(bytes);
  if (!base) throw new Error(`${fn}: out of memory allocating ${bytes} bytes of wasm memory`);
  // _malloc may have grown memory: take the heap views only now, once for all copies.
  parts.forEach((p, i) => {
    if (p.data) {
      const type = p.type ?? 'f32';
      heapOf(m, type).set(p.data, (base + offsets[i]) / BYTES[type]);
    }
  });
  // The call may have grown memory too: every read goes through the current view.
  const view = (i) => {
    const type = parts[i].type ?? 'f32', start = (base + offsets[i]) / BYTES[type];
    return heapOf(m, type).subarray(start, start + parts[i].length);
  };
  return {
    at: (i) => (parts[i].length ? base + offsets[i] : 0),
    view,
    read: (i) => view(i).slice(),
    // Part i into the caller's buffer, or a new copy when there is none.
    readInto: (i, out) => {
      if (!out) return view(i).slice();
      out.set(view(i));
      return out;
    },
    free: () => m._free(base),
  };
}

export function check(fn, status) {
  if (status.kind === 0) return;
  const message = `${fn}: ${status.message}`;
  throw status.kind === 1 ? new RangeError(message) : new Error(message);
}

// For calls that return only the error kind: the message comes from lastStatus() when there is one.
export function checkKind(m, fn, kind) {
  if (kind !== 0) check(fn, m.lastStatus());
}
