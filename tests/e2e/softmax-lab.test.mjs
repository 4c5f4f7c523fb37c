// The softmax lab shows the seeds' worked numbers and follows edits, temperature and add/remove.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const probs = (page) => page.$$eval('table[data-table="softmax"] tbody td[data-value]', (tds) => tds.map((td) => Number(td.dataset.value)));

function softmax64(x, T = 1) {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp((v - m) / T));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

test('presets reproduce the seeds’ numbers', async () => {
  const { page, log, done } = await openPage(env, '');
  const cases = [
    ['[1, 1.1]', [0.475, 0.525], 5e-4],
    ['[10, 11]', [0.269, 0.731], 5e-4],
    ['[100, 110]', [0.000045, 0.999955], 5e-7],
    ['[4, −1, 2.1]', [0.8648, 0.0058, 0.1294], 5e-5],
    ['[3, 2, 1]', [0.665, 0.244, 0.090], 1e-3], // the seed truncates 0.2447,
    ['[30, 20, 10]', [9.99954600e-01, 4.53978686e-05, 2.06106005e-09], 1e-6],
  ];
  for (const [label, expected, tol] of cases) {
    await page.click(`button[data-control="sm-preset-${label}"]`);
    await settle(page);
    const p = await probs(page);
    assert.equal(p.length, expected.length, label);
    p.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= tol, `${label}[${i}] = ${v}, seed says ${expected[i]}`));
  }
  // [100, 110]: the overflow note explains why the max is subtracted only when it matters.
  await page.click('button[data-control="sm-preset-[100, 110]"]');
  await page.$eval('input[data-control="sm-temp"]', (el) => { el.value = String(Math.log10(0.5)); el.dispatchEvent(new Event('input', { bubbles: true })); });
  await settle(page);
  assert.match(await page.textContent('.callout.warn'), /88\.72/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('typing, adding and removing logits and the temperature recompute', async () => {
  const { page, done } = await openPage(env, '');
  await page.fill('input[data-control="sm-logit-1"]', '3.5');
  await page.click('button[data-control="sm-add"]');
  await page.fill('input[data-control="sm-logit-3"]', '-2');
  await page.$eval('input[data-control="sm-temp"]', (el) => { el.value = String(Math.log10(2)); el.dispatchEvent(new Event('input', { bubbles: true })); });
  await settle(page);
  const x = [4, 3.5, 2.1, -2];
  const ref = softmax64(x, 2);
  const p = await probs(page);
  assert.equal(p.length, 4);
  // float32 softmax of modest logits: a few ulps (relative 1e-6 is ~8 ulps).
  p.forEach((v, i) => assert.ok(Math.abs(v - ref[i]) <= 1e-6 * ref[i] + 1e-9, `p[${i}] = ${v} vs ${ref[i]}`));
  await page.click('button[aria-label="remove logit 4"]');
  await settle(page);
  assert.equal((await probs(page)).length, 3);
  await done();
});

test('a probability that is exactly 1 in float32 reads 1, as 0 reads 0, beside the Σ of 1', async () => {
  // [100, 110] at T = 0.25: e^(−40) is below float32's half-ulp of 1, so p₂ is exactly 1 (and p₁ ≈ 4e-18).
  const { page, done } = await openPage(env, '?sx=100,110&st=0.25#softmax');
  await settle(page);
  assert.deepEqual(await probs(page), [Number(await page.$eval('table[data-table="softmax"] tbody tr:nth-child(1) td[data-value]', (td) => td.dataset.value)), 1]);
  const shown = await page.$$eval('table[data-table="softmax"] tbody td[data-value]', (tds) => tds.map((td) => td.textContent));
  assert.equal(shown[1], '1');
  assert.match(shown[0], /^4\.\d\de-18$/);
  await done();
});

test('dragging a logit bar changes the logit and the probabilities', async () => {
  const { page, log, done } = await openPage(env, '');
  const before = await probs(page);
  const bar = await page.$('#softmax .bars-svg g.bar rect.bar-rect'); // first logit bar (x₁ = 4)
  await bar.scrollIntoViewIfNeeded();
  const box = await bar.boundingBox();
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width - 60, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await settle(page);
  const x1 = Number(await page.$eval('input[data-control="sm-logit-0"]', (i) => i.value));
  assert.ok(x1 < 4, `dragging left lowered x₁ (now ${x1})`);
  const after = await probs(page);
  assert.ok(after[0] < before[0], 'p₁ fell with x₁');
  const ref = softmax64([x1, -1, 2.1]);
  after.forEach((v, i) => assert.ok(Math.abs(v - ref[i]) <= 1e-6 * ref[i] + 1e-9));
  // The drag wrote x₁ into its field from code: a refused value typed there, left, gives back the dragged x₁, not 4.
  await page.fill('input[data-control="sm-logit-0"]', '1e9');
  await page.keyboard.press('Tab');
  await settle(page);
  assert.equal(Number(await page.inputValue('input[data-control="sm-logit-0"]')), x1);
  assert.equal(await page.getAttribute('input[data-control="sm-logit-0"]', 'aria-invalid'), null);
  assert.deepEqual(await probs(page), after);
  assert.deepEqual(log.errors, []);
  await done();
});

test('the temperature slider moves off T = 1 with the arrow keys', async () => {
  // The slider snaps to T = 1 near it; a snap zone wider than one keyboard step (0.01 in log10 T) would send every
  // arrow press from T = 1 straight back to 1, so a keyboard user could never change the temperature.
  const { page, log, done } = await openPage(env, '');
  const slider = page.locator('input[data-control="sm-temp"]');
  const caption = () => page.textContent('table[data-table="softmax"] caption');
  assert.equal(await caption(), 'softmax at T = 1.00');
  await slider.focus();
  await page.keyboard.press('ArrowRight');
  await settle(page);
  const up = Number(await slider.getAttribute('aria-valuetext'));
  assert.ok(up > 1, `one ArrowRight from T = 1 raised T (now ${up})`);
  assert.equal(await caption(), `softmax at T = ${up.toFixed(2)}`);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await settle(page);
  // The label rounds T to two digits; the lab uses the slider's own value (10^x to three digits).
  const down = Number((10 ** Number(await slider.inputValue())).toPrecision(3));
  assert.ok(down < 1, `two ArrowLeft presses from there lowered T below 1 (now ${down})`);
  const ref = softmax64([4, -1, 2.1], down);
  (await probs(page)).forEach((v, i) => assert.ok(Math.abs(v - ref[i]) <= 1e-6 * ref[i] + 1e-9, `p[${i}] = ${v} vs ${ref[i]} at T = ${down}`));
  assert.deepEqual(log.errors, []);
  await done();
});

test('a worked example’s note shows only while its logits are on screen, and says when T has left 1', async () => {
  // The note quotes an article's numbers (softmax([4, −1, 2.1]) ≈ [0.8648, …]): beside other logits it would
  // contradict the table under it.
  const { page, log, done } = await openPage(env, '');
  const note = () => page.textContent('#softmax .preset-note');
  // The default logits are the [4, −1, 2.1] example, so its note is there from the start (and from a link).
  assert.match(await note(), /0\.8648/);
  await page.fill('input[data-control="sm-logit-0"]', '1');
  await settle(page);
  assert.equal(await note(), '', 'typed logits are no worked example');
  await page.click('button[data-control="sm-preset-[1, 1.1]"]');
  await settle(page);
  assert.match(await note(), /10% apart/);
  await page.click('button[data-control="sm-add"]');
  await settle(page);
  assert.equal(await note(), '', 'a third logit ends the two-logit example');
  await page.click('button[aria-label="remove logit 3"]');
  await settle(page);
  assert.match(await note(), /10% apart/, 'back to [1, 1.1]: its note again');
  await page.$eval('input[data-control="sm-temp"]', (el) => { el.value = String(Math.log10(0.5)); el.dispatchEvent(new Event('input', { bubbles: true })); });
  await settle(page);
  assert.match(await note(), /10% apart.*at T = 1\./);
  // The overflow hint points to [100, 110]: it goes past e^88.72 only while 110 / T does, so at T = 2 the hint says up
  // to which T (110 / 88.72 = 1.24), and at T = 1 it needs no condition.
  const hint = () => page.textContent('#softmax .callout');
  await page.$eval('input[data-control="sm-temp"]', (el) => { el.value = String(Math.log10(2)); el.dispatchEvent(new Event('input', { bubbles: true })); });
  await settle(page);
  assert.match(await hint(), /the \[100, 110\] example goes past it at T < 1\.24 \(110 \/ 88\.72\)\.$/);
  await page.$eval('input[data-control="sm-temp"]', (el) => { el.value = '0'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await settle(page);
  assert.match(await hint(), /the \[100, 110\] example goes past it\.$/);
  assert.deepEqual(log.errors, []);
  await done();
});

test('a logit out of range is marked invalid (styled and announced), says why, and is put back when the field is left', async () => {
  const { page, log, done } = await openPage(env, '');
  const field = 'input[data-control="sm-logit-2"]';
  const before = await probs(page);
  await page.fill(field, '1e9');
  await settle(page);
  // aria-invalid="true": an empty value would mean "false" to a screen reader and miss the invalid style.
  assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
  assert.equal(await page.$eval(field, (i) => getComputedStyle(i).backgroundColor), 'rgb(255, 243, 242)');
  assert.equal(await page.textContent('[data-figure="sm-logit-problem"]'), 'x₃ must be a number from −1000 to 1000; the lab keeps x₃ = 2.1 until it is.');
  assert.deepEqual(await probs(page), before, 'the rejected value changed nothing');
  await page.keyboard.press('Tab');
  await settle(page);
  assert.equal(await page.inputValue(field), '2.1');
  assert.equal(await page.getAttribute(field, 'aria-invalid'), null);
  assert.equal(await page.textContent('[data-figure="sm-logit-problem"]'), '');
  assert.deepEqual(log.errors, []);
  await done();
});
