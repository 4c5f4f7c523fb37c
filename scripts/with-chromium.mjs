// `node scripts/with-chromium.mjs CMD [ARGS…]`: runs CMD with one headless Chromium for all its browser tests —
// a Playwright browser server whose endpoint goes to CMD in ATTNLAB_CHROMIUM_WS (tests/chromium.mjs connects to
// it) — and exits with CMD's status. Under a run that already shares one, it only runs CMD.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { chromium } from 'playwright-core';

import { launchOptions } from '../tests/chromium.mjs';

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error('usage: node scripts/with-chromium.mjs CMD [ARGS…]');
  process.exit(2);
}
const server = process.env.ATTNLAB_CHROMIUM_WS ? null : await chromium.launchServer(launchOptions);
const env = server ? { ...process.env, ATTNLAB_CHROMIUM_WS: server.wsEndpoint() } : process.env;
const child = spawn(cmd, args, { stdio: 'inherit', env });
// Ctrl-C and kill reach the command; the browser goes when it has ended.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
let code = 1;
try {
  code = await new Promise((ok, fail) => {
    child.on('error', fail);
    child.on('exit', (c, s) => ok(c ?? 128 + (constants.signals[s] ?? 0)));
  });
} catch (e) {
  console.error(`with-chromium: ${cmd}: ${e.message}`);
} finally {
  await server?.close();
}
process.exit(code);
