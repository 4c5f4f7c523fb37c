// esbuild, browser ESM, with the URL entry: the .wasm is not beside the bundle, and init() must say so.
import { init } from 'attnlab';
import { report } from '../check.js';

report(init).then((main) => (window.__result = { main }));
