// Vite config for the explorer. Run from the repo root (`npm run dev`, `npm run build:web`).
import { defineConfig, type Plugin } from 'vite';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain .mjs script without type declarations
import { CSP_DIRECTIVES } from '../scripts/serve.mjs';

const webDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));

// KaTeX's CSS lists woff2, woff and ttf for every face. Every browser that runs wasm SIMD reads woff2,
// so drop the other two: the build then ships (and the single-file build later inlines) a third of the fonts.
function katexWoff2Only(): Plugin {
  return {
    name: 'katex-woff2-only',
    enforce: 'pre',
    transform(code, id) {
      if (!/katex[\\/]dist[\\/]katex(\.min)?\.css$/.test(id)) return null;
      return code.replace(/,\s*url\([^)]*\.woff\)\s*format\("woff"\)\s*,\s*url\([^)]*\.ttf\)\s*format\("truetype"\)/g, '');
    },
  };
}

// The built page carries the same policy as a <meta> tag, so any static host serves it protected.
// (Build only: the dev server injects styles inline for hot reload. frame-ancestors is header-only.)
function cspMeta(): Plugin {
  return {
    name: 'csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: (CSP_DIRECTIVES as string[]).join('; ') }, injectTo: 'head-prepend' },
    ],
  };
}

export default defineConfig({
  root: webDir,
  base: './', // relative URLs: the folder works from any path on any static host
  plugins: [katexWoff2Only(), cspMeta()],
  resolve: {
    // The package as built by `npm run build`; Vite bundles its .wasm files as assets.
    alias: { attnlab: `${repoDir}dist/index.js` },
  },
  build: {
    outDir: `${webDir}dist`,
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0, // no data: URLs, so the CSP can stay 'self'-only
    chunkSizeWarningLimit: 600,
  },
  server: { port: 5173 },
});
