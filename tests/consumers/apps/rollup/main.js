// Rollup 4 with only @rollup/plugin-node-resolve (no asset plugin): the inline entry.
import { init } from 'attnlab/inline';
import { report } from '../check.js';

report(init).then((main) => (window.__result = { main }));
