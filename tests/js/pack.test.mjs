// How a user gets the package: `npm pack` (prepack builds dist/) → install the tarball into an empty folder
// → import 'attnlab' by name from plain Node and type-check a TypeScript file against it.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { distFiles, packageJson, repo } from './support/load.mjs';

const work = mkdtempSync(join(tmpdir(), 'attnlab-pack-'));
after(() => rmSync(work, { recursive: true, force: true }));

const npm = (args, cwd) => spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });

test('npm pack → npm install <tgz> in an empty folder → import attnlab works, types resolve', () => {
  const packed = npm(['pack', '--pack-destination', work], repo);
  assert.equal(packed.status, 0, `npm pack failed:\n${packed.stdout}${packed.stderr}`);
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  assert.equal(tgz, `attnlab-${packageJson.version}.tgz`);

  // The tarball holds the built package and nothing from the sources.
  const listing = execFileSync('tar', ['-tzf', join(work, tgz)], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();
  for (const f of distFiles) assert.ok(listing.includes(`package/dist/${f}`), `tarball lacks dist/${f}:\n${listing.join('\n')}`);
  assert.ok(listing.includes('package/package.json'));
  assert.deepEqual(listing.filter((f) => !/^package\/(dist\/[^/]+|package\.json|README\.md|LICENSE)$/.test(f)), []);

  const app = join(work, 'app');
  execFileSync('mkdir', [app]);
  const installed = npm(['install', '--no-save', '--offline', '--no-audit', '--no-fund', join(work, tgz)], app);
  assert.equal(installed.status, 0, `npm install failed:\n${installed.stdout}${installed.stderr}`);

  writeFileSync(join(app, 'check.mjs'), `
    import { init } from 'attnlab';
    const lab = await init();
    const p = lab.softmax(new Float32Array([0, Math.log(3)]));
    const { output } = lab.attention({ q: new Float32Array([1]), k: new Float32Array([0, 0]), v: new Float32Array([10, 20]), dk: 1 });
    console.log(JSON.stringify({ backend: lab.backend, version: lab.buildInfo().version, p: Array.from(p), output: Array.from(output) }));
  `);
  const run = spawnSync(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const got = JSON.parse(run.stdout);
  assert.equal(got.backend, 'wasm-simd');
  assert.equal(got.version, packageJson.version);
  assert.ok(Math.abs(got.p[0] - 0.25) < 1e-7 && Math.abs(got.p[1] - 0.75) < 1e-7, JSON.stringify(got.p));
  assert.ok(Math.abs(got.output[0] - 15) < 1e-5, JSON.stringify(got.output)); // equal scores: the mean of v

  // The installed package's declarations, as a TypeScript user sees them.
  copyFileSync(join(repo, 'tests/js/fixtures/usage.ts'), join(app, 'usage.ts'));
  copyFileSync(join(repo, 'tests/js/fixtures/tsconfig.json'), join(app, 'tsconfig.json'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  const tsc = spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' });
  assert.equal(tsc.status, 0, `tsc in the install folder failed:\n${tsc.stdout}${tsc.stderr}`);
});
