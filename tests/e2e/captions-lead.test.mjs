// Captions lead with what the numbers on screen show most: the trained preset opens on the model's own (masked)
// weights; a head caption never opens with "no clear pattern" above a dark cell; the Pulling caption never says a
// word is pulled hardest by another when its own weight is larger. Every check reads the numbers from the page's
// tables (data-value: the exact numbers drawn) and derives the expected lead from them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage, settle, readMatrix } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('the trained preset opens with the causal mask on: its first weights are the model’s own', async () => {
  const { page, log, done } = await openPage(env, '#attention');
  await settle(page);
  assert.equal(await page.isChecked('#attention input[data-control="causal"]'), false, 'the lab opens without the mask (identity preset)');
  await page.click('#attention [data-control="preset-trained"]');
  await settle(page);
  assert.equal(await page.isChecked('#attention input[data-control="causal"]'), true, 'choosing “trained” turns the causal mask on');
  assert.equal(await page.evaluate(() => new URLSearchParams(location.search).get('c')), '1');
  const W = (await readMatrix(page, 'weights')).values;
  for (let i = 0; i < W.length; i++) for (let j = i + 1; j < W.length; j++) assert.equal(W[i][j], 0, `no weight on a later word (${i}, ${j})`);
  assert.match(await page.textContent('[data-figure="trained-note"]'), /With the causal mask on, these are the model’s own layer-1 weights\./);
  assert.deepEqual(log.errors, []);
  await done();
});

// What the head-pattern sentences call a dark cell: 0.8 or more, in a row that sees three words or more.
const STRONG_CELL = 0.8;

test('head captions lead with the main pattern: never “no clear pattern” or “a weak lean” above a cell of 0.8 or more', async () => {
  const views = [
    '#multihead', // trained, "I ate a banana and an apple"
    `?mt=1&mc=1&t=${encodeURIComponent('the capital of spain is madrid')}#multihead`,
    `?mt=1&mc=1&t=${encodeURIComponent('i saw a cat and a dog and a bird')}#multihead`,
    '?mt=0&mc=1#multihead', '?mt=0&mc=0#multihead', '?mt=0&mc=1&h=4&hd=2&ms=9#multihead',
  ];
  let checked = 0, led = 0;
  for (const q of views) {
    const { page, log, done } = await openPage(env, q);
    await settle(page);
    await page.$$eval('[data-disclosure^="mh-head"]', (ds) => ds.forEach((d) => { d.open = true; }));
    const causal = await page.isChecked('#multihead input[data-control="mh-causal"]').catch(() => !q.includes('mc=0'));
    const captions = await page.$$eval('[data-figure^="mh-head"][data-figure$="-pattern"]', (ps) => ps.map((p) => p.textContent));
    const words = await page.$$eval('table[data-matrix="mh-head1-weights"] tbody th', (ths) => ths.map((t) => t.textContent));
    for (let h = 0; h < captions.length; h++) {
      const W = (await readMatrix(page, `mh-head${h + 1}-weights`)).values;
      const n = W.length;
      let top = { w: -1 };
      for (let i = causal ? 2 : 0; i < n; i++) for (let j = 0; j < (causal ? i + 1 : n); j++) if (W[i][j] > top.w) top = { i, j, w: W[i][j] };
      const first = captions[h].split(/(?<=\.) (?=[A-Z])/)[0];
      console.log(`${q} head ${h + 1} (largest cell ${top.w.toFixed(2)}): ${captions[h]}`);
      checked++;
      if (top.w < STRONG_CELL || /^(Mostly looks at|Spreads its attention, most on)/.test(first)) continue;  // a rule by position leads
      led++;
      assert.doesNotMatch(first, /^(No clear pattern|A weak lean)/, `head ${h + 1}: leads with “${first}” above a cell of ${top.w.toFixed(2)}`);
      // The lead quotes a dark cell of this head (its words and its weight to 2 decimals), or names the content rule.
      const quoted = [...first.matchAll(/“([^”]+)” → “([^”]+)” (\d\.\d\d)/g)].filter(([, a, b, w]) => {
        for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (words[i].endsWith(a) && words[j].endsWith(b) && Math.abs(W[i][j] - Number(w)) <= 0.005 && W[i][j] >= STRONG_CELL) return true;
        return false;
      });
      assert.ok(first.startsWith('Follows content words') || quoted.length > 0, `head ${h + 1}: the lead “${first}” quotes a cell of 0.8 or more`);
    }
    assert.deepEqual(log.errors, []);
    await done();
  }
  console.log(`${checked} head captions read, ${led} with a dark cell and no rule by position`);
  assert.ok(led >= 1, 'at least one view has a head whose main pattern is a dark cell (so the rule is exercised)');
});

test('Pulling: the caption names the largest weight in the pulled word’s row first, its own when that is largest', async () => {
  const { page, log, done } = await openPage(env, '#pull');
  await settle(page);
  const sentences = await page.$$eval('[data-control="pull-sentence"] option', (os) => os.map((o) => o.value));
  let own = 0, other = 0;
  for (const sv of sentences) {
    await page.selectOption('[data-control="pull-sentence"]', sv);
    await settle(page);
    const count = await page.$$eval('[data-control="pull-word"] option', (os) => os.length);
    for (let k = 0; k < count; k++) {
      await page.selectOption('[data-control="pull-word"]', String(k));
      await settle(page);
      const rows = await page.$$eval('table[data-table="pull"] tbody tr:not(.sum-row)', (trs) => trs.map((tr) => ({ word: tr.querySelector('th').textContent, w: Number(tr.querySelector('td[data-col="weight"]').dataset.value) })));
      const text = await page.textContent('#pull .pull-status');
      const me = rows[k];
      const others = rows.filter((_, j) => j !== k);
      const best = others.reduce((a, b) => (b.w > a.w ? b : a));
      const num = (s) => Number(s);
      if (me.w >= best.w) {
        own++;
        const m = text.match(/the largest weight of “([^”]+)” is on itself \(([\d.e-]+)\); of the other words “([^”]+)” pulls it hardest \(([\d.e-]+)\)/);
        assert.ok(m, `“${me.word}” keeps ${me.w.toFixed(4)} > “${best.word}” ${best.w.toFixed(4)}: ${text}`);
        assert.equal(m[1], me.word);
        assert.ok(Math.abs(num(m[2]) - me.w) <= 5e-5 && m[3] === best.word && Math.abs(num(m[4]) - best.w) <= 5e-5, text);
        assert.doesNotMatch(text, /is pulled hardest by/);
      } else {
        other++;
        const m = text.match(/“([^”]+)” is pulled hardest by “([^”]+)” \(([\d.e-]+), its own weight ([\d.e-]+)\)/);
        assert.ok(m && m[1] === me.word && m[2] === best.word, `“${best.word}” ${best.w.toFixed(4)} > own ${me.w.toFixed(4)}: ${text}`);
        assert.ok(Math.abs(num(m[3]) - best.w) <= 5e-5 && Math.abs(num(m[4]) - me.w) <= 5e-5, text);
      }
    }
  }
  console.log(`Pulling captions: ${own} led by the word’s own weight, ${other} by another word`);
  assert.ok(own >= 1 && other >= 1, 'both cases occur on the page’s sentences');
  assert.deepEqual(log.errors, []);
  await done();
});
