// The worker pool behind init({ threads }): n workers, each with its own instance of the main lab's compiled
// module (sent to it, never downloaded again), fed parts of calls from one queue, and — for a model placed on
// them (lm-workers.js) — messages addressed to one worker, from that worker's own queue, which it serves first.
// A step of such a model runs on several workers at once (they wait for each other): its messages are queued to
// all of them in one go, so every worker sees every model's steps in the same order and none waits for a step
// another worker has not taken. Workers start from the text of
// the bundled worker script (worker.js; the URL entry loads attnlab-worker.js, the inline entry carries it): a
// Blob URL in browsers — works from file:// and cross-origin hosts, needs no SharedArrayBuffer or cross-origin
// isolation — and worker_threads with eval in Node. In Node an idle worker is unref'd, so a script that is done
// exits.

const isNode = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

async function nodeModule(name) {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ name);
}

const ERRORS = { TypeError, RangeError, Error };

// An error from a worker as the same class with the same message.
function rebuild({ name, message }) {
  const E = ERRORS[name] ?? Error;
  const e = new E(message);
  if (!(name in ERRORS)) e.name = name;
  return e;
}

/** Marks a failure to send a part (postMessage could not clone an argument): the caller runs the call itself. */
export class NotSent extends Error {}

/** Whether this thread's memory can be shared with workers: SharedArrayBuffer exists and may be posted. */
export function canShare() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
  return isNode || globalThis.crossOriginIsolated === true;
}

// One worker behind a common interface: post(message, transfer), onMessage/onFailure handlers, ref/unref, stop.
async function spawn(url, source) {
  if (isNode) {
    const { Worker } = await nodeModule('node:worker_threads');
    // The port, and require for a glue that reads files under Node (the debug build's), in CommonJS and ESM eval alike.
    const prelude = "globalThis.__attnlabPort = process.getBuiltinModule('node:worker_threads').parentPort;\n" +
      'var require = globalThis.require ?? ((name) => process.getBuiltinModule(name));\n';
    const w = new Worker(prelude + source, { eval: true });
    w.unref();
    const handle = {
      post: (message, transfer) => w.postMessage(message, transfer),
      ref: () => w.ref(),
      unref: () => w.unref(),
      stop: () => w.terminate(),
    };
    w.on('message', (data) => handle.onMessage(data));
    w.on('error', (e) => handle.onFailure(e));
    w.on('exit', (code) => handle.onFailure(new Error(`worker exited (code ${code})`)));
    return handle;
  }
  const w = new Worker(url);
  const handle = {
    post: (message, transfer) => w.postMessage(message, transfer),
    ref() {},
    unref() {},
    stop: () => w.terminate(),
  };
  w.addEventListener('message', (e) => handle.onMessage(e.data));
  w.addEventListener('error', (e) => {
    e.preventDefault();
    handle.onFailure(new Error(e.message || 'the worker could not start (is worker-src blob: allowed by the page\'s Content-Security-Policy?)'));
  });
  return handle;
}

/**
 * Starts `count` workers running `source` (the worker script's text) on `module`; resolves once every one has
 * instantiated it.
 * @returns {Promise<{ size: number, run(message: object, transfer?: Transferable[]): Promise<any>, dispose(): void }>}
 */
export async function createPool(count, module, gpt, source) {
  const url = isNode ? undefined : URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  const queue = [];    // parts waiting for a worker: { message, transfer, resolve, reject }
  const idle = [];
  const all = [];
  const failureListeners = new Set();  // (worker, error) → void: a worker died
  let disposed = false, nextId = 1;

  async function start() {
    const w = await spawn(url, source);
    w.busy = null;
    w.queue = [];  // messages addressed to this worker
    w.onMessage = (data) => {
      const task = w.busy;
      w.busy = null;
      w.unref();
      if (task) (data.ok ? task.resolve(data.value) : task.reject(rebuild(data.error)));
      if (!disposed && w.ready) idle.push(w), pump(); // (a worker that just started joins through start()'s caller)
    };
    // A worker that died (an uncaught error, killed): its part fails, a fresh worker takes its place.
    w.onFailure = (e) => {
      if (w.dead) return;
      w.dead = true;
      const task = w.busy;
      w.busy = null;
      all.splice(all.indexOf(w), 1);
      const i = idle.indexOf(w);
      if (i >= 0) idle.splice(i, 1);
      const failure = new Error(`attnlab: a worker failed: ${e?.message ?? e}`);
      if (task) task.reject(failure);
      for (const t of w.queue.splice(0)) t.reject(failure);
      for (const listen of failureListeners) listen(w, failure);
      if (!disposed && w.ready) replace();
    };
    all.push(w);
    await new Promise((resolve, reject) => {
      w.busy = { resolve, reject };
      w.ref();
      w.post({ id: 0, op: 'init', module, gpt });
    });
    w.ready = true;
    return w;
  }

  function replace() {
    start().then((w) => {
      if (disposed) return w.stop();
      idle.push(w);
      pump();
    }, () => {});
  }

  function pump() {
    for (let i = idle.length - 1; i >= 0; --i) {
      const w = idle[i];
      const task = w.queue.length ? w.queue.shift() : queue.shift();
      if (!task) continue;
      idle.splice(i, 1);
      w.busy = task;
      w.ref();
      try {
        w.post({ ...task.message, id: nextId++ }, task.transfer);
      } catch (e) {
        w.busy = null;
        w.unref();
        idle.push(w);
        task.reject(new NotSent(e?.message ?? String(e)));
      }
    }
  }

  try {
    idle.push(...(await Promise.all(Array.from({ length: count }, start))));
  } catch (e) {
    if (url) URL.revokeObjectURL(url);
    for (const w of all) w.stop();
    throw new Error(`init: threads: could not start ${count} workers: ${e?.message ?? e}`, { cause: e });
  }

  const gone = () => new Error('attnlab: this lab was disposed; its workers are gone (async calls need a new init())');
  return {
    size: count,
    run(message, transfer = []) {
      if (disposed) return Promise.reject(gone());
      return new Promise((resolve, reject) => {
        queue.push({ message, transfer, resolve, reject });
        pump();
      });
    },
    /** The workers now (a model keeps the ones it was placed on: a worker that died is not among them later). */
    get members() {
      return all.filter((w) => w.ready && !w.dead);
    },
    /**
     * One message to each of `workers`, queued to all of them at once: one promise per worker. A worker that died
     * rejects.
     */
    runOn(workers, messages, transfers = []) {
      const runs = workers.map((w, i) => {
        if (disposed) return Promise.reject(gone());
        if (w.dead) return Promise.reject(new Error('attnlab: a worker failed: it is gone'));
        return new Promise((resolve, reject) => w.queue.push({ message: messages[i], transfer: transfers[i] ?? [], resolve, reject }));
      });
      pump();
      return runs;
    },
    /** A message a worker handles at once, even while it runs a call (no reply). */
    signal(w, message) {
      if (!w.dead && !disposed) w.post(message, []);
    },
    /** fn(worker, error) when a worker dies; returns the function that stops listening. */
    onFailure(fn) {
      failureListeners.add(fn);
      return () => failureListeners.delete(fn);
    },
    /** Ends a worker as if it had crashed (for tests of what follows). */
    kill(w) {
      w.stop();
      w.onFailure(new Error('it was ended'));  // (browsers' terminate() reports nothing)
    },
    get workers() {
      return all.length;
    },
    get disposed() {
      return disposed;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      if (url) URL.revokeObjectURL(url); // kept until now: a worker that dies is replaced from it
      for (const w of all.splice(0)) {
        w.dead = true;
        w.stop();
        w.busy?.reject(new Error('attnlab: this lab was disposed while a worker ran the call'));
      }
      idle.length = 0;
      for (const task of queue.splice(0)) task.reject(new Error('attnlab: this lab was disposed while the call waited for a worker'));
    },
  };
}
