// Export: heatmaps as PNG and SVG, matrices as CSV and JSON, the whole state as a JSON file (export, import,
// hostile imports), and "copy as NumPy code" run through Debian's Python and NumPy against the page's numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { inflateSync } from 'node:zlib';
import { setup, openPage, readMatrix, readAttentionLab, settle } from './helpers.mjs';
import { attentionReference, outputTolerance, weightTolerance, matmul, U } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const PYTHON = '/usr/bin/python3';
const scratch = mkdtempSync(join(tmpdir(), 'attnlab-export-'));
// Downloads are deleted afterwards unless ATTNLAB_KEEP_EXPORTS is set (to look at the PNG and SVG).
after(() => { if (!process.env.ATTNLAB_KEEP_EXPORTS) rmSync(scratch, { recursive: true, force: true }); });

/** Clicks `selector` and returns the download's file name and bytes. */
async function downloadOf(page, selector, how = 'click') {
  // Waits for the download event itself; the limit is only a guard against a hang (a loaded machine took over
  // 15 s to produce one, which a fixed 15 s timeout turned into a failure).
  const wait = page.waitForEvent('download', { timeout: 180_000 });
  if (how === 'click') await page.click(selector);
  else { await page.focus(selector); await page.keyboard.press(how); }
  const dl = await wait;
  const path = join(scratch, `${Date.now()}-${dl.suggestedFilename()}`);
  await dl.saveAs(path);
  return { name: dl.suggestedFilename(), bytes: readFileSync(path) };
}

// ---------------------------------------------------------------- a small PNG decoder (8-bit RGB/RGBA, not interlaced)

function decodePng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  let off = 8, ihdr, idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') ihdr = { width: data.readUInt32BE(0), height: data.readUInt32BE(4), depth: data[8], colour: data[9], interlace: data[12] };
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  assert.ok(ihdr, 'IHDR chunk first');
  assert.equal(ihdr.depth, 8);
  assert.equal(ihdr.interlace, 0);
  const bpp = { 6: 4, 2: 3 }[ihdr.colour];
  assert.ok(bpp, `colour type ${ihdr.colour}`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = ihdr.width * bpp;
  const px = Buffer.alloc(ihdr.height * stride);
  for (let y = 0; y < ihdr.height; y++) {
    const f = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= bpp ? px[y * stride + x - bpp] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      const p = a + b - c;
      const pr = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      px[y * stride + x] = (v + [0, a, b, (a + b) >> 1, pr][f]) & 0xff;
    }
  }
  return { ...ihdr, pixel: (x, y) => [...px.subarray(y * stride + x * bpp, y * stride + x * bpp + 3)] };
}

const hex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
const rgbOf = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

/** The heatmap's geometry and fills as drawn on the page: where each cell is in SVG units and its colour. */
function heatmapCells(page, name) {
  return page.$eval(`svg[data-heatmap="${name}"]`, (svg) => {
    const tr = (s) => (/translate\(([-\d.]+),\s*([-\d.]+)\)/.exec(s ?? '') ?? [0, 0, 0]).slice(1).map(Number);
    const [gx, gy] = tr(svg.querySelector('g.cells').getAttribute('transform'));
    const cells = [...svg.querySelectorAll('g.cell')].map((g) => {
      const [x, y] = tr(g.getAttribute('transform'));
      return { x: gx + x, y: gy + y, fill: g.querySelector('rect').getAttribute('fill') };
    });
    const vb = svg.viewBox.baseVal;
    return { width: vb.width, height: vb.height, cells };
  });
}

test('heatmap: PNG and SVG downloads look like the page', async () => {
  const { page, context, log, done } = await openPage(env, '?c=1');
  const label = 'Attention weights A';
  // The attention lab's heatmap (the asymmetry figure has one with the same title).
  const bar = '.heatmap:has(> .heatmap-scroll > svg[data-heatmap="weights"]) > .export-bar';
  assert.equal(await page.getAttribute(`${bar} button[data-export="png"]`, 'aria-label'), `Download ${label} as PNG`);
  assert.equal(await page.getAttribute(`${bar} button[data-export="svg"]`, 'aria-label'), `Download ${label} as SVG`);
  const png = await downloadOf(page, `${bar} button[data-export="png"]`);
  assert.equal(png.name, 'attnlab-weights.png');
  const img = decodePng(png.bytes);
  const geo = await heatmapCells(page, 'weights');
  const TITLE = 26;
  // 2× scale; the title band sits above the picture.
  assert.equal(img.width, Math.ceil(geo.width * 2));
  assert.equal(img.height, Math.ceil((geo.height + TITLE) * 2));
  assert.equal(geo.cells.length, 49, '7 × 7 cells');
  let hatched = 0;
  for (const c of geo.cells) {
    // A point 3 units inside the cell's corner: clear of the value text and of the selected row's outline.
    const got = img.pixel(Math.round((c.x + 3) * 2), Math.round((c.y + 3 + TITLE) * 2));
    if (c.fill.startsWith('url(')) {
      hatched++;
      assert.ok(got.some((v) => v < 250), 'a masked cell is hatched, not blank');
      continue;
    }
    const want = rgbOf(c.fill);
    assert.ok(got.every((v, k) => Math.abs(v - want[k]) <= 2), `cell at (${c.x},${c.y}): PNG ${hex(got)} vs page ${c.fill}`);
  }
  assert.equal(hatched, 21, 'the causal mask hides 21 of 49 cells');
  // Labels were drawn: some dark ink in the row-label column left of the cells.
  let ink = 0;
  for (let y = Math.round((geo.cells[0].y + TITLE) * 2); y < Math.round((geo.cells[48].y + TITLE) * 2); y++) {
    for (let x = 0; x < Math.round(geo.cells[0].x * 2); x++) if (img.pixel(x, y)[0] < 100) ink++;
  }
  assert.ok(ink > 50, `row labels are drawn (${ink} dark pixels)`);
  writeFileSync(join(scratch, 'heatmap.png'), png.bytes); // kept for a look: the scratch folder is printed below

  // SVG, with the keyboard this time (Enter on the focused button).
  const svg = await downloadOf(page, `${bar} button[data-export="svg"]`, 'Enter');
  assert.equal(svg.name, 'attnlab-weights.svg');
  const text = svg.bytes.toString('utf8');
  writeFileSync(join(scratch, 'heatmap.svg'), text);
  assert.ok(!/var\(--|https?:\/\/(?!www\.w3\.org)/.test(text), 'no CSS variables or external references left');
  // Parse it in a blank page: the app's CSP would (rightly) report the file's style="" attributes.
  const blank = await context.newPage();
  const parsed = await blank.evaluate((t) => {
    const doc = new DOMParser().parseFromString(t, 'image/svg+xml');
    const root = doc.documentElement;
    const texts = [...root.querySelectorAll('.row-labels text')];
    return {
      error: !!doc.querySelector('parsererror'),
      tag: root.tagName,
      title: root.querySelector(':scope > title')?.textContent,
      cells: root.querySelectorAll('g.cell rect').length,
      fills: [...root.querySelectorAll('g.cell rect')].map((r) => r.getAttribute('fill')),
      labels: texts.map((x) => x.textContent),
      labelStyle: texts[0]?.getAttribute('style') ?? '',
      scripts: root.querySelectorAll('script, foreignObject').length,
      handlers: [...root.querySelectorAll('*')].some((n) => [...n.attributes].some((a) => a.name.startsWith('on'))),
    };
  }, text);
  await blank.close();
  assert.equal(parsed.error, false, 'the SVG parses as XML');
  assert.equal(parsed.tag, 'svg');
  assert.equal(parsed.title, label);
  assert.equal(parsed.cells, 49);
  assert.deepEqual(parsed.fills, geo.cells.map((c) => c.fill));
  assert.deepEqual(parsed.labels, ['1 i', '2 ate', '3 a', '4 banana', '5 and', '6 an', '7 apple']);
  assert.match(parsed.labelStyle, /fill: rgb\(/, 'CSS fill resolved inline');
  assert.equal(parsed.scripts, 0);
  assert.equal(parsed.handlers, false);

  // Every heatmap has its own pair of buttons (the multi-head lab's heads too).
  const heads = await page.$$eval('button[aria-label^="Download Head "][aria-label$=" as PNG"]', (b) => b.length);
  assert.equal(heads, 2);
  assert.deepEqual(log.errors, []);
  await done();
});

// ---------------------------------------------------------------- matrices

function parseCsv(text) {
  // The page's labels hold no commas or quotes, so a plain split is enough here (quoting is checked below).
  return text.trimEnd().split('\r\n').map((l) => l.split(','));
}

/** The number of significant digits of a decimal string. */
const sigDigits = (s) => s.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').length;

function assertShortest(s, v, what) {
  const k = sigDigits(s);
  if (k > 1 && Number.isFinite(v) && v !== 0) {
    assert.notEqual(Math.fround(Number(Number(s).toPrecision(k - 1))), v, `${what}: "${s}" is not the shortest float32 repr`);
  }
}

async function checkMatrixExports(page, name, caption) {
  const page_ = await readMatrix(page, name);
  const labels = await page.$eval(`table[data-matrix="${name}"]`, (t) => ({
    cols: [...t.tHead.rows[t.tHead.rows.length - 1].querySelectorAll('th')].map((th) => th.textContent),
    rows: [...t.tBodies[0].rows].map((tr) => tr.querySelector('th').textContent),
  }));
  // Several labs have a "W_Q": pick the buttons under this table, then check their names.
  const bar = `figure:has(> .table-scroll > table[data-matrix="${name}"]) > .export-bar`;
  assert.equal(await page.getAttribute(`${bar} button[data-export="csv"]`, 'aria-label'), `Download ${caption} as CSV`);
  assert.equal(await page.getAttribute(`${bar} button[data-export="json"]`, 'aria-label'), `Download ${caption} as JSON`);
  const csv = await downloadOf(page, `${bar} button[data-export="csv"]`);
  assert.equal(csv.name, `attnlab-${name}.csv`);
  const rows = parseCsv(csv.bytes.toString('utf8'));
  assert.equal(rows.length, page_.rows + 1);
  assert.deepEqual(rows[0].slice(1), labels.cols, `${name}: CSV header = column labels`);
  for (let r = 0; r < page_.rows; r++) {
    assert.equal(rows[r + 1][0], labels.rows[r], `${name}: row label ${r}`);
    assert.equal(rows[r + 1].length, page_.cols + 1);
    for (let c = 0; c < page_.cols; c++) {
      const s = rows[r + 1][c + 1];
      const v = page_.values[r][c];
      // Exactly the page's float32: parse the decimal, round to float32 once, compare bits.
      assert.ok(Object.is(Math.fround(Number(s)), v), `${name} CSV (${r},${c}) = ${s}, page ${v}`);
      assertShortest(s, v, `${name} CSV (${r},${c})`);
    }
  }
  const json = await downloadOf(page, `${bar} button[data-export="json"]`);
  assert.equal(json.name, `attnlab-${name}.json`);
  const j = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(j.name, name);
  assert.equal(j.rows, page_.rows);
  assert.equal(j.cols, page_.cols);
  assert.deepEqual(j.rowLabels, labels.rows);
  assert.deepEqual(j.colLabels, labels.cols);
  assert.equal(j.values.length, page_.rows);
  j.values.forEach((row, r) => row.forEach((x, c) => {
    const v = page_.values[r][c];
    assert.ok(typeof x === 'number' || ['-Infinity', 'Infinity', 'NaN'].includes(x), `${name} JSON (${r},${c}) type`);
    assert.ok(Object.is(Math.fround(Number(x)), v), `${name} JSON (${r},${c}) = ${x}, page ${v}`);
  }));
  return page_;
}

test('matrices: CSV and JSON hold exactly the page’s float32 values', async () => {
  const { page, log, done } = await openPage(env, '?c=1&wp=rnd&dm=4&dk=3');
  await checkMatrixExports(page, 'X', 'X (embeddings)');
  await checkMatrixExports(page, 'Wq', 'W_Q');
  await page.click('details[data-disclosure="weights-table"] summary'); // the table behind the heatmap
  const w = await checkMatrixExports(page, 'weights', 'attention weights A');
  assert.ok(w.values.flat().some((v) => v > 0 && v < 1 && Math.fround(v) === v && String(v).length > 12), 'non-trivial float32 weights were compared');
  const m = await checkMatrixExports(page, 'scores', 'scaled and masked scores');
  assert.ok(m.values.flat().includes(-Infinity), 'masked scores (−∞) survive the round trip');
  await checkMatrixExports(page, 'output', 'output O = AV');
  await page.click('#multihead .head-card details summary'); // the head's table is folded away
  await checkMatrixExports(page, 'mh-head1-weights', 'head 1 weights (7 × 7)');
  // Buttons have visible text and a name that says what they download.
  const bar = await page.$eval('table[data-matrix="Wq"]', (t) => {
    const b = t.closest('figure').querySelector('.export-bar button');
    const r = b.getBoundingClientRect();
    return { text: b.textContent, label: b.getAttribute('aria-label'), h: r.height, w: r.width };
  });
  assert.deepEqual([bar.text, bar.label], ['CSV', 'Download W_Q as CSV']);
  assert.ok(bar.h >= 24 && bar.w >= 24, `target ${bar.w} × ${bar.h} px`);
  assert.deepEqual(log.errors, []);
  await done();
});

// ---------------------------------------------------------------- whole state

const search = (page) => page.evaluate(() => location.search);

test('state: export, change, import restores the same state', async () => {
  const query = '?t=the+cat+sat+on+the+mat&c=1&tau=2&wp=rnd&wq=1.0:0.75&sx=1,2,3,4&h=4&hd=1';
  const { page, log, done } = await openPage(env, query);
  await settle(page);
  const before = await search(page);
  const weightsBefore = (await readMatrix(page, 'weights')).values;
  await page.click('button[data-control="save-load"]');
  const file = await downloadOf(page, 'button[data-control="state-export"]');
  assert.equal(file.name, 'attnlab-state.json');
  const json = JSON.parse(file.bytes.toString('utf8'));
  assert.equal(json.format, 'attnlab-state');
  assert.equal(json.version, 1);
  // The URL's parameter names and value strings, and every field (defaults too).
  assert.equal(json.t, 'the cat sat on the mat');
  assert.equal(json.c, '1');
  assert.equal(json.tau, '2');
  assert.equal(json.wq, '1.0:0.75');
  assert.equal(json.sc, '1');
  assert.equal(json.dm, '2');
  assert.ok(Object.keys(json).length > 40);
  // Every parameter in the URL appears in the file with the same value.
  for (const [k, v] of new URLSearchParams(before)) assert.equal(json[k], v, `file field ${k}`);

  // Change the state in several labs.
  await page.fill('input[data-control="text"]', 'something else entirely');
  await page.uncheck('input[data-control="causal"]');
  await page.selectOption('select[data-control="heads"]', '2');
  await settle(page);
  assert.notEqual(await search(page), before);

  // Import the file: the URL is the exported one again, and so are the numbers.
  const path = join(scratch, 'state.json');
  writeFileSync(path, file.bytes);
  await page.setInputFiles('input[data-control="state-file"]', path);
  await settle(page);
  assert.equal(await search(page), before);
  assert.deepEqual((await readMatrix(page, 'weights')).values, weightsBefore);
  assert.equal(await page.inputValue('input[data-control="text"]'), 'the cat sat on the mat');
  assert.equal(await page.isChecked('input[data-control="causal"]'), true);
  assert.equal(await page.inputValue('select[data-control="heads"]'), '4');
  assert.match(await page.textContent('[data-save-load-message]'), /Loaded the state from the file\./);
  // A reload of the imported URL gives the same state (the import went through the URL's parser).
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await search(page), before);

  // Paste works too.
  await page.click('button[data-control="save-load"]');
  await page.fill('textarea[data-control="state-paste"]', JSON.stringify({ format: 'attnlab-state', version: 1, t: 'pasted words here', dk: '1' }));
  await page.click('button[data-control="state-load-pasted"]');
  await settle(page);
  assert.equal(await search(page), '?t=pasted+words+here&dk=1');
  assert.deepEqual(log.errors, []);
  await done();
});

test('state: hostile JSON is inert, rejected by name, and changes nothing it should not', async () => {
  const { page, log, done } = await openPage(env, '');
  await page.click('button[data-control="save-load"]');
  const load = async (obj, proto = false) => {
    let text = typeof obj === 'string' ? obj : JSON.stringify(obj);
    // An own "__proto__" key (an object literal would set the prototype instead of a key).
    if (proto) text = text.replace(/^\{/, '{"__proto__":{"polluted":1,"t":"polluted"},');
    await page.setInputFiles('input[data-control="state-file"]', { name: 'evil.json', mimeType: 'application/json', buffer: Buffer.from(text) });
    await settle(page);
    return page.textContent('[data-save-load-message]');
  };
  const evil = '<img src=x onerror="window.__pwned=1;alert(1)">';
  let msg = await load({
    dModel: evil, text: 5, dk: '99', tau: '1e308', c: true, wq: ['0.0:1'], qi: '-1', xe: `a.0:${evil}`,
    st: '2.5', constructor: 'x', [evil]: evil,
  }, true);
  assert.match(msg, /reset to their defaults: dModel, text, dk, tau, c, wq, qi, xe\. /, 'the notice names every rejected field, in file order');
  assert.match(msg, /3 unknown fields were ignored/);
  // The valid field applied; the rejected ones hold their defaults.
  assert.equal(await search(page), '?st=2.5');
  const inert = await page.evaluate(() => ({
    pwned: window.__pwned,
    polluted: ({}).polluted,
    imgs: document.querySelectorAll('img').length,
    messageChildren: document.querySelector('[data-save-load-message]').children.length,
  }));
  assert.deepEqual(inert, { pwned: undefined, polluted: undefined, imgs: 0, messageChildren: 0 });

  // Not a state file at all: nothing changes.
  for (const [bad, why] of [['<script>alert(2)</script>', /not valid JSON/], ['[1,2]', /one JSON object/], ['{"format":"other","t":"x y"}', /not a state file/],
    ['{"format":"attnlab-state","version":2,"t":"x y"}', /version/], ['{"hello":"world"}', /no attnlab state fields/], [`{"t":"${'a '.repeat(200000)}"}`, /too large/]]) {
    msg = await load(bad);
    assert.match(msg, /^Nothing was loaded/);
    assert.match(msg, why);
    assert.equal(await search(page), '?st=2.5');
  }
  // Only invalid fields: nothing is applied, and the notice still names them.
  msg = await load({ dModel: evil, text: 5 });
  assert.match(msg, /^Nothing was loaded: no field was valid \(dModel, text\)\.$/);
  assert.equal(await search(page), '?st=2.5');
  // A field given twice (by its URL name and its state name) is ambiguous: both are rejected.
  msg = await load({ t: 'one two', text: 'three four', st: '3' });
  assert.match(msg, /reset to their defaults: t, text\./);
  assert.equal(await search(page), '?st=3');
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.errors, []);
  await done();
});

// ---------------------------------------------------------------- copy as NumPy code

let numpyReady;
/** python3-numpy may still be installing (apt, by another job): wait up to 10 minutes for it. */
async function waitForNumpy() {
  numpyReady ??= (async () => {
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      const r = spawnSync(PYTHON, ['-c', 'import numpy'], { encoding: 'utf8' });
      if (r.status === 0) return;
      if (Date.now() > deadline) throw new Error(`numpy is not importable by ${PYTHON}: ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 5000));
    }
  })();
  return numpyReady;
}

function runPython(code) {
  const r = spawnSync(PYTHON, ['-'], { input: code, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `python failed: ${r.stderr}`);
  const lines = r.stdout.trimEnd().split('\n');
  return { out: JSON.parse(lines[lines.length - 1]), stdout: r.stdout };
}

async function generatedCode(page, lab) {
  await page.click(`button[data-control="copy-code-${lab}"]`);
  await page.waitForSelector(`textarea[data-code="${lab}"]:visible`);
  return page.inputValue(`textarea[data-code="${lab}"]`);
}

let worstAttention = 0;

/**
 * NumPy's result against the page's. Both are float32 computations of the same formula from the same
 * float32 inputs, differing only in summation order and exp implementation, so each lies within the
 * float32 error bound of reference.mjs (dot products γ_d·Σ|aᵢbᵢ|, softmax 2·w·max|δlogit| + (n+8)·u·w,
 * output Σ|δw||v| + w·|δv| + γ_n·Σw|v|) of the float64 result; so they differ by at most the sum of the
 * two bounds. The check is that tight: a missing scale, a wrong temperature or a shifted mask is orders
 * of magnitude larger.
 */
async function checkAttentionCode(page, causal) {
  await settle(page);
  const code = await generatedCode(page, 'attention');
  const { X, Wq, Wk, Wv, W, O, scale } = await readAttentionLab(page);
  const ref = attentionReference({ X, Wq, Wk, Wv, scale, causal });
  const n = X.length;
  const { out } = runPython(code);
  assert.equal(out.output.length, n);
  let maxDiff = 0, maxRatio = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const a = out.weights[i][j];
      if (causal && j > i) { assert.equal(a, 0, `numpy weight (${i},${j}) is masked to exactly 0`); assert.equal(W[i][j], 0); continue; }
      const tol = weightTolerance(ref, i, j, n) + 1e-37;
      assert.ok(Math.abs(a - ref.weights[i][j]) <= tol, `numpy weight (${i},${j}) = ${a} vs float64 ${ref.weights[i][j]}`);
      const d = Math.abs(a - W[i][j]);
      assert.ok(d <= 2 * tol, `weight (${i},${j}): numpy ${a}, page ${W[i][j]}, |diff| ${d} > ${2 * tol}`);
    }
    for (let k = 0; k < O[0].length; k++) {
      const tol = outputTolerance(ref, X, Wv, i, k) + 1e-30;
      const a = out.output[i][k];
      assert.ok(Math.abs(a - ref.output[i][k]) <= tol, `numpy output (${i},${k}) = ${a} vs float64 ${ref.output[i][k]} (tol ${tol})`);
      const d = Math.abs(a - O[i][k]);
      assert.ok(d <= 2 * tol, `output (${i},${k}): numpy ${a}, page ${O[i][k]}, |diff| ${d} > ${2 * tol}`);
      maxDiff = Math.max(maxDiff, d);
      maxRatio = Math.max(maxRatio, d / tol);
    }
  }
  worstAttention = Math.max(worstAttention, maxDiff);
  console.log(`numpy vs page (${n} tokens, causal ${causal}): max |Δoutput| = ${maxDiff.toExponential(2)} (${(maxDiff / U).toFixed(1)} × 2⁻²⁴), ≤ ${maxRatio.toFixed(3)} of one bound`);
  return { code, out, O, W };
}

test('copy as NumPy code (attention lab): default state', async () => {
  await waitForNumpy();
  const { page, context, log, done } = await openPage(env, '');
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const { code, O } = await checkAttentionCode(page, false);
  // The clipboard got the same text as the textarea.
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);
  assert.match(await page.textContent('.code-status'), /Copied/);
  assert.match(code, /np\.set_printoptions\(precision=6, suppress=True\)/);
  assert.match(code, /dtype=np\.float32/);
  // The check can fail: the same script without the 1/√d_k factor disagrees with the page.
  const wrong = runPython(code.replace('scaled = True', 'scaled = False')).out.output;
  assert.ok(wrong.some((r, i) => r.some((v, k) => Math.abs(v - O[i][k]) > 1e-3)), 'an unscaled script must disagree');
  assert.deepEqual(log.errors, []);
  // The tab goes back without the permissions granted here (the next test's clipboard is refused).
  await context.clearPermissions();
  await done();
});

test('copy as NumPy code (attention lab): causal, other words, τ ≠ 1, random and edited weights', async () => {
  await waitForNumpy();
  const { page, context, log, done } = await openPage(env, '?t=the+cat+sat+on+the+warm+mat+by+Zoë&dm=4&dk=3&dv=2&wp=rnd&ws=11&c=1&tau=0.7');
  await page.fill('table[data-matrix="Wk"] input[data-r="1"][data-c="2"]', '-1.375');
  await page.fill('table[data-matrix="X"] input[data-r="1"][data-c="3"]', '0.3');
  await settle(page);
  assert.match(await search(page), /wk=1\.2%3A-1\.375/);
  const { code, out } = await checkAttentionCode(page, true);
  assert.match(code, /temperature = 0\.7\b/);
  assert.match(code, /causal = True/);
  assert.match(code, /-1\.375/);
  assert.ok(out.weights[0][0] === 1, 'the first token attends only to itself');
  // The check can fail: without the mask the script disagrees.
  const O = (await readMatrix(page, 'output')).values;
  const unmasked = runPython(code.replace('causal = True', 'causal = False')).out.output;
  assert.ok(unmasked.some((r, i) => r.some((v, k) => Math.abs(v - O[i][k]) > 1e-3)), 'an unmasked script must disagree');
  // Temperature slider moved by keyboard: a value that is not a round number.
  await page.focus('input[data-control="attn-temp"]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await checkAttentionCode(page, true);
  // Clipboard refused (no permission): the code is still there to select.
  await context.clearPermissions();
  const again = await generatedCode(page, 'attention');
  assert.ok(again.startsWith('# attnlab: single-head self-attention'));
  assert.deepEqual(log.errors, []);
  await done();
});

test('copy as NumPy code (multi-head lab)', async () => {
  await waitForNumpy();
  const { page, log, done } = await openPage(env, '?h=3&hd=2&mc=1&ms=5&t=a+banana+is+not+a+phone');
  const code = await generatedCode(page, 'multihead');
  const { out } = runPython(code);
  const X = (await readMatrix(page, 'mh-X')).values;
  const Wq = (await readMatrix(page, 'mh-Wq')).values;
  const Wk = (await readMatrix(page, 'mh-Wk')).values;
  const Wv = (await readMatrix(page, 'mh-Wv')).values;
  const Wo = (await readMatrix(page, 'mh-Wo')).values;
  const O = (await readMatrix(page, 'mh-output')).values;
  const h = 3, d = 2, n = X.length;
  const cols = (M, c0) => M.map((r) => r.slice(c0, c0 + d));
  const concat = X.map(() => []);
  const concatTol = X.map(() => []);
  const g = (k) => (k * U) / (1 - k * U);
  for (let hi = 0; hi < h; hi++) {
    const Wvh = cols(Wv, hi * d);
    const ref = attentionReference({ X, Wq: cols(Wq, hi * d), Wk: cols(Wk, hi * d), Wv: Wvh, scale: Math.fround(1 / Math.sqrt(d)), causal: true });
    const W = (await readMatrix(page, `mh-head${hi + 1}-weights`)).values;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const tol = weightTolerance(ref, i, j, n) + 1e-37;
        assert.ok(Math.abs(out.weights[hi][i][j] - W[i][j]) <= 2 * tol, `head ${hi + 1} weight (${i},${j}): numpy ${out.weights[hi][i][j]}, page ${W[i][j]}`);
      }
      ref.output[i].forEach((v, k) => { concat[i].push(v); concatTol[i].push(outputTolerance(ref, X, Wvh, i, k)); });
    }
  }
  // Output = concat·W_O: the heads' errors times |W_O|, plus the rounding of that product.
  const outRef = matmul(concat, Wo);
  let maxDiff = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < Wo[0].length; k++) {
      let tol = 0;
      for (let t = 0; t < h * d; t++) tol += concatTol[i][t] * Math.abs(Wo[t][k]) + g(h * d) * Math.abs(concat[i][t] * Wo[t][k]);
      tol = 2 * tol + 1e-30;
      assert.ok(Math.abs(out.output[i][k] - outRef[i][k]) <= tol, `numpy output (${i},${k}) vs float64`);
      const diff = Math.abs(out.output[i][k] - O[i][k]);
      assert.ok(diff <= 2 * tol, `output (${i},${k}): numpy ${out.output[i][k]}, page ${O[i][k]}`);
      maxDiff = Math.max(maxDiff, diff);
    }
  }
  console.log(`multi-head numpy vs page: max |Δoutput| = ${maxDiff.toExponential(2)}`);
  assert.deepEqual(log.errors, []);
  await done();
});

test('export controls fit a 390 px phone and keep the page from scrolling sideways', async () => {
  const { page, context, log } = await openPage(env, '?c=1', { width: 390, height: 844 });
  await page.click('button[data-control="save-load"]');
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= 390, `page is ${scrollWidth} px wide`);
  const sel = '.heatmap:has(> .heatmap-scroll > svg[data-heatmap="weights"]) > .export-bar button[data-export="png"]';
  const btn = await page.$eval(sel, (b) => {
    b.scrollIntoView({ block: 'center' });
    const r = b.getBoundingClientRect();
    return { left: r.left, right: r.right, h: r.height };
  });
  assert.ok(btn.left >= 0 && btn.right <= 390 && btn.h >= 24, JSON.stringify(btn));
  const png = await downloadOf(page, sel);
  assert.equal(png.name, 'attnlab-weights.png');
  assert.ok(decodePng(png.bytes).width > 0);
  assert.deepEqual(log.errors, []);
  await context.close();
  console.log(`worst numpy vs page output difference (attention lab): ${worstAttention.toExponential(2)}${process.env.ATTNLAB_KEEP_EXPORTS ? `; downloads kept in ${scratch}` : ''}`);
});
