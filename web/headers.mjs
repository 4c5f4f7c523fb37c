// The explorer's HTTP policy, defined once: the headers scripts/serve.mjs sends with the built page (and `vite
// preview` with the same files), the dev server's (`npm run dev`: the same, with the policy widened only for what
// its hot reload needs), and the Content-Security-Policy the built page carries in a <meta> tag
// (web/vite.config.ts), so that any static host serves it protected. Plain JavaScript with its types beside it
// (headers.d.mts): Node imports it as it is.

/**
 * The hosts a model download from the Hugging Face Hub reaches, and no others: huggingface.co itself (the resolve URLs,
 * and the small files it answers directly), then the hosts its resolve URLs redirect large (LFS / Xet) files to. The
 * Hub publishes its storage and CDN hosts at https://huggingface.co/.well-known/meta.json: "lfsDomains" (cdn-lfs*.hf.co;
 * its transfer.xethub* hosts serve the Xet client's own protocol, not resolve redirects, and are left out) and
 * "cdnDomains" (the regional *.cdn.hf.co hosts its Xet redirects now go to, e.g. us.aws.cdn.hf.co/xet-bridge-us/…);
 * cas-bridge.xethub.hf.co is the Xet bridge that resolve URLs redirect to (the allowlists of huggingface_hub users name
 * it beside cdn-lfs.huggingface.co, the older LFS host). Listed one by one, not as *.hf.co.
 */
export const HUB_HOSTS = [
  'huggingface.co',
  'cas-bridge.xethub.hf.co',
  'cdn-lfs.huggingface.co', 'cdn-lfs-us-1.huggingface.co',
  'cdn-lfs.hf.co', 'cdn-lfs-us-1.hf.co', 'cdn-lfs-eu-1.hf.co',
  'aws.cdn.hf.co', 'us.aws.cdn.hf.co', 'us-east-1.aws.cdn.hf.co', 'us-west-2.aws.cdn.hf.co', 'eu-west-3.aws.cdn.hf.co',
  'ap-southeast-1.aws.cdn.hf.co', 'us.gcp.cdn.hf.co', 'us-east1.us.gcp.cdn.hf.co', 'us-central1.us.gcp.cdn.hf.co',
  'us-west4.us.gcp.cdn.hf.co', 'europe-west4.us.gcp.cdn.hf.co', 'asia-southeast1.us.gcp.cdn.hf.co',
];

/** The policy's directives; the page's own <meta> copy leaves out frame-ancestors (a header-only directive). */
export const CSP_DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  // KaTeX sets inline sizes through the CSSOM (element.style), which CSP does not restrict,
  // so no 'unsafe-inline' is needed for styles either.
  "style-src 'self'",
  "font-src 'self'",
  "img-src 'self'",
  // The model panel downloads from the Hugging Face Hub (web/src/model/open/hub.ts): https://huggingface.co/{repo}/
  // resolve/main/{file}, whose large files answer with a redirect to the Hub's storage, and a redirect's target must
  // be allowed too. HUB_HOSTS lists exactly those hosts.
  `connect-src 'self' ${HUB_HOSTS.map((h) => `https://${h}`).join(' ')}`,
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
// code. It makes no network request: its model panel opens models from disk only (no Hub hosts here).
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
