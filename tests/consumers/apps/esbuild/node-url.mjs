// esbuild, Node ESM bundle of the URL entry: the .wasm is not beside the bundle, and init() must say so.
import { init } from 'attnlab';
import { report } from '../check.js';

report(init).then((r) => console.log(JSON.stringify(r)));
