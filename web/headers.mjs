// The explorer's HTTP policy, defined once: the headers scripts/serve.mjs sends with the built page (and `vite
// preview` with the same files), the dev server's (`npm run dev`: the same, with the policy widened only for what
// its hot reload needs), and the Content-Security-Policy the built page carries in a <meta> tag
// (web/vite.config.ts), so that any static host serves it protected. Plain JavaScript with its types beside it
// (headers.d.mts): Node imports it as it is.

/** The policy's directives; the page's own <meta> copy leaves out frame-ancestors (a header-only directive). */
export const CSP_DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  // KaTeX sets inline sizes through the CSSOM (element.style), which CSP does not restrict,
  // so no 'unsafe-inline' is needed for styles either.
  "style-src 'self'",
  "font-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  // blob: for the package's worker pool (init({ threads })): its workers start from a Blob URL the page's own
  // script makes (a labs' worker starts them), never from another origin.
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
];
export const CSP = [...CSP_DIRECTIVES, "frame-ancestors 'none'"].join('; ');

// The offline single file (web/dist/attnlab-explorer.html, opened from file://) has no origin to call 'self':
// its one inline script and one inline style are allowed by hash (appended at build), fonts and the favicon come
// from data: URLs, the wasm modules too (fetched: connect-src), the labs' workers from blob: URLs made from inline
// code.
export const SINGLE_FILE_CSP_DIRECTIVES = [
  "default-src 'none'",
  "script-src 'wasm-unsafe-eval'",
  'style-src',
  'font-src data:',
  'img-src data: blob:',
  'connect-src data:',
  'worker-src blob:',
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
];

/** Every response's security headers (the built page). */
export const HEADERS = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // With COOP, COEP makes the page cross-origin isolated: SharedArrayBuffer exists there, so the package's workers
  // can share memory (a model split across them exchanges partial sums through it). Everything the page loads is
  // its own; a CORS fetch (a model from another origin) is still allowed.
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * What the dev server's page needs beyond the built page's policy, and nothing else: Vite's dev client injects
 * each stylesheet as a <style> element (hot reload), which style-src 'self' refuses.
 */
export const DEV_CSP_ADDITIONS = { 'style-src': ["'unsafe-inline'"] };

/** The dev server's headers: HEADERS with DEV_CSP_ADDITIONS added to the policy. */
export const DEV_HEADERS = {
  ...HEADERS,
  'Content-Security-Policy': [
    ...CSP_DIRECTIVES.map((d) => {
      const name = d.split(' ')[0];
      return name in DEV_CSP_ADDITIONS ? [d, ...DEV_CSP_ADDITIONS[name]].join(' ') : d;
    }),
    "frame-ancestors 'none'",
  ].join('; '),
};
