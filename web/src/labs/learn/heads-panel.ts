// Every layer × head attention pattern of the learn lab's model on the example (head-grid.ts), and the chosen head
// large, with its tokens, in a Heatmap.
import { el } from '../../ui/dom';
import { Heatmap } from '../../ui/heatmap';
import type { TaskName } from '../../model/train-tasks';
import { headTags, type Eval } from './findings';
import { HeadGrid } from './head-grid';

export class HeadsPanel {
  readonly root: HTMLElement;
  private grid: HeadGrid;
  private caption = el('h4', { class: 'learn-big-caption', hidden: true }); // shown with its first text (an empty heading is no heading)
  private big = new Heatmap({ name: 'learn-head', label: 'attention weights', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 22 });

  /** onSelect: a head was chosen in the grid. */
  constructor(onSelect: () => void) {
    this.grid = new HeadGrid(onSelect);
    this.root = el('div', { class: 'learn-grid-row' }, this.grid.root, el('div', { class: 'learn-big' }, this.caption, this.big.root));
  }

  /** Draws a measurement's patterns. words: the example's words or tokens (the words and text tasks), [] for induction's numbers. */
  update(e: Eval, task: TaskName, words: string[]): void {
    const t = e.probe.ids.length;
    this.grid.update(e.probe.attention, e.scores.previous[0].length, t, headTags(e, task, words));
    const [sy, sh] = this.grid.selected;
    const labels = task !== 'induction' ? words.map((w, i) => `${i + 1} ${w}`) : Array.from(e.probe.ids, (id, i) => `${i + 1}: ${id}`);
    const values = e.probe.attention[sy].subarray(sh * t * t, (sh + 1) * t * t);
    const masked = Array.from({ length: t * t }, (_, k) => (k % t) > Math.floor(k / t));
    this.big.update({ name: 'learn-head', label: `Layer ${sy + 1}, head ${sh + 1}: attention weights at step ${e.step}`, n: t, m: t, values, rowLabels: labels, colLabels: labels, masked, maxCell: 22 });
    this.caption.hidden = false;
    this.caption.textContent = `Layer ${sy + 1}, head ${sh + 1} at step ${e.step} (rows: queries, columns: keys; hatched: the causal mask)`;
  }
}
