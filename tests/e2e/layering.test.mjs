// One-way layering (web → the package): the explorer's code imports only the package, by the names its exports map
// gives, its own files and other packages; never a file elsewhere in the repo (bench/, scripts/, src/). Tools may
// import the explorer's files (the bench times its plain-JS baseline, scripts/serve.mjs sends its headers), not the
// other way round. Reads the imports with TypeScript's own scanner (static, dynamic and side-effect imports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { repo } from './helpers.mjs';

const web = join(repo, 'web');
const exportsMap = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).exports;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'dist' || name === 'public' ? [] : sources(p);
    return /\.(ts|mts|mjs|js)$/.test(name) && !/\.d\.m?ts$/.test(name) ? [p] : [];
  });
}

test('web/ imports only the package (by its exported names), its own files and other packages', () => {
  const files = sources(web);
  assert.ok(files.length > 50, `found the explorer's sources (${files.length})`);
  const wrong = [];
  for (const file of files) {
    for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const at = `${relative(repo, file)}: '${spec}'`;
      if (spec.startsWith('.')) {
        if (relative(web, resolve(dirname(file), spec)).startsWith('..')) wrong.push(`${at} reaches outside web/`);
      } else if (spec === 'attnlab' || spec.startsWith('attnlab/')) {
        const sub = `.${spec.slice('attnlab'.length).replace(/\?.*$/, '')}` || '.';
        if (!(sub in exportsMap)) wrong.push(`${at} is not in the package's exports map`);
      } else if (spec.startsWith('/') || /^[a-z]:/i.test(spec) && !spec.startsWith('node:')) {
        wrong.push(`${at} is a path`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
