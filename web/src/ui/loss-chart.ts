// A loss-against-step line chart in SVG (D3), redrawn at the container's width. Several series (the training loss of
// each step, held-out losses) and horizontal guides (the loss of guessing uniformly, ln V).
import { axisBottom, axisLeft, line, scaleLinear, select, type Selection } from 'd3';
import { el } from './dom';

export interface LossSeries { key: string; label: string; colour: string; points: [number, number][]; width?: number; dashed?: boolean }
export interface LossGuide { y: number; label: string }

export class LossChart {
  readonly root: HTMLElement;
  private svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private width = 0;
  private last?: { series: LossSeries[]; guides: LossGuide[] };

  constructor(name: string, label: string, private xLabel = 'training step') {
    this.root = el('div', { class: 'loss-chart' });
    this.svg = select(this.root).append('svg').attr('class', 'loss-chart-svg').attr('role', 'img').attr('aria-label', label).attr('data-chart', name);
    new ResizeObserver((entries) => {
      const w = Math.round(entries[0]?.contentRect.width ?? 0);
      if (w && Math.abs(w - this.width) > 4) {
        this.width = w;
        if (this.last) this.update(this.last.series, this.last.guides);
      }
    }).observe(this.root);
  }

  update(series: LossSeries[], guides: LossGuide[]): void {
    this.last = { series, guides };
    const W = Math.max(280, this.width || 560), H = W < 420 ? 200 : 230;
    const pad = { l: 44, r: 12, t: 10, b: 36 };
    let maxX = 10, maxY = 0.5;
    for (const s of series) for (const [x, y] of s.points) { if (x > maxX) maxX = x; if (Number.isFinite(y) && y > maxY) maxY = y; }
    for (const g of guides) maxY = Math.max(maxY, g.y * 1.08);
    const x = scaleLinear().domain([0, maxX]).range([pad.l, W - pad.r]).nice();
    const y = scaleLinear().domain([0, maxY]).range([H - pad.b, pad.t]).nice();
    const svg = this.svg.attr('viewBox', `0 0 ${W} ${H}`).attr('width', W).attr('height', H);
    svg.selectAll('*').remove();
    svg.append('g').attr('class', 'axis').attr('transform', `translate(0,${H - pad.b})`).call(axisBottom(x).ticks(W < 420 ? 4 : 8));
    svg.append('g').attr('class', 'axis').attr('transform', `translate(${pad.l},0)`).call(axisLeft(y).ticks(5));
    svg.append('text').attr('class', 'axis-title').attr('x', (pad.l + W - pad.r) / 2).attr('y', H - 4).attr('text-anchor', 'middle').text(this.xLabel);
    svg.append('text').attr('class', 'axis-title').attr('transform', `translate(11,${(H - pad.b) / 2}) rotate(-90)`).attr('text-anchor', 'middle').text('loss (nats)');
    for (const g of guides) {
      svg.append('line').attr('class', 'guide').attr('x1', pad.l).attr('x2', W - pad.r).attr('y1', y(g.y)).attr('y2', y(g.y));
      svg.append('text').attr('class', 'guide-label').attr('x', W - pad.r - 2).attr('y', y(g.y) + 13).attr('text-anchor', 'end').text(g.label);
    }
    const path = line<[number, number]>().defined((p) => Number.isFinite(p[1])).x((p) => x(p[0])).y((p) => y(p[1]));
    for (const s of series) {
      if (!s.points.length) continue;
      svg.append('path').attr('d', path(thin(s.points, W)) ?? '').attr('fill', 'none').attr('stroke', s.colour)
        .attr('stroke-width', s.width ?? 2).attr('stroke-dasharray', s.dashed ? '5 4' : null).attr('data-series', s.key);
    }
  }
}

/** At most ~one point per pixel: bucket means, so a long run draws in constant time. */
function thin(points: [number, number][], width: number): [number, number][] {
  const n = points.length, buckets = Math.max(50, Math.floor(width));
  if (n <= buckets) return points;
  const out: [number, number][] = [];
  const size = n / buckets;
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor(b * size), hi = Math.min(n, Math.floor((b + 1) * size));
    let sx = 0, sy = 0, c = 0;
    for (let i = lo; i < hi; i++) if (Number.isFinite(points[i][1])) { sx += points[i][0]; sy += points[i][1]; c++; }
    if (c) out.push([sx / c, sy / c]);
  }
  return out;
}
