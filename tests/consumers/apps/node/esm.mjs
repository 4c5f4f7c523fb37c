// Node, ES module: every entry by name, each variant.
import { init } from 'attnlab';
import { init as initInline } from 'attnlab/inline';
import { init as initInlineGpt } from 'attnlab/inline-gpt';
import { check } from '../check.js';

console.log(JSON.stringify({
  url: await check(init), inline: await check(initInline),
  urlGpt: await check(init, { gpt: true }), inlineGpt: await check(initInlineGpt, { gpt: true }),
}));
