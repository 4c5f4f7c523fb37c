// What the model view says about a head, read off numbers it shows: the measured scores of head-scores.json (the
// thumbnails' names and scores, the selected head's table), and the weights on the learner's own text (the
// selected head's caption). No sentence is written for a number that is not on screen.
import type { HeadPattern, HeadScores } from '../../model/real-model';
import { fmt } from '../../ui/format';

export const PATTERN_NAMES: Record<HeadPattern, string> = {
  previousToken: 'previous token',
  firstToken: 'first token',
  sameWord: 'same word',
  duplicateToken: 'duplicate token',
  induction: 'induction',
};

/** head-scores.json's naming rule in the page's words: the patterns' names spelt out, the page's apostrophes. */
export function ruleText(rule: string): string {
  let out = rule;
  for (const [key, name] of Object.entries(PATTERN_NAMES)) out = out.replaceAll(key, `“${name}”`);
  return out.replace(/^a head is named for a pattern when /i, '').replaceAll("'", '’');
}

/** A token as the tokenizer cut it, with its spaces visible: GPT-2's Ġ (a leading space) as ␣, a newline as ↵. */
export function showToken(t: string): string {
  return t.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';
}

/** The name head-scores.json gives a head (its first named pattern) and that pattern's score, or undefined. */
export function headName(scores: HeadScores | undefined, layer: number, head: number): { pattern: HeadPattern; score: number } | undefined {
  const named = scores?.names.find((n) => n.layer === layer && n.head === head);
  const pattern = named?.patterns[0];
  if (!scores || !pattern) return undefined;
  return { pattern, score: scores.patterns[pattern].scores[layer][head] };
}

/** Means of one head's weights on the text: to the previous token, to the first token, to itself. */
export interface RowMeans { previous: number; first: number; self: number; queries: number; from: number }

/**
 * Over the queries from the third token on (for the second, the previous token is the first token: it would count
 * for both), the mean weight each query gives the token before it, the text's first token, and itself.
 */
export function rowMeans(w: ArrayLike<number>, n: number): RowMeans | undefined {
  const from = 2;
  if (n <= from) return undefined;
  let previous = 0, first = 0, self = 0;
  for (let i = from; i < n; i++) {
    previous += w[i * n + i - 1];
    first += w[i * n];
    self += w[i * n + i];
  }
  const q = n - from;
  return { previous: previous / q, first: first / q, self: self / q, queries: q, from };
}

const LEAD: Record<'previous' | 'first' | 'self', string> = {
  previous: 'each token looks at the one before it',
  first: 'each token looks at the text’s first token',
  self: 'each token looks at itself',
};

/** The selected head's caption, led by the largest of its three means on this text. */
export function headCaption(layer: number, head: number, m: RowMeans | undefined): string {
  const who = `Layer ${layer + 1} head ${head + 1}`;
  if (!m) return `${who}: type at least three tokens to see where its queries look on average.`;
  const kinds = (['previous', 'first', 'self'] as const).slice().sort((a, b) => m[b] - m[a]);
  const top = kinds[0];
  const over = `over the ${m.queries} token${m.queries === 1 ? '' : 's'} from the third on`;
  const rest = kinds.slice(1).map((k) => `${k === 'previous' ? 'the one before' : k === 'first' ? 'the first token' : 'itself'} ${fmt(m[k], 2)}`).join(', ');
  if (m[top] >= 0.5) return `${who}: ${LEAD[top]}: ${fmt(m[top], 2)} on average ${over} (${rest}).`;
  return `${who}: no one of these positions takes most of its attention on this text: on average ${over}, ${top === 'previous' ? 'the one before' : top === 'first' ? 'the first token' : 'itself'} gets ${fmt(m[top], 2)}, ${rest}; the rest is spread over other tokens.`;
}

/** One query's row, led by its largest weight. */
export function queryCaption(tokens: string[], w: ArrayLike<number>, n: number, i: number): string {
  let best = 0;
  for (let j = 1; j <= i; j++) if (w[i * n + j] > w[i * n + best]) best = j;
  const name = (k: number) => `“${showToken(tokens[k])}” (token ${k + 1})`;
  return i === 0
    ? `${name(0)} is the first token: it can only look at itself (weight 1).`
    : `${name(i)} looks most at ${best === i ? 'itself' : name(best)}: ${fmt(w[i * n + best], 2)} of its attention.`;
}
