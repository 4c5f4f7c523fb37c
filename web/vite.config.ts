// Vite config for the explorer. Run from the repo root (`npm run dev`, `npm run build:web`).
// `--mode single` builds the offline copy: one HTML file with every script, style, font, worker and .wasm inside.
import { defineConfig, type Plugin } from 'vite';
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CSP_DIRECTIVES, DEV_HEADERS, HEADERS, SINGLE_FILE_CSP_DIRECTIVES } from './headers.mjs';

const webDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));

// KaTeX's CSS lists woff2, woff and ttf for every face. Every browser that runs wasm SIMD reads woff2,
// so drop the other two: the build then ships (and the single-file build inlines) a third of the fonts.
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
// The single file gets its policy later, once the hashes of its inline script and style are known.
function cspMeta(single: boolean): Plugin {
  return {
    name: 'csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: single ? '__CSP__' : CSP_DIRECTIVES.join('; ') }, injectTo: 'head-prepend' },
    ],
  };
}

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

// The offline single file. Workers are bundled inline (a `?worker` import becomes `?worker&inline`, started
// from a Blob), assets become data: URLs (assetsInlineLimit below), and the one script and one stylesheet
// are written into index.html. Inline code needs no 'unsafe-inline': the policy allows exactly their hashes.
// The wasm modules are the page's data: URLs (src/engine-files.ts), each carried once: 'attnlab' is the package's
// inline entry (no file to find beside it), with its copies of the modules left out (withoutCopies).
function singleFile(): Plugin[] {
  const rewrite: Plugin = {
    name: 'single-file-sources',
    apply: 'build',
    enforce: 'pre',
    transform(code, id) {
      // The Emscripten glue must not name its .wasm as an asset (the package links it with
      // -sUSE_ES6_IMPORT_META=0), or the file would carry every .wasm twice.
      if (/dist[\\/]attnlab\.mjs$/.test(id) && code.includes('import.meta')) {
        throw new Error(`single-file: the glue ${id} refers to import.meta (a second copy of each .wasm)`);
      }
      if (!id.startsWith(`${webDir}src`) || !code.includes('?worker')) return null;
      return code.replace(/\?worker(['"])/g, '?worker&inline$1');
    },
  };
  const inline: Plugin = {
    name: 'single-file',
    apply: 'build',
    enforce: 'post',
    // order 'post': after Vite's own generateBundle steps (its import analysis fills in dynamic-import preloads there).
    generateBundle: { order: 'post', handler(_, bundle) {
      const html = bundle['index.html'];
      if (!html || html.type !== 'asset') throw new Error('single-file: index.html is missing from the bundle');
      let page = String(html.source);
      const chunks = Object.values(bundle).filter((f) => f.type === 'chunk');
      if (chunks.length !== 1) throw new Error(`single-file: expected one script chunk, got ${chunks.map((c) => c.fileName).join(', ')}`);
      const styles = Object.values(bundle).filter((f) => f.type === 'asset' && f.fileName.endsWith('.css'));
      // "</script" and "</style" inside the code would end the element early; "<\/" means the same in JS strings.
      const script = (chunks[0] as { code: string }).code.replace(/<\/(script)/gi, '<\\/$1');
      const style = styles.map((s) => String((s as { source: string | Uint8Array }).source)).join('\n').replace(/<\/(style)/gi, '<\\/$1');
      page = page.replace(/<script type="module"[^>]*src="[^"]*"[^>]*><\/script>\s*/, '');
      page = page.replace(/<link rel="stylesheet"[^>]*>\s*/g, '');
      page = page.replace(/<link rel="modulepreload"[^>]*>\s*/g, '');
      // The offline copy has nothing to download: its link paragraph says what it is instead.
      page = page.replace(/<!-- offline-link -->[\s\S]*?<!-- \/offline-link -->/, '<p data-offline-copy>This is the offline copy of the explorer: one file, no server, no network.</p>');
      const icon = readFileSync(`${webDir}public/favicon.svg`).toString('base64');
      page = page.replace(/href="\.\/favicon\.svg"/, `href="data:image/svg+xml;base64,${icon}"`);
      page = page.replace('</head>', () => `<style>${style}</style>\n</head>`);
      page = page.replace('</body>', () => `<script type="module">${script}</script>\n</body>`);
      const csp = [...SINGLE_FILE_CSP_DIRECTIVES];
      csp[csp.findIndex((d) => d.startsWith('script-src'))] += ` ${sha256(script)}`;
      csp[csp.findIndex((d) => d.startsWith('style-src'))] += ` ${sha256(style)}`;
      page = page.replace('__CSP__', csp.join('; '));
      html.source = page;
      for (const name of Object.keys(bundle)) if (name !== 'index.html') delete bundle[name];
    } },
  };
  return [rewrite, inline];
}

// Every init() on the page and in its workers is handed the module files by URL (src/wasm-files.ts), so the
// package's copies of its files inside its JS never run here and are left out of every bundle. In the served page
// they are the URL entry's fallbacks (the modules' and the workers' script's), which would only be files never
// fetched: each becomes a module that throws, so a fallback that should not happen fails loudly. In the offline
// copy they are the inline entry's modules, which would sit inside the page and again inside every worker's
// script: each becomes an empty string (the page's data: URLs are the modules). The offline copy keeps the inline
// entry's workers' script: it has no file beside it.
function withoutCopies(): Plugin {
  const empty = '\0attnlab-copy-left-out', throwing = '\0attnlab-copy-left-out-throws';
  return {
    name: 'attnlab-without-copies',
    enforce: 'pre',
    resolveId(source, importer) {
      if (importer === `${repoDir}dist/index.js` && /^\.\/attnlab-[a-z-]+\.inline\.js$/.test(source)) return throwing;
      if (importer === `${repoDir}dist/inline.js` && /^\.\/attnlab-(simd|scalar)\.inline\.js$/.test(source)) return empty;
      return null;
    },
    load(id) {
      if (id === empty) return "export default '';";
      if (id === throwing) return 'throw new Error("left out of the explorer: every init() there is given its files by URL (web/src/wasm-files.ts)");';
      return null;
    },
  };
}

export default defineConfig(({ mode }) => {
  const single = mode === 'single';
  return {
    root: webDir,
    base: './', // relative URLs: the folder works from any path on any static host
    plugins: [katexWoff2Only(), cspMeta(single), withoutCopies(), ...(single ? singleFile() : [])],
    resolve: {
      // The package as built by `npm run build`: its URL entry (the served page fetches attnlab-worker.js beside
      // it), or in the offline copy its inline entry; and its .wasm files by the names its exports map gives them.
      alias: [
        { find: /^attnlab$/, replacement: `${repoDir}dist/${single ? 'inline.js' : 'index.js'}` },
        { find: /^attnlab\/(attnlab-[a-z-]+\.wasm)(\?url)?$/, replacement: `${repoDir}dist/$1$2` },
      ],
    },
    build: {
      outDir: single ? `${repoDir}artifacts/single` : `${webDir}dist`,
      emptyOutDir: true,
      target: 'es2022',
      // The served page: no data: URLs, so the CSP can stay 'self'-only. The single file: everything inline.
      assetsInlineLimit: single ? () => true : 0,
      copyPublicDir: !single,
      // Above the chunks' sizes, so that a build warns only when one grows: the single file's one chunk carries the
      // modules and the shipped model (7 MB), the served page's entry the labs and KaTeX (747 KB). The page's budget
      // itself is tests/e2e/payload.test.mjs's.
      chunkSizeWarningLimit: single ? 8192 : 900,
      rolldownOptions: single ? { output: { codeSplitting: false } } : {},
    },
    // Module workers: the labs' workers import the package (and its .wasm) like the page does. The single file's
    // inline workers are classic scripts in one chunk each: Chromium refuses module workers from blob: URLs on
    // a file:// page (an opaque origin), and a split-off chunk would be a file the offline copy does not have.
    // Worker bundles do not run the page's plugins: they get theirs here.
    worker: single
      ? { format: 'iife', plugins: () => [withoutCopies(), singleFile()[0]], rolldownOptions: { output: { codeSplitting: false } } }
      : { format: 'es', plugins: () => [withoutCopies()] },
    // The explorer's headers (headers.mjs): `vite preview` serves the built page as scripts/serve.mjs does; the dev
    // server adds to the policy only what hot reload needs.
    // fs.allow: the repo, and node_modules where it really is (a worktree's may be a link to another checkout's).
    server: { port: 5173, headers: DEV_HEADERS, fs: { allow: [repoDir, realpathSync(`${repoDir}node_modules`)] } },
    preview: { headers: HEADERS },
  };
});
