// init({ threads }): the lab's async twins (async.js) and their worker pool (threads.js), added to a lab.
import { makeAsync, threadStats } from './async.js';
import { createPool } from './threads.js';
import { USE_THREADS } from './gpt.js';
import { USE_POOL } from './lm.js';
import { CALLS } from './lab.js';

// workerScript: () => Promise<string>, the workers' script (from the entry: read beside it, or carried inline).
export async function withThreads(lab, { threads, module, gpt, workerScript, exchange }) {
  const pool = threads > 1 ? await createPool(threads, module, gpt, await workerScript()) : undefined;
  const stats = threadStats();
  const twins = makeAsync(lab[CALLS], pool, stats);
  let disposed = false;
  const closed = () => Promise.reject(new Error('attnlab: this lab was disposed; its async calls need a new init()'));
  for (const [name, twin] of Object.entries(twins)) lab[name] = (...args) => (disposed ? closed() : twin(...args));
  // Models get the pool for GPT.trainStepAsync (gpt-async.js).
  const times = {
    steps: 0, serialMs: 0, serialWorkMs: 0, workerMs: 0, seedMs: 0, gradientsMs: 0, reduceMs: 0, updateMs: 0,
    mainMs: 0, gatherMs: 0, sumMs: 0, adamwMs: 0,
  };
  const gptThreads = { pool, closed: () => disposed, stats, times, exchange };
  for (const name of ['createGPT', 'loadGPT']) {
    const make = lab[name];
    lab[name] = (arg) => make(arg)[USE_THREADS](gptThreads);
  }
  // Real models (lab.loadModel) go on the workers, one shard each, unless loadModel's threads says otherwise; the
  // lab's dispose() disposes those (their shards end with the workers), not the ones on the calling thread.
  const ends = [];
  lab.loadModel = lab.loadModel[USE_POOL]({ pool, closed: () => disposed, stats, onDispose: (end) => ends.push(end) });
  lab.threads = threads;
  // Where the async twins' work ran, counted since init() (async.js): a snapshot.
  lab.threadStats = () => ({ ...stats });
  // GPT.trainStepAsync's steps on the workers and their time, summed since init() (gpt-async.js): a snapshot.
  lab.trainTimes = () => ({ ...times });
  lab.dispose = () => {
    disposed = true;
    for (const end of ends) end();
    pool?.dispose();
  };
  return lab;
}
