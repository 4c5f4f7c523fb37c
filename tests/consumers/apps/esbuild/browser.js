// esbuild, browser ESM: esbuild does not copy assets, so the inline entry.
import { init } from 'attnlab/inline';
import { report } from '../check.js';

report(init).then((main) => (window.__result = { main }));
