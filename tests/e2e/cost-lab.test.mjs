// The cost-of-attention lab: the calculator against independent BigInt arithmetic (including “Self-attention”'s
// ≈ 4.5 PB ideal tensor), and the measured curve run in a Web Worker at a small largest n: progress to the end,
// points for both paths, materialized memory above streaming, a responsive main thread, and Cancel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, drainTasks } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

// ---- an independent reference ----

/** Everything the calculator shows, from the textbook formulas (tile: 32 rows × 128 keys, as in the engine). */
function reference({ n, d, heads, layers, bytes }) {
  const [N, D, H, L, B] = [n, d, heads, layers, bytes].map(BigInt);
  const dh = D / H;
  const head = N * N * B;
  const tile = (32n * 128n + 32n * dh + 2n * 32n) * B;
  const qkvo = 4n * N * D * B;
  return {
    'scores-head': { naive: head, stream: tile },
    'scores-layer': { naive: H * head, stream: H * tile },
    'scores-all': { naive: L * H * head, stream: L * H * tile },
    'qkvo-all': { naive: L * qkvo, stream: L * qkvo },
    'total-all': { naive: L * (H * head + qkvo), stream: L * (H * tile + qkvo) },
    flops: {
      proj: { layer: 8n * N * D * D, all: L * 8n * N * D * D },
      attn: { layer: 4n * N * N * D, all: L * 4n * N * N * D },
    },
    ideal: N * N * D * D * B,
    crossover: 2 * d,
  };
}

/** Decimal units, 3 significant digits, "≈ " when rounded: written differently from the page (Number maths). */
function decimal(v, unit, kilo = 'K') {
  if (v < 1000n) return `${v} ${unit}`;
  const k = Math.floor((v.toString().length - 1) / 3);
  const mant = (Number(v) / 10 ** (3 * k)).toPrecision(3);
  const back = BigInt(mant.replace('.', '')) * 10n ** BigInt(3 * k) / 10n ** BigInt((mant.split('.')[1] ?? '').length);
  const prefix = ['', kilo, 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'][k];
  return `${back === v ? '' : '≈ '}${mant} ${prefix}${unit}`;
}

async function readCalc(page) {
  return page.evaluate(() => {
    const out = {};
    for (const tr of document.querySelectorAll('table[data-table="cost-calc"] tbody tr')) {
      out[tr.dataset.row] = {};
      for (const td of tr.querySelectorAll('td[data-col]')) {
        out[tr.dataset.row][td.dataset.col] = { value: td.dataset.value, text: td.querySelector('.cost-dec').textContent };
      }
    }
    const flops = {};
    for (const tr of document.querySelectorAll('table[data-table="cost-flops"] tbody tr')) {
      flops[tr.dataset.row] = {};
      for (const td of tr.querySelectorAll('td[data-col]')) flops[tr.dataset.row][td.dataset.col] = { value: td.dataset.value, text: td.textContent };
    }
    const ideal = document.querySelector('#cost [data-cost="ideal"]');
    const crossover = document.querySelector('#cost [data-cost="crossover"]');
    return { mem: out, flops, ideal: { value: ideal.dataset.value, text: ideal.textContent }, crossover: Number(crossover.dataset.value), valid: document.getElementById('cost').dataset.costValid };
  });
}

async function checkCalc(page, input) {
  const ref = reference(input);
  const got = await readCalc(page);
  assert.equal(got.valid, 'true');
  for (const row of ['scores-head', 'scores-layer', 'scores-all', 'qkvo-all', 'total-all']) {
    for (const col of ['naive', 'stream']) {
      const want = ref[row][col];
      assert.equal(got.mem[row][col].value, want.toString(), `${row}/${col} bytes at ${JSON.stringify(input)}`);
      assert.equal(got.mem[row][col].text, decimal(want, 'B'), `${row}/${col} text`);
    }
  }
  for (const row of ['proj', 'attn']) {
    for (const col of ['layer', 'all']) {
      assert.equal(got.flops[row][col].value, ref.flops[row][col].toString(), `${row}/${col} FLOPs`);
      assert.equal(got.flops[row][col].text, decimal(ref.flops[row][col], 'FLOP', 'k'), `${row}/${col} FLOP text`);
    }
  }
  assert.equal(got.flops.total.layer.value, (ref.flops.proj.layer + ref.flops.attn.layer).toString());
  assert.equal(got.ideal.value, ref.ideal.toString());
  assert.ok(got.ideal.text.startsWith(decimal(ref.ideal, 'B')), `ideal tensor text ${got.ideal.text}`);
  assert.equal(got.crossover, ref.crossover);
  return got;
}

async function setInputs(page, { n, d, heads, layers, bytes }) {
  for (const [name, v] of Object.entries({ n, d, heads, layers })) await page.fill(`#cost input[data-control="cost-${name}"]`, String(v));
  await page.selectOption('#cost select[data-control="cost-bytes"]', String(bytes));
}

test('cost calculator: exact bytes and FLOPs, the ≈ 4.5 PB ideal tensor, presets and bad input', async () => {
  const { page, log, done } = await openPage(env, '#cost');
  await page.click('button[data-control="cost-preset-small"]'); // away and back: the preset really sets the inputs
  await page.click('button[data-control="cost-preset-ideal"]');
  assert.equal(await page.inputValue('input[data-control="cost-n"]'), '8192');
  const seed = await checkCalc(page, { n: 8192, d: 4096, heads: 32, layers: 32, bytes: 4 });
  // “Self-attention”: (8192 × 8192 × 4096 × 4096) × 4 bytes ≈ 4.5 PB, i.e. 2^52 bytes, exactly 4 PiB.
  assert.equal(seed.ideal.value, String(2n ** 52n));
  assert.match(seed.ideal.text, /^≈ 4\.50 PB \(4\.00 PiB\)$/);
  // What replaces it: W_q, W_k, W_v, 3 · 4096² · 4 B ≈ 201 MB (the chapter's "hundreds of megabytes").
  assert.equal(await page.getAttribute('#cost [data-cost="ideal-note"]', 'data-value'), String(3n * 4096n * 4096n * 4n));
  assert.match(await page.textContent('#cost [data-cost="ideal-note"]'), /≈ 201 MB/);
  assert.match(await page.textContent('#cost [data-cost="preset-note"]'), /4\.5 PB/);
  assert.equal(await page.getAttribute('button[data-control="cost-preset-ideal"]', 'aria-pressed'), 'true');
  // n = 2d: exactly at the crossover, attention and projections have equal FLOPs.
  assert.equal(seed.flops.proj.layer.value, seed.flops.attn.layer.value);

  await page.click('button[data-control="cost-preset-long"]');
  const long = await checkCalc(page, { n: 131072, d: 4096, heads: 32, layers: 32, bytes: 2 });
  assert.equal(long.mem['scores-head'].naive.text, '≈ 34.4 GB');
  assert.equal(long.mem['scores-all'].naive.text, '≈ 35.2 TB');
  assert.ok(BigInt(long.mem['scores-all'].naive.value) > 2n ** 45n - 1n);

  await page.click('button[data-control="cost-preset-page"]');
  const pageRow = await checkCalc(page, { n: 4096, d: 64, heads: 1, layers: 1, bytes: 4 });
  assert.equal(pageRow.mem['scores-head'].naive.value, String(64 * 2 ** 20)); // 64 MiB

  // Typed input, with d/h = 64 and 2-byte numbers; the presets let go.
  const custom = { n: 1000, d: 512, heads: 8, layers: 6, bytes: 2 };
  await setInputs(page, custom);
  const c = await checkCalc(page, custom);
  assert.equal(c.mem['scores-head'].naive.text, '2.00 MB'); // 1000² × 2 B, exact: no ≈
  assert.equal(await page.$$eval('#cost button[data-control^="cost-preset-"][aria-pressed="true"]', (b) => b.length), 0);
  assert.equal(await page.textContent('#cost [data-cost="preset-note"]'), '');
  assert.match(await page.textContent('#cost [data-cost="crossover"]'), /n = 2d = 1024/);

  // 3 heads do not divide d = 512: an error, and the numbers stay those of the last valid input.
  await page.fill('#cost input[data-control="cost-heads"]', '3');
  assert.match(await page.textContent('#cost [data-cost="error"]'), /heads \(3\) must divide d \(512\).*; the numbers below are for the last valid inputs\.$/);
  assert.equal(await page.getAttribute('#cost', 'data-cost-valid'), 'false');
  await page.fill('#cost input[data-control="cost-heads"]', '8');
  await checkCalc(page, custom);
  assert.equal(await page.textContent('#cost [data-cost="error"]'), '');
  // Out of range: the field is marked aria-invalid="true" (what assistive technology and the invalid style read).
  await page.fill('#cost input[data-control="cost-layers"]', '0');
  assert.equal(await page.getAttribute('#cost input[data-control="cost-layers"]', 'aria-invalid'), 'true');
  assert.match(await page.textContent('#cost [data-cost="error"]'), /layers must be a whole number/);
  await page.fill('#cost input[data-control="cost-layers"]', '6');
  await checkCalc(page, custom);
  assert.equal(await page.getAttribute('#cost input[data-control="cost-layers"]', 'aria-invalid'), null);
  assert.deepEqual(log.errors, []);
  await done();
});

test('a link whose heads do not divide d: the error says the numbers come once the inputs are valid', async () => {
  const { page, done } = await openPage(env, '?cd=512&ch=3#cost');
  assert.equal(await page.textContent('#cost [data-cost="error"]'),
    'heads (3) must divide d (512): each head gets d / heads dimensions; the numbers appear once the inputs are valid.');
  await page.fill('#cost input[data-control="cost-heads"]', '8');
  assert.equal(await page.textContent('#cost [data-cost="error"]'), '');
  await page.fill('#cost input[data-control="cost-heads"]', '3');
  assert.match(await page.textContent('#cost [data-cost="error"]'), /; the numbers below are for the last valid inputs\.$/);
  await done();
});

test('a count out of range, left, shows the last good value again, one a preset wrote; the error goes with it', async () => {
  const { page, log, done } = await openPage(env, '#cost');
  // The preset writes n = 131072 into the field from the page's code, not by typing: the field must follow it.
  await page.click('button[data-control="cost-preset-long"]');
  const long = { n: 131072, d: 4096, heads: 32, layers: 32, bytes: 2 };
  await checkCalc(page, long);
  const field = '#cost input[data-control="cost-n"]';
  await page.fill(field, '0');
  assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
  assert.match(await page.textContent('#cost [data-cost="error"]'), /n must be a whole number from 1 to 100,000,000/);
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue(field), '131072');
  assert.equal(await page.getAttribute(field, 'aria-invalid'), null);
  assert.equal(await page.textContent('#cost [data-cost="error"]'), '');
  await checkCalc(page, long);
  assert.equal(await page.getAttribute('button[data-control="cost-preset-long"]', 'aria-pressed'), 'true');
  // A count is whole: 2.5 is refused like 0, and neither the numbers nor the address take it.
  await page.fill(field, '2.5');
  assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
  assert.match(await page.textContent('#cost [data-cost="error"]'), /n must be a whole number/);
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue(field), '131072');
  await checkCalc(page, long);
  assert.doesNotMatch(page.url(), /2\.5/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('cost section: large counts grouped with a comma for thousands, as the page’s other counts (no thin spaces)', async () => {
  // “Long context”: n = 131072, so the grid’s n² and the calculator’s bytes and FLOPs run to 11–22 digits.
  const { page, log, done } = await openPage(env, '#cost');
  await page.click('button[data-control="cost-preset-long"]');
  await page.waitForFunction(() => document.querySelector('#cost [data-cost="grid-number"]')?.dataset.value === String(131072n * 131072n));
  const nn = 131072n * 131072n;
  const seen = await page.evaluate(() => {
    const cost = document.getElementById('cost');
    // Every text and every attribute a reader or a screen reader gets (titles, labels); KaTeX's drawn text, not its source.
    const texts = [];
    const walker = document.createTreeWalker(cost, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement.closest('annotation')) texts.push(n.data);
    for (const e of cost.querySelectorAll('[title], [aria-label], [aria-valuetext]')) texts.push(...['title', 'aria-label', 'aria-valuetext'].map((a) => e.getAttribute(a) ?? ''));
    const cell = cost.querySelector('table[data-table="cost-calc"] td[data-col="naive"]');
    return {
      thin: texts.filter((t) => /\d[\u2009\u202f\u00a0]\d{3}(?!\d)/.test(t)),
      big: cost.querySelector('[data-cost="grid-number"]').textContent,
      grid: cost.querySelector('svg[data-chart="cost-grid"]').getAttribute('aria-label'),
      cell: { value: cell.dataset.value, title: cell.title },
      flop: cost.querySelector('table[data-table="cost-flops"] td[data-col="all"]').title,
      formula: cost.querySelector('.cost-ideal-formula .katex-html').textContent,
      ideal: cost.querySelector('[data-cost="ideal"]').dataset.value,
      caption: cost.querySelector('table[data-table="cost-calc"] caption').textContent,
    };
  });
  const en = (v) => BigInt(v).toLocaleString('en');
  assert.deepEqual(seen.thin, [], 'digits grouped by thin or no-break spaces');
  assert.equal(seen.big, '17,179,869,184');
  assert.equal(seen.big, en(nn));
  assert.match(seen.grid, /, 17,179,869,184 cells;/);
  assert.ok(seen.cell.title.startsWith(`${en(seen.cell.value)} bytes (`), seen.cell.title);
  assert.match(seen.flop, /^\d{1,3}(,\d{3})+ FLOPs$/);
  assert.match(seen.caption, /; 1 KB = 1,000 bytes$/);
  assert.ok(seen.formula.includes(en(seen.ideal)), `the ideal tensor’s formula ends in ${en(seen.ideal)}: ${seen.formula}`);
  assert.deepEqual(log.errors, []);
  await done();
});

/**
 * Watches the main thread: a 20 ms setInterval (largest gap between ticks) and the Long Tasks API (time spent in
 * tasks over 50 ms). Engine work on the main thread would show up as long tasks covering most of the run.
 */
async function watchMainThread(page) {
  await page.evaluate(() => {
    window.__costTicks = [];
    window.__costLong = 0;
    window.__costTimer = setInterval(() => window.__costTicks.push(performance.now()), 20);
    window.__costObserver = new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__costLong += e.duration; });
    window.__costObserver.observe({ type: 'longtask' });
  });
  return () => page.evaluate(() => {
    clearInterval(window.__costTimer);
    window.__costObserver.disconnect();
    const t = window.__costTicks;
    let gap = 0;
    for (let i = 1; i < t.length; i++) gap = Math.max(gap, t[i] - t[i - 1]);
    return { gap, ticks: t.length, span: t.length ? t[t.length - 1] - t[0] : 0, longTasks: window.__costLong };
  });
}

const readCurve = (page) => page.$$eval('table[data-table="cost-curve"] tbody tr', (trs) => trs.map((tr) => ({
  n: Number(tr.dataset.n),
  path: tr.dataset.path,
  ms: Number(tr.querySelector('td[data-col="ms"]').dataset.value),
  msThreads: tr.querySelector('td[data-col="ms-threads"]') ? Number(tr.querySelector('td[data-col="ms-threads"]').dataset.value) : null,
  speedup: tr.querySelector('td[data-col="speedup"]')?.textContent ?? null,
  memory: Number(tr.querySelector('td[data-col="memory"]').dataset.value),
  theory: Number(tr.querySelector('td[data-col="theory"]').dataset.value),
})));

test('cost calculator state lives in the URL: a link restores it, edits and presets write it, bad values fall back', async () => {
  // The long-context preset from a link: numbers computed, its button pressed.
  const { page, log, done } = await openPage(env, '?cn=131072&cd=4096&ch=32&cl=32&cb=2#cost');
  await checkCalc(page, { n: 131072, d: 4096, heads: 32, layers: 32, bytes: 2 });
  assert.equal(await page.getAttribute('button[data-control="cost-preset-long"]', 'aria-pressed'), 'true');
  // A typed edit lands in the URL (after the store's debounce) and survives a reload.
  await page.fill('#cost input[data-control="cost-layers"]', '7');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('cl') === '7');
  assert.equal(await page.getAttribute('button[data-control="cost-preset-long"]', 'aria-pressed'), 'false');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await page.inputValue('input[data-control="cost-layers"]'), '7');
  await checkCalc(page, { n: 131072, d: 4096, heads: 32, layers: 7, bytes: 2 });
  // A preset writes all five.
  await page.click('button[data-control="cost-preset-small"]');
  await page.waitForFunction(() => {
    const q = new URLSearchParams(location.search);
    return q.get('cn') === '1024' && q.get('cd') === '768' && q.get('ch') === '12' && q.get('cl') === '12' && (q.get('cb') ?? '4') === '4'; // defaults are left out of the URL
  });
  assert.deepEqual(log.errors, []);
  await done();

  // Out-of-range and malformed values: defaults, with the notice naming them.
  const bad = await openPage(env, '?cn=0&cb=3&ch=1e3&cd=4096#cost');
  const named = (await bad.page.textContent('#notice')).match(/defaults: ([^.]*)\./)?.[1].split(', ').sort();
  assert.deepEqual(named, ['cb', 'ch', 'cn'], 'the notice names exactly the bad parameters');
  await checkCalc(bad.page, { n: 8192, d: 4096, heads: 32, layers: 32, bytes: 4 });
  await bad.done();
});

test('measured curve: both paths, progress to the end, materialized memory above streaming, page responsive', async () => {
  const { page, log, done } = await openPage(env, '#cost');
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'idle');
  await page.selectOption('select[data-control="cost-max-n"]', '512');
  const stop = await watchMainThread(page);
  // Every status text, recorded as it is written: a short run may end before a poll would see a progress line.
  await page.evaluate(() => {
    const el = document.querySelector('[data-status="cost-curve"]');
    window.__costStatus = [];
    new MutationObserver(() => window.__costStatus.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
  });
  await page.click('button[data-control="cost-measure"]');
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'running');
  assert.equal(await page.isDisabled('button[data-control="cost-measure"]'), true);
  assert.equal(await page.isDisabled('button[data-control="cost-cancel"]'), false);
  await page.waitForFunction(() => document.getElementById('cost').dataset.curveState !== 'running', null, { timeout: 180000, polling: 100 });
  const main = await stop();
  // The progress text named each point as it was measured: "n = 128, streaming (4/8)", 1/8 to 8/8.
  const said = await page.evaluate(() => window.__costStatus);
  for (let i = 1; i <= 8; i++) {
    assert.ok(said.some((t) => new RegExp(`^n = \\d+, (materialized|streaming) \\(${i}/8\\)$`).test(t)), `status named point ${i}/8: ${said.join(' | ')}`);
  }
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'done', await page.textContent('[data-status="cost-curve"]'));

  // Progress reached the end: 64, 128, 256, 512 on two paths.
  const prog = await page.$eval('progress[data-progress="cost-curve"]', (p) => ({ value: p.value, max: p.max }));
  assert.deepEqual(prog, { value: 8, max: 8 });
  assert.match(await page.textContent('[data-status="cost-curve"]'), /^Done: 8 points/);

  const rows = await readCurve(page);
  for (const path of ['materialized', 'streaming']) {
    assert.deepEqual(rows.filter((r) => r.path === path).map((r) => r.n).sort((a, b) => a - b), [64, 128, 256, 512], path);
    for (const chart of ['cost-time', 'cost-memory']) {
      assert.equal(await page.$$eval(`svg[data-chart="${chart}"] circle[data-path="${path}"]`, (c) => c.length), 4, `${chart} ${path} points`);
    }
  }
  for (const r of rows) {
    assert.ok(Number.isFinite(r.ms) && r.ms > 0, `time ${r.path} n=${r.n}: ${r.ms}`);
    assert.equal(r.theory, 4 * r.n * r.n);
    assert.ok(r.memory >= 2 ** 20 && r.memory % 65536 === 0, `wasm memory is whole 64 KiB pages from 1 MiB: ${r.memory}`);
  }
  const at = (path, n) => rows.find((r) => r.path === path && r.n === n);
  // Measured, not theoretical: the materialized instance grew past its n×n output; the streaming one did not.
  assert.ok(at('materialized', 512).memory > at('streaming', 512).memory, `materialized ${at('materialized', 512).memory} > streaming ${at('streaming', 512).memory}`);
  assert.ok(at('materialized', 512).memory >= at('materialized', 512).theory, 'the materialized instance holds at least one n×n matrix');
  assert.ok(at('materialized', 512).memory > at('materialized', 64).memory, 'materialized memory grows with n');
  assert.equal(at('streaming', 512).memory, at('streaming', 64).memory, 'streaming memory stays flat over this range');

  // Threads: the page asks for one worker per logical core (at most 8), says how many ran, and quotes both times of
  // the largest n of each path, with the words for their ratio, from the table's numbers.
  const threads = await page.evaluate(() => Math.max(1, Math.min(8, navigator.hardwareConcurrency || 1)));
  const note = await page.textContent('[data-figure="cost-threads"]');
  console.log(note);
  const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toPrecision(3) : ms.toPrecision(2));
  const words = (one, many) => { const r = one / many; const x = `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`; return r >= 1.1 ? `${x} as fast` : r <= 0.9 ? `slower (${x} the speed)` : `about the same (${x})`; };
  if (threads >= 2) {
    assert.match(await page.textContent('[data-figure="cost-threads-intro"]'), new RegExp(`a pool of ${threads} workers \\(init\\(\\{ threads: ${threads} \\}\\)`));
    assert.ok(note.startsWith(`${threads} threads ran the async calls`), note);
    for (const r of rows) {
      assert.ok(Number.isFinite(r.msThreads) && r.msThreads > 0, `threaded time ${r.path} n=${r.n}: ${r.msThreads}`);
      assert.equal(r.speedup, words(r.ms, r.msThreads), `${r.path} n=${r.n}: the ratio's words`);
    }
    for (const path of ['streaming', 'materialized']) {
      const r = at(path, 512);
      assert.ok(note.includes(`${path} at n = 512: 1 thread ${fmtMs(r.ms)} ms, ${threads} threads ${fmtMs(r.msThreads)} ms, ${words(r.ms, r.msThreads)}`), `${note} quotes ${path}`);
      assert.equal(await page.$$eval(`svg[data-chart="cost-time"] circle[data-path="${path}-threads"]`, (c) => c.length), 4, `${path} threaded points`);
    }
    assert.match(await page.textContent('[data-status="cost-curve"]'), new RegExp(`on 1 and on ${threads} threads\\)\\.$`));
  } else {
    assert.match(note, /^Timed on 1 thread/);
  }

  // The main thread kept ticking all through the run (the engine ran in the worker).
  console.log(`main thread during the run: ${main.ticks} ticks over ${main.span.toFixed(0)} ms, largest gap ${main.gap.toFixed(0)} ms, long tasks ${main.longTasks.toFixed(0)} ms`);
  // Generous bounds: the CI machine is shared, so a busy core can delay a tick; engine work on the main thread
  // would instead fill most of the run with long tasks.
  assert.ok(main.longTasks < 0.5 * main.span, `long tasks ${main.longTasks.toFixed(0)} ms of a ${main.span.toFixed(0)} ms run`);
  assert.ok(main.gap < 2000, `largest main-thread gap ${main.gap.toFixed(0)} ms`);
  assert.ok(main.ticks >= main.span / 20 / 4, `${main.ticks} ticks over ${main.span.toFixed(0)} ms`);
  // Reduced motion (openPage's default): no pop-in animation class on the points.
  assert.equal(await page.$$eval('#cost circle.is-new', (c) => c.length), 0);
  assert.deepEqual(log.errors, []);
  await done();
});

test('measured curve: Cancel stops the worker, keeps the points, and a new run works', async () => {
  const { page, log, done } = await openPage(env, '#cost');
  await page.selectOption('select[data-control="cost-max-n"]', '4096');
  // From the keyboard: Measure disables itself, so focus moves to Cancel, and back to Measure after Cancel.
  const focused = () => page.evaluate(() => document.activeElement?.dataset.control);
  await page.focus('button[data-control="cost-measure"]');
  await page.keyboard.press('Enter');
  assert.equal(await focused(), 'cost-cancel', 'focus moved to Cancel');
  await page.waitForFunction(() => document.querySelectorAll('table[data-table="cost-curve"] tbody tr').length >= 2, null, { timeout: 60000, polling: 100 });
  await page.keyboard.press('Enter');
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'cancelled');
  assert.equal(await focused(), 'cost-measure', 'focus back on Measure');
  assert.equal(await page.isDisabled('button[data-control="cost-measure"]'), false);
  assert.equal(await page.isDisabled('button[data-control="cost-cancel"]'), true);
  assert.equal(await page.isDisabled('select[data-control="cost-max-n"]'), false);
  const before = { prog: await page.$eval('progress[data-progress="cost-curve"]', (p) => ({ value: p.value, max: p.max })), rows: (await readCurve(page)).length };
  assert.equal(before.prog.max, 14);
  assert.ok(before.prog.value < 14, `stopped before the end (${before.prog.value}/14)`);
  assert.match(await page.textContent('[data-status="cost-curve"]'), /^Cancelled after \d+ of 14 points/);
  // Nothing more arrives: progress and points stay where they were.
  await drainTasks(page);
  const later = { prog: await page.$eval('progress[data-progress="cost-curve"]', (p) => ({ value: p.value, max: p.max })), rows: (await readCurve(page)).length };
  assert.deepEqual(later, before);
  assert.ok(later.rows >= 2);
  assert.equal(await page.$$eval('svg[data-chart="cost-time"] circle:is([data-path="materialized"], [data-path="streaming"])', (c) => c.length), later.rows, 'the measured points stay plotted');

  // The buttons are usable again: a small run goes to the end.
  await page.selectOption('select[data-control="cost-max-n"]', '256');
  await page.click('button[data-control="cost-measure"]');
  await page.waitForFunction(() => document.getElementById('cost').dataset.curveState !== 'running', null, { timeout: 120000, polling: 100 });
  assert.equal(await page.getAttribute('#cost', 'data-curve-state'), 'done');
  assert.equal((await readCurve(page)).length, 6);
  assert.deepEqual(log.errors, []);
  await done();
});
