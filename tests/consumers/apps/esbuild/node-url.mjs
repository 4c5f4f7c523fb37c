// esbuild, Node ESM bundle of attnlab: the .wasm is not beside the bundle, so init() runs the copy inside the JS
// (and buildInfo() says why); the variant with the small GPT too.
import { init } from 'attnlab';
import { report } from '../check.js';

Promise.all([report(init), report(init, { gpt: true })]).then(([main, gpt]) => console.log(JSON.stringify({ main, gpt })));
