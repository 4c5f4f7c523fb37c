// The learn lab's loss chart: every training batch's loss and the held-out measurements (induction: the first copy
// and the repeated half apart), against the loss of guessing, with a legend.
import { el, clear } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { LossChart, type LossSeries } from '../../ui/loss-chart';
import type { TaskName } from '../../model/train-tasks';
import type { TrainingSession } from './session';

export class LossPanel {
  readonly chart = new LossChart('learn-loss', 'Loss against training step');
  readonly legend = el('ul', { class: 'learn-legend' });

  /** Draws the session's run of `task` (vocabulary V: guessing costs ln V; 0 while unknown). */
  update(task: TaskName, run: Pick<TrainingSession, 'trainLoss' | 'evalPoints'>, V: number): void {
    const series: LossSeries[] = [{ key: 'train', label: 'each training batch', colour: '#9aa3b5', width: 1.2, points: run.trainLoss }];
    if (task === 'induction') {
      series.push({ key: 'first', label: 'first copy (random, unpredictable)', colour: '#b35806', points: run.evalPoints.map((p) => [p.step, p.first!]) });
      series.push({ key: 'repeat', label: 'repeated half', colour: '#1f4e89', width: 2.5, points: run.evalPoints.map((p) => [p.step, p.repeat!]) });
    } else {
      series.push({ key: 'held', label: 'held-out windows', colour: '#1f4e89', width: 2.5, points: run.evalPoints.map((p) => [p.step, p.loss]) });
    }
    // (The text task's V is known once its text is tokenized: no guide before.)
    this.chart.update(series, V > 1 ? [{ y: Math.log(V), label: `guessing: ln ${V} = ${fmt(Math.log(V), 2)}` }] : []);
    clear(this.legend);
    for (const s of series) {
      const sw = el('span', { class: 'learn-swatch' });
      sw.style.setProperty('--swatch', s.colour); // CSSOM, not a style attribute: the page's CSP forbids inline styles
      this.legend.appendChild(el('li', {}, sw, s.label));
    }
  }
}
