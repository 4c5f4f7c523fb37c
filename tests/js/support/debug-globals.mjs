// Preloaded (node --import) when the tests run against the debug wasm build (scripts/test-js-debug.sh).
// Emscripten 3.1.6's ES6 glue, linked with node in its environments (the debug build's assertions demand it),
// still calls CommonJS's require and __dirname; an ES module has neither, so they are provided here.
// The release modules (web, worker only) never reach that code.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

globalThis.require ??= createRequire(import.meta.url);
globalThis.__dirname ??= fileURLToPath(new URL('../../../dist-debug/', import.meta.url));
