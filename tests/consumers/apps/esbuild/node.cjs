// esbuild, Node CommonJS bundle: the inline entry, by require.
const { init } = require('attnlab/inline');
const { check } = require('../check.js');

check(init).then((r) => console.log(JSON.stringify(r)));
