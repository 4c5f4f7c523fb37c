// dist/index.d.ts type-checks typed usage files under `tsc --noEmit --strict`, importing 'attnlab' and
// 'attnlab/inline' by name (resolved through package.json "exports" → "types", as in an application):
// once with only the ES2022 lib (no DOM, no @types at all), once with the DOM lib.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { repo } from './support/load.mjs';

for (const config of ['tsconfig.json', 'tsconfig.dom.json']) {
  test(`tsc --noEmit --strict -p tests/js/fixtures/${config}`, () => {
    const tsc = `${repo}node_modules/typescript/bin/tsc`;
    const res = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '-p', `tests/js/fixtures/${config}`], { cwd: repo, encoding: 'utf8' });
    assert.equal(res.status, 0, `tsc failed:\n${res.stdout}${res.stderr}`);
  });
}
