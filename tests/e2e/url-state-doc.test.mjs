// web/URL_STATE.md documents the URL state lab by lab, as the page defines it: one section per lab's slice (in the
// order the page writes them), naming the slice and the state.ts that defines it beside the lab's code, with a row
// for each of its parameters in order. Reads the page's own slices (web/src/state/app-state.ts, bundled by esbuild).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { repo } from './helpers.mjs';

test('URL_STATE.md: a section per lab slice, in the page\'s order, naming its state.ts, listing its parameters in order', async () => {
  const built = await esbuild.build({
    entryPoints: [join(repo, 'web/src/state/app-state.ts')], bundle: true, format: 'esm', platform: 'neutral', write: false,
    logLevel: 'silent', loader: { '.css': 'empty' },
  });
  const { SLICES } = await import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].contents).toString('base64')}`);
  const doc = readFileSync(join(repo, 'web/URL_STATE.md'), 'utf8');
  const sections = doc.split(/^## /m).slice(1).filter((s) => /^`\w+Slice` in `/m.test(s));
  assert.equal(sections.length, SLICES.length, 'one section per slice');
  sections.forEach((section, i) => {
    const [, slice, file] = section.match(/^`(\w+Slice)` in `([^`]+)`/m);
    assert.match(readFileSync(join(repo, file), 'utf8'), new RegExp(`export const ${slice}: Slice<`), `${slice} is defined in ${file}`);
    const documented = [...section.matchAll(/^\| ((?:`\w+`(?:, )?)+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`(\w+)`/g)].map((p) => p[1]));
    assert.deepEqual(documented, SLICES[i].fields.map((f) => f.param), `${slice}: its parameters, in order`);
  });
  // One parameter, one field: two labs that chose the same name would read each other's values.
  const params = SLICES.flatMap((s) => s.fields.map((f) => f.param));
  assert.deepEqual(params.filter((p, i) => params.indexOf(p) !== i), [], 'no parameter name used twice');
});

// The example links in the documents are views the page opens as written: every parameter known and accepted, the
// fragment a section the page has (URL_STATE.md's list).
test('the documents\' example links parse with no rejected or unknown parameter, to a section the page has', async () => {
  const built = await esbuild.build({
    entryPoints: [join(repo, 'web/src/state/url-state.ts')], bundle: true, format: 'esm', platform: 'neutral', write: false,
    logLevel: 'silent', loader: { '.css': 'empty' },
  });
  const { parseQuery } = await import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].contents).toString('base64')}`);
  const urlState = readFileSync(join(repo, 'web/URL_STATE.md'), 'utf8');
  const sections = new Set([...urlState.match(/^Nothing from the URL[\s\S]*?\n\n/m)[0].matchAll(/`#([\w-]+)`/g)].map((m) => m[1]));
  assert.ok(sections.has('attention') && sections.has('learn'), 'URL_STATE.md lists the sections');
  const examples = ['README.md', 'docs/explorer.md', 'web/URL_STATE.md'].flatMap((file) =>
    [...readFileSync(join(repo, file), 'utf8').matchAll(/(?:http:\/\/localhost:8080\/|`)(\?[^`\s]+)/g)].map((m) => ({ file, link: m[1] })));
  assert.ok(examples.some((e) => e.file === 'README.md') && examples.some((e) => e.file === 'docs/explorer.md'));
  for (const { file, link } of examples) {
    const [query, fragment] = link.split('#');
    const { rejected, unknown } = parseQuery(query);
    assert.deepEqual({ rejected, unknown }, { rejected: [], unknown: 0 }, `${file}: ${link}`);
    if (fragment !== undefined) assert.ok(sections.has(fragment), `${file}: ${link}: no section #${fragment}`);
  }
});

// docs/explorer.md names the five articles as the page's Further reading does (ARTICLES), by their titles.
test('docs/explorer.md lists the articles of the page\'s Further reading by title', async () => {
  const built = await esbuild.build({
    entryPoints: [join(repo, 'web/src/labs/reading/further-reading.ts')], bundle: true, format: 'esm', platform: 'neutral',
    write: false, logLevel: 'silent', loader: { '.css': 'empty' },
  });
  const { ARTICLES } = await import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].contents).toString('base64')}`);
  const doc = readFileSync(join(repo, 'docs/explorer.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## The five articles'), doc.indexOf('\n## ', doc.indexOf('## The five articles') + 1));
  assert.equal(ARTICLES.length, 5);
  for (const a of ARTICLES) {
    // An article whose own title the page does not know is described; the description's words name it here too.
    const name = a.described ? a.title.replace(/^An article on /, '') : `“${a.title}”`;
    assert.ok(section.includes(name), `docs/explorer.md does not name ${name}`);
  }
  assert.equal([...section.matchAll(/^- /gm)].length, ARTICLES.length, 'one item per article');
});
