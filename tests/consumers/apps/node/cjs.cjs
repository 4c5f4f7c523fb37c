// Node, CommonJS: require() of the ES module package (Node ^20.19 / >=22.12 load ES modules from require).
const { init } = require('attnlab');
const { init: initInline } = require('attnlab/inline');
const { init: initInlineGpt } = require('attnlab/inline-gpt');

import('../check.js').then(async ({ check }) => {
  console.log(JSON.stringify({
    url: await check(init), inline: await check(initInline),
    urlGpt: await check(init, { gpt: true }), inlineGpt: await check(initInlineGpt, { gpt: true }),
  }));
});
