// The one way a call crosses into the engine (src/wasm/call.h): a descriptor of float64 fields, one address
// passed (attnlab_call(index, address), a plain wasm export), the error kind returned and the message read from
// lastStatus(). engineCall() reads a call's number and field list from the module once (callIndex, callFields);
// each call then goes in two steps:
//   check(fn, d, given)  the descriptor with no tensor in memory (addresses 0, the lengths of `given`): the engine
//                        validates every size and option, resolves what was left out (sizes, broadcast shapes, the
//                        lengths of the outputs) and writes it back into `d`, computing nothing. Nothing is
//                        allocated for a call the engine refuses here.
//   run(fn, d, given)    one allocation for every tensor the checked descriptor names, the inputs copied in, the
//                        call, the outputs read back (into the caller's buffers where `given` has them), freed.
//   open(fn, d, given)   check and run, the tensors kept until close(): a call that starts work which later calls
//                        finish (a model shard's step: its phases, one call each, write the outputs), read by outputs().
// `d` is the call's descriptor as a Float64Array (descriptor()), written by the op's file by field index (F) with
// the JS values as given: the engine converts and checks them. `given` maps tensor fields to typed arrays: an
// input's data (or a list of arrays, laid end to end), an output's buffer. Errors come back one way for every call:
// RangeError (kind 1) or Error (out of memory, numerical), `fn: message`.

const ELEMENTS = {
  f32: { bytes: 4, heap: 'HEAPF32' },
  i32: { bytes: 4, heap: 'HEAP32' },
  u8: { bytes: 1, heap: 'HEAPU8' },
  f64: { bytes: 8, heap: 'HEAPF64' },
};

/** The engine's error for a failed call: the message of lastStatus(), prefixed with the function's name. */
function engineError(m, fn, kind) {
  const message = `${fn}: ${m.lastStatus().message}`;
  return kind === 1 ? new RangeError(message) : new Error(message);
}

/** Writes an optional number (an O field: its value, and whether it was given) unless it is undefined. */
export function option(d, at, value) {
  if (value !== undefined) d[at] = value, d[at + 1] = 1;
}

// The length of a list of arrays laid end to end (a typed array's is its own).
const lengthOf = (list) => list.reduce((n, a) => n + a.length, 0);

/**
 * The engine call `name` of module `m`: its fields' indices (F: field → slot), a descriptor kept in wasm memory for
 * the module's life, and check/run/call. An output the field list marks `over_NAME` shares input NAME's memory
 * (the engine writes over it: softmax, rope), so the call holds one buffer instead of two.
 */
export function engineCall(m, name) {
  let calls = made.get(m);
  if (!calls) made.set(m, (calls = new Map()));
  let call = calls.get(name);
  if (!call) calls.set(name, (call = makeCall(m, name)));
  return call;
}

const made = new WeakMap(); // module → name → its call (one descriptor per call and module)

function makeCall(m, name) {
  const slotOf = []; // [field, slot]
  const tensors = [];
  let slots = 0;
  const index = m.callIndex(name);
  if (index < 0) throw new Error(`attnlab: this module has no engine call named ${name}`);
  for (const field of m.callFields(index).split(',')) {
    if (!field) continue;
    const [key, type, dir] = field.split(':');
    if (type) {
      slotOf.push([key, slots]);
      tensors.push({ key, slot: slots, ...ELEMENTS[type], input: dir === 'in', shares: dir.startsWith('over_') ? dir.slice(5) : null });
      slots += 2;
    } else if (key.endsWith('?')) {
      slotOf.push([key.slice(0, -1), slots]); // value, then whether it was given
      slots += 2;
    } else {
      slotOf.push([key, slots]);
      slots += 1;
    }
  }
  // (built at once: an object grown key by key past a few dozen keys becomes a slow dictionary, and the ops read
  // F on every call)
  const F = Object.fromEntries(slotOf);
  for (const t of tensors) if (t.shares) t.shares = tensors.find((s) => s.key === t.shares);
  const enter = m._attnlab_call;
  const at = m._malloc(slots * 8);
  if (!at) throw new Error(`${name}: out of memory allocating the call's descriptor`);
  const start = at >>> 3;
  // Scratch kept for the module's life (calls never nest): run()'s offsets, the descriptor that descriptor() hands
  // out, and the descriptor's view in wasm memory (taken again after memory grew).
  const offsets = new Float64Array(tensors.length);
  const scratch = new Float64Array(slots);
  let view = m.HEAPF64.subarray(start, start + slots);

  function cross(fn, d) {
    if (view.buffer !== m.HEAPF64.buffer) view = m.HEAPF64.subarray(start, start + slots);
    view.set(d);
    const kind = enter(index, at);
    if (view.buffer !== m.HEAPF64.buffer) view = m.HEAPF64.subarray(start, start + slots);
    d.set(view);
    if (kind !== 0) throw engineError(m, fn, kind);
  }

  function check(fn, d, given) {
    d[0] = 1;
    for (const t of tensors) {
      const v = given[t.key];
      d[t.slot] = 0;
      d[t.slot + 1] = !v ? 0 : Array.isArray(v) ? lengthOf(v) : v.length;
    }
    cross(fn, d);
    return d;
  }

  // One allocation for every tensor the checked descriptor `d` names, the inputs copied in, the addresses written
  // into `d`; returns the allocation's address (0: none).
  function place(fn, d, given) {
    let bytes = 0;
    for (let i = 0; i < tensors.length; ++i) {
      const t = tensors[i], len = d[t.slot + 1];
      offsets[i] = bytes;
      if (len && !t.shares) bytes += Math.ceil((len * t.bytes) / 16) * 16; // 16-byte aligned for the SIMD loads
    }
    const base = bytes ? m._malloc(bytes) : 0;
    if (bytes && !base) throw new Error(`${fn}: out of memory allocating ${bytes} bytes of wasm memory`);
    // _malloc may have grown memory: the heap views are taken only now. (An output that shares an input's memory
    // comes after it in the field list.)
    for (let i = 0; i < tensors.length; ++i) {
      const t = tensors[i];
      if (!d[t.slot + 1]) continue;
      if (t.shares) {
        d[t.slot] = d[t.shares.slot];
        continue;
      }
      const address = base + offsets[i];
      d[t.slot] = address;
      const v = t.input ? given[t.key] : undefined;
      if (!v) continue;
      if (Array.isArray(v)) {
        let to = address / t.bytes;
        for (const a of v) m[t.heap].set(a, to), (to += a.length);
      } else {
        m[t.heap].set(v, address / t.bytes);
      }
    }
    return base;
  }

  // The outputs of a call that ran, read back (into the caller's buffers where `given` has them). The call may have
  // grown memory: every read goes through the current view.
  function outputs(d, given) {
    const result = {};
    for (const t of tensors) {
      const len = d[t.slot + 1];
      if (t.input || !len) continue;
      const from = d[t.slot] / t.bytes, into = given[t.key];
      result[t.key] = into ? (into.set(m[t.heap].subarray(from, from + len)), into) : m[t.heap].slice(from, from + len);
    }
    return result;
  }

  function run(fn, d, given) {
    const base = place(fn, d, given);
    try {
      d[0] = 0;
      cross(fn, d);
      return outputs(d, given);
    } finally {
      if (base) m._free(base);
    }
  }

  return {
    F,
    name,
    /** The input tensors of `given` (what a worker running the call needs). */
    inputs(given) {
      const r = {};
      for (const t of tensors) if (t.input && given[t.key]) r[t.key] = given[t.key];
      return r;
    },
    /** Outputs computed elsewhere (a worker's run) into the caller's buffers of `given`, where it has them. */
    deliver(outputs, given) {
      for (const t of tensors) {
        const into = given[t.key];
        if (!t.input && into && outputs[t.key]) into.set(outputs[t.key]), (outputs[t.key] = into);
      }
      return outputs;
    },
    /**
     * A descriptor with every field 0 (numbers 0, options not given, tensors absent): this call's scratch, valid until
     * its next descriptor() (one call at a time: a caller that keeps one across another call keeps a copy).
     */
    descriptor: () => scratch.fill(0),
    check,
    run,
    /**
     * check, then run, its tensors kept in wasm memory until close(): for a call that starts work which later calls
     * finish (a model shard's step, whose phases write its outputs); outputs() reads them back then.
     */
    open(fn, d, given = {}) {
      check(fn, d, given);
      const base = place(fn, d, given);
      try {
        d[0] = 0;
        cross(fn, d);
      } catch (e) {
        if (base) m._free(base);
        throw e;
      }
      const held = d.slice();
      return {
        outputs: () => outputs(held, given),
        close: () => {
          if (base) m._free(base);
        },
      };
    },
    /** check, then run: the whole call (a call without tensors crosses once). */
    call(fn, d, given = {}) {
      if (!tensors.length) {
        d[0] = 0;
        cross(fn, d);
        return {};
      }
      check(fn, d, given);
      return run(fn, d, given);
    },
  };
}
