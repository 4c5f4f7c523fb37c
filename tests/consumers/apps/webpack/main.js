// webpack 5, no configuration beyond entry and output: new URL(…, import.meta.url) becomes an asset module.
import { init } from 'attnlab';
import { report } from '../check.js';

report(init).then((main) => (window.__result = { main }));
