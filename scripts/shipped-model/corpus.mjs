// The shipped model's corpus: public-domain and freely distributed English that Debian packages install, read the
// same way on every machine. The King James Bible from bible-kjv (`bible` prints every verse) and a chosen set of
// fortune files from fortunes-min and fortunes (/usr/share/games/fortunes). One document per Bible chapter (its
// verses one per line) and per fortune (its wrapped lines joined, an attribution "-- Author" on a line of its
// own). Held out, never trained on (the tokenizer included): every 20th chapter and every 20th fortune of each
// file, counted from the 11th, so the held-out text is spread over every book and file.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const FORTUNE_DIR = '/usr/share/games/fortunes';
/**
 * Fortune files whose text suits a page for learners: proverbs, classic authors, riddles, science, everyday life.
 * Left out: the offensive set (never installed: fortunes-off), ascii-art (pictures), computers, debian, linux,
 * linuxcookie, perl, knghtbrd (jargon, code and chat logs), cookie (an unsorted Usenet collection), definitions,
 * disclaimer, drugs, ethnic, law, men-women, politics, news (jokes about groups and topical quips), startrek, zippy,
 * pratchett, tao (quotations of single modern works), songs-poems (modern song lyrics), translate-me (not English).
 */
export const FORTUNE_FILES = {
  'fortunes-min': ['fortunes', 'literature', 'riddles'],
  fortunes: ['wisdom', 'platitudes', 'science', 'education', 'food', 'kids', 'pets', 'love', 'magic', 'medicine', 'people', 'work', 'art', 'goedel', 'paradoxum', 'miscellaneous'],
};
const HELD_OUT_EVERY = 20, HELD_OUT_AT = 10;
const heldOut = (i) => i % HELD_OUT_EVERY === HELD_OUT_AT;

/** Every verse of the King James Bible, as `bible` prints it without pretty-printing: "Ge1:1 In the beginning…". */
export function bibleChapters() {
  const text = execFileSync('bible', ['-f', 'Gen1:1-Rev22:21'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const chapters = [];
  let last = '';
  for (const line of text.split('\n')) {
    if (!line) continue;
    const m = /^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$/.exec(line);
    if (!m) throw new Error(`corpus: an unexpected line from bible: ${JSON.stringify(line.slice(0, 80))}`);
    const id = `${m[1]} ${m[2]}`;
    if (id !== last) chapters.push({ id, verses: [] }), (last = id);
    chapters.at(-1).verses.push(m[4].trim());
  }
  return chapters.map(({ id, verses }) => ({ id, text: verses.join('\n') }));
}

/** One fortune as a document: overstrikes ("_\bx" underlines x) removed, wrapped lines joined, spaces collapsed. */
export function cleanFortune(raw) {
  const lines = raw.replace(/[^\n]\x08/g, '').split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).filter(Boolean);
  const out = [];
  for (const l of lines) {
    if (out.length === 0 || l.startsWith('-- ')) out.push(l);
    else out[out.length - 1] += ` ${l}`;
  }
  return out.join('\n');
}

/** The fortunes of one file, in file order. */
export function fortunes(file) {
  const raw = readFileSync(`${FORTUNE_DIR}/${file}`, 'utf8');
  return raw.split(/^%$/m).map(cleanFortune).filter(Boolean);
}

/**
 * The corpus as documents, each `{ source, id, text }`, split into `train` and `heldOut`; `sha256` of the whole
 * (every document's source, id and text), which a run records so that another machine's corpus is known to be the same.
 */
export function loadCorpus() {
  const train = [], held = [];
  bibleChapters().forEach((c, i) => (heldOut(i) ? held : train).push({ source: 'kjv', id: c.id, text: c.text }));
  for (const files of Object.values(FORTUNE_FILES))
    for (const file of files)
      fortunes(file).forEach((text, i) => (heldOut(i) ? held : train).push({ source: `fortunes/${file}`, id: String(i), text }));
  const h = createHash('sha256');
  for (const [name, docs] of [['train', train], ['heldOut', held]])
    for (const d of docs) h.update(`${name}\0${d.source}\0${d.id}\0${d.text}\0`);
  return { train, heldOut: held, sha256: h.digest('hex') };
}

/** The installed versions of the packages the text comes from (dpkg-query). */
export function packageVersions() {
  const out = execFileSync('dpkg-query', ['-W', '-f=${Package} ${Version}\\n', 'bible-kjv-text', 'fortunes-min', 'fortunes'], { encoding: 'utf8' });
  return Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ')));
}

/** Documents, characters and UTF-8 bytes per source. */
export function corpusStats(docs) {
  const by = {};
  for (const d of docs) {
    const key = d.source === 'kjv' ? 'kjv' : 'fortunes';
    by[key] ??= { documents: 0, characters: 0, bytes: 0 };
    by[key].documents++;
    by[key].characters += [...d.text].length;
    by[key].bytes += Buffer.byteLength(d.text);
  }
  return by;
}
