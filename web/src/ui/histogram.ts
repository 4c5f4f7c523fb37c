// A histogram in SVG (D3) on a fixed x domain, so two histograms drawn with the same domain compare by eye.
// It is one labelled image; the figure puts its numbers in a table next to it.
import { bin, scaleLinear, select, type Selection } from 'd3';
import { el } from './dom';
import { keepTextSize } from './text-scale';

export interface HistogramSpec {
  values: ArrayLike<number>;
  domain: [number, number];
  bins: number;
  colour: string;
  label: string;
  /** Vertical guides, e.g. ±√(predicted variance). */
  guides?: { at: number; label: string }[];
}

const W = 520;
const H = 150;
const PAD = { l: 8, r: 8, t: 8, b: 22 };

export class Histogram {
  readonly root: HTMLElement;
  private svg: Selection<SVGSVGElement, unknown, null, undefined>;

  constructor(name: string) {
    this.root = el('div', { class: 'histogram' });
    this.svg = select(this.root).append('svg').attr('viewBox', `0 0 ${W} ${H}`).attr('class', 'histogram-svg')
      .attr('role', 'img').attr('data-histogram', name);
    // Its text stays 11 px on screen on a phone (styles/labs.css), not the 7 px a 390 px screen would shrink it to.
    keepTextSize(this.svg.node()!, this.root, W);
  }

  /** Draws the histogram; returns the bin counts (the same numbers the bars show). */
  update(spec: HistogramSpec): number[] {
    const x = scaleLinear().domain(spec.domain).range([PAD.l, W - PAD.r]);
    const step = (spec.domain[1] - spec.domain[0]) / spec.bins;
    const thresholds = Array.from({ length: spec.bins - 1 }, (_, i) => spec.domain[0] + (i + 1) * step);
    const bins = bin().domain(spec.domain).thresholds(thresholds)(Array.from(spec.values));
    const counts = bins.map((b) => b.length);
    const y = scaleLinear().domain([0, Math.max(1, ...counts)]).range([H - PAD.b, PAD.t]);
    const svg = this.svg;
    svg.selectAll('*').remove();
    svg.append('g').selectAll('rect').data(bins).join('rect')
      .attr('x', (b) => x(b.x0!) + 0.5).attr('width', (b) => Math.max(0.5, x(b.x1!) - x(b.x0!) - 1))
      .attr('y', (b) => y(b.length)).attr('height', (b) => y(0) - y(b.length)).attr('fill', spec.colour);
    const axis = svg.append('g').attr('class', 'hist-axis');
    axis.append('line').attr('x1', PAD.l).attr('x2', W - PAD.r).attr('y1', y(0)).attr('y2', y(0));
    for (const t of x.ticks(7)) {
      axis.append('text').attr('x', x(t)).attr('y', H - 6).attr('text-anchor', 'middle').text(String(t));
    }
    for (const g of spec.guides ?? []) {
      if (g.at < spec.domain[0] || g.at > spec.domain[1]) continue;
      svg.append('line').attr('class', 'hist-guide').attr('x1', x(g.at)).attr('x2', x(g.at)).attr('y1', PAD.t).attr('y2', y(0));
      // A guide left of the middle is labelled on its left, so two close guides (±1 on ±30) keep their labels apart.
      const left = g.at < (spec.domain[0] + spec.domain[1]) / 2;
      svg.append('text').attr('class', 'hist-guide-label').attr('x', x(g.at) + (left ? -3 : 3)).attr('y', PAD.t + 10)
        .attr('text-anchor', left ? 'end' : 'start').text(g.label);
    }
    svg.attr('aria-label', spec.label);
    return counts;
  }
}
