// Where to put each point's label in a small 2-D plot so that no two labels overlap, no label covers another
// point and none leaves the plot ("i" under "and", "bride" under "wedding" otherwise). Greedy: labels are placed in
// order, each at the first of its candidate spots (beside the point, then ever farther out) that collides with
// nothing placed so far; a label pushed away from its point gets a leader line back to it.

export interface LabelPoint {
  /** Point position in SVG units. */
  x: number;
  y: number;
  text: string;
}

export interface LabelPlacement {
  /** Text anchor position relative to the point (baseline), and its anchor. */
  dx: number;
  dy: number;
  anchor: 'start' | 'end' | 'middle';
  /** True when the label sits away from its point: draw a leader line from the point to (lx, ly). */
  leader: boolean;
  lx: number;
  ly: number;
}

export interface LabelOptions {
  /** Font size in SVG units (text width is estimated at 0.6 em per character, its height at 1.2 em). */
  fontSize: number;
  /** Radius around each point that labels keep clear of. */
  pointRadius: number;
  /** The plot area labels must stay inside. */
  bounds: { x0: number; y0: number; x1: number; y1: number };
}

interface Box { x0: number; y0: number; x1: number; y1: number }

const overlap = (a: Box, b: Box) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));

export function placeLabels(points: LabelPoint[], opts: LabelOptions): LabelPlacement[] {
  const { fontSize: fs, pointRadius: r, bounds } = opts;
  const placed: Box[] = [];
  const dots: Box[] = points.map((p) => ({ x0: p.x - r, y0: p.y - r, x1: p.x + r, y1: p.y + r }));
  const gap = r + 3;
  return points.map((p, i) => {
    const w = Math.max(1, p.text.length) * fs * 0.6, h = fs * 1.2;
    // Candidates: right, left, above, below the point at growing distances, then diagonals.
    const candidates: { dx: number; dy: number; anchor: LabelPlacement['anchor']; dist: number }[] = [];
    for (let ring = 0; ring < 6; ring++) {
      const d = gap + ring * h;
      candidates.push(
        { dx: d, dy: -d * 0.5 + fs * 0.35, anchor: 'start', dist: ring },
        { dx: d, dy: d * 0.5 + fs * 0.35, anchor: 'start', dist: ring },
        { dx: -d, dy: -d * 0.5 + fs * 0.35, anchor: 'end', dist: ring },
        { dx: -d, dy: d * 0.5 + fs * 0.35, anchor: 'end', dist: ring },
        { dx: 0, dy: -d, anchor: 'middle', dist: ring },
        { dx: 0, dy: d + fs * 0.8, anchor: 'middle', dist: ring },
      );
    }
    const boxOf = (c: (typeof candidates)[number]): Box => {
      const x = p.x + c.dx, base = p.y + c.dy;
      const x0 = c.anchor === 'start' ? x : c.anchor === 'end' ? x - w : x - w / 2;
      return { x0, y0: base - fs * 0.9, x1: x0 + w, y1: base - fs * 0.9 + h };
    };
    let best = candidates[0], bestCost = Infinity;
    for (const c of candidates) {
      const b = boxOf(c);
      const out = Math.max(0, bounds.x0 - b.x0) + Math.max(0, b.x1 - bounds.x1) + Math.max(0, bounds.y0 - b.y0) + Math.max(0, b.y1 - bounds.y1);
      let cost = out * 1000;
      for (const q of placed) cost += overlap(b, q) * 10;
      dots.forEach((d, k) => { if (k !== i) cost += overlap(b, d) * 4; });
      cost += c.dist * 0.5; // prefer near spots when all are equally free
      if (cost < bestCost) { best = c; bestCost = cost; }
      if (cost === 0) break;
    }
    const b = boxOf(best);
    placed.push(b);
    const leader = best.dist > 0;
    // The leader line ends at the label box's edge nearest the point.
    const lx = Math.max(b.x0, Math.min(b.x1, p.x)) - p.x, ly = Math.max(b.y0, Math.min(b.y1, p.y)) - p.y;
    return { dx: best.dx, dy: best.dy, anchor: best.anchor, leader, lx, ly };
  });
}
