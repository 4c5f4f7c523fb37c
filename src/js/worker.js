// The code one worker of init({ threads }) runs: its own instance of the engine, built from the compiled module
// the main lab sends it (no second download), answering one part of a call at a time. Not imported by the
// entries: scripts/build-wasm.sh bundles this file with the glue and the lab into one classic script
// (attnlab-worker.js, and the same text as a string in attnlab-worker.inline.js), which threads.js starts from a
// Blob URL in browsers (so it works on file:// pages and needs no bundler support) and with worker_threads' eval
// in Node: one code path for both. Only the operators the async twins send are in it (no KV cache), for a
// GPT module the one training part GPT.trainStepAsync sends (worker-gpt.js; the model's code is in the module),
// and the shards of models placed on the workers (worker-lm.js).
import createAttnlab from './attnlab.mjs';
import { makeRangedAttention } from './attention.js';
import { makeAttentionBackward } from './attention-backward.js';
import { makeGptWorker } from './worker-gpt.js';
import { makeLmWorker } from './worker-lm.js';
import { makeMatmul } from './matmul.js';
import { arena, check } from './memory.js';
import { makeMultiHeadAttention } from './multihead.js';
import { makeRope } from './rope.js';
import { makeSoftmaxBackward } from './softmax-backward.js';

// Node's threads.js sets globalThis.__attnlabPort (worker_threads' parentPort) before this runs.
const nodePort = globalThis.__attnlabPort;
const post = (message, transfer) => (nodePort ?? self).postMessage(message, transfer);
const listen = (handle) => (nodePort ? nodePort.on('message', handle) : self.addEventListener('message', (e) => handle(e.data)));

let m, lab;

// Every distinct ArrayBuffer under a result (arrays, objects of arrays, arrays of those), to transfer back.
function buffers(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) found.add(value.buffer);
  else if (Array.isArray(value)) for (const v of value) buffers(v, found);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) buffers(v, found);
  return [...found];
}

// Rows of softmax with the engine's index offset, so a bad value is named x[offset + …] as in one whole call.
function softmaxRows({ x, cols, temperature, log, offset }) {
  const a = arena(m, 'softmax', [{ name: 'x', length: x.length, data: x }]);
  try {
    check('softmax', m.softmax(a.at(0), x.length, cols, temperature, log, a.at(0), offset));
    return a.readInto(0, x); // x is this worker's own copy
  } finally {
    a.free();
  }
}

// The typed arrays of a sub-call's options (its out included: the result holds it).
const inputs = (opts) => Object.entries(opts).filter(([key, v]) => key !== 'out' && ArrayBuffer.isView(v)).map(([, v]) => v);

const ops = {
  softmax: softmaxRows,
  softmaxBackward: ({ y, dy, cols, temperature, log }) => lab.softmaxBackward({ y, dy, cols, temperature, log }),
  matmul: ({ a, b, m: rows, k, n, transposeB }) => lab.matmul(a, b, { m: rows, k, n, transposeB }),
  // A part of attentionAsync: sub-calls that each hold a range of query rows (attention-parts.js). The inputs go
  // back too, for the calling thread to reuse.
  attentionParts: ({ calls }) => ({ values: calls.map(({ opts, part }) => lab.attention(opts, part)), spare: calls.map(({ opts }) => inputs(opts)) }),
  attentionBackwardParts: ({ calls }) => ({ values: calls.map((opts) => lab.attentionBackward(opts)), spare: calls.map(inputs) }),
  // A whole call of any lab function (the ops that are not split: rope, multiHeadAttention; a backward call its
  // planner does not cut).
  call: ({ name, args }) => lab[name](...args),
  gptGradients: (message) => lab.gptGradients(message),
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
      lab = {
        attention: makeRangedAttention(m), matmul: makeMatmul(m), multiHeadAttention: makeMultiHeadAttention(m),
        rope: makeRope(m), softmaxBackward: makeSoftmaxBackward(m), attentionBackward: makeAttentionBackward(m),
      };
      if (typeof m.GPTModel === 'function') lab.gptGradients = makeGptWorker(m);
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
