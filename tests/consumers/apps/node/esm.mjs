// Node, ES module: both entries by name.
import { init } from 'attnlab';
import { init as initInline } from 'attnlab/inline';
import { check } from '../check.js';

console.log(JSON.stringify({ url: await check(init), inline: await check(initInline) }));
