// The documents hold together: every relative link in them (and every docs/… reference in the code) reaches a file
// and, with a #fragment, a heading of it; the thresholds the npm page and index.d.ts state are the ones the code
// uses (src/js/async.js `tuning`); the npm page's measured numbers are docs/performance.md's, and the numbers
// docs/performance.md copies from the bench's own output are in that output. No build needed.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

import { tuning } from '../../src/js/async.js';
import { repo } from './support/load.mjs';

const read = (file) => readFileSync(join(repo, file), 'utf8');
const documents = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'src/js/README.md', 'web/URL_STATE.md',
  ...readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

// GitHub's anchors: a heading's text, lower case, without punctuation or symbols, spaces as hyphens; a repeated
// heading gets -1, -2, ….
function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '').toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

// A link target (a path relative to `from`'s folder, maybe with #fragment): what is wrong with it, or null.
function broken(from, target) {
  const [path, fragment] = target.split('#');
  const file = path ? resolve(dirname(join(repo, from)), decodeURIComponent(path)) : join(repo, from);
  if (!file.startsWith(repo)) return `${target} leaves the repository`;
  if (!existsSync(file)) return `${target}: no such file`;
  if (fragment !== undefined) {
    if (!file.endsWith('.md') || statSync(file).isDirectory()) return `${target}: a fragment into a file that is not a document`;
    if (!anchors(readFileSync(file, 'utf8')).has(fragment)) return `${target}: ${relative(repo, file)} has no heading #${fragment}`;
  }
  return null;
}

// Inline links and images, [text](target "title"), outside code blocks and code spans.
function links(markdown) {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

test('every relative link in the documents reaches a file, and a heading when it names one', () => {
  const problems = [];
  let checked = 0;
  for (const file of documents) {
    for (const target of links(read(file))) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto: …
      checked++;
      const why = broken(file, target);
      if (why) problems.push(`${file}: ${why}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 50, `${checked} links checked`);
});

test('the link checker finds a missing file, a missing heading, and a heading GitHub spells differently', () => {
  assert.equal(broken('README.md', 'docs/performance.md#size'), null);
  assert.match(broken('README.md', 'docs/no-such-file.md'), /no such file/);
  assert.match(broken('README.md', 'docs/performance.md#no-such-heading'), /has no heading/);
  assert.deepEqual([...anchors('# A `b`: c?\n## Size\n## Size\n```\n# not a heading\n```\n')], ['a-b-c', 'size', 'size-1']);
  assert.deepEqual(links('[a](x.md) ![b](y.png "t") `[c](z.md)` [d](https://e.f)'), ['x.md', 'y.png', 'https://e.f']);
});

// Code comments point at the documents as docs/NAME.md#heading: the reference must hold.
function sources(dir) {
  return readdirSync(join(repo, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (['node_modules', 'dist', 'corpus', 'fixtures'].includes(name)) return [];
    return statSync(join(repo, path)).isDirectory() ? sources(path) : /\.(m?[jt]s|cpp|h|sh|cmake|txt)$/.test(name) ? [path] : [];
  });
}

test('every docs/… reference in the code reaches its document and heading', () => {
  const problems = [];
  let checked = 0;
  for (const file of ['src', 'web/src', 'bench', 'scripts', 'tests'].flatMap(sources).filter((f) => f !== 'tests/js/docs.test.mjs')) {
    for (const [, target] of read(file).matchAll(/\b(docs\/[\w./-]+\.md(?:#[\w-]+)?)/g)) {
      checked++;
      const why = broken('README.md', target);
      if (why) problems.push(`${file}: ${why}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 0, 'the code links into the documents');
});

// The thresholds below which an async twin stays on the calling thread are code (async.js `tuning`). The npm page
// and the TSDoc state them for users who cannot follow a link into the repository: each value they state must be
// tuning's.
const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';
const power = (digits) => Number([...digits].map((d) => SUPERSCRIPT.indexOf(d)).join(''));

test('the thresholds the npm page and index.d.ts state are the code\'s', () => {
  const work = new Set([tuning.inlineWork, tuning.inlineMatmul]);
  let statements = 0;
  for (const file of ['src/js/README.md', 'src/js/index.d.ts']) {
    const text = read(file);
    const stated = [...text.matchAll(/(\d+(?:\.\d+)?)·10([⁰¹²³⁴⁵⁶⁷⁸⁹]+)/g)].map((m) => Number(m[1]) * 10 ** power(m[2]));
    const floats = [...text.matchAll(/(\d+) Mi floats/g)].map((m) => Number(m[1]) * 2 ** 20);
    statements += stated.length + floats.length;
    for (const v of stated) assert.ok([...work].some((w) => Math.abs(w - v) <= 1e-9 * w), `${file}: ${v} multiply-adds is not one of tuning's (${[...work].join(', ')})`);
    for (const v of floats) assert.equal(v, tuning.inlineFloats, `${file}: ${v / 2 ** 20} Mi floats`);
  }
  assert.ok(statements > 0, 'the npm page or the TSDoc states a threshold');
});

// Numbers as values ("842,496" and "842 496" alike, "33" equal to "33.0").
const numbers = (text) => new Set([...text.replace(/(\d)[, ](\d{3})\b/g, '$1$2').matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0])));

test('the npm page\'s measured numbers are docs/performance.md\'s', () => {
  const page = read('src/js/README.md');
  const perf = numbers(read('docs/performance.md'));
  const section = page.slice(page.indexOf('## Performance'), page.indexOf('\n## ', page.indexOf('## Performance') + 1));
  const claims = [section, ...page.split('\n').filter((l) => /steps\/s|as fast as/.test(l))].join('\n');
  const missing = [...numbers(claims)].filter((n) => !perf.has(n));
  assert.deepEqual(missing, [], 'numbers on the npm page that docs/performance.md does not have');
});

// The sizes the npm page states (its lines in KB or KiB: the "Small" line and the table of what an app loads) are
// the ones docs/performance.md's size table gives, which the consumers' bundle budgets hold to.
test('the npm page\'s sizes are docs/performance.md\'s size table', () => {
  const perf = read('docs/performance.md');
  const section = perf.slice(perf.indexOf('\n## Size'), perf.indexOf('\n## ', perf.indexOf('\n## Size') + 1));
  const table = numbers(section.split('\n').filter((l) => l.startsWith('|')).join('\n'));
  const lines = read('src/js/README.md').split('\n').filter((l) => /\bKi?B\b/.test(l));
  assert.ok(lines.length >= 4, `${lines.length} lines of sizes on the npm page`);
  const missing = [...numbers(lines.join('\n'))].filter((n) => !table.has(n));
  assert.deepEqual(missing, [], 'sizes on the npm page that docs/performance.md\'s size table does not have');
});

// A table in docs/performance.md after `<!-- numbers from: FILE -->` copies cells of FILE (the bench's output): its
// measured columns (all but the first and the last, the ratio) hold only numbers FILE has.
test('docs/performance.md\'s copied tables match the bench output they come from', () => {
  const perf = read('docs/performance.md');
  const marked = [...perf.matchAll(/<!-- numbers from: (\S+) -->\n((?:\|.*\n)+)/g)];
  assert.ok(marked.length > 0);
  for (const [, source, table] of marked) {
    const have = numbers(read(source));
    const rows = table.trim().split('\n').slice(2);
    const cells = rows.flatMap((r) => r.split('|').slice(2, -2));
    const missing = [...numbers(cells.join(' '))].filter((n) => !have.has(n));
    assert.deepEqual(missing, [], `numbers in docs/performance.md's table that ${source} does not have`);
  }
});
