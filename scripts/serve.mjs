#!/usr/bin/env node
// A small dependency-free static file server for the built explorer (web/dist by default).
//   node scripts/serve.mjs [--port N] [--host H] [--root DIR]      (or PORT / HOST env; port 0 = any free port)
// Sends the explorer's headers (web/headers.mjs): a strict Content-Security-Policy, everything from 'self', plus
// 'wasm-unsafe-eval' so the engine's WebAssembly can compile; no 'unsafe-eval', no inline scripts or styles, no
// other origin.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { basename, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HEADERS } from '../web/headers.mjs';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

// The policy and the security headers are the explorer's own (web/headers.mjs: the dev server sends the same).
export { CSP, CSP_DIRECTIVES } from '../web/headers.mjs';

const COMPRESSIBLE = /^(text\/|application\/(json|wasm)|image\/svg)/;
const gzipCache = new Map(); // path -> { mtimeMs, body }: each file is compressed once per change

async function gzipped(path, mtimeMs) {
  const hit = gzipCache.get(path);
  if (hit?.mtimeMs === mtimeMs) return hit.body;
  const body = gzipSync(await readFile(path), { level: 9 });
  gzipCache.set(path, { mtimeMs, body });
  return body;
}

/** Starts the server; resolves with { server, url } once it listens. */
export function startServer({ root, port = 8080, host = '127.0.0.1' } = {}) {
  const base = resolve(root ?? fileURLToPath(new URL('../web/dist/', import.meta.url)));
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', ...HEADERS }).end();
        return;
      }
      let path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      if (path.endsWith('/')) path += 'index.html';
      const file = resolve(join(base, path));
      // Never serve outside the root (../ and encoded variants resolve outside `base`).
      if (file !== base && !file.startsWith(base + sep)) {
        res.writeHead(403, HEADERS).end('Forbidden');
        return;
      }
      let info = await stat(file).catch(() => undefined);
      let target = file;
      if (info?.isDirectory()) {
        target = join(file, 'index.html');
        info = await stat(target).catch(() => undefined);
      }
      if (!info?.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...HEADERS }).end('Not found');
        return;
      }
      const type = MIME[extname(target).toLowerCase()] ?? 'application/octet-stream';
      // The offline copy carries its own, stricter policy (hashes of its inline script and style) in a meta tag;
      // the page's 'self' policy would block those inline parts when the copy is opened from this server.
      const policy = basename(target) === 'attnlab-explorer.html' ? { 'Content-Security-Policy': "frame-ancestors 'none'" } : {};
      // no-cache with a validator: a browser asks each time and gets 304 for an unchanged file, so it keeps its
      // cached copy and the code compiled from it (V8 caches a script's bytecode and a module's wasm code).
      const tag = `"${info.size.toString(36)}-${Math.floor(info.mtimeMs).toString(36)}"`;
      const common = { 'Content-Type': type, 'Cache-Control': 'no-cache', ETag: tag, Vary: 'Accept-Encoding', ...HEADERS, ...policy };
      if (req.headers['if-none-match'] === tag) {
        res.writeHead(304, common).end();
        return;
      }
      // gzip what compresses (text and .wasm; not woff2 or images, already compressed), as static hosts do,
      // so the transfer sizes the browser sees are the real ones.
      if (COMPRESSIBLE.test(type) && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
        const body = await gzipped(target, info.mtimeMs);
        res.writeHead(200, { ...common, 'Content-Encoding': 'gzip', 'Content-Length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      res.writeHead(200, { ...common, 'Content-Length': info.size });
      if (req.method === 'HEAD') res.end();
      else createReadStream(target).pipe(res);
    } catch {
      if (!res.headersSent) res.writeHead(400, HEADERS);
      res.end();
    }
  });
  return new Promise((resolveStart, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      const shownHost = host === '127.0.0.1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      resolveStart({ server, url: `http://${shownHost}:${addr.port}/` });
    });
  });
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const [k, inline] = argv[i].split('=', 2);
    const val = inline ?? argv[++i];
    if (k === '--port') out.port = Number(val);
    else if (k === '--host') out.host = val;
    else if (k === '--root') out.root = val;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = parseArgs(process.argv.slice(2));
  const port = args.port ?? (process.env.PORT !== undefined ? Number(process.env.PORT) : 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve.mjs: bad port ${port}`);
    process.exit(2);
  }
  startServer({ root: args.root, port, host: args.host ?? process.env.HOST ?? '127.0.0.1' })
    .then(({ url }) => console.log(`attnlab explorer: ${url}`))
    .catch((err) => {
      console.error(`serve.mjs: ${err.message}`);
      process.exit(1);
    });
}
