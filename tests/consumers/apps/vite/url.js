// The .wasm files through the exports map and Vite's ?url import, handed to init({ wasmUrl }).
import { init } from 'attnlab';
import scalarUrl from 'attnlab/attnlab-scalar.wasm?url';
import simdUrl from 'attnlab/attnlab-simd.wasm?url';
import { report } from '../check.js';

report((options = {}) => init({ ...options, wasmUrl: options.simd === false ? scalarUrl : simdUrl })).then((main) => (window.__result = { main, urls: [simdUrl, scalarUrl] }));
