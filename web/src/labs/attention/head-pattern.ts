// What one head picked up, in words, read off its weights on screen: its average weight on the previous word, on
// itself and on the first word, each next to what spreading evenly would give, whether it follows content words
// (its largest weight on the nearest earlier content word, skipping the function words between), and its strongest
// link to an earlier word. The sentences are built from these numbers only, so they hold for whatever weights are
// shown.
import { fmt } from '../../ui/format';
import { isContentWord } from '../../text/word-class';

/**
 * A head "has" a pattern when, on average over its rows, at least this much of its weight sits on it: this lab's
 * sentences and the learn lab's named heads use the same bar.
 */
export const PATTERN_THRESHOLD = 0.4;

/** Above this share of its weight a head "mostly" looks somewhere (more than half); below, it spreads its attention. */
export const MOSTLY = 0.5;

export interface PatternScores { previous: number; self: number; first: number; even: number; link?: { i: number; j: number; w: number } }

/** weights: n × n row-major (rows are queries). Averages over rows 1…n−1 (row 0 has nothing before it). */
export function patternScores(weights: ArrayLike<number>, n: number, causal: boolean): PatternScores {
  let previous = 0, self = 0, first = 0, even = 0, link: PatternScores['link'];
  const rows = Math.max(1, n - 1);
  for (let i = 1; i < n; i++) {
    previous += weights[i * n + i - 1];
    self += weights[i * n + i];
    first += weights[i * n];
    even += 1 / (causal ? i + 1 : n);
    // The strongest link to an earlier word that is neither the previous word nor the first.
    for (let j = 1; j < i - 1; j++) if (!link || weights[i * n + j] > link.w) link = { i, j, w: weights[i * n + j] };
  }
  return { previous: previous / rows, self: self / rows, first: first / rows, even: even / rows, link };
}

/** A row's largest weight on its nearest earlier content word. */
export interface ContentHit { i: number; j: number; w: number }

export interface ContentScores {
  /** Rows (queries) with a content word before them: the rows the rule can be read on. */
  rows: number;
  /** Of those, the rows whose largest weight (over the keys it sees) is on the nearest earlier content word. */
  hits: ContentHit[];
  /** Of those rows, the ones whose largest weight is on the word just before (the positional rule, for contrast). */
  previous: number;
}

/** The content rule needs this share of the rows, at least CONTENT_MIN_ROWS of them, and to beat the previous word. */
export const CONTENT_SHARE = 0.75;
export const CONTENT_MIN_ROWS = 3;

/**
 * For each query i that has a content word before it, c(i) = the nearest j < i with a content word; a hit when the
 * row's largest weight (over keys 0…i with the causal mask, all keys without; ties to the earlier key) is on c(i).
 */
export function contentScores(weights: ArrayLike<number>, n: number, words: string[], causal: boolean): ContentScores {
  const hits: ContentHit[] = [];
  let rows = 0, previous = 0, nearest = -1;
  for (let i = 0; i < n; i++) {
    if (nearest >= 0) {
      rows++;
      let top = 0;
      for (let j = 1; j < (causal ? i + 1 : n); j++) if (weights[i * n + j] > weights[i * n + top]) top = j;
      if (top === nearest) hits.push({ i, j: top, w: weights[i * n + top] });
      if (top === i - 1) previous++;
    }
    if (isContentWord(words[i])) nearest = i;
  }
  return { rows, hits, previous };
}

/** The content sentence and the rows it quotes, or '' when the head does not follow content words by the rule above. */
export function contentPattern(c: ContentScores, words: string[]): { text: string; shown: ContentHit[] } {
  if (c.rows < CONTENT_MIN_ROWS || c.hits.length < CONTENT_SHARE * c.rows || c.hits.length <= c.previous) return { text: '', shown: [] };
  const q = (i: number) => `“${words[i]}”`;
  const strongest = [...c.hits].sort((a, b) => b.w - a.w || a.i - b.i);
  // Examples: the two strongest rows, and the strongest that skips words if neither does.
  const shown = strongest.slice(0, 2);
  const skip = strongest.find((h) => h.j < h.i - 1);
  if (skip && !shown.some((h) => h.j < h.i - 1)) shown.push(skip);
  const example = (h: ContentHit) => `${q(h.i)} → ${q(h.j)} ${fmt(h.w, 2)}${h.j < h.i - 1 ? ` (over ${words.slice(h.j + 1, h.i).map((w) => `“${w}”`).join(' ')})` : ''}`;
  return {
    text: `Follows content words: in ${c.hits.length} of the ${c.rows} rows that have a content word before them, its largest weight is on the nearest one, skipping function words (a, an, the, and, of, is, pronouns…): ${shown.map(example).join(', ')}.`,
    shown,
  };
}

/**
 * One weight this large, in a row that has at least three words to choose from, is a pattern a reader sees at once
 * (a dark cell among pale ones): when no rule by position holds, the caption leads with such cells, not with "no
 * clear pattern" above them.
 */
export const STRONG_CELL = 0.8;

/** The first row that sees three words or more: 2 with the causal mask (row i sees i + 1 words), else 0. */
const firstWideRow = (causal: boolean) => (causal ? 2 : 0);

/** Cells of the rows that see three words or more (keys the row sees) with a weight of at least STRONG_CELL, largest first. */
export function strongCells(weights: ArrayLike<number>, n: number, causal: boolean): ContentHit[] {
  const cells: ContentHit[] = [];
  for (let i = firstWideRow(causal); i < n; i++) for (let j = 0; j < (causal ? i + 1 : n); j++) if (weights[i * n + j] >= STRONG_CELL) cells.push({ i, j, w: weights[i * n + j] });
  return cells.sort((a, b) => b.w - a.w || a.i - b.i);
}

export function headPattern(weights: ArrayLike<number>, n: number, words: string[], causal: boolean, random: boolean): string {
  if (n < 3) return 'Too few words to tell a pattern.';
  const p = patternScores(weights, n, causal);
  const named: [string, number][] = [['the word just before', p.previous], ['itself', p.self], ['the first word', p.first]];
  const [what, score] = named.reduce((a, b) => (b[1] > a[1] ? b : a));
  const strong = score >= Math.max(PATTERN_THRESHOLD, 1.5 * p.even);
  // "Mostly" only for more than half the weight: a named pattern under half leads with where the most goes.
  const parts = [strong && score > MOSTLY
    ? `Mostly looks at ${what}: ${fmt(score, 2)} of its weight on average (spreading evenly would give ${fmt(p.even, 2)}).`
    : strong
      ? `Spreads its attention, most on ${what}: ${fmt(score, 2)} of its weight on average (spreading evenly would give ${fmt(p.even, 2)}).`
    : score >= 1.5 * p.even // above even, but under the threshold: a lean, not "near even"
      ? `A weak lean toward ${what}: ${fmt(score, 2)} of its weight on average, at least 1.5 times the ${fmt(p.even, 2)} of spreading evenly but short of the ${fmt(PATTERN_THRESHOLD, 2)} that would name it.`
      : `No clear pattern${random ? '' : ' by position'}: its largest average, ${fmt(score, 2)} on ${what}, is under 1.5 times the ${fmt(p.even, 2)} of spreading evenly${random ? ', as expected from random weights' : ''}.`];
  const content = contentScores(weights, n, words, causal);
  const follows = contentPattern(content, words);
  const shown = [...follows.shown];
  // Lead with the main pattern: a rule by position when one holds, else the content rule, else the strongest cells.
  if (follows.text) {
    if (strong) parts.push(follows.text);
    else parts.unshift(follows.text);
  } else if (!strong) {
    const cells = strongCells(weights, n, causal);
    if (cells.length) {
      const rows = new Set(cells.map((c) => c.i)).size;
      const top = cells.slice(0, 2);
      shown.push(...top);
      parts.unshift(`Its strongest weights: ${top.map((c) => `“${words[c.i]}” → “${words[c.j]}” ${fmt(c.w, 2)}`).join(', ')} (${rows} of the ${n - firstWideRow(causal)} rows that see three words or more put ${fmt(STRONG_CELL, 1)} or more on one word).`);
    }
  }
  // The strongest longer link, unless a sentence above already quotes it.
  const quoted = p.link && shown.some((h) => h.i === p.link!.i && h.j === p.link!.j);
  if (p.link && p.link.w >= PATTERN_THRESHOLD && !quoted) parts.push(`Strongest longer link: “${words[p.link.i]}” → “${words[p.link.j]}” ${fmt(p.link.w, 2)}.`);
  return parts.join(' ');
}
