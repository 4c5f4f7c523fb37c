// The whole state lives in the URL: a round trip restores the same view, and a hostile URL renders inert.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/**
 * Everything the view shows that state determines: every matrix cell, the probabilities and the controls. The model
 * view's tables come from the real model, which loads when the section comes near: brought into view and waited for
 * on every page, so both sides of a round trip show it.
 */
async function snapshot(page) {
  await page.locator('#model').scrollIntoViewIfNeeded();
  await page.waitForSelector('#model[data-tokens]:not([data-tokens="0"])', { timeout: 60000 });
  await settle(page);
  return page.evaluate(() => ({
    tables: [...document.querySelectorAll('table[data-matrix]')].map((t) => [t.dataset.matrix, [...t.querySelectorAll('td[data-value]')].map((td) => td.dataset.value)]),
    softmax: [...document.querySelectorAll('table[data-table="softmax"] td[data-value]')].map((td) => td.dataset.value),
    text: document.querySelector('input[data-control="text"]').value,
    causal: document.querySelector('input[data-control="causal"]').checked,
    scaled: document.querySelector('input[data-control="scaled"]').checked,
    query: document.querySelector('select[data-control="query"]').value,
    heads: document.querySelector('select[data-control="heads"]').value,
    mhTrained: document.querySelector('input[data-control="mh-trained"]').checked,
    mhCausal: document.querySelector('input[data-control="mh-causal"]').checked,
    mhSeed: document.querySelector('input[data-control="mh-seed"]').value,
  }));
}

test('a URL round trip restores the same view', async () => {
  const { page, done } = await openPage(env, '');
  await page.click('button[data-control="sm-preset-[10, 11]"]');
  await page.fill('input[data-control="sm-logit-0"]', '9.5');
  await page.fill('input[data-control="text"]', 'I got a new phone from apple');
  await page.selectOption('select[data-control="dmodel"]', '4');
  await page.click('button[data-control="preset-rnd"]');
  await page.fill('table[data-matrix="X"] input[data-r="4"][data-c="1"]', '3.25');
  await page.fill('table[data-matrix="Wq"] input[data-r="1"][data-c="0"]', '-0.5');
  await page.check('input[data-control="causal"]');
  await page.uncheck('input[data-control="scaled"]');
  await page.selectOption('select[data-control="query"]', '6');
  await page.uncheck('input[data-control="mh-trained"]'); // the multi-head lab opens on trained weights
  await page.selectOption('select[data-control="heads"]', '3');
  await page.uncheck('input[data-control="mh-causal"]'); // on by default
  await settle(page);
  const url = page.url();
  assert.match(url, /[?&]mt=0/);
  assert.match(url, /[?&]mc=0/);
  const before = await snapshot(page);
  assert.match(url, /[?&]t=/);
  assert.match(url, /[?&]xe=phone\.1%3A3\.25/);
  await done();  // the link opens in this tab: a new document from the URL alone

  const again = await openPage(env, url.slice(env.url.length));
  const after = await snapshot(again.page);
  assert.deepEqual(after, before);
  assert.equal(await again.page.isHidden('#notice'), true, 'a valid URL raises no notice');
  assert.equal(again.page.url(), url, 'the restored page writes the same URL');
  await again.done();
});

test('the multi-head lab opens on trained weights; links from when it opened on random weights still restore them', async () => {
  const { page, done } = await openPage(env, '');
  await settle(page);
  assert.equal(await page.isChecked('input[data-control="mh-trained"]'), true, 'trained weights by default');
  assert.equal(await page.isChecked('input[data-control="mh-causal"]'), true, 'with the causal mask: the model’s own weights');
  // The random draw is not used on trained weights: its number and its shuffle are both disabled and look it (the
  // number's field greyed), and both come back.
  const drawState = () => page.evaluate(() => ['input[data-control="mh-seed"]', 'button[data-control="mh-seed-shuffle"]'].map((q) => document.querySelector(q).disabled));
  const fieldLook = () => page.evaluate(() => getComputedStyle(document.querySelector('input[data-control="mh-seed"]')).backgroundColor);
  assert.deepEqual(await drawState(), [true, true], 'trained weights: the draw number and its shuffle are disabled');
  const greyed = await fieldLook();
  await page.uncheck('input[data-control="mh-trained"]');
  await settle(page);
  assert.deepEqual(await drawState(), [false, false], 'random weights: the draw number and its shuffle work');
  assert.notEqual(greyed, await fieldLook(), 'the disabled draw number looks disabled (its background differs)');
  // A draw is a whole number: 2.5 is refused and said why, and leaving the field puts the draw back.
  const seed = 'input[data-control="mh-seed"]', seedProblem = '[data-control="mh-seed-problem"]';
  const drawn = await page.inputValue(seed);
  await page.fill(seed, '2.5');
  assert.equal(await page.textContent(seedProblem), 'A draw is a whole number from 0 to 999,999; the lab keeps the last one until it is.');
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue(seed), drawn);
  assert.equal(await page.textContent(seedProblem), '');
  await page.check('input[data-control="mh-trained"]');
  await settle(page);
  assert.doesNotMatch(page.url(), /\?/, 'the default is not written into the URL');
  // Editing W_O on the trained weights writes mt=1 beside wo: wo alone is an old link's edit of the random W_O.
  await page.fill('table[data-matrix="mh-Wo"] input[data-r="0"][data-c="0"]', '2');
  await settle(page);
  const url = page.url();
  assert.match(url, /[?&]wo=0\.0%3A2/);
  assert.match(url, /[?&]mt=1/);
  const before = await snapshot(page);
  await done();  // each link below opens in this tab, one after another: a new document from the URL alone
  const again = await openPage(env, url.slice(env.url.length));
  assert.deepEqual(await snapshot(again.page), before, 'trained weights with an edited W_O restore');
  await again.done();
  // An old link that sets the random weights (h, hd, ms or wo) without mt meant random weights and no mask
  // (unless it set mc), and gets them.
  const legacy = await openPage(env, '?h=3&ms=5&wo=0.0%3A2#multihead');
  const old = await snapshot(legacy.page);
  assert.equal(old.mhTrained, false);
  assert.equal(old.mhCausal, false);
  assert.equal(old.heads, '3');
  assert.equal(old.mhSeed, '5');
  assert.equal(await legacy.page.isHidden('#notice'), true, 'an old link raises no notice');
  await legacy.done();
  const explicit = await openPage(env, '?h=3&ms=5&wo=0.0%3A2&mt=0&mc=0#multihead');
  assert.deepEqual(old, await snapshot(explicit.page));
  await explicit.done();
  const masked = await openPage(env, '?ms=5&mc=1#multihead');
  const m = await snapshot(masked.page);
  assert.deepEqual([m.mhTrained, m.mhCausal, m.mhSeed], [false, true, '5']);
  await masked.done();
});

test('a hostile URL renders inert and falls back to defaults with a notice', async () => {
  const payload = '<img src=x onerror="window.__pwned=1;alert(1)">';
  const names = ['sx', 'st', 't', 'dm', 'es', 'xe', 'wp', 'ws', 'wq', 'wk', 'wv', 'dk', 'dv', 'c', 'sc', 'tau', 'qi', 'h', 'hd', 'ms', 'mc', 'wo', payload];
  const query = `?${names.map((n) => `${encodeURIComponent(n)}=${encodeURIComponent(payload)}`).join('&')}#${encodeURIComponent(payload)}`;
  const { page, log, done } = await openPage(env, query);
  await settle(page);
  const result = await page.evaluate(() => ({
    imgs: document.querySelectorAll('img').length,
    pwned: window.__pwned,
    onerror: document.querySelectorAll('[onerror]').length,
    notice: document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent,
    text: document.querySelector('input[data-control="text"]').value,
    dm: document.querySelector('select[data-control="dmodel"]').value,
  }));
  assert.equal(result.imgs, 0, 'no <img> from the payload');
  assert.equal(result.onerror, 0, 'no element with an onerror attribute');
  assert.equal(result.pwned, undefined, 'no script ran');
  assert.deepEqual(log.dialogs, [], 'no dialog opened');
  assert.match(result.notice, /reset to their defaults/);
  assert.match(result.notice, /\bdm\b/);
  assert.match(result.notice, /unknown parameter/);
  assert.doesNotMatch(result.notice, /<img/, 'the notice names parameters, it does not echo values');
  assert.equal(result.dm, '2', 'invalid d_model fell back to the default');
  // Free text is data, not markup: it may hold "<img …>", shown as plain text and split into words.
  assert.equal(result.text, '<img src=x onerror="window.__pwned=1;alert(1)">');
  const tokens = await page.$$eval('.tokens .token', (b) => b.map((x) => x.textContent));
  assert.ok(tokens.some((t) => t.endsWith('img')));
  assert.deepEqual(log.errors, [], 'no console errors (nothing was blocked by the CSP either)');
  await done();
});

test('a malformed URL falls back without breaking the page', async () => {
  const { page, log, done } = await openPage(env, '?sx=1,,2&st=0&dm=5&qi=-1&xe=apple.0:1e999&c=yes&h=9&%E0%A4%A=1');
  const notice = await page.textContent('#notice');
  for (const n of ['sx', 'st', 'dm', 'qi', 'xe', 'c', 'h']) assert.match(notice, new RegExp(`\\b${n}\\b`));
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true');
  assert.deepEqual(log.errors, []);
  await done();
});

/** The learn lab's controls as the page shows them. */
const learnControls = (page) => page.evaluate(() => ({
  words: document.querySelector('button[data-control="task-words"]').getAttribute('aria-pressed'),
  layers: document.querySelector('select[data-control="learn-layers"]').value,
  heads: document.querySelector('select[data-control="learn-heads"]').value,
  dModel: document.querySelector('select[data-control="learn-dmodel"]').value,
  lr: document.querySelector('input[data-control="learn-lr"]').getAttribute('aria-valuetext'),
  sentence: document.querySelector('input[data-control="learn-sentence"]').value,
}));

test('the learn lab’s task, model size, learning rate and sentence round-trip through the URL; bad values fall back', async () => {
  const { page, log, done } = await openPage(env, '#learn');
  await page.click('button[data-control="task-words"]');
  await page.selectOption('select[data-control="learn-layers"]', '3');
  await page.selectOption('select[data-control="learn-heads"]', '2');
  await page.selectOption('select[data-control="learn-dmodel"]', '96');
  // The learning-rate slider is logarithmic: 10^-3.3 ≈ 0.000501 (three significant digits).
  await page.$eval('input[data-control="learn-lr"]', (s) => { s.value = '-3.3'; s.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.fill('input[data-control="learn-sentence"]', 'I ate a banana and');
  await settle(page);
  const url = page.url();
  const params = new URL(url).searchParams;
  assert.deepEqual(['lt', 'll', 'lh', 'ld', 'lr', 'ls'].map((p) => params.get(p)), ['words', '3', '2', '96', '0.000501', 'I ate a banana and']);
  const before = await learnControls(page);
  assert.deepEqual(before, { words: 'true', layers: '3', heads: '2', dModel: '96', lr: '0.00050', sentence: 'I ate a banana and' });
  const again = await openPage(env, url.slice(env.url.length));
  assert.deepEqual(await learnControls(again.page), before);
  assert.equal(await again.page.isHidden('#notice'), true, 'a valid URL raises no notice');
  await settle(again.page);
  assert.equal(again.page.url(), url, 'the restored page writes the same URL');
  // Back to a task's defaults: nothing of the lab is written.
  await again.page.selectOption('select[data-control="learn-layers"]', '2');
  await again.page.selectOption('select[data-control="learn-heads"]', '4');
  await again.page.selectOption('select[data-control="learn-dmodel"]', '48');
  await again.page.$eval('input[data-control="learn-lr"]', (s) => { s.value = String(Math.log10(3e-3)); s.dispatchEvent(new Event('input', { bubbles: true })); });
  await again.page.fill('input[data-control="learn-sentence"]', 'the capital of Spain is'); // shown with the words task only
  await again.page.click('button[data-control="task-induction"]');
  await settle(again.page);
  assert.equal(new URL(again.page.url()).search, '', 'defaults write no parameter');
  await again.done();

  // Each bad value falls back to its default, named in the notice; heads that do not divide d_model are bad too.
  const bad = await openPage(env, `?lt=chess&ll=9&ld=50&lr=1&ls=${encodeURIComponent('a\u0000b')}#learn`);
  const named = (await bad.page.textContent('#notice')).match(/defaults: ([^.]*)\./)?.[1].split(', ').sort();
  assert.deepEqual(named, ['ld', 'll', 'lr', 'ls', 'lt']);
  assert.deepEqual(await learnControls(bad.page), { words: 'false', layers: '2', heads: '1', dModel: '64', lr: '0.0010', sentence: 'the capital of Spain is' });
  await settle(bad.page);
  assert.equal(new URL(bad.page.url()).search, '', 'the address bar is rewritten to the cleaned state');
  const split = await openPage(env, '?lt=words&lh=5#learn'); // 48 / 5 is not whole
  assert.match(await split.page.textContent('#notice'), /defaults: lh\./);
  assert.deepEqual(await learnControls(split.page), { words: 'true', layers: '2', heads: '4', dModel: '48', lr: '0.0030', sentence: 'the capital of Spain is' });
  for (const p of [bad, split]) { assert.deepEqual(p.log.errors, []); await p.done(); }
  assert.deepEqual(log.errors, []);
  await done();
});
