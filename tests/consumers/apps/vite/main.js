// Vite: the page and a module worker import 'attnlab'; Vite emits the .wasm files from new URL(…, import.meta.url).
// The page loads the operators' modules, the worker the ones with the small GPT.
import { init } from 'attnlab';
import { report } from '../check.js';

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const fromWorker = new Promise((resolve) => (worker.onmessage = (e) => resolve(e.data)));
Promise.all([report(init), fromWorker]).then(([main, inWorker]) => (window.__result = { main, worker: inWorker }));
