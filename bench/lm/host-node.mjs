// Where the LM bench's adapters find their libraries and files in Node (bench/lm/browser-page.mjs is the same in
// Chromium): the packages from node_modules, attnlab from dist/ (or ATTNLAB_LM_DIST), the checkpoint from disk.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const attnlabDist = path.resolve(root, process.env.ATTNLAB_LM_DIST || 'dist');
const distOf = { 'onnxruntime-web': 'onnxruntime-web/dist', '@tensorflow/tfjs-backend-wasm': '@tensorflow/tfjs-backend-wasm/dist' };

export const host = {
  name: 'node',
  attnlabDist: path.relative(root, attnlabDist) || attnlabDist,
  async import(spec) {
    if (spec !== 'attnlab') return import(spec);
    const entry = path.join(attnlabDist, 'index.js');
    if (!fs.existsSync(entry)) throw new Error(`${entry} not found: run \`npm run build\` first`);
    return import(pathToFileURL(entry).href);
  },
  wasmPaths: (pkg) => path.join(root, 'node_modules', distOf[pkg]) + path.sep,
  // (onnxruntime-web's exports map hides package.json from require.resolve: read the file)
  version: async (pkg) => JSON.parse(fs.readFileSync(pkg === 'attnlab' ? path.join(root, 'package.json') : path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version,
  read: async (dir, file) => new Uint8Array(fs.readFileSync(path.join(dir, file))),
  gc: globalThis.gc ?? (() => {}),
  rss: () => process.memoryUsage().rss,
  cpuMs: () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; },
};
