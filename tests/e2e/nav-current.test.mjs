// The section bar highlights (aria-current) the section being read, and only that: after a jump — Home, a link,
// scrolling back up to the introduction — no section stays highlighted that is no longer on screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const current = (page) => page.$$eval('nav a[aria-current="true"]', (as) => as.map((a) => a.getAttribute('href')));
/** Scrolls to y and waits until the highlight says `want` (an href, or null for none); returns what it says. */
async function scrollAndRead(page, y, want) {
  await page.evaluate((y) => window.scrollTo(0, y === 'end' ? document.documentElement.scrollHeight : y), y);
  await settle(page);
  await page.waitForFunction((want) => {
    const a = [...document.querySelectorAll('nav a[aria-current="true"]')].map((x) => x.getAttribute('href'));
    return want === null ? a.length === 0 : a.length === 1 && a[0] === want;
  }, want, { timeout: 3000, polling: 'raf' }).catch(() => {});
  return current(page);
}

test('the section bar follows the reader, and highlights nothing above the first section', async () => {
  const { page, log, done } = await openPage(env, '', { width: 1280, height: 900 });
  await settle(page);
  assert.deepEqual(await current(page), [], 'at the top, before any section');
  assert.deepEqual(await scrollAndRead(page, 'end', '#speed'), ['#speed'], 'at the bottom: the last section');
  // Straight back to the top (Home): the introduction is on screen, no section is.
  assert.deepEqual(await scrollAndRead(page, 0, null), [], 'back at the top, a section is still highlighted');
  const y = await page.$eval('#attention', (s) => s.getBoundingClientRect().top + window.scrollY);
  assert.deepEqual(await scrollAndRead(page, y + 200, '#attention'), ['#attention'], 'inside “Self-attention”');
  // Up again a step at a time, past the first section's top.
  const first = await page.$eval('#softmax', (s) => s.getBoundingClientRect().top + window.scrollY);
  assert.deepEqual(await scrollAndRead(page, first, '#softmax'), ['#softmax']);
  assert.deepEqual(await scrollAndRead(page, 0, null), [], 'scrolled up into the introduction');
  assert.deepEqual(log.errors, []);
  await done();
});
