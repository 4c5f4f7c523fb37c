// esbuild, Node CommonJS bundle of the URL entry: import.meta is empty there, and init() must say so.
const { init } = require('attnlab');
const { report } = require('../check.js');

report(init).then((r) => console.log(JSON.stringify(r)));
