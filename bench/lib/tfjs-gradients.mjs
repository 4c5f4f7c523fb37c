// TensorFlow.js for the benches that take gradients (train.mjs, attention-backward.mjs): the wasm backend on one
// thread, loaded from tfjs's ES module build so that tfjs-core's gradients register into the engine the backend
// runs on (the CommonJS bundle has none; see tfjs-esm-hooks.mjs).
import { createRequire, register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Returns { tf, tfwasm } with the wasm backend ready, one thread, every gradient registered. */
export async function loadTfjsWithGradients() {
  register('./tfjs-esm-hooks.mjs', import.meta.url);
  globalThis.require ??= createRequire(import.meta.url);  // tfjs-core's ESM build reaches Node's util through require
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
  const tfwasm = await import('@tensorflow/tfjs-backend-wasm');
  tfwasm.setThreadsCount(1);
  tfwasm.setWasmPaths(path.join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist') + path.sep);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  return { tf, tfwasm };
}
