// One process per runtime and weight type (forked by bench/lm/run.mjs with --expose-gc): loads its checkpoint
// once, then runs what the orchestrator asks (bench/lm/handlers.mjs), one request at a time.
//   node bench/lm/worker.mjs RUNTIME     (attnlab, ort, tfjs)
import { adapters, makeHandlers } from './handlers.mjs';
import { host } from './host-node.mjs';

const send = (msg) => new Promise((resolve) => process.send(msg, resolve));
const error = (e) => String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ');
const handlers = makeHandlers(host);

let lib;
try {
  const made = await (await adapters[process.argv[2]]()).create(host);
  if (made.missing) {
    await send({ type: 'missing', reason: made.missing });
    process.exit(0);
  }
  lib = made;
  await send({ type: 'ready', info: lib.info, dtypes: lib.dtypes });
} catch (e) {
  await send({ type: 'failed', reason: error(e) });
  process.exit(0);
}

process.on('message', async (msg) => {
  if (msg.type === 'exit') {
    await lib.dispose?.();
    process.exit(0);
  }
  let result;
  const cpu0 = process.cpuUsage();
  try {
    result = await handlers[msg.type](lib, msg);
  } catch (e) {
    result = { failed: error(e) };
  }
  const cpu = process.cpuUsage(cpu0);
  result.handlerCpuMs = (cpu.user + cpu.system) / 1000;
  await send({ type: 'result', seq: msg.seq, result });
});
