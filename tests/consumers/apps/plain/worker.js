// A module Web Worker without a bundler.
import { init } from '/node_modules/attnlab/dist/index.js';
import { report } from '/check.js';

report(init).then((r) => postMessage(r));
