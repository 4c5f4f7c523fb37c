// esbuild, Node ESM bundle: the inline entry.
import { init } from 'attnlab/inline';
import { check } from '../check.js';

check(init).then((r) => console.log(JSON.stringify(r)));
