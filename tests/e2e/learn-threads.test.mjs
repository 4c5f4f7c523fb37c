// The learn lab on all threads, and on the learner's own text. Each step of the small GPT is GPT.trainStepAsync on
// the package's workers, started inside the lab's training worker: on the served page (cross-origin isolated) they
// exchange through shared memory, in the offline copy opened from disk by messages. The page shows the workers and,
// per step, its time and how many of them computed a part of it; the package's own counts (trainTimes().steps,
// threadStats().workerParts) come with it. The first steps' losses equal a one-thread run in Node within the
// reordered sum's bound. The text task: the shipped model's tokenizer cuts the sample text or a pasted one, the model
// trains, writes samples and draws its heads; a text that is empty, too short or too long gets a message and the
// model it had keeps training. Every wait is on a condition.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { setup, openPage, ensureShotsDir, distDir, repo, axeOn, shootSection } from './helpers.mjs';
import { init } from '../../dist/index.js';

const ulp = (x) => 2 ** (Math.floor(Math.log2(Math.abs(x))) - 23);

let env, folder;
before(async () => {
  env = await setup();
  ensureShotsDir();
  folder = mkdtempSync(join(tmpdir(), 'attnlab-learn-threads-'));
  copyFileSync(join(distDir, 'attnlab-explorer.html'), join(folder, 'attnlab-explorer.html'));
});
after(async () => {
  await env?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** The page's own task definitions (web/src/model/train-tasks.ts), bundled for Node: the same batches as the worker's. */
async function pageTasks() {
  const out = await build({ entryPoints: [`${repo}web/src/model/train-tasks.ts`], bundle: true, format: 'esm', platform: 'neutral', write: false, logLevel: 'silent' });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}

const stepOf = (page) => page.$eval('#learn [data-metric="step"]', (d) => Number(d.textContent));
const waitStep = (page, n) => page.waitForFunction((k) => Number(document.querySelector('#learn [data-metric="step"]').textContent) >= k
  && document.querySelector('#learn [data-metric="step-time"]').dataset.threads !== undefined, n, { timeout: 300000, polling: 100 });
const waitModel = (page) => page.waitForFunction(() => document.querySelector('#learn [data-metric="step"]')?.textContent === '0'
  && document.querySelector('#learn [data-metric="held-out-loss"]')?.textContent !== '–', null, { timeout: 120000, polling: 100 });
const readout = (page) => page.evaluate(() => {
  const q = (n) => document.querySelector(`#learn [data-metric="${n}"]`);
  return { threads: { ...q('threads').dataset, text: q('threads').textContent }, step: { ...q('step-time').dataset, text: q('step-time').textContent }, loss: Number(q('loss').dataset.value), status: document.querySelector('#learn .learn-status').textContent };
});
const pageThreads = (page) => page.evaluate(() => Math.max(1, Math.min(8, navigator.hardwareConcurrency || 1)));

test('served page: every step on all threads through shared memory; the first losses are one thread’s within the reordered sum’s bound', async () => {
  const { page, log, done } = await openPage(env, '#learn', { width: 1280, height: 900 });
  assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'the served page is cross-origin isolated');
  await waitModel(page);
  const threads = await pageThreads(page);
  let r = await readout(page);
  assert.equal(r.threads.threads, String(threads), `the lab started one worker per core (${r.threads.text})`);
  if (threads >= 2) assert.equal(r.threads.exchange, 'shared');
  // Three single steps, each read off the page: its loss, its time and the workers that served it.
  const losses = [];
  for (let s = 1; s <= 3; s++) {
    await page.click('button[data-control="learn-step"]');
    await page.waitForFunction((k) => document.querySelector('#learn [data-metric="step"]').textContent === String(k), s, { timeout: 120000, polling: 50 });
    r = await readout(page);
    losses.push(r.loss);
    assert.equal(r.step.threads, String(threads), `step ${s} served by every thread (${r.step.text})`);
    assert.ok(Number(r.step.ms) > 0, 'its time is shown');
    assert.equal(Number(r.step.workerSteps), threads >= 2 ? s : 0, 'the package counts the steps on its workers (trainTimes)');
    assert.equal(Number(r.step.workerParts), threads >= 2 ? s * threads : 0, 'each step one part per worker (threadStats)');
  }
  // The same model and batches on one thread in Node (the page's induction task: seed 3, batches from seed 45).
  const { TASKS, batchMaker } = await pageTasks();
  const spec = TASKS.induction, lab = await init({ gpt: true });
  const gpt = lab.createGPT({ vocabSize: spec.vocabSize, context: spec.context, dModel: spec.defaults.dModel, heads: spec.defaults.heads, layers: spec.defaults.layers, mlp: spec.mlp, position: spec.position, bias: spec.bias, seed: spec.defaults.seed });
  const next = batchMaker('induction', 42 + spec.defaults.seed);
  const want = [0, 1, 2].map(() => { const b = next(); return gpt.trainStep(b.tokens, b.targets, { lr: spec.defaults.lr, weightDecay: 0, gradClip: 0 }); });
  console.log(`induction, ${threads} threads (${r.threads.text}): losses ${losses.join(', ')}; one thread in Node ${want.join(', ')}`);
  // Step 1's loss is the same sum over the same weights (within an ulp, the parts' means added in another order);
  // later steps start from weights that differ by the reordered gradient sum, which moves the loss by far less
  // than 1e-5 of itself (tests/js/gpt-async.test.mjs states both bounds).
  losses.forEach((got, s) => assert.ok(Math.abs(got - want[s]) <= (s === 0 ? ulp(want[s]) : 1e-5 * want[s]), `step ${s + 1}: loss ${got} vs ${want[s]}`));
  // Running: each readout names the threads that served the last step.
  await page.click('button[data-control="learn-train"]');
  await waitStep(page, 40);
  r = await readout(page);
  assert.equal(r.step.threads, String(threads));
  assert.match(r.status, threads >= 2 ? new RegExp(`Each step runs on ${threads} threads.*through memory they share`) : /one thread/);
  await page.click('button[data-control="learn-pause"]');
  assert.deepEqual(log.errors, []);
  await done();
});

test('offline copy from disk: all threads, exchanging by messages', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${pathToFileURL(join(folder, 'attnlab-explorer.html')).href}#learn`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  assert.equal(await page.evaluate(() => crossOriginIsolated), false);
  await waitModel(page);
  const threads = await pageThreads(page);
  await page.click('button[data-control="learn-step"]');
  await page.waitForFunction(() => document.querySelector('#learn [data-metric="step"]').textContent === '1', null, { timeout: 120000, polling: 50 });
  const r = await readout(page);
  console.log(`offline: ${r.threads.text}; step 1: ${r.step.text}`);
  assert.equal(r.threads.threads, String(threads));
  if (threads >= 2) {
    assert.equal(r.threads.exchange, 'message');
    assert.equal(r.step.threads, String(threads));
    assert.equal(r.step.workerParts, String(threads));
    assert.match(r.status, /by messages/);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('your own text: the sample trains, writes samples and draws its heads; a pasted text trains; bad text gets a message', async () => {
  const { page, log, done } = await openPage(env, '?lt=text#learn', { width: 1280, height: 900 });
  const info = '[data-figure="learn-text-info"]';
  await page.waitForFunction((sel) => /became [\d,]+ tokens/.test(document.querySelector(sel).textContent), info, { timeout: 120000, polling: 100 });
  await waitModel(page);
  const sample = readFileSync(`${repo}web/src/text/kjv-fortunes-excerpt.txt`, 'utf8');
  assert.equal(await page.inputValue('textarea[data-control="learn-text"]'), sample, 'the box shows the sample it trains on');
  const V = Number((await page.textContent(info)).match(/using ([\d,]+) of/)[1].replace(/,/g, ''));
  assert.ok(V > 100 && V < 4096, `the vocabulary is the tokens the text uses (${V})`);
  const heldStart = Number(await page.textContent('#learn [data-metric="held-out-loss"]'));
  assert.ok(Math.abs(heldStart - Math.log(V)) < 0.5, `untrained: near guessing (${heldStart} vs ln ${V})`);
  await page.click('button[data-control="learn-train"]');
  // A sample at step 0 and every 100 steps: the prompt is the start of the text, the continuation is the model's.
  await page.waitForFunction(() => Number(document.querySelector('[data-figure="learn-samples"] li')?.dataset.step) >= 100, null, { timeout: 600000, polling: 200 });
  const samples = await page.$$eval('[data-figure="learn-samples"] li', (li) => li.map((x) => ({ step: Number(x.dataset.step), prompt: x.querySelector('.learn-sample-prompt').textContent, text: x.querySelector('.learn-sample-text').textContent })));
  console.log(`text: ${V} tokens in the vocabulary; samples: ${samples.map((s) => `${s.step}: ${JSON.stringify(s.prompt + s.text)}`).join(' | ')}`);
  assert.ok(sample.startsWith(samples[0].prompt) && samples[0].prompt.length > 0, 'the prompt is the text’s start, decoded');
  assert.ok(samples.every((s) => s.text.length > 0), 'each sample has text');
  assert.deepEqual(samples.map((x) => x.step), samples.map((x) => x.step).sort((a, b) => b - a), 'newest first');
  assert.equal(samples.at(-1).step, 0, 'the untrained model’s sample first');
  // Its heads, drawn on the text's first tokens as the tokenizer cut them.
  const heads = await page.$$('button.learn-head');
  assert.equal(heads.length, 2 * 4, 'every layer × head');
  await heads[5].click();
  const labels = await page.$$eval('#learn .learn-big .col-labels text', (x) => x.map((e) => e.textContent));
  console.log(`head labels: ${labels.slice(0, 6).join(' | ')}`);
  const held = Number(await page.textContent('#learn [data-metric="held-out-loss"]'));
  assert.ok(held < heldStart - 1, `the held-out loss fell (${heldStart} → ${held})`);
  await page.click('button[data-control="learn-pause"]');
  await axeOn(page, '#learn');
  await shootSection(page, '#learn', 'learn-text');
  // Bad text: a message, nothing sent, the model it had stays.
  const problem = '[data-figure="learn-text-problem"]';
  const stepBefore = await stepOf(page);
  for (const [text, want] of [['   ', /Paste some text first/], ['A short line.', /too short: 13 characters/], ['x'.repeat(200_001), /too long: 200,001 characters/]]) {
    await page.fill('textarea[data-control="learn-text"]', text);
    await page.click('button[data-control="learn-text-use"]');
    await page.waitForFunction(([sel, src]) => new RegExp(src).test(document.querySelector(sel).textContent), [problem, want.source], { timeout: 10000, polling: 50 });
  }
  assert.equal(await stepOf(page), stepBefore, 'the model it had is still there');
  // The line below still describes that model's text: the message says whose it is.
  assert.match(await page.textContent(problem), /too long: 200,001 characters.* The model below keeps the text it has \(\d[\d,]* characters\)\.$/);
  // A pasted text: a new model on it.
  const own = 'The quick brown fox jumps over the lazy dog. '.repeat(16) + 'Pack my box with five dozen liquor jugs. '.repeat(16);
  await page.fill('textarea[data-control="learn-text"]', own);
  await page.click('button[data-control="learn-text-use"]');
  await page.waitForFunction(([sel, n]) => document.querySelector(sel).textContent.startsWith(`${n} characters became`), [info, own.length.toLocaleString('en')], { timeout: 120000, polling: 100 });
  assert.equal(await page.textContent(problem), '');
  await waitModel(page);
  await page.waitForFunction(() => document.querySelector('[data-figure="learn-samples"] li')?.dataset.step === '0', null, { timeout: 60000, polling: 100 });
  await page.click('button[data-control="learn-train"]');
  await waitStep(page, 20);
  console.log(`own text: ${await page.textContent(info)} sample: ${await page.textContent('[data-figure="learn-samples"] li')}`);
  await page.click('button[data-control="learn-pause"]');
  assert.deepEqual(log.errors, []);
  await done();
});


test('your own text: each sample is labelled with the step it was taken at, 0, 100, 200, … exactly', async () => {
  // A small model (1 layer, 1 head, d_model 16) runs many steps in each of the worker's ~40 ms slices, so a sample
  // taken when a slice ends would come a few steps past each hundred (and say so: “step 103”).
  const { page, log, done } = await openPage(env, '?lt=text&ll=1&lh=1&ld=16#learn', { width: 1280, height: 900 });
  await waitModel(page);
  await page.waitForFunction(() => document.querySelector('[data-figure="learn-samples"] li')?.dataset.step === '0', null, { timeout: 60000, polling: 100 });
  await page.click('button[data-control="learn-train"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-figure="learn-samples"] li')?.dataset.step) >= 300, null, { timeout: 300000, polling: 100 });
  await page.click('button[data-control="learn-pause"]');
  const samples = await page.$$eval('[data-figure="learn-samples"] li', (li) => li.map((x) => ({ step: Number(x.dataset.step), label: x.querySelector('.learn-sample-step').textContent })));
  console.log(`samples at steps ${samples.map((s) => s.step).join(', ')}`);
  assert.ok(samples.length >= 4);
  for (const s of samples) {
    assert.equal(s.step % 100, 0, `a sample at step ${s.step}`);
    assert.equal(s.label, `step ${s.step}: `);
  }
  assert.deepEqual(samples.map((s) => s.step), samples.map((_, i) => samples[0].step - 100 * i), 'one every 100 steps, none skipped');
  assert.deepEqual(log.errors, []);
  await done();
});
