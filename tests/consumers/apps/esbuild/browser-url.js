// esbuild, browser ESM, with attnlab: the .wasm is not beside the bundle, so init() runs the copy inside the JS
// (and buildInfo() says why).
import { init } from 'attnlab';
import { report } from '../check.js';

report(init).then((main) => (window.__result = { main }));
