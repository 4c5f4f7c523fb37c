// Vitest (its node and jsdom environments) running test files that import both entries of the installed
// tarball by name. jsdom defines window inside Node: the package must still read the .wasm from disk.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { app, bin, prepared, run } from './support.mjs';

before(() => prepared());

test('vitest run: node.spec.js (node environment) and jsdom.spec.js (jsdom environment) pass', () => {
  const { stdout } = run(process.execPath, [join(bin('vitest'), 'vitest.mjs'), 'run', '--root', join(app, 'vitest'), '--reporter', 'verbose', '--no-color'], {
    cwd: join(app, 'vitest'),
    env: { CI: '1', NO_COLOR: '1' },
  });
  assert.match(stdout, /attnlab in Vitest \(node\)/);
  assert.match(stdout, /attnlab in Vitest \(jsdom\)/);
  assert.match(stdout, /Tests\s+2 passed \(2\)/);
});
