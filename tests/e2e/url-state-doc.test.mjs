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
});
