// Horizontal bar charts (D3): softmax probabilities, draggable logits, one query's attention weights.
// Bars animate only when the reader has not asked for reduced motion.
import { drag, scaleLinear, select, type Selection } from 'd3';
// selection.transition() is patched in by d3-transition as a side effect, which d3's "sideEffects": false
// lets the bundler drop; importing the module itself keeps it.
import 'd3-transition';
import { el, reducedMotion } from './dom';

export interface BarSpec {
  labels: string[];
  values: number[];
  /** Fixed domain, or undefined for a symmetric domain around 0 that fits the values. */
  domain?: [number, number];
  format: (v: number) => string;
  colour: (v: number, i: number) => string;
  label: string;
  /** Makes bars draggable along the axis (pointer), reporting the new value. */
  onDrag?: (i: number, v: number) => void;
  highlight?: number;
  /** Length of the bars' transition in ms (default 180; none under reduced motion or while dragging). */
  duration?: number;
}

const ROW = 28;

export class BarChart {
  readonly root: HTMLElement;
  private svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private dragging = false;
  private domain: [number, number] = [0, 1];
  private width = 0;

  constructor(private spec: BarSpec) {
    this.root = el('div', { class: 'bars' });
    this.svg = select(this.root).append('svg').attr('class', 'bars-svg').attr('role', 'img');
    // Draw at the container's real width so the labels keep their size on a phone.
    // The width comes from the observer, never from reading clientWidth during an update (a forced reflow).
    new ResizeObserver((entries) => {
      const w = Math.round(entries[0]?.contentRect.width ?? 0);
      if (w && Math.abs(w - this.width) > 4) {
        this.width = w;
        this.update(this.spec);
      }
    }).observe(this.root);
    this.update(spec);
  }

  update(spec: BarSpec): void {
    this.spec = spec;
    const labelW = Math.min(110, 14 + Math.max(2, ...spec.labels.map((s) => s.length)) * 7.5);
    const valueW = 78;
    const width = Math.max(260, this.width || 420);
    const plotW = width - labelW - valueW;
    const height = spec.values.length * ROW + 22;
    if (!this.dragging) this.domain = spec.domain ?? symmetricDomain(spec.values);
    const x = scaleLinear().domain(this.domain).range([labelW, labelW + plotW]).clamp(true);
    const zero = x(Math.max(this.domain[0], Math.min(this.domain[1], 0)));
    const svg = this.svg
      .attr('viewBox', `0 0 ${width} ${height}`)
      .attr('width', width)
      .attr('height', height)
      .attr('aria-label', `${spec.label}: ${spec.labels.map((l, i) => `${l} ${spec.format(spec.values[i])}`).join(', ')}`);
    const t = reducedMotion() || this.dragging ? 0 : spec.duration ?? 180;

    svg.selectAll('line.axis').data([0]).join('line').attr('class', 'axis')
      .attr('x1', zero).attr('x2', zero).attr('y1', 0).attr('y2', height - 20);
    const ticks = x.ticks(5);
    svg.selectAll<SVGTextElement, number>('text.tick').data(ticks).join('text').attr('class', 'tick')
      .attr('x', (d) => x(d)).attr('y', height - 6).attr('text-anchor', 'middle').text((d) => String(d));

    const rows = svg.selectAll<SVGGElement, number>('g.bar').data(spec.values).join((enter) => {
      const g = enter.append('g').attr('class', 'bar');
      g.append('text').attr('class', 'bar-label').attr('text-anchor', 'end').attr('dominant-baseline', 'central');
      g.append('rect').attr('class', 'bar-rect').attr('height', ROW - 8).attr('y', 4).attr('x', zero).attr('width', 0);
      g.append('text').attr('class', 'bar-value').attr('dominant-baseline', 'central');
      return g;
    });
    rows.attr('transform', (_, i) => `translate(0,${i * ROW})`).classed('highlight', (_, i) => i === spec.highlight);
    rows.select<SVGTextElement>('text.bar-label').attr('x', labelW - 8).attr('y', ROW / 2).text((_, i) => spec.labels[i]);
    rows.select<SVGRectElement>('rect.bar-rect')
      .attr('fill', (d, i) => spec.colour(d, i))
      .transition().duration(t)
      .attr('x', (d) => Math.min(zero, x(d)))
      .attr('width', (d) => Math.max(1, Math.abs(x(d) - zero)));
    rows.select<SVGTextElement>('text.bar-value').attr('x', labelW + plotW + 8).attr('y', ROW / 2)
      .text((d) => spec.format(d));

    rows.classed('draggable', !!spec.onDrag);
    if (spec.onDrag) {
      const onDrag = spec.onDrag;
      rows.call(
        drag<SVGGElement, number>()
          .on('start', () => { this.dragging = true; })
          .on('drag', (event) => {
            const idx = (event.subject as { index: number }).index;
            if (idx >= 0 && idx < this.spec.values.length) onDrag(idx, Math.round(x.invert(event.x) * 10) / 10);
          })
          .on('end', () => { this.dragging = false; this.update(this.spec); })
          .subject((event) => ({ x: event.x, y: event.y, index: Math.floor(event.y / ROW) })),
      );
    }
  }
}

function symmetricDomain(values: number[]): [number, number] {
  const m = Math.max(1, ...values.map((v) => (Number.isFinite(v) ? Math.abs(v) : 0)));
  const step = m <= 5 ? 1 : m <= 20 ? 5 : m <= 100 ? 20 : 100;
  const hi = Math.ceil((m * 1.1) / step) * step;
  return values.some((v) => v < 0) ? [-hi, hi] : [0, hi];
}
