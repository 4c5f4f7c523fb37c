// How the workers holding a model's shards (lm-workers.js) exchange their partial sums during a step, without the
// calling thread: after each of a step's phases but the last (the embedding, each layer's attention and MLP), every
// shard's d_model floats per row go to every other shard, which adds them up in rank order (the engine's reduce).
// Then a greedy step's best logits (one float and one id per shard), or a sampled step's whole vocabulary of logits.
//   shared:  SharedArrayBuffers (Node always; browsers when the page is cross-origin isolated): each shard copies
//            its part into its slot, all meet at a barrier (Atomics: a short spin, then wait), each copies the
//            others' parts into its engine. Slots alternate between two sets, so a shard that runs ahead writes the
//            next exchange's part while a slower one still reads this one's; a barrier in between keeps the two
//            sets apart. Parts longer than a slot go in rounds.
//   message: MessagePorts between every two workers (where memory cannot be shared): each shard posts its part to
//            every other and waits for theirs — a copy per peer, and the worker's event loop between phases.
// Either way a shard that fails tells the others (ABORT, or a message), and they stop at their next exchange with a
// PeerFailed error; the calling thread reports the failing shard's own error.

/** Control words of the shared exchange (Int32Array over control): the barrier's count, the abort flag. */
export const ARRIVED = 0, ABORT = 1;
// Then, per set of slots and rank, a greedy step's best logit (float32 bits) and its token id.
const BEST = 4;
/** Floats of one shared slot: the rows of an exchange that fit one round (at least one row). */
export const SLOT_FLOATS = 1 << 16;

/** The shared buffers of a model on `ranks` workers (d_model floats per row). */
export function sharedBuffers(ranks, d) {
  const rows = Math.max(1, Math.floor(SLOT_FLOATS / d));
  return {
    control: new SharedArrayBuffer(4 * (BEST + 2 * 2 * ranks)),
    data: new SharedArrayBuffer(4 * 2 * ranks * rows * d),
    rows,
  };
}

export { canShare } from './threads.js';

/** What a shard throws when another one failed (the calling thread reports that one's error instead). */
export class PeerFailed extends Error {
  constructor() {
    super('another worker of this model failed during the step');
    this.name = 'PeerFailed';
  }
}

// How long a shard polls the barrier's count before it sleeps on it: a wake-up from Atomics.wait costs tens of
// microseconds, and the shards of a step usually arrive within a few of each other.
const SPIN_MS = 0.05;

// Copies floats [from, from + n) of the engine's heap into `to` at `at`, or back (the heap view is read fresh:
// the engine may have grown its memory).
const heap = (m) => m.HEAPF32;

export class SharedExchange {
  constructor({ control, data, rows }, rank, ranks, d) {
    this.control = new Int32Array(control);
    this.floats = new Float32Array(control);
    this.data = new Float32Array(data);
    this.rows = rows;
    this.rank = rank;
    this.ranks = ranks;
    this.d = d;
    this.e = 0;
    this.vocab = null;
    this.waited = 0;  // ms spent at barriers since the last take()
  }

  // A step starts: the calling thread reset the control words before sending it.
  start() {
    this.e = 0;
  }

  // Every shard reached exchange e (counted from the step's start): returns when all have, or throws PeerFailed.
  barrier() {
    const c = this.control, target = this.ranks * ++this.e;
    if (Atomics.add(c, ARRIVED, 1) + 1 >= target) {
      Atomics.notify(c, ARRIVED);
    } else {
      const t0 = performance.now();
      for (let spins = 0; ; ++spins) {
        const v = Atomics.load(c, ARRIVED);
        if (v >= target || Atomics.load(c, ABORT)) break;
        if (spins > 64 && performance.now() - t0 > SPIN_MS) Atomics.wait(c, ARRIVED, v, 100);
      }
      this.waited += performance.now() - t0;
    }
    if (Atomics.load(c, ABORT)) throw new PeerFailed();
  }

  // The engine's parts [ranks × rows × d] at float index `parts`: its own to the others, theirs into it.
  allReduce(m, parts, rows) {
    const d = this.d, P = this.ranks, count = rows * d, slot = this.rows * d;
    for (let r0 = 0; r0 < rows; r0 += this.rows) {
      const n = Math.min(this.rows, rows - r0) * d;
      const set = (this.e & 1) * P * slot;
      const own = parts + this.rank * count + r0 * d;
      this.data.set(heap(m).subarray(own, own + n), set + this.rank * slot);
      this.barrier();
      const h = heap(m);
      for (let r = 0; r < P; ++r)
        if (r !== this.rank) h.set(this.data.subarray(set + r * slot, set + r * slot + n), parts + r * count + r0 * d);
    }
  }

  // Greedy: the first largest logit over all shards (ranks in order of their vocabulary rows).
  best(value, index) {
    const at = BEST + (this.e & 1) * 2 * this.ranks;
    this.floats[at + 2 * this.rank] = value;
    this.control[at + 2 * this.rank + 1] = index;
    this.barrier();
    let token = -1, top = -Infinity;
    for (let r = 0; r < this.ranks; ++r) {
      const i = this.control[at + 2 * r + 1], v = this.floats[at + 2 * r];
      if (i >= 0 && (token < 0 || v > top)) token = i, top = v;
    }
    return token;
  }

  // Sampling: every shard's logits [from, from + n) of the vocabulary into everyone's `into` (float index of the
  // engine's whole-vocabulary buffer, V floats).
  gather(m, own, from, n, into, V) {
    this.vocab.set(heap(m).subarray(own, own + n), from);
    this.barrier();
    heap(m).set(this.vocab.subarray(0, V), into);
  }

  // This shard failed: the others stop at their next exchange.
  fail() {
    Atomics.store(this.control, ABORT, 1);
    Atomics.add(this.control, ARRIVED, 1);  // a shard about to sleep on the count sees it change
    Atomics.notify(this.control, ARRIVED);
  }

  take() {
    const w = this.waited;
    this.waited = 0;
    return w;
  }

  close() {}
}

/** From the calling thread: end a step in progress (dispose, a worker that died). */
export function abortShared(control) {
  const c = new Int32Array(control);
  Atomics.store(c, ABORT, 1);
  Atomics.add(c, ARRIVED, 1);
  Atomics.notify(c, ARRIVED);
}

/** From the calling thread, before each step: nobody waits at a barrier then. */
export function resetShared(control) {
  const c = new Int32Array(control);
  Atomics.store(c, ARRIVED, 0);
  Atomics.store(c, ABORT, 0);
}

export class PortExchange {
  // ports[r]: the port to rank r (none for this rank).
  constructor(ports, rank, ranks, d) {
    this.ports = ports;
    this.rank = rank;
    this.ranks = ranks;
    this.d = d;
    this.e = 0;
    this.inbox = new Map();  // "step:exchange" → [rank] → data
    this.waiting = null;     // { e, resolve, reject }
    this.failed = false;
    this.aborted = new Set();  // steps a peer gave up (perhaps before this shard started them)
    this.waited = 0;
    this.step = 0;           // messages of an earlier step are dropped
    ports.forEach((port, r) => {
      if (!port) return;
      const on = (data) => this.receive(r, data);
      if (typeof port.on === 'function') port.on('message', on);
      else port.onmessage = (ev) => on(ev.data);
      port.start?.();
      port.unref?.();
    });
  }

  start(step) {
    this.e = 0;
    this.step = step;
    this.failed = this.aborted.has(step);
    for (const key of [...this.inbox.keys()]) if (Number(key.split(':')[0]) < step) this.inbox.delete(key);
    for (const s of [...this.aborted]) if (s < step) this.aborted.delete(s);
  }

  receive(r, { step, e, data, abort }) {
    if (step < this.step) return;  // a message of a step that ended
    if (abort) {
      this.aborted.add(step);
      if (step === this.step) {
        this.failed = true;
        this.waiting?.reject(new PeerFailed());
      }
      return;
    }
    const key = `${step}:${e}`;
    let got = this.inbox.get(key);
    if (!got) this.inbox.set(key, (got = []));
    got[r] = data;
    this.settle();
  }

  settle() {
    const w = this.waiting;
    if (!w) return;
    const got = this.inbox.get(`${this.step}:${w.e}`);
    const count = got ? got.filter((x) => x !== undefined).length : 0;
    if (count === this.ranks - 1) {
      this.inbox.delete(`${this.step}:${w.e}`);
      this.waiting = null;
      w.resolve(got);
    }
  }

  // Posts `data` (a copy per peer) and resolves with every peer's, by rank.
  async swap(data) {
    const e = ++this.e;
    for (let r = 0; r < this.ranks; ++r) if (r !== this.rank) this.ports[r].postMessage({ step: this.step, e, data });
    if (this.failed) throw new PeerFailed();
    const t0 = performance.now();
    try {
      return await new Promise((resolve, reject) => {
        this.waiting = { e, resolve, reject };
        this.settle();
      });
    } finally {
      this.waited += performance.now() - t0;
    }
  }

  async allReduce(m, parts, rows) {
    const count = rows * this.d, own = parts + this.rank * count;
    const got = await this.swap(heap(m).slice(own, own + count));
    const h = heap(m);
    for (let r = 0; r < this.ranks; ++r) if (r !== this.rank) h.set(got[r], parts + r * count);
  }

  async best(value, index) {
    const got = await this.swap([value, index]);
    got[this.rank] = [value, index];
    let token = -1, top = -Infinity;
    for (const [v, i] of got) if (i >= 0 && (token < 0 || v > top)) token = i, top = v;
    return token;
  }

  async gather(m, own, from, n, into, V) {
    const got = await this.swap({ from, logits: heap(m).slice(own, own + n) });
    const h = heap(m);
    h.set(heap(m).subarray(own, own + n), into + from);
    for (let r = 0; r < this.ranks; ++r) if (r !== this.rank) h.set(got[r].logits, into + got[r].from);
    void V;
  }

  fail() {
    for (let r = 0; r < this.ranks; ++r) if (r !== this.rank) this.ports[r].postMessage({ step: this.step, abort: true });
  }

  // From the calling thread (a message to this worker): the step ends.
  abort(step) {
    this.aborted.add(step);
    if (step === this.step) {
      this.failed = true;
      this.waiting?.reject(new PeerFailed());
    }
  }

  take() {
    const w = this.waited;
    this.waited = 0;
    return w;
  }

  close() {
    for (const port of this.ports) port?.close();
  }
}
