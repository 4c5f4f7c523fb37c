// A small 2-D plane for transformed spaces (the words-pulling-words article): the words at their transformed positions, the grid and
// the unit basis vectors e₁, e₂ carried by the matrix (x ↦ x·W, rows as in X·W), so the reader sees the
// space itself bend. It only draws what it is given; the positions come from the engine.
import { scaleLinear, select, type Selection } from 'd3';
import { el } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { placeLabels } from '../../ui/label-layout';

export interface SpaceSpec {
  title: string;
  words: string[];
  /** n × 2 transformed positions (row-major). */
  points: ArrayLike<number>;
  /** The 2 × 2 matrix (row-major): its rows are the images of e₁ and e₂. */
  w: ArrayLike<number>;
  colour: string;
  /** Half the side of the drawn square, in plane units: the lab passes one for all its planes, fitting every point. */
  limit: number;
}

const S = 260;

/** A half-side that fits every point and basis tip with room for its label: at least 3, in steps of 0.5. */
export function planeLimit(...coords: ArrayLike<number>[]): number {
  let m = 0;
  for (const c of coords) for (let i = 0; i < c.length; i++) if (Number.isFinite(c[i])) m = Math.max(m, Math.abs(c[i]));
  return Math.max(3, Math.ceil(m * 1.2 * 2) / 2);
}

export class SpacePlane {
  readonly root: HTMLElement;
  private svg: Selection<SVGSVGElement, unknown, null, undefined>;

  constructor(name: string) {
    this.root = el('figure', { class: 'space-plane' });
    this.svg = select(this.root).append('svg').attr('viewBox', `0 0 ${S} ${S}`).attr('class', 'space-svg').attr('role', 'img').attr('data-space', name);
    const id = `arrow-${name}`;
    this.svg.append('defs').append('marker').attr('id', id).attr('viewBox', '0 0 10 10').attr('refX', 9).attr('refY', 5)
      .attr('markerWidth', 6).attr('markerHeight', 6).attr('orient', 'auto-start-reverse')
      .append('path').attr('d', 'M0,0 L10,5 L0,10 z').attr('fill', 'context-stroke');
    this.root.appendChild(el('figcaption'));
  }

  update(spec: SpaceSpec): void {
    const LIM = spec.limit;
    const s = scaleLinear().domain([-LIM, LIM]).range([8, S - 8]);
    const sy = scaleLinear().domain([-LIM, LIM]).range([S - 8, 8]);
    const svg = this.svg;
    svg.selectAll('g').remove();
    const [a, b, c, d] = Array.from(spec.w);
    // Grid lines of the original plane, carried by the matrix: x = t maps to t·(a, b) + u·(c, d).
    const grid = svg.append('g').attr('class', 'space-grid').attr('aria-hidden', 'true');
    for (let t = -3; t <= 3; t++) {
      const line = (p: [number, number], q: [number, number], cls: string) => grid.append('line').attr('class', cls)
        .attr('x1', s(p[0])).attr('y1', sy(p[1])).attr('x2', s(q[0])).attr('y2', sy(q[1]));
      const map = (x: number, y: number): [number, number] => [x * a + y * c, x * b + y * d];
      line(map(t, -3), map(t, 3), t === 0 ? 'axis' : 'gridline');
      line(map(-3, t), map(3, t), t === 0 ? 'axis' : 'gridline');
    }
    const basis = svg.append('g').attr('class', 'space-basis');
    const arrow = `url(#arrow-${svg.attr('data-space')})`;
    basis.append('line').attr('class', 'e1').attr('x1', s(0)).attr('y1', sy(0)).attr('x2', s(a)).attr('y2', sy(b)).attr('marker-end', arrow);
    basis.append('line').attr('class', 'e2').attr('x1', s(0)).attr('y1', sy(0)).attr('x2', s(c)).attr('y2', sy(d)).attr('marker-end', arrow);
    const pts = svg.append('g').attr('class', 'space-points');
    const at = (i: number): [number, number] => [s(Math.max(-LIM, Math.min(LIM, spec.points[2 * i]))), sy(Math.max(-LIM, Math.min(LIM, spec.points[2 * i + 1])))];
    // Labels where they cover no other label or point and stay inside the square: the basis vectors' first.
    const tips: [number, number][] = [[s(a), sy(b)], [s(c), sy(d)]];
    const layout = placeLabels([
      ...tips.map(([x, y], k) => ({ x, y, text: k ? 'e₂' : 'e₁' })),
      ...spec.words.map((w, i) => ({ x: at(i)[0], y: at(i)[1], text: w })),
    ], { fontSize: 12, pointRadius: 5, bounds: { x0: 2, y0: 2, x1: S - 2, y1: S - 2 } });
    tips.forEach(([x, y], k) => basis.append('text').attr('x', x + layout[k].dx).attr('y', y + layout[k].dy)
      .attr('text-anchor', layout[k].anchor).text(k ? 'e₂' : 'e₁'));
    spec.words.forEach((w, i) => {
      const [px, py] = at(i);
      const g = pts.append('g').attr('transform', `translate(${px},${py})`);
      const l = layout[i + 2];
      if (l.leader) g.append('line').attr('class', 'label-leader').attr('x2', l.lx).attr('y2', l.ly);
      g.append('circle').attr('r', 5).attr('fill', spec.colour);
      g.append('text').attr('x', l.dx).attr('y', l.dy).attr('text-anchor', l.anchor).text(w);
    });
    const where = spec.words.map((w, i) => `${w} (${fmt(spec.points[2 * i], 2)}, ${fmt(spec.points[2 * i + 1], 2)})`).join(', ');
    svg.attr('aria-label', `${spec.title}: e₁ goes to (${fmt(a, 2)}, ${fmt(b, 2)}), e₂ to (${fmt(c, 2)}, ${fmt(d, 2)}); ${where}.`);
    this.root.querySelector('figcaption')!.textContent = spec.title;
  }
}
