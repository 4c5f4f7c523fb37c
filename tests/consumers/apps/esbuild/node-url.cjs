// esbuild, Node CommonJS bundle of attnlab: import.meta is empty there, so init() runs the copy inside the JS
// (and buildInfo() says why); the variant with the small GPT too.
const { init } = require('attnlab');
const { report } = require('../check.js');

Promise.all([report(init), report(init, { gpt: true })]).then(([main, gpt]) => console.log(JSON.stringify({ main, gpt })));
