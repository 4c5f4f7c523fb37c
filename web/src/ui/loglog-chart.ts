// A log-log line chart in SVG, styled by styles/cost.css (the cost lab is its one user). It is redrawn at the
// container's width (ResizeObserver, as in ui/bars.ts) with a matching viewBox, so text keeps its size on a
// 390 px phone and the SVG still scales if the width changes.
import { el, reducedMotion } from './dom';
import { axisBottom, axisLeft, line, scaleLog, select, type Selection } from 'd3';

export interface Series {
  key: string;
  label: string;
  colour: string;
  points: { x: number; y: number }[];
  dashed?: boolean;
  markers?: boolean;
}

export interface ChartSpec {
  series: Series[];
  x: [number, number];
  y: [number, number];
  xTicks: number[];
  yTicks: number[];
  xFormat: (v: number) => string;
  yFormat: (v: number) => string;
  guides?: { x: number; label: string }[];
  label: string;
}

export class LogLogChart {
  readonly root: HTMLElement;
  private svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private width = 0;
  private spec?: ChartSpec;
  private drawn = new Set<string>();

  constructor(name: string, private xLabel: string, private yLabel: string) {
    this.root = el('div', { class: 'cost-chart' });
    this.svg = select(this.root).append('svg').attr('class', 'cost-chart-svg').attr('role', 'img').attr('data-chart', name);
    new ResizeObserver((entries) => {
      const w = Math.round(entries[0]?.contentRect.width ?? 0);
      if (w && Math.abs(w - this.width) > 4) {
        this.width = w;
        if (this.spec) this.draw(this.spec);
      }
    }).observe(this.root);
  }

  update(spec: ChartSpec): void {
    this.spec = spec;
    this.draw(spec);
  }

  private draw(spec: ChartSpec): void {
    const W = Math.max(280, this.width || 520);
    const narrow = W < 420;
    const H = narrow ? 220 : 250;
    // Room on the left for the longest tick label (11 px text, ≈ 6.5 px a character) and the rotated title.
    const labelW = Math.max(...spec.yTicks.map((t) => spec.yFormat(t).length)) * 6.5;
    const pad = { l: Math.round(labelW + 32), r: 14, t: 12, b: 42 };
    const x = scaleLog().domain(spec.x).range([pad.l, W - pad.r]).clamp(true);
    const y = scaleLog().domain(spec.y).range([H - pad.b, pad.t]).clamp(true);
    const svg = this.svg.attr('viewBox', `0 0 ${W} ${H}`).attr('aria-label', spec.label);
    svg.selectAll('*').remove();
    // Thin the x ticks on a phone so the labels do not collide.
    const xTicks = narrow && spec.xTicks.length > 5 ? spec.xTicks.filter((_, i) => i % 2 === 0) : spec.xTicks;
    svg.append('g').attr('class', 'cost-grid').selectAll('line').data(spec.yTicks).join('line')
      .attr('x1', pad.l).attr('x2', W - pad.r).attr('y1', (t) => y(t)).attr('y2', (t) => y(t));
    svg.append('g').attr('class', 'cost-axis').attr('transform', `translate(0,${H - pad.b})`)
      .call(axisBottom(x).tickValues(xTicks).tickFormat((t) => spec.xFormat(Number(t))).tickSizeOuter(0));
    svg.append('g').attr('class', 'cost-axis').attr('transform', `translate(${pad.l},0)`)
      .call(axisLeft(y).tickValues(spec.yTicks).tickFormat((t) => spec.yFormat(Number(t))).tickSizeOuter(0));
    svg.append('text').attr('class', 'cost-axis-label').attr('x', (pad.l + W - pad.r) / 2).attr('y', H - 6)
      .attr('text-anchor', 'middle').text(this.xLabel);
    svg.append('text').attr('class', 'cost-axis-label').attr('transform', `translate(13,${(pad.t + H - pad.b) / 2}) rotate(-90)`)
      .attr('text-anchor', 'middle').text(this.yLabel);
    for (const g of spec.guides ?? []) {
      if (g.x < spec.x[0] || g.x > spec.x[1]) continue;
      svg.append('line').attr('class', 'cost-guide').attr('x1', x(g.x)).attr('x2', x(g.x)).attr('y1', pad.t).attr('y2', H - pad.b);
      svg.append('text').attr('class', 'cost-guide-label').attr('x', x(g.x) + 4).attr('y', pad.t + 12).text(g.label);
    }
    const path = line<{ x: number; y: number }>().x((p) => x(p.x)).y((p) => y(p.y));
    const animate = !reducedMotion();
    const seen = new Set<string>();
    for (const s of spec.series) {
      if (s.points.length > 1) {
        svg.append('path').attr('class', 'cost-line').attr('d', path(s.points)).attr('stroke', s.colour)
          .attr('stroke-dasharray', s.dashed ? '6 4' : null).attr('data-series', s.key);
      }
      if (!s.markers) continue;
      for (const p of s.points) {
        const id = `${s.key}:${p.x}`;
        seen.add(id);
        const c = svg.append('circle').attr('class', 'cost-point').attr('cx', x(p.x)).attr('cy', y(p.y)).attr('r', 4.5)
          .attr('fill', s.colour).attr('data-path', s.key).attr('data-n', p.x);
        // A short pop for points that just arrived; none at all with prefers-reduced-motion.
        if (animate && !this.drawn.has(id)) c.classed('is-new', true);
        c.append('title').text(`${s.label}, n = ${p.x}: ${spec.yFormat(p.y)}`);
      }
    }
    this.drawn = seen;
  }
}

/** Powers of ten covering [lo, hi] (one decade at least). */
export function decades(lo: number, hi: number): { domain: [number, number]; ticks: number[] } {
  const a = Math.floor(Math.log10(lo));
  const b = Math.max(a + 1, Math.ceil(Math.log10(hi)));
  return { domain: [10 ** a, 10 ** b], ticks: Array.from({ length: b - a + 1 }, (_, i) => 10 ** (a + i)) };
}

/** A legend entry: a line swatch (dashed, with a point marker) in the chart's colour. */
export function legendItem(colour: string, label: string, opts: { dashed?: boolean; marker?: boolean } = {}): HTMLElement {
  const sw = el('span', { class: `cost-swatch${opts.dashed ? ' dashed' : ''}${opts.marker ? ' marker' : ''}`, 'aria-hidden': 'true' });
  sw.style.setProperty('--swatch', colour); // CSSOM, allowed by the CSP (no inline style attribute parsing)
  return el('li', {}, sw, label);
}
