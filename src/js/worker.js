// The code one worker of init({ threads }) runs: its own instance of the engine, built from the compiled module
// the main lab sends it (no second download), running engine calls whose descriptors the calling thread prepared
// and checked (call.js): a part of a split call, or a whole call. The worker parses no option: the descriptor says
// everything, and the worker's engine validates it again. Not imported by the entries: scripts/build-wasm.sh bundles
// this file with the glue into one classic script (attnlab-worker.js, and the same text as a string in
// attnlab-worker.inline.js), which threads.js starts from a Blob URL in browsers (so it works on file:// pages and
// needs no bundler support) and with worker_threads' eval in Node: one code path for both. For a GPT module it also
// runs the training part GPT.trainStepAsync sends (worker-gpt.js; the model's code is in the module), and it holds
// the shards of models placed on the workers and runs their steps (worker-lm.js).
import createAttnlab from './attnlab.mjs';
import { engineCall } from './call.js';
import { makeGptWorker } from './worker-gpt.js';
import { makeLmWorker } from './worker-lm.js';
import { hasGpt } from './variant.js';

// Node's threads.js sets globalThis.__attnlabPort (worker_threads' parentPort) before this runs.
const nodePort = globalThis.__attnlabPort;
const post = (message, transfer) => (nodePort ?? self).postMessage(message, transfer);
const listen = (handle) => (nodePort ? nodePort.on('message', handle) : self.addEventListener('message', (e) => handle(e.data)));

let m, gptTrain;

// Every distinct ArrayBuffer under a result (arrays, objects of arrays, arrays of those), to transfer back. A
// SharedArrayBuffer is not transferable (and needs no transfer): it is left out.
const shared = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : null;
function buffers(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (!(shared && value.buffer instanceof shared)) found.add(value.buffer);
  } else if (Array.isArray(value)) for (const v of value) buffers(v, found);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) buffers(v, found);
  return [...found];
}

const ops = {
  // Engine calls of one kind (a part of a call, or a whole call): each checked and run by this worker's engine. The
  // inputs go back too, for the calling thread to reuse.
  call: ({ name, fn, calls }) => {
    const op = engineCall(m, name);
    return { values: calls.map(({ d, given }) => op.call(fn, d, given)), spare: calls.map(({ given }) => Object.values(given)) };
  },
  gptTrain: (message) => gptTrain(message),
};
// Models placed on the workers (lab.loadModel with threads): their shards and steps.
const lm = makeLmWorker(() => m, instantiate);
Object.assign(ops, lm.ops);

function instantiate(module) {
  return new Promise((resolve, reject) => {
    createAttnlab({
      instantiateWasm(imports, done) {
        WebAssembly.instantiate(module, imports).then((instance) => done(instance, module), reject);
        return {};
      },
    }).then(resolve, reject);
  });
}

listen(async (message) => {
  const { id, op } = message;
  if (op === 'lmAbort') return lm.control(message);  // (no reply: it is not a call)
  try {
    if (op === 'init') {
      m = await instantiate(message.module);
      if (hasGpt(m)) gptTrain = makeGptWorker(m);
      post({ id, ok: true, value: m.buildInfo().simd });
      return;
    }
    let value = ops[op](message);
    if (value instanceof Promise) value = await value;  // a model's step that exchanges through messages
    post({ id, ok: true, value }, buffers(value));
  } catch (e) {
    post({ id, ok: false, error: { name: e?.name ?? 'Error', message: e?.message ?? String(e) } });
  }
});
