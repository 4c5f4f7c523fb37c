// Rollup 4 with only @rollup/plugin-node-resolve, for Node: attnlab, whose .wasm files are not beside the bundle;
// its copies inside the JS become chunks, and init() loads the one it needs.
import { init } from 'attnlab';
import { report } from '../check.js';

Promise.all([report(init), report(init, { gpt: true })]).then(([main, gpt]) => console.log(JSON.stringify({ main, gpt })));
