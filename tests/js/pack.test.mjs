// The tarball as the registry would get it: `npm publish --dry-run` passes (prepack builds dist/ and puts the
// npm README in place, postpack puts the repository's back), the tarball holds exactly the package (dist/,
// README, LICENSE, CHANGELOG, package.json), every path package.json names is in it, and the README is the
// package's page with no link that breaks on the npm site. Installing the tarball and using it in every tool
// chain is tests/consumers/.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { distFiles, packageJson, repo } from './support/load.mjs';

const npm = (args, env = {}) =>
  spawnSync('npm', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false', ...env } });

const repoReadme = readFileSync(`${repo}README.md`, 'utf8');
const packageReadme = readFileSync(`${repo}src/js/README.md`, 'utf8');

test('npm publish --dry-run passes; the tarball holds exactly the package; the repository README is back', () => {
  const res = npm(['publish', '--dry-run', '--offline', '--json']);
  assert.equal(res.status, 0, `npm publish --dry-run failed:\n${res.stdout}\n${res.stderr}`);
  // prepack's build report comes first on stdout; npm's JSON report is the object that starts a line.
  const report = JSON.parse(res.stdout.slice(res.stdout.search(/^\{/m)))[packageJson.name];
  assert.equal(report.version, packageJson.version);
  const files = report.files.map((f) => f.path).sort();
  const expected = ['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json', ...distFiles.map((f) => `dist/${f}`)].sort();
  // Every file the package is made of, and nothing else (a file another build left in dist/ would show here).
  assert.deepEqual(files, expected);
  assert.equal(readFileSync(`${repo}README.md`, 'utf8'), repoReadme, 'postpack restored the repository README');
});

test('every path package.json names (exports, main, types, files) exists in the package', () => {
  const targets = [packageJson.main, packageJson.types];
  const walk = (v) => (typeof v === 'string' ? targets.push(v) : Object.values(v).forEach(walk));
  walk(packageJson.exports);
  for (const t of targets) {
    assert.match(t, /^\.\/(dist\/|package\.json$)/, t);
    if (t.startsWith('./dist/')) assert.ok(distFiles.includes(t.slice('./dist/'.length)), `${t} is not among the package's files`);
  }
  assert.deepEqual(Object.keys(packageJson.exports), ['.', './inline', './inline-gpt', './attnlab-simd.wasm', './attnlab-scalar.wasm',
    './attnlab-gpt-simd.wasm', './attnlab-gpt-scalar.wasm', './attnlab-worker.js', './package.json']);
  assert.equal(packageJson.exports['.'].types, packageJson.exports['./inline'].types);
  assert.equal(packageJson.exports['.'].types, packageJson.exports['./inline-gpt'].types);
  assert.equal(packageJson.license, 'MIT');
  assert.equal(packageJson.sideEffects, false);
});

test('the npm page: the package README, no relative link or image, no repository instructions', () => {
  const links = [...packageReadme.matchAll(/!?\[[^\]]*\]\(([^)\s]+)[^)]*\)|\b(?:href|src)=["']([^"']+)["']|^\[[^\]]+\]:\s*(\S+)/gm)]
    .map((m) => m[1] ?? m[2] ?? m[3]);
  const relative = links.filter((l) => !/^https:\/\//.test(l));
  assert.deepEqual(relative, [], 'links must be absolute https URLs to work on the npm site');
  assert.doesNotMatch(packageReadme, /npm start|npm test|src\/js\/|scripts\//, 'the npm page speaks to users, not contributors');
  for (const heading of ['## Quick start', '## API', '## Three entries', '## Errors', '## Performance', '## Versioning', '## License'])
    assert.ok(packageReadme.includes(heading), `missing ${heading}`);
  assert.match(packageReadme, /TypeScript\s+5\.7 or later/);
  assert.match(packageReadme, new RegExp(packageJson.engines.node.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'states the engines range');
});

test('LICENSE is MIT; CHANGELOG has the current version and the versioning rule', () => {
  assert.match(readFileSync(`${repo}LICENSE`, 'utf8'), /^MIT License\n\nCopyright \(c\) \d{4} /);
  const changelog = readFileSync(`${repo}CHANGELOG.md`, 'utf8');
  assert.match(changelog, new RegExp(`^## ${packageJson.version.replace(/\./g, '\\.')}$`, 'm'));
  assert.match(changelog, /^## Versioning$/m);
});

// A PATH with what prepack.sh needs besides the toolchain (node, coreutils), and no emcc or cmake.
const bareBin = mkdtempSync(join(tmpdir(), 'attnlab-bare-path-'));
after(() => rmSync(bareBin, { recursive: true, force: true }));
for (const tool of ['dirname', 'cp', 'mv', 'mkdir']) symlinkSync(execFileSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), join(bareBin, tool));
symlinkSync(process.execPath, join(bareBin, 'node'));
const prepack = (env) => spawnSync('/bin/bash', ['scripts/prepack.sh'], { cwd: repo, encoding: 'utf8', env: { ...process.env, PATH: bareBin, ...env } });

test('a real publish is refused until repository, homepage and bugs are set (the project has no public URL yet)', () => {
  const missing = ['repository', 'homepage', 'bugs'].filter((k) => !packageJson[k]);
  const res = prepack({ npm_command: 'publish', npm_config_dry_run: 'false' });
  if (missing.length) {
    assert.equal(res.status, 1);
    assert.match(res.stderr, new RegExp(`^prepack: refusing to publish: package\\.json has no ${missing.join(', ')}\\.`));
    assert.match(res.stderr, /left unset on purpose: the project has no public URL yet/);
    assert.match(res.stderr, /npm publish --dry-run and npm pack work without them/);
  } else {
    // All three set: prepack goes on to the toolchain check (no emcc on this PATH), which must say what is missing.
    assert.match(res.stderr, /cannot build the package: '(emcc|cmake)' is not installed/);
  }
});

test('prepack without the toolchain says what is missing and how to get it', () => {
  const res = prepack({ npm_command: 'pack' });
  assert.equal(res.status, 1, res.stderr);
  assert.match(res.stderr, /prepack: cannot build the package: 'emcc' is not installed\. dist\/ \(the wasm modules and their JS\) is/);
  assert.match(res.stderr, /bash scripts\/bootstrap\.sh/);
  assert.equal(readFileSync(`${repo}README.md`, 'utf8'), repoReadme);
});
