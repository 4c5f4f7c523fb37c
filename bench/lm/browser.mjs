// The LM bench in headless Chromium (`npm run bench:lm -- --browser`): each runtime in its own Chromium (Debian's
// /usr/bin/chromium through playwright-core, as bench/browser.mjs runs it), a page that runs the same adapters
// and handlers as the Node workers (bench/lm/browser-page.mjs), the checkpoint fetched from a static server on
// 127.0.0.1. One browser per runtime, so that each has its own renderer process and memory.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { treeCpuMs } from '../lib/system.mjs';
import { attnlabDist } from './host-node.mjs';
import { cacheRoot } from './files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const modules = path.join(root, 'node_modules');
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
// tfjs-backend-wasm's ES module bundle imports Node's fs, path, os and perf_hooks (its Emscripten glue uses them
// only in Node): the page maps them to an empty module.
const IMPORT_MAP = {
  imports: {
    '@tensorflow/tfjs-core': '/tfjs-core/tf-core.fesm.min.js',
    '@tensorflow/tfjs-backend-wasm': '/tfjs-wasm/tf-backend-wasm.fesm.min.js',
    ...Object.fromEntries(['fs', 'path', 'os', 'perf_hooks'].map((m) => [m, '/empty.mjs'])),
  },
};
const PAGE = `<!doctype html><meta charset="utf-8"><title>attnlab LM bench</title>
<script type="importmap">${JSON.stringify(IMPORT_MAP)}</script>
<script type="module" src="/bench/lm/browser-page.mjs"></script>`;

const mounts = [
  ['/bench/', path.join(root, 'bench/')],
  ['/dist/', `${attnlabDist}/`],
  ['/ort/', path.join(modules, 'onnxruntime-web/dist/')],
  ['/tfjs-core/', path.join(modules, '@tensorflow/tfjs-core/dist/')],
  ['/tfjs-wasm/', path.join(modules, '@tensorflow/tfjs-backend-wasm/dist/')],
  ['/ck/', `${cacheRoot}/`],
];
const packageJson = (name) => (name === 'attnlab' ? path.join(root, 'package.json') : path.join(modules, name, 'package.json'));

/** The static server; resolves with its origin. `ckUrl(dir)` turns a checkpoint folder into its URL path. */
export async function startServer() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const send = (type, body) => { res.writeHead(200, { 'Content-Type': type }); res.end(body); };
    if (url.pathname === '/') return send('text/html', PAGE);
    if (url.pathname === '/empty.mjs') return send('text/javascript', 'export default {};');
    const pkg = url.pathname.match(/^\/pkg\/(.+)\/package\.json$/);
    let file = pkg ? packageJson(decodeURIComponent(pkg[1])) : null;
    if (!file) {
      const mount = mounts.find(([prefix]) => url.pathname.startsWith(prefix));
      file = mount && path.join(mount[1], decodeURIComponent(url.pathname.slice(mount[0].length)));
      if (file && !file.startsWith(mount[1])) file = null;
    }
    if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${server.address().port}`, ckUrl: (dir) => `/ck/${path.relative(cacheRoot, dir)}` };
}

/**
 * A runtime in its own Chromium: { info, dtypes } or { missing } or { failed }, and send(msg) → result with
 * handlerCpuMs (the browser's processes' CPU time meanwhile) and close().
 */
export async function startPage(runtime, origin, { verbose = false } = {}) {
  const { chromium } = await import('playwright-core');
  // A browser server, not launch(): only the server knows its process, whose tree's CPU time is the runtime's (a
  // launched Browser has no process(), and the runtime's own work was counted as other load).
  const server = await chromium.launchServer({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--js-flags=--expose-gc'],
  });
  const browser = await chromium.connect(server.wsEndpoint());
  const page = await browser.newPage();
  page.on('pageerror', (e) => verbose && console.error(`  [${runtime} page] ${e.message}`));
  if (verbose) page.on('console', (m) => console.error(`  [${runtime} page] ${m.text()}`));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => window.bench !== undefined);
  const pid = server.process().pid;
  const close = async () => { await browser.close(); await server.close(); };
  const started = await page.evaluate((r) => window.bench.start(r), runtime);
  return {
    ...started, browser: `Chromium ${browser.version()}`, close,
    async send(msg) {
      const cpu0 = pid ? treeCpuMs(pid) : 0;
      let result;
      try {
        result = await page.evaluate((m) => window.bench.ask(m), msg);
      } catch (e) {
        result = { failed: String(e.message).split('\n')[0] };
      }
      if (pid) result.handlerCpuMs = treeCpuMs(pid) - cpu0;
      return result;
    },
  };
}
