// What the learn lab says about the heads, read off each measurement the training worker sends: a short tag per
// head for the grid, and the findings panel (induction: the heads named previous-token or induction heads, with
// the step an induction head was first named; words: where each head looks from the last word, and the model's
// next-word guesses).
import { el, clear } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { INDUCTION, HELD_OUT_SEQUENCES, type TaskName } from '../../model/train-tasks';
import type { TrainMessage } from '../../workers/train-worker';
import { MOSTLY, PATTERN_THRESHOLD } from '../attention/head-pattern';
import { score, type HeadTag } from './head-grid';

export type Eval = Extract<TrainMessage, { type: 'eval' }>;

const pct = (p: number): string => (p >= 0.995 ? '≥ 99.5%' : p < 0.001 ? '< 0.1%' : `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`);

/** The text task's measurements carry their tokens' text (the tokens join without spaces: each holds its own). */
const task = (e: Eval): TaskName => (e.probe.labels ? 'text' : 'words');

/** The last query row of head h in layer y's [heads, t, t] weights: where the last word looks. */
const lastRow = (e: Eval, y: number, h: number, t: number) => e.probe.attention[y].subarray(h * t * t + (t - 1) * t, h * t * t + t * t);

/** Per layer and head, what its scores say (strong: past the pattern threshold). words: the example's words. */
export function headTags(e: Eval, task: TaskName, words: string[]): HeadTag[][] {
  const heads = e.scores.previous[0].length;
  const t = e.probe.ids.length;
  const tags: HeadTag[][] = [];
  for (let y = 0; y < e.probe.attention.length; y++) {
    const row: HeadTag[] = [];
    for (let h = 0; h < heads; h++) {
      const prev = e.scores.previous[y][h];
      if (task === 'induction') {
        const ind = e.scores.induction![y][h];
        const strong = prev >= PATTERN_THRESHOLD || ind >= PATTERN_THRESHOLD;
        row.push({ text: ind > prev ? `induction ${score(ind)}` : `previous ${score(prev)}`, strong });
      } else {
        const a = lastRow(e, y, h, t);
        let best = 0;
        for (let j = 1; j < t; j++) if (a[j] > a[best]) best = j;
        row.push({ text: `“${words[t - 1]}” → “${words[best]}” ${score(a[best])}`, strong: a[best] >= PATTERN_THRESHOLD });
      }
    }
    tags.push(row);
  }
  return tags;
}

/**
 * The induction task's findings into `findings` (its data-* attributes carry the numbers for tests).
 * firstStep: the step an induction head was first named, if one was; returns it, updated.
 */
export function inductionFindings(findings: HTMLElement, e: Eval, firstStep: number | undefined): number | undefined {
  const { previous, induction } = e.scores;
  const layers = previous.length, heads = previous[0].length;
  let bestPrev = { s: -1, y: 0, h: 0 }, bestInd = { s: -1, y: 0, h: 0 };
  for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) {
    if (previous[y][h] > bestPrev.s) bestPrev = { s: previous[y][h], y, h };
    if (y > 0 && induction![y][h] > bestInd.s) bestInd = { s: induction![y][h], y, h };
  }
  const prevHeads: string[] = [], indHeads: string[] = [];
  for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) {
    if (previous[y][h] >= PATTERN_THRESHOLD) prevHeads.push(`layer ${y + 1} head ${h + 1} (${score(previous[y][h])})`);
    if (y > 0 && induction![y][h] >= PATTERN_THRESHOLD) indHeads.push(`layer ${y + 1} head ${h + 1} (${score(induction![y][h])})`);
  }
  // Whether every named previous-token head puts more than half its weight there: only then is "carries its
  // predecessor" the whole story.
  let prevHalf = true;
  for (let y = 0; y < layers; y++) for (let h = 0; h < heads; h++) if (previous[y][h] >= PATTERN_THRESHOLD && Number(score(previous[y][h])) <= MOSTLY) prevHalf = false;  // as shown
  if (indHeads.length && firstStep === undefined) firstStep = e.step;
  clear(findings);
  findings.dataset.previousHeads = prevHeads.length ? String(prevHeads.length) : '0';
  findings.dataset.inductionHeads = indHeads.length ? String(indHeads.length) : '0';
  findings.dataset.bestInduction = bestInd.s >= 0 ? bestInd.s.toFixed(4) : '';
  findings.dataset.bestPrevious = bestPrev.s.toFixed(4);
  findings.dataset.step = String(e.step);
  findings.append(el('p', { text: `Measured now, on ${HELD_OUT_SEQUENCES} held-out sequences at step ${e.step}: the average weight each head puts on the previous token, and on the token after the previous occurrence of the current token (for queries in the repeat).` }));
  const list = el('ul', {});
  list.appendChild(el('li', { 'data-finding': 'previous', text: prevHeads.length
    ? `Previous-token head${prevHeads.length > 1 ? 's' : ''} (named at ${PATTERN_THRESHOLD} or more of the weight on the previous token, on average): ${prevHeads.join(', ')}. ${prevHeads.length > 1 ? 'They carry' : 'It carries'} each token’s predecessor into its position${prevHalf ? '' : ` (where the score is ${MOSTLY} or under, mixed with the other tokens the head weighs)`}.`
    : `No previous-token head yet (the highest score is ${score(bestPrev.s)}, layer ${bestPrev.y + 1} head ${bestPrev.h + 1}; a head is named at ${PATTERN_THRESHOLD}).` }));
  list.appendChild(el('li', { 'data-finding': 'induction', text: layers < 2
    ? 'No induction head can form with one layer: it needs a previous-token head below it. Choose 2 layers.'
    : indHeads.length
      ? `Induction head${indHeads.length > 1 ? 's' : ''}: ${indHeads.join(', ')}. In the repeat it looks back to where the current token appeared before and copies the token that came next${firstStep !== undefined ? ` (first named at step ${firstStep})` : ''}.`
      : `No induction head yet (the highest score in layers 2 and up is ${score(bestInd.s)}, layer ${bestInd.y + 1} head ${bestInd.h + 1}).` }));
  findings.appendChild(list);
  if (e.repeatLoss !== undefined && e.firstLoss !== undefined) {
    findings.appendChild(el('p', { text: `Loss on the first copy ${fmt(e.firstLoss, 2)}, on the repeated half ${fmt(e.repeatLoss, 2)} (guessing: ln ${INDUCTION.vocab} = ${fmt(Math.log(INDUCTION.vocab), 2)}).` }));
  }
  return firstStep;
}

/**
 * The words and text tasks' findings into `findings`, and the model's next-word guesses into `nextLine`.
 * label: the text of a next-token id (the words task's vocabulary; the text task's labels come with the measurement).
 */
export function wordsFindings(findings: HTMLElement, nextLine: HTMLElement, e: Eval, words: string[], label: (id: number, rank: number) => string): void {
  clear(findings);
  const t = words.length;
  const heads = e.scores.previous[0].length;
  findings.append(el('p', { text: `Measured now at step ${e.step}. From the last token, “${words[t - 1]}”, where each head looks (its largest weight); choose a head to see its whole pattern.` }));
  const list = el('ul', {});
  for (let y = 0; y < e.probe.attention.length; y++) for (let h = 0; h < heads; h++) {
    const order = Array.from(lastRow(e, y, h, t), (w, j) => ({ w, j })).sort((p, q) => q.w - p.w).slice(0, 2);
    list.appendChild(el('li', { text: `Layer ${y + 1} head ${h + 1}: ${order.map((o) => `“${words[o.j]}” (${o.j + 1}) ${score(o.w)}`).join(', ')}; on held-out text it puts ${score(e.scores.previous[y][h])} on the previous token.` }));
  }
  findings.appendChild(list);
  const next = e.probe.next.map((n, i) => `“${label(n.id, i)}” ${pct(n.p)}`).join(' · ');
  nextLine.textContent = `After “${words.join(task(e) === 'text' ? '' : ' ')}” the model predicts: ${next}.`;
}
