// dist/index.d.ts type-checks a typed usage file under `tsc --noEmit --strict`, importing 'attnlab' by name
// (resolved through package.json "exports" → "types", as in an application). No @types are loaded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { repo } from './support/load.mjs';

test('tsc --noEmit --strict over tests/js/fixtures/usage.ts', () => {
  const tsc = `${repo}node_modules/typescript/bin/tsc`;
  const res = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '-p', 'tests/js/fixtures/tsconfig.json'], { cwd: repo, encoding: 'utf8' });
  assert.equal(res.status, 0, `tsc failed:\n${res.stdout}${res.stderr}`);
});
