// Packs the package once (`npm pack`: prepack builds dist/ and puts the npm README in place) and installs the
// tarball into an empty folder outside the repo, offline, as a user would; then lays out the consumer apps
// (apps/, and the typed usage files of tests/js/fixtures) beside it. Every consumer test builds from this one
// install. The bundlers themselves come from the repo's devDependencies; the few packages an app imports by
// name besides attnlab (vitest, jsdom) are linked into its node_modules, as a user would have installed them.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { app, packageJson, repo, run, work } from './support.mjs';

const t0 = performance.now();
rmSync(work, { recursive: true, force: true });
mkdirSync(app, { recursive: true });

const env = { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: repo, env });
const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
if (tgz !== `attnlab-${packageJson.version}.tgz`) throw new Error(`npm pack made ${tgz}, expected attnlab-${packageJson.version}.tgz`);
const packed = performance.now();

writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`);
run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', join(work, tgz)], { cwd: app, env });
for (const name of ['vitest', 'jsdom']) symlinkSync(join(repo, 'node_modules', name), join(app, 'node_modules', name), 'dir');

cpSync(join(repo, 'tests/consumers/apps'), app, { recursive: true });
for (const f of ['usage.ts', 'usage-dom.ts']) cpSync(join(repo, 'tests/js/fixtures', f), join(app, 'ts', f));
if (!existsSync(join(app, 'node_modules/attnlab/dist/index.js'))) throw new Error('the install has no node_modules/attnlab/dist/index.js');

const seconds = { pack: (packed - t0) / 1000, install: (performance.now() - packed) / 1000 };
writeFileSync(join(work, 'ready.json'), `${JSON.stringify({ tgz: join(work, tgz), seconds }, null, 2)}\n`);
console.log(`consumers: packed ${tgz} in ${seconds.pack.toFixed(1)} s, installed into ${app} in ${seconds.install.toFixed(1)} s`);
