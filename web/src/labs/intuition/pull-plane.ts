// The 2-D fruit/tech plane of the words-pulling-words article in SVG: words as draggable points (pointer, or arrow keys when a point
// has focus), the chosen word's pull towards every word drawn as a line whose width is the attention weight,
// and its updated vector drawn as a ring with an arrow from the old position. The plane only draws: all
// positions and weights come from the caller (the engine).
import { drag, scaleLinear, select, type Selection } from 'd3';
import 'd3-transition';
import { el, reducedMotion } from '../../ui/dom';
import { fmt, fmtProb } from '../../ui/format';
import { placeLabels } from '../../ui/label-layout';
import { keepTextSize } from '../../ui/text-scale';

export interface PlaneSpec {
  words: string[];
  /** n × 2 positions, row-major. */
  points: ArrayLike<number>;
  /** Where each point was before the last "apply attention" (animated from there), if it just moved. */
  from?: ArrayLike<number>;
  chosen: number;
  /** The chosen word's attention weights over every word. */
  weights: ArrayLike<number>;
  /** The chosen word's updated vector (the weighted average). */
  updated: [number, number];
  onMove(i: number, x: number, y: number): void;
  onChoose(i: number): void;
}

const W = 460;
const H = 400;
const PAD = 44;
export const DOMAIN: [number, number] = [-1.5, 3];

export class PullPlane {
  readonly root: HTMLElement;
  private svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private x = scaleLinear().domain(DOMAIN).range([PAD, W - 12]);
  private y = scaleLinear().domain(DOMAIN).range([H - PAD, 12]);
  private spec: PlaneSpec | undefined;

  constructor() {
    this.root = el('div', { class: 'pull-plane' });
    this.svg = select(this.root).append('svg').attr('viewBox', `0 0 ${W} ${H}`).attr('class', 'plane-svg').attr('data-plane', 'pull');
    const { x, y } = this;
    const defs = this.svg.append('defs');
    defs.append('marker').attr('id', 'pull-arrow').attr('viewBox', '0 0 10 10').attr('refX', 9).attr('refY', 5)
      .attr('markerWidth', 7).attr('markerHeight', 7).attr('orient', 'auto-start-reverse')
      .append('path').attr('d', 'M0,0 L10,5 L0,10 z').attr('fill', '#b35806');
    const grid = this.svg.append('g').attr('class', 'plane-grid').attr('aria-hidden', 'true');
    for (let t = Math.ceil(DOMAIN[0]); t <= DOMAIN[1]; t++) {
      grid.append('line').attr('x1', x(t)).attr('x2', x(t)).attr('y1', y(DOMAIN[0])).attr('y2', y(DOMAIN[1])).attr('class', t === 0 ? 'axis' : 'gridline');
      grid.append('line').attr('y1', y(t)).attr('y2', y(t)).attr('x1', x(DOMAIN[0])).attr('x2', x(DOMAIN[1])).attr('class', t === 0 ? 'axis' : 'gridline');
      grid.append('text').attr('x', x(t)).attr('y', H - PAD + 16).attr('text-anchor', 'middle').attr('class', 'tick').text(t);
      grid.append('text').attr('x', PAD - 8).attr('y', y(t)).attr('text-anchor', 'end').attr('dominant-baseline', 'central').attr('class', 'tick').text(t);
    }
    grid.append('text').attr('x', W - 12).attr('y', H - 6).attr('text-anchor', 'end').attr('class', 'axis-title').text('fruitiness →');
    grid.append('text').attr('transform', `translate(14,12) rotate(-90)`).attr('text-anchor', 'end').attr('class', 'axis-title').text('techiness →');
    this.svg.append('g').attr('class', 'pulls');
    this.svg.append('g').attr('class', 'update');
    this.svg.append('g').attr('class', 'points');
    // The axes' text keeps its size on a phone (ticks 11 px, titles 12 px: styles/labs.css), not 8 px at 390 px.
    keepTextSize(this.svg.node()!, this.root, W);
  }

  update(spec: PlaneSpec): void {
    this.spec = spec;
    const { x, y } = this;
    const P = (i: number): [number, number] => [spec.points[2 * i], spec.points[2 * i + 1]];
    const n = spec.words.length;
    const c = P(spec.chosen);
    const idx = Array.from({ length: n }, (_, i) => i);
    const animate = !!spec.from && !reducedMotion();

    // Pull lines: width ∝ weight, so the words that pull hardest stand out.
    this.svg.select('g.pulls').selectAll<SVGLineElement, number>('line').data(idx.filter((i) => i !== spec.chosen)).join('line')
      .attr('x1', x(c[0])).attr('y1', y(c[1]))
      .attr('x2', (i) => x(P(i)[0])).attr('y2', (i) => y(P(i)[1]))
      .attr('stroke-width', (i) => Math.max(0.5, 16 * spec.weights[i]))
      .attr('data-weight', (i) => String(spec.weights[i]));

    // Old → new for the chosen word.
    const u = spec.updated;
    const ug = this.svg.select('g.update');
    ug.selectAll('*').remove();
    ug.append('line').attr('class', 'update-arrow').attr('x1', x(c[0])).attr('y1', y(c[1])).attr('x2', x(u[0])).attr('y2', y(u[1]))
      .attr('marker-end', 'url(#pull-arrow)');
    ug.append('circle').attr('class', 'updated-point').attr('r', 9).attr('cx', x(u[0])).attr('cy', y(u[1]));
    // Labels placed so that none covers another or a point: the words first, then the updated vector's.
    const layout = placeLabels([
      ...idx.map((i) => ({ x: x(P(i)[0]), y: y(P(i)[1]), text: spec.words[i] })),
      { x: x(u[0]), y: y(u[1]), text: `new ${spec.words[spec.chosen]}` },
    ], { fontSize: 13, pointRadius: 9, bounds: { x0: PAD - 4, y0: 2, x1: W - 2, y1: H - PAD + 4 } });
    const ul = layout[n];
    if (ul.leader) ug.append('line').attr('class', 'label-leader').attr('x1', x(u[0])).attr('y1', y(u[1])).attr('x2', x(u[0]) + ul.lx).attr('y2', y(u[1]) + ul.ly);
    ug.append('text').attr('class', 'updated-label').attr('x', x(u[0]) + ul.dx).attr('y', y(u[1]) + ul.dy).attr('text-anchor', ul.anchor)
      .text(`new ${spec.words[spec.chosen]}`);

    const pts = this.svg.select('g.points').selectAll<SVGGElement, number>('g.point').data(idx).join((enter) => {
      const g = enter.append('g').attr('class', 'point').attr('tabindex', 0).attr('role', 'button');
      g.append('line').attr('class', 'label-leader');
      g.append('circle').attr('r', 8);
      g.append('text');
      g.on('keydown', (e: KeyboardEvent, i) => this.onKey(e, i));
      g.on('click', (_, i) => this.spec?.onChoose(i));
      g.call(drag<SVGGElement, number>()
        .on('drag', (e: { x: number; y: number }, i) => {
          const clampD = (v: number) => Math.max(DOMAIN[0], Math.min(DOMAIN[1], Math.round(v * 100) / 100));
          this.spec?.onMove(i, clampD(this.x.invert(e.x)), clampD(this.y.invert(e.y)));
        }));
      return g;
    });
    pts.classed('chosen', (i) => i === spec.chosen)
      .attr('data-word', (i) => spec.words[i])
      .attr('aria-pressed', (i) => String(i === spec.chosen))
      .attr('aria-label', (i) => `${spec.words[i]} at fruitiness ${fmt(P(i)[0], 2)}, techiness ${fmt(P(i)[1], 2)}${i === spec.chosen ? ', the word being pulled' : `, pulls with weight ${fmtProb(spec.weights[i])}`}. Arrow keys move it; Enter makes it the pulled word.`);
    pts.select('text').text((i) => spec.words[i])
      .attr('x', (i) => layout[i].dx).attr('y', (i) => layout[i].dy).attr('text-anchor', (i) => layout[i].anchor);
    pts.select('line.label-leader').attr('display', (i) => (layout[i].leader ? null : 'none'))
      .attr('x1', 0).attr('y1', 0).attr('x2', (i) => layout[i].lx).attr('y2', (i) => layout[i].ly);
    const at = (i: number, src: ArrayLike<number>) => `translate(${x(src[2 * i])},${y(src[2 * i + 1])})`;
    if (animate && spec.from) {
      pts.interrupt().attr('transform', (i) => at(i, spec.from!)).transition().duration(900).attr('transform', (i) => at(i, spec.points));
      this.svg.selectAll('g.pulls, g.update').attr('opacity', 0).transition().delay(900).duration(300).attr('opacity', 1);
    } else {
      pts.interrupt().attr('transform', (i) => at(i, spec.points));
      this.svg.selectAll('g.pulls, g.update').interrupt().attr('opacity', 1);
    }
  }

  /** Plays the chosen word's move from its position to its updated vector (a jump with reduced motion). */
  playMove(): void {
    const spec = this.spec;
    if (!spec) return;
    const { x, y } = this;
    const c: [number, number] = [spec.points[2 * spec.chosen], spec.points[2 * spec.chosen + 1]];
    const ghost = this.svg.select('g.update').append('circle').attr('class', 'moving-point').attr('r', 8)
      .attr('cx', x(c[0])).attr('cy', y(c[1]));
    if (reducedMotion()) {
      ghost.attr('cx', x(spec.updated[0])).attr('cy', y(spec.updated[1]));
      return;
    }
    ghost.transition().duration(1100).attr('cx', x(spec.updated[0])).attr('cy', y(spec.updated[1])).transition().delay(600).remove();
  }

  private onKey(e: KeyboardEvent, i: number): void {
    const spec = this.spec;
    if (!spec) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      spec.onChoose(i);
      return;
    }
    const step = e.shiftKey ? 0.5 : 0.1;
    const d: Record<string, [number, number]> = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    const m = d[e.key];
    if (!m) return;
    e.preventDefault();
    const clampD = (v: number) => Math.max(DOMAIN[0], Math.min(DOMAIN[1], Math.round(v * 100) / 100));
    spec.onMove(i, clampD(spec.points[2 * i] + m[0]), clampD(spec.points[2 * i + 1] + m[1]));
  }
}
