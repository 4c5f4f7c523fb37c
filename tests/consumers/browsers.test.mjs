// The installed tarball in headless Chromium, through every browser tool chain with no configuration beyond
// entry and output: Vite (build, and the dev server) and webpack 5 with attnlab (they emit the .wasm files, and
// the page fetches them and nothing else: the copies inside the JS are chunks never fetched); esbuild and Rollup 4
// with only @rollup/plugin-node-resolve (they copy no assets) with attnlab, which after one failed request per
// module runs its copy inside the JS and says why, and with attnlab/inline, which carries its modules; a plain
// <script type="module"> with an import map and a module worker, no tool at all. Each page runs apps/check.js
// (both modules) and must compute the known answers without a console error. Also: a host that serves .wasm with
// the wrong MIME type costs no second download.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';

import { app, expectGood, launchChromium, pageResult, prepared, repo, serve } from './support.mjs';

let browser;
before(async () => {
  prepared();
  browser = await launchChromium();
});
after(() => browser?.close());

const out = (name) => join(app, 'out', name);
const page = (title, script) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><script type="module" src="${script}"></script></head><body></body></html>`;

/**
 * Serves `root`, opens `path`, checks every result the page reports, returns the requests it made. `gpt` names
 * the results that come from check(init, { gpt: true }).
 */
async function check(root, path, label, options, { gpt = [], inline = [], fallback = [], problems: expected = [], others = [] } = {}) {
  const server = await serve(root, options);
  try {
    const { result, problems, requests } = await pageResult(browser, `${server.origin}${path}`);
    for (const [where, r] of Object.entries(result)) {
      if (others.includes(where)) continue; // not check()'s answer: the test reads it
      const source = inline.includes(where) || fallback.includes(where) ? 'inline' : 'file';
      expectGood(r, `${label} (${where})`, { gpt: gpt.includes(where), source, fallback: fallback.includes(where) });
    }
    assert.deepEqual(problems, expected.map((p) => p.replace('ORIGIN', server.origin)), `${label}: console problems`);
    return { requests, served: server.requests, result };
  } finally {
    await server.close();
  }
}

const wasmRequests = (requests) => requests.filter((p) => p.endsWith('.wasm'));
/** The requests for scripts (the copies inside the JS are chunks named for them: attnlab-simd.inline-….js). */
const scriptRequests = (requests) => requests.filter((p) => /\.m?js$/.test(p));
const inlineChunk = (name) => /attnlab-[a-z-]+\.inline/.test(name);

describe('Vite', () => {
  test('vite build: the page loads the operators\' modules, its module worker the GPT\'s; all four .wasm files emitted', async () => {
    const { build } = await import('vite');
    await build({ root: join(app, 'vite'), configFile: false, logLevel: 'silent', build: { outDir: out('vite'), emptyOutDir: true } });
    const assets = readdirSync(join(out('vite'), 'assets'));
    for (const name of ['simd', 'scalar', 'gpt-simd', 'gpt-scalar'])
      assert.ok(assets.some((f) => new RegExp(`^attnlab-${name}-[^.]*\\.wasm$`).test(f)), `attnlab-${name}.wasm in ${assets.join(' ')}`);
    // The copies inside the JS (attnlab's fallback) are chunks of their own, emitted and never fetched.
    const chunks = readdirSync(join(out('vite'), 'assets')).filter((f) => f.endsWith('.js'));
    assert.equal(chunks.filter(inlineChunk).length, 5, `the five copies as chunks of their own: ${chunks.join(' ')}`);
    const { requests } = await check(out('vite'), '/', 'vite build', undefined, { gpt: ['worker'] });
    const module = (u) => ['gpt-simd', 'gpt-scalar', 'simd', 'scalar'].find((name) => u.split('/').pop().startsWith(`attnlab-${name}-`));
    const fetched = wasmRequests(requests).map((u) => `attnlab-${module(u)}`).sort();
    assert.deepEqual(fetched, ['attnlab-gpt-scalar', 'attnlab-gpt-simd', 'attnlab-scalar', 'attnlab-simd'], `each module once: ${wasmRequests(requests)}`);
    assert.deepEqual(scriptRequests(requests).filter(inlineChunk), [], `no copy inside the JS fetched: ${scriptRequests(requests).join(' ')}`);
    assert.equal(scriptRequests(requests).length, 2, `the page's script and the worker's: ${scriptRequests(requests).join(' ')}`);
  });

  test('vite dev server: page and module worker; the .wasm files as ?url imports', async () => {
    const { createServer } = await import('vite');
    const server = await createServer({ root: join(app, 'vite'), configFile: false, logLevel: 'silent', server: { port: 0, host: '127.0.0.1' } });
    await server.listen();
    try {
      const { result, problems, requests } = await pageResult(browser, server.resolvedUrls.local[0]);
      for (const [where, r] of Object.entries(result)) expectGood(r, `vite dev (${where})`, { gpt: where === 'worker', source: 'file' });
      assert.deepEqual(problems, []);
      assert.deepEqual(requests.filter(inlineChunk), [], 'no copy inside the JS fetched');
      // The .wasm files by name through the exports map, as ?url imports.
      const viaUrl = await pageResult(browser, `${server.resolvedUrls.local[0]}url.html`);
      expectGood(viaUrl.result.main, 'vite dev, ?url', { source: 'wasmUrl' });
      assert.ok(viaUrl.result.urls.every((u) => /attnlab-(simd|scalar)\.wasm$/.test(u)), viaUrl.result.urls.join(' '));
      assert.deepEqual(viaUrl.problems, []);
    } finally {
      await server.close();
    }
  });
});

test('webpack 5 (mode production, entry and output only): asset modules for the four .wasm files', async () => {
  const { default: webpack } = await import('webpack');
  const stats = await new Promise((resolve, reject) =>
    webpack({ mode: 'production', context: join(app, 'webpack'), entry: './main.js', output: { path: out('webpack'), clean: true } }, (err, s) =>
      err ? reject(err) : resolve(s)),
  );
  const info = stats.toJson({ all: false, errors: true, warnings: true });
  assert.deepEqual(info.errors, []);
  assert.deepEqual(info.warnings.map((w) => w.message).filter((m) => !/asset size limit|entrypoint size limit|performance/i.test(m)), []);
  assert.equal(readdirSync(out('webpack')).filter((f) => f.endsWith('.wasm')).length, 4);
  writeFileSync(join(out('webpack'), 'index.html'), page('attnlab with webpack', './main.js'));
  // The copies inside the JS are chunks of their own (webpack names them by number): emitted, never fetched; so is
  // the workers' side of models (lm-workers.js), fetched only for a model placed on workers.
  // (attnlab-worker.js is an asset beside them, named by its hash, fetched only for threads > 1.)
  const chunks = readdirSync(out('webpack')).filter((f) => /^\d+\.js$/.test(f));
  assert.equal(chunks.length, 6, chunks.join(' '));
  const { requests } = await check(out('webpack'), '/', 'webpack');
  assert.deepEqual(scriptRequests(requests), ['/main.js'], 'the app\'s bundle only');
  assert.deepEqual(wasmRequests(requests).map((p) => p.replace(/^\/[0-9a-f]+\.wasm$/, 'HASH.wasm')), ['HASH.wasm', 'HASH.wasm'], 'one request per module');
});

describe('esbuild, browser ESM', () => {
  let esbuild;
  before(async () => {
    esbuild = await import('esbuild');
  });
  const bundle = async (entry, name, extra = {}) => {
    const res = await esbuild.build({ absWorkingDir: app, entryPoints: [entry], bundle: true, platform: 'browser', format: 'esm', outfile: join(out('esbuild-web'), name), logLevel: 'silent', ...extra });
    return res.warnings.map((w) => w.text);
  };

  test('attnlab/inline: one file, nothing else to serve', async () => {
    assert.deepEqual(await bundle('esbuild/browser.js', 'inline.js'), []);
    writeFileSync(join(out('esbuild-web'), 'inline.html'), page('attnlab/inline with esbuild', './inline.js'));
    const { requests } = await check(out('esbuild-web'), '/inline.html', 'esbuild inline', undefined, { inline: ['main'] });
    assert.deepEqual(wasmRequests(requests), []);
  });

  test('attnlab: one file; one failed request per file, then its copy inside the JS (threads\' script too), and buildInfo says why', async () => {
    assert.deepEqual(await bundle('esbuild/browser-url.js', 'url.js'), []);
    writeFileSync(join(out('esbuild-web'), 'url.html'), page('attnlab with esbuild', './url.js'));
    // The failed requests are the page's only problems: a developer sees them in the network log and the console.
    const files = ['attnlab-simd.wasm', 'attnlab-scalar.wasm', 'attnlab-simd.wasm', 'attnlab-worker.js'];
    const { requests, result } = await check(out('esbuild-web'), '/url.html', 'esbuild attnlab', undefined,
      { fallback: ['main'], others: ['pool'], problems: files.map((f) => `HTTP 404: ORIGIN/${f}`) });
    // check()'s two labs, then the threaded one's module and workers' script: one request each, no retry; and the
    // pool's two workers, started from blob: URLs (recorded by their path, which is the page's origin and an id).
    const [paths, blobs] = [requests.filter((p) => p.startsWith('/') && p !== '/favicon.ico'), requests.filter((p) => !p.startsWith('/'))];
    assert.deepEqual(paths, ['/url.html', '/url.js', ...files.map((f) => `/${f}`)]);
    assert.equal(blobs.length, 2, blobs.join(' '));
    const { pool } = result;
    assert.equal(pool.error, undefined, pool.error);
    assert.equal(pool.threads, 2);
    assert.deepEqual(pool.output, [1, 1]); // equal scores: the mean of v
    assert.match(pool.fallback, /^attnlab-simd\.wasm: could not fetch .*; its copy inside the package's JS ran instead\. attnlab-worker\.js: could not load http:.*\/attnlab-worker\.js \(HTTP 404 Not Found\); its copy inside the package's JS ran instead\.$/);
  });

  test('what each entry and module adds to an app, minified and gzipped, under budget', async () => {
    const sizes = {};
    const build = (entry, split) => esbuild.build({
      stdin: { contents: `import { init } from '${entry}'; init().then((lab) => console.log(lab.backend));`, resolveDir: app },
      bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent',
      ...(split ? { splitting: true, outdir: out('esbuild-split'), metafile: true, absWorkingDir: app } : {}),
    });
    const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
    for (const entry of ['attnlab', 'attnlab/inline', 'attnlab/inline-gpt']) sizes[entry] = gz((await build(entry, false)).outputFiles[0].contents);
    // attnlab's own weight where its files are served: with code splitting, the entry chunk and what it imports
    // statically; its copies inside the JS are chunks fetched only where a file is missing. Without splitting
    // (esbuild's default) one file carries every copy (above: 'attnlab'), evaluated only then.
    sizes['attnlab, one file'] = sizes.attnlab;
    const split = await build('attnlab', true);
    const loaded = new Set();
    const visit = (path) => {
      if (loaded.has(path)) return;
      loaded.add(path);
      for (const i of split.metafile.outputs[path].imports) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(Object.keys(split.metafile.outputs).find((p) => split.metafile.outputs[p].entryPoint !== undefined));
    sizes.attnlab = split.outputFiles.filter((f) => loaded.has(relative(app, f.path))).reduce((n, f) => n + gz(f.contents), 0);
    for (const name of ['simd', 'scalar', 'gpt-simd', 'gpt-scalar']) {
      sizes[`attnlab-${name}.wasm`] = gz(readFileSync(join(app, `node_modules/attnlab/dist/attnlab-${name}.wasm`)));
    }
    sizes['attnlab-worker.js'] = gz(readFileSync(join(app, 'node_modules/attnlab/dist/attnlab-worker.js')));
    const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
    console.log(`# sizes (gzip -9): ${Object.entries(sizes).map(([k, v]) => `${k} ${kb(v)}`).join(', ')}`);
    checkStatedSizes(sizes);
    // Budgets: the sizes measured (docs/performance.md#size) and 3–8 % more; the inline entries carry the
    // threads' worker script (the URL entry fetches it only for threads > 1), the one-file esbuild bundle all five
    // copies (the four modules and the workers' script).
    const budget = {
      attnlab: 34.5, 'attnlab, one file': 805, 'attnlab-simd.wasm': 59.5, 'attnlab-scalar.wasm': 51.5, 'attnlab/inline': 197,
      'attnlab-gpt-simd.wasm': 239, 'attnlab-gpt-scalar.wasm': 225, 'attnlab/inline-gpt': 658,
    };
    for (const [name, kib] of Object.entries(budget)) assert.ok(sizes[name] < kib * 1024, `${name}: ${kb(sizes[name])}, budget ${kib} KiB`);
  });
});

// The sizes the package's README and docs/performance.md state, against those just measured: within 2.5 % (a
// change that moves an entry more must say so there too; `# sizes` above prints the numbers to write).
function checkStatedSizes(sizes) {
  const text = { readme: readFileSync(join(repo, 'src/js/README.md'), 'utf8'), perf: readFileSync(join(repo, 'docs/performance.md'), 'utf8') };
  const n = '([\\d.]+)';
  const stated = [
    ['readme', `\\*\\*Small\\*\\*: ${n} KiB of gzipped JS plus a ${n} KiB gzipped module[^(]*\\(${n} KiB\\)`, ['attnlab', 'attnlab-simd.wasm', 'attnlab-gpt-simd.wasm']],
    ['readme', `\\| \`attnlab\`: JS \\+ the SIMD module \\(scalar\\) \\| ${n} KiB \\+ ${n} KiB \\(${n} KiB\\) \\| ${n} KiB \\+ ${n} KiB \\(${n} KiB\\) \\|`,
      ['attnlab', 'attnlab-simd.wasm', 'attnlab-scalar.wasm', 'attnlab', 'attnlab-gpt-simd.wasm', 'attnlab-gpt-scalar.wasm']],
    ['readme', `\\| \`attnlab/inline\` / \`attnlab/inline-gpt\`[^|]*\\| ${n} KiB \\| ${n} KiB \\|`, ['attnlab/inline', 'attnlab/inline-gpt']],
    ['readme', `\\| \`attnlab\` bundled by esbuild into one file[^|]*\\| ${n} KiB \\| ${n} KiB \\|`, ['attnlab, one file', 'attnlab, one file']],
    ['perf', `\\| \`attnlab\`'s JS \\(the URL entry[^|]*\\| ${n} \\|`, ['attnlab']],
    ['perf', `\\| \`attnlab-simd.wasm\` / \`attnlab-scalar.wasm\`[^|]*\\| ${n} / ${n} \\|`, ['attnlab-simd.wasm', 'attnlab-scalar.wasm']],
    ['perf', `\\| \`attnlab-gpt-simd.wasm\` / \`attnlab-gpt-scalar.wasm\`[^|]*\\| ${n} / ${n} \\|`, ['attnlab-gpt-simd.wasm', 'attnlab-gpt-scalar.wasm']],
    ['perf', `\\| \`attnlab-worker.js\`[^|]*\\| ${n} \\|`, ['attnlab-worker.js']],
    ['perf', `\\| \`attnlab/inline\` \\(its JS[^|]*\\| ${n} \\|`, ['attnlab/inline']],
    ['perf', `\\| \`attnlab/inline-gpt\` \\(its JS[^|]*\\| ${n} \\|`, ['attnlab/inline-gpt']],
    ['perf', `\\| \`attnlab\` bundled by esbuild into one file[^|]*\\| ${n} \\|`, ['attnlab, one file']],
  ];
  const stale = [];
  for (const [doc, pattern, names] of stated) {
    const m = new RegExp(pattern).exec(text[doc]);
    assert.ok(m, `${doc === 'readme' ? 'src/js/README.md' : 'docs/performance.md'} no longer has the line /${pattern}/`);
    names.forEach((name, i) => {
      const said = Number(m[i + 1]), measured = sizes[name] / 1024;
      if (Math.abs(said - measured) > 0.025 * measured) stale.push(`${name}: ${said} KiB stated, ${measured.toFixed(1)} measured`);
    });
  }
  assert.deepEqual(stale, [], 'sizes the docs state (src/js/README.md, docs/performance.md) differ from the build by more than 2.5 %');
}

describe('Rollup 4, only @rollup/plugin-node-resolve', () => {
  const build = async (input, output) => {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const warnings = [];
    const bundle = await rollup({ input: join(app, input), plugins: [nodeResolve()], onwarn: (w) => warnings.push(w.message) });
    const written = await bundle.write({ format: 'es', ...output });
    await bundle.close();
    assert.deepEqual(warnings, []);
    return written.output;
  };

  test('output.file: attnlab/inline in one file', async () => {
    await build('rollup/main.js', { file: join(out('rollup'), 'bundle.js') });
    writeFileSync(join(out('rollup'), 'index.html'), page('attnlab with Rollup', './bundle.js'));
    const { requests } = await check(out('rollup'), '/', 'rollup', undefined, { inline: ['main'] });
    assert.deepEqual(wasmRequests(requests), []);
  });

  test('output.dir: attnlab; one failed request per module, then the chunk with its copy inside the JS', async () => {
    const output = await build('rollup/default.js', { dir: out('rollup-dir') });
    const chunks = output.filter((c) => c.type === 'chunk' && !c.isEntry).map((c) => c.fileName);
    assert.equal(chunks.filter(inlineChunk).length, 5, chunks.join(' '));
    writeFileSync(join(out('rollup-dir'), 'index.html'), page('attnlab with Rollup', './default.js'));
    const problems = ['HTTP 404: ORIGIN/attnlab-simd.wasm', 'HTTP 404: ORIGIN/attnlab-scalar.wasm'];
    const { requests } = await check(out('rollup-dir'), '/', 'rollup attnlab', undefined, { fallback: ['main'], problems });
    const chunk = (name) => chunks.find((f) => f.startsWith(`${name}.inline-`));
    assert.deepEqual(requests.filter((p) => p !== '/favicon.ico'),
      ['/', '/default.js', '/attnlab-simd.wasm', `/${chunk('attnlab-simd')}`, '/attnlab-scalar.wasm', `/${chunk('attnlab-scalar')}`], 'each module: the file, then its chunk');
  });
});

describe('no tool: <script type="module"> with an import map, and a module worker', () => {
  test('both entries on the page, the URL entry in the worker', async () => {
    const { served } = await check(app, '/plain/index.html', 'import map', undefined, { inline: ['inline'] });
    assert.equal(served.filter((p) => p === '/node_modules/attnlab/dist/attnlab-simd.wasm').length, 2, 'page and worker each fetch it once');
  });

  test('a host that sends .wasm as application/octet-stream: still one request per module', async () => {
    const { served } = await check(app, '/plain/index.html', 'octet-stream', { wasmType: 'application/octet-stream' }, { inline: ['inline'] });
    const wasm = served.filter((p) => p.endsWith('.wasm'));
    // Page (URL entry) and worker each load the SIMD and the scalar module once; the inline entry fetches nothing.
    assert.deepEqual(wasm.sort(), [
      '/node_modules/attnlab/dist/attnlab-scalar.wasm', '/node_modules/attnlab/dist/attnlab-scalar.wasm',
      '/node_modules/attnlab/dist/attnlab-simd.wasm', '/node_modules/attnlab/dist/attnlab-simd.wasm',
    ]);
  });
});
