// Moving tensors in and out of wasm memory, and turning the engine's status into an exception.

// Above this a call can never fit in wasm32 memory (2 GiB maximum): refuse before allocating.
const MAX_BYTES = 2 ** 31;

// One allocation per call for every tensor (inputs and outputs), each 16-byte aligned for the SIMD loads.
// Returns { at(i) → byte address of tensor i, read(i) → copy of output i }; frees in finally via free().
export function arena(m, fn, parts) {
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

export function check(fn, status) {
  if (status.kind === 0) return;
  const message = `${fn}: ${status.message}`;
  throw status.kind === 1 ? new RangeError(message) : new Error(message);
}
