// What one head picked up, in words, read off its weights on screen: its average weight on the previous word, on
// itself and on the first word, each next to what spreading evenly would give, and its strongest link to an earlier
// word. The sentence is built from these numbers only, so it holds for whatever weights are shown.
import { fmt } from '../../ui/format';

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

export function headPattern(weights: ArrayLike<number>, n: number, words: string[], causal: boolean, random: boolean): string {
  if (n < 3) return 'Too few words to tell a pattern.';
  const p = patternScores(weights, n, causal);
  const named: [string, number][] = [['the word just before', p.previous], ['itself', p.self], ['the first word', p.first]];
  const [what, score] = named.reduce((a, b) => (b[1] > a[1] ? b : a));
  const strong = score >= Math.max(0.4, 1.5 * p.even);
  const parts = [strong
    ? `Mostly looks at ${what}: ${fmt(score, 2)} of its weight on average (spreading evenly would give ${fmt(p.even, 2)}).`
    : score >= 1.5 * p.even // above even, but under 0.4: a lean, not "near even"
      ? `A weak lean: at most ${fmt(score, 2)} on ${what} on average, above the ${fmt(p.even, 2)} of spreading evenly.`
      : `No clear pattern${random ? '' : ' by position'}: at most ${fmt(score, 2)} on ${what} on average, near the ${fmt(p.even, 2)} of spreading evenly${random ? ', as expected from random weights' : ''}.`];
  if (p.link && p.link.w >= 0.4) parts.push(`Strongest longer link: “${words[p.link.i]}” → “${words[p.link.j]}” ${fmt(p.link.w, 2)}.`);
  return parts.join(' ');
}
