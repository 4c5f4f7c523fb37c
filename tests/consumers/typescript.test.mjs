// The installed tarball's declarations as TypeScript apps see them: `tsc --strict` over the typed usage files
// (tests/js/fixtures/usage.ts, usage-dom.ts: both entries, the result types, @ts-expect-error misuse) with
// node16, nodenext and bundler resolution, each without any DOM lib or @types (ES2022 only) and with the DOM
// lib; under nodenext also a CommonJS file that require()s the package (apps/ts/require.cts).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { app, bin, prepared, run } from './support.mjs';

before(() => prepared());

const dir = join(app, 'ts');
const tsc = join(bin('typescript'), 'bin/tsc');

for (const [name, module, moduleResolution] of [['node16', 'Node16', 'Node16'], ['nodenext', 'NodeNext', 'NodeNext'], ['bundler', 'ESNext', 'Bundler']]) {
  for (const dom of [false, true]) {
    test(`tsc --strict, module ${module}, moduleResolution ${moduleResolution}, lib ES2022${dom ? ' + DOM' : ' only'}`, () => {
      const files = ['usage.ts', ...(dom ? ['usage-dom.ts'] : []), ...(name === 'nodenext' ? ['require.cts'] : [])];
      const config = {
        compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module, moduleResolution, lib: dom ? ['ES2022', 'DOM'] : ['ES2022'], types: [] },
        files,
      };
      const file = `tsconfig.${name}${dom ? '.dom' : ''}.json`;
      writeFileSync(join(dir, file), JSON.stringify(config, null, 2));
      const { stdout } = run(process.execPath, [tsc, '-p', file, '--listFiles'], { cwd: dir });
      // The declarations came from the installed tarball, and nothing from @types or the DOM unless asked.
      assert.match(stdout, /node_modules\/attnlab\/dist\/index\.d\.ts/);
      assert.doesNotMatch(stdout, /@types\//);
      assert.equal(/lib\.dom\.d\.ts/.test(stdout), dom);
    });
  }
}
