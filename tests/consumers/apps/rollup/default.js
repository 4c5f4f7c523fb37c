// Rollup 4 with only @rollup/plugin-node-resolve, for the browser: attnlab, whose .wasm files are not beside the
// bundle; its copies inside the JS become chunks, and init() fetches the one it needs.
import { init } from 'attnlab';
import { report } from '../check.js';

report(init).then((main) => (window.__result = { main }));
