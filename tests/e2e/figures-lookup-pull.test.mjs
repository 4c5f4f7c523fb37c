// The articles' figures: the soft key-value lookup (“An Intuition for Attention”) and words pulling words. Their numbers are
// checked against float64 references computed here from the page's own inputs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle } from './helpers.mjs';
import { U } from './reference.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

function softmax64(x) {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
const close = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got} vs float64 ${want} (tol ${tol})`);

/** Reads td[data-col] cells of a plain table: { col: number[] } in row order. */
const readCols = (page, table) => page.$$eval(`table[data-table="${table}"] td[data-col]`, (tds) => {
  const out = {};
  for (const td of tds) (out[td.dataset.col] ??= []).push(Number(td.dataset.value));
  return out;
});

function kvReference(q, K, v) {
  const scores = K.map((k) => dot(q, k));
  const w = softmax64(scores);
  return { scores, w, parts: w.map((a, j) => a * v[j]), result: dot(w, v) };
}

async function checkKv(page, q, K, v) {
  const ref = kvReference(q, K, v);
  const got = await readCols(page, 'kv-lookup');
  const tolS = (j) => 4 * U * (Math.abs(q[0] * K[j][0]) + Math.abs(q[1] * K[j][1])) + 1e-7;
  ref.scores.forEach((s, j) => close(got.score[j], s, tolS(j), `score ${j}`));
  const maxErr = Math.max(...K.map((_, j) => tolS(j)));
  ref.w.forEach((w, j) => close(got.weight[j], w, 3 * w * maxErr + 20 * U, `weight ${j}`));
  ref.parts.forEach((p, j) => close(got.part[j], p, (3 * maxErr + 24 * U) * Math.abs(p) + 1e-9, `a·v ${j}`));
  const absSum = ref.parts.reduce((a, b) => a + Math.abs(b), 0);
  close(got.result[0], ref.result, (3 * maxErr + 24 * U) * absSum + 1e-9, 'weighted sum');
  return { ref, got };
}

test('soft lookup: "fruit" over apple/banana/chair matches float64, edits recompute, exact lookup contrasts', async () => {
  const { page, log, done } = await openPage(env, '#kv-lookup');
  const K = [[1.2, 0.4], [0.9, 0.3], [-1, 0.5]];
  const { got } = await checkKv(page, [1, 0.2], K, [10, 5, 2]);
  // Fruit is a blend of apple and banana, and almost no chair, as in “An Intuition for Attention”.
  assert.ok(got.weight[0] > 0.4 && got.weight[1] > 0.3 && got.weight[2] < 0.1, `weights ${got.weight}`);
  assert.match(await page.textContent('[data-output="kv-exact"]'), /KeyError/);

  // The result names the query it looked up: "fruit", then a key's own vector after its preset, then an edited one.
  const named = () => page.$eval('#kv-lookup .kv-result', (p) => p.textContent.split(':')[0]);
  assert.equal(await named(), 'Soft lookup of “fruit”');
  await page.click('button[data-control="kv-preset-chair"]');
  await settle(page);
  assert.equal(await named(), 'Soft lookup of q = the key of “chair”');
  await page.click('button[data-control="kv-preset-fruit"]');
  await settle(page);

  // Edit the query, a key and a value through the tables.
  await page.fill('table[data-matrix="kv-query"] input[data-r="0"][data-c="1"]', '1.5');
  await page.fill('table[data-matrix="kv-keys"] input[data-r="2"][data-c="0"]', '0.5');
  await page.fill('table[data-matrix="kv-values"] input[data-r="1"][data-c="0"]', '-3');
  await settle(page);
  K[2][0] = 0.5;
  await checkKv(page, [1, 1.5], K, [10, -3, 2]);
  assert.match(page.url(), /kq=1%2C1\.5/);
  assert.match(page.url(), /kv=10%2C-3%2C2/);
  assert.equal(await named(), 'Soft lookup of your query q = [1, 1.5]');

  // A number past the figure's ±100 is refused and said why (it was clamped to 100 without a word); leaving the
  // cell puts the kept value back and the line goes.
  const cell = 'table[data-matrix="kv-query"] input[data-r="0"][data-c="1"]', problem = '[data-matrix-problem="kv-query"]';
  await page.fill(cell, '-');  // a number on its way: marked, not scolded
  assert.equal(await page.getAttribute(cell, 'aria-invalid'), 'true');
  assert.equal(await page.textContent(problem), '');
  await page.fill(cell, '150');
  assert.equal(await page.getAttribute(cell, 'aria-invalid'), 'true');
  assert.equal(await page.textContent(problem), 'query q [q, dim 2] must be a number from −100 to 100; the lab keeps 1.5 until it is.');
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue(cell), '1.5');
  assert.equal(await page.textContent(problem), '');
  await checkKv(page, [1, 1.5], K, [10, -3, 2]);

  // Exact lookup of a real key gives exactly its value.
  await page.fill('input[data-control="kv-word"]', 'banana');
  await settle(page);
  assert.match(await page.textContent('[data-output="kv-exact"]'), /d\["banana"\] = -3/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('soft lookup: state comes back from the URL', async () => {
  const { page, done } = await openPage(env, '?kq=0,1&kk=1,0,0,1,1,1&kv=1,2,3&kw=chair#kv-lookup');
  await checkKv(page, [0, 1], [[1, 0], [0, 1], [1, 1]], [1, 2, 3]);
  assert.match(await page.textContent('[data-output="kv-exact"]'), /d\["chair"\] = 3/);
  await done();
});

/** Float64 self-attention with Q = K = V = X, scale 1. */
function pull64(X) {
  const W = X.map((a) => softmax64(X.map((b) => dot(a, b))));
  return { W, out: W.map((w) => [0, 1].map((c) => w.reduce((s, a, j) => s + a * X[j][c], 0))) };
}

async function readPull(page) {
  const c = await readCols(page, 'pull');
  return { X: c.x0.map((x, i) => [x, c.x1[i]]), score: c.score, weight: c.weight, updated: [c.new0[0], c.new1[0]] };
}

function checkPull(p, chosen, X = p.X) {
  const ref = pull64(X);
  const n = X.length;
  const mag = Math.max(...X.map((r) => Math.abs(r[0]) + Math.abs(r[1])));
  const tolS = 8 * U * mag * mag + 1e-7;
  X.forEach((xj, j) => close(p.score[j], dot(X[chosen], xj), tolS, `score ${j}`));
  ref.W[chosen].forEach((w, j) => close(p.weight[j], w, 3 * w * tolS + (n + 8) * 2 * U, `weight ${j}`));
  [0, 1].forEach((c) => close(p.updated[c], ref.out[chosen][c], (6 * tolS + (2 * n + 16) * U) * mag + 1e-7, `updated[${c}]`));
  return ref;
}

test('words pulling words: weights and the new apple match float64; line widths follow the weights', async () => {
  const { page, log, done } = await openPage(env, '#pull');
  const p = await readPull(page);
  const words = await page.$$eval('table[data-table="pull"] tbody tr th', (ths) => ths.map((t) => t.textContent));
  const apple = words.indexOf('apple'), banana = words.indexOf('banana');
  assert.equal(apple, 6);
  checkPull(p, apple);
  // Banana pulls apple hardest (besides apple itself), and apple moves towards the fruits.
  const others = p.weight.map((w, j) => (j === apple ? -1 : w));
  assert.equal(others.indexOf(Math.max(...others)), banana);
  assert.ok(p.updated[0] > p.updated[1], 'apple moved towards fruitiness');
  const widths = await page.$$eval('svg[data-plane="pull"] g.pulls line', (ls) => ls.map((l) => [Number(l.dataset.weight), Number(l.getAttribute('stroke-width'))]));
  const thickest = widths.reduce((a, b) => (b[1] > a[1] ? b : a));
  assert.equal(thickest[0], p.weight[banana]);
  // A point's spoken label gives its coordinates as the table does: "a" sits at fruitiness −0.01 (a float32 value just
  // under 0.01), not "-1.00e-2".
  const aLabel = await page.$eval('svg[data-plane="pull"] g[data-word="a"]', (g) => g.getAttribute('aria-label'));
  assert.match(aLabel, /^a at fruitiness -0\.01, techiness 0\.11,/);

  // The other sentence: phone pulls apple towards tech.
  await page.selectOption('select[data-control="pull-sentence"]', '1');
  await settle(page);
  const p2 = await readPull(page);
  checkPull(p2, 6);
  assert.ok(p2.updated[1] > p2.updated[0], 'apple moved towards techiness');
  assert.deepEqual(log.errors, []);
  await done();
});

test('words pulling words: keyboard nudging, applying attention again, URL state', async () => {
  const { page, log, done } = await openPage(env, '#pull');
  const before = await readPull(page);
  const banana = await page.$('svg[data-plane="pull"] g.point[data-word="banana"]');
  await banana.focus();
  await page.keyboard.press('ArrowUp'); // +0.1 techiness
  await page.keyboard.press('Shift+ArrowLeft'); // −0.5 fruitiness
  await settle(page);
  const moved = await readPull(page);
  close(moved.X[3][0], before.X[3][0] - 0.5, 1e-6, 'banana x');
  close(moved.X[3][1], before.X[3][1] + 0.1, 1e-6, 'banana y');
  checkPull(moved, 6);
  assert.match(decodeURIComponent(page.url()), /pe=banana\.0:1\.9,banana\.1:0\.3/);
  // Focus stays on the moved point, and Enter makes it the pulled word.
  await page.keyboard.press('Enter');
  await settle(page);
  checkPull(await readPull(page), 3);
  assert.match(page.url(), /pw=3/);

  // Apply attention twice: every word moves to its updated vector each time (float64 iterated from X₀).
  await page.selectOption('select[data-control="pull-word"]', '6');
  const X0 = (await readPull(page)).X;
  await page.click('button[data-control="pull-apply"]');
  await page.click('button[data-control="pull-apply"]');
  await settle(page);
  const it = await readPull(page);
  const X2 = pull64(pull64(X0).out).out;
  X2.forEach((r, j) => r.forEach((v, c) => close(it.X[j][c], v, 1e-5, `X₂[${j}][${c}]`)));
  checkPull(it, 6);
  assert.match(page.url(), /pi=2/);

  assert.deepEqual(log.errors, []);
  // Reload from the URL: same view (in the tab this page is through with: a new document from the link alone).
  const url = new URL(page.url()).search;
  await done();
  const again = await openPage(env, url);
  const p3 = await readPull(again.page);
  assert.deepEqual(p3, it);
  assert.deepEqual(again.log.errors, []);
  await again.done();
});

test('words pulling words: dragging a point with the pointer moves it', async () => {
  const { page, done } = await openPage(env, '#pull');
  const before = await readPull(page);
  const pt = await page.$('svg[data-plane="pull"] g.point[data-word="phone"], svg[data-plane="pull"] g.point[data-word="banana"]');
  await pt.scrollIntoViewIfNeeded();
  const box = await pt.$eval('circle', (c) => { const r = c.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; });
  await page.mouse.move(box.x, box.y);
  await page.mouse.down();
  await page.mouse.move(box.x - 40, box.y - 40, { steps: 4 });
  await page.mouse.up();
  await settle(page);
  const after = await readPull(page);
  assert.ok(after.X[3][0] < before.X[3][0] && after.X[3][1] > before.X[3][1], 'banana moved up and left');
  checkPull(after, 6);
  await done();
});

test('invalid figure parameters fall back to their defaults with a notice', async () => {
  const q = '?kq=1&kk=1,2,3,4,5,x&kv=1e9,0,0&kw=%3Cscript%3E&ps=7&pe=apple.0:99&pi=-1&rk=513&nx=1&as=2&tq=1,0,0&ci=40';
  const { page, done } = await openPage(env, q);
  const notice = await page.textContent('#notice');
  for (const name of ['kq', 'kk', 'kv', 'kw', 'ps', 'pe', 'pi', 'rk', 'nx', 'as', 'tq', 'ci']) assert.match(notice, new RegExp(`\\b${name}\\b`), name);
  assert.equal(await page.$('#notice script'), null);
  await settle(page);
  assert.equal(new URL(page.url()).search, '', 'the address bar holds the cleaned (default) state');
  await checkKv(page, [1, 0.2], [[1.2, 0.4], [0.9, 0.3], [-1, 0.5]], [10, 5, 2]);
  await done();
});
