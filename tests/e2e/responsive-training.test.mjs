// While the words task trains (the worker's engine runs flat out; the page draws the loss, the metrics and every
// head four times a second), the page answers: no main-thread task over 100 ms and every click answered within
// 200 ms. The Long Tasks API reports each task over 50 ms by its wall-clock length, and the Event Timing API each
// click from the input to the next paint; on a machine busier than its cores those lengths are mostly waiting for a
// core, so the test also records a Chromium trace and checks the main thread's own CPU time: each task's, and each
// click's from its dispatch to its frame. The wall clock bounds are asserted when the machine is not oversubscribed
// (load average below the number of cores); the CPU bounds always. The clicks are real input events, spread over the run by waiting for steps, not for fixed times.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpus, loadavg } from 'node:os';
import { setup, openPage } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const LONG_TASK_MS = 100;
const CLICK_MS = 200;
const step = (page) => page.$eval('#learn [data-metric="step"]', (d) => Number(d.textContent));

test('words task training: no main-thread task over 100 ms, every click answered within 200 ms', async () => {
  const { page, context, log } = await openPage(env, '#learn', { width: 1280, height: 900, reducedMotion: 'no-preference' });
  await page.waitForFunction(() => document.querySelector('#learn [data-metric="held-out-loss"]')?.textContent !== '–', null, { timeout: 120000, polling: 100 });
  await page.click('button[data-control="task-words"]');
  await page.waitForFunction(() => document.querySelector('#learn [data-metric="step"]')?.textContent === '0'
    && document.querySelector('#learn [data-metric="held-out-loss"]')?.textContent !== '–', null, { timeout: 120000, polling: 100 });
  await page.evaluate(() => {
    window.__long = [];
    window.__events = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask' });
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) if (e.name === 'click') window.__events.push({ ms: e.duration, handler: e.processingEnd - e.processingStart });
    }).observe({ type: 'event', durationThreshold: 16 });
  });
  await env.browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  const load0 = loadavg()[0];
  await page.click('button[data-control="learn-train"]');
  const s0 = await step(page);
  const heads = await page.$$('button.learn-head');
  assert.ok(heads.length >= 2, 'head thumbnails to click');
  for (let k = 0; k < 8; k++) {
    const at = await step(page);
    await page.waitForFunction((a) => Number(document.querySelector('#learn [data-metric="step"]').textContent) >= a + 40, at, { timeout: 300000, polling: 100 });
    await heads[k % heads.length].click();
  }
  const s1 = await step(page);
  const trace = JSON.parse((await env.browser.stopTracing()).toString()).traceEvents;
  const load = Math.max(load0, loadavg()[0]);
  await page.click('button[data-control="learn-pause"]');
  const { long, events } = await page.evaluate(() => ({ long: window.__long, events: window.__events }));
  // The renderer's main thread: each task's wall and CPU time (tdur: the thread's own running time).
  const mains = new Set(trace.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const tasks = trace.filter((e) => mains.has(`${e.pid}:${e.tid}`) && e.ph === 'X' && e.name === 'RunTask' && e.dur > 50000)
    .map((e) => ({ wall: e.dur / 1000, cpu: (e.tdur ?? e.dur) / 1000 }));
  // Each click's own work on the main thread, which a busy machine cannot hide or inflate: the CPU time (tdur) of
  // every main-thread task from the click's dispatch to the next frame's commit (the task that dispatched it counted
  // whole). Bounded by CLICK_MS on any machine; the wall-clock answer below only when the machine is quiet.
  const onMain = (e) => mains.has(`${e.pid}:${e.tid}`);
  const runTasks = trace.filter((e) => onMain(e) && e.ph === 'X' && e.name === 'RunTask');
  const clickWork = trace.filter((e) => onMain(e) && e.name === 'EventDispatch' && e.args?.data?.type === 'click').map((c) => {
    const end = trace.filter((e) => onMain(e) && (e.name === 'Commit' || e.name === 'Paint') && e.ts >= c.ts).reduce((m, e) => Math.min(m, e.ts + (e.dur ?? 0)), Infinity);
    return runTasks.filter((t) => t.ts + t.dur >= c.ts && t.ts <= end).reduce((sum, t) => sum + (t.tdur ?? t.dur), 0) / 1000;
  });
  const quiet = load < cpus().length;
  const worstWall = Math.max(0, ...long), worstCpu = Math.max(0, ...tasks.map((t) => t.cpu));
  const slowest = Math.max(0, ...events.map((e) => e.ms)), handler = Math.max(0, ...events.map((e) => e.handler));
  console.log(`words training, steps ${s0}–${s1}, load ${load.toFixed(1)} on ${cpus().length} cores (${quiet ? 'quiet' : 'busy'}): `
    + `${long.length} long tasks (Long Tasks API), longest ${worstWall.toFixed(0)} ms; their CPU time on the main thread `
    + `(trace, wall/cpu ms): ${tasks.map((t) => `${t.wall.toFixed(0)}/${t.cpu.toFixed(0)}`).join(', ') || 'none'}; `
    + `${events.length} clicks over 16 ms (Event Timing), slowest ${slowest.toFixed(0)} ms to the next paint, handlers ≤ ${handler.toFixed(0)} ms; `
    + `each click's main-thread CPU time to its frame (trace, ms): ${clickWork.map((x) => x.toFixed(0)).join(', ')}`);
  assert.ok(s1 >= s0 + 8 * 40, 'it trained while the clicks were made');
  assert.ok(tasks.length === 0 || worstCpu <= LONG_TASK_MS, `no main-thread task does over ${LONG_TASK_MS} ms of work (most: ${worstCpu.toFixed(0)} ms of CPU)`);
  assert.ok(clickWork.length >= 8, `the trace has every click (${clickWork.length}: the 8 on heads and Train)`);
  assert.ok(Math.max(...clickWork) <= CLICK_MS, `every click's own work, to its frame, under ${CLICK_MS} ms of CPU (most: ${Math.max(...clickWork).toFixed(0)} ms)`);
  if (quiet) {
    // Event Timing's handler time is wall time: on a busy machine it includes waiting for a core (the CPU bounds
    // above hold there).
    assert.ok(handler <= LONG_TASK_MS, `click handlers run in under ${LONG_TASK_MS} ms (${handler.toFixed(0)} ms)`);
    assert.ok(worstWall <= LONG_TASK_MS, `no main-thread task over ${LONG_TASK_MS} ms (longest ${worstWall.toFixed(0)} ms)`);
    assert.ok(slowest <= CLICK_MS, `every click answered (next paint) within ${CLICK_MS} ms (slowest ${slowest.toFixed(0)} ms)`);
  }
  assert.deepEqual(log.errors, []);
  await context.close();
});
