// An attention-weights heatmap in SVG (D3): rows are queries, columns are keys, like the Houston grid of “Self-attention”.
// It is the picture; the <table> next to it (MatrixTable) holds the same numbers for keyboards, screen
// readers and copy-paste, so the SVG itself is one labelled image. Cells are updated in place on each edit
// and only rebuilt when the shape or the labels change.
import { select, type Selection } from 'd3';
import { el } from './dom';
import { fmt } from './format';
import { makeScale, type Palette } from './palette';
import { heatmapExportBar, type ExportBar } from './export';

export interface HeatmapSpec {
  name: string;
  label: string;
  n: number;
  m: number;
  values: ArrayLike<number>;
  rowLabels: string[];
  colLabels: string[];
  /** Cells that were masked (−∞ logits); drawn hatched. */
  masked?: ArrayLike<boolean>;
  highlightRow?: number;
  onSelectRow?: (r: number) => void;
  /** Largest cell side in px. */
  maxCell?: number;
  /** 'seq' (weights in [0, 1], the default) or 'div' (signed values such as A − Aᵀ, symmetric around 0). */
  palette?: Palette;
}

interface Cell { i: number; j: number }

export class Heatmap {
  readonly root: HTMLElement;
  private shapeKey = '';
  private cell = 0;
  private svg: Selection<SVGSVGElement, unknown, null, undefined> | undefined;
  private spec: HeatmapSpec;
  private exportBar: ExportBar;

  constructor(spec: HeatmapSpec) {
    this.root = el('div', { class: 'heatmap' });
    this.spec = spec;
    // PNG / SVG download buttons above the picture; the SVG is appended after them (and rebuilt in place).
    this.exportBar = heatmapExportBar(() => this.svg?.node() ?? undefined, () => this.spec.name, () => this.spec.label);
    this.root.appendChild(this.exportBar.root);
    this.update(spec);
  }

  update(spec: HeatmapSpec): void {
    this.spec = spec;
    const key = [spec.n, spec.m, spec.maxCell, spec.rowLabels.join('\u0001'), spec.colLabels.join('\u0001')].join('|');
    if (key !== this.shapeKey) this.build(spec);
    this.shapeKey = key;
    this.fill(spec);
    this.exportBar.refresh();
  }

  private build(spec: HeatmapSpec): void {
    const { n, m } = spec;
    const longest = Math.max(1, ...spec.rowLabels.map((s) => s.length), ...spec.colLabels.map((s) => s.length));
    const labelW = Math.min(120, 10 + longest * 7);
    const cell = Math.max(12, Math.min(spec.maxCell ?? 46, Math.floor(520 / Math.max(n, m, 1))));
    this.cell = cell;
    // The last column's label, rotated by -55°, reaches cos(55°) ≈ 0.58 of its length past its cell's centre.
    const width = labelW + m * cell + 4 + Math.max(0, Math.ceil(labelW * 0.58 - cell / 2));
    const height = labelW + n * cell + 4;

    select(this.root).selectAll('svg').remove();
    const svg = select(this.root).append('svg')
      .attr('viewBox', `0 0 ${width} ${height}`)
      .attr('width', width)
      .attr('height', height)
      .attr('class', 'heatmap-svg')
      .attr('role', 'img')
      .attr('data-heatmap', spec.name);
    this.svg = svg;

    const hatchId = `hatch-${spec.name}`;
    svg.append('defs').append('pattern').attr('id', hatchId).attr('width', 6).attr('height', 6)
      .attr('patternUnits', 'userSpaceOnUse').attr('patternTransform', 'rotate(45)')
      .call((p) => {
        p.append('rect').attr('width', 6).attr('height', 6).attr('fill', '#e9e9ee');
        p.append('line').attr('x1', 0).attr('y1', 0).attr('x2', 0).attr('y2', 6).attr('stroke', '#9a9aa8').attr('stroke-width', 2);
      });

    // Column labels, rotated to fit long words.
    svg.append('g').attr('class', 'col-labels').selectAll('text').data(spec.colLabels).join('text')
      .attr('transform', (_, j) => `translate(${labelW + j * cell + cell / 2 + 4},${labelW - 6}) rotate(-55)`)
      .text((d) => d);
    svg.append('g').attr('class', 'row-labels').selectAll('text').data(spec.rowLabels).join('text')
      .attr('x', labelW - 6).attr('y', (_, i) => labelW + i * cell + cell / 2)
      .attr('text-anchor', 'end').attr('dominant-baseline', 'central')
      .text((d) => d);

    const cells: Cell[] = [];
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) cells.push({ i, j });
    const g = svg.append('g').attr('class', 'cells').attr('transform', `translate(${labelW},${labelW})`);
    const cg = g.selectAll('g.cell').data(cells).join('g').attr('class', 'cell')
      .attr('transform', (d) => `translate(${d.j * cell},${d.i * cell})`);
    cg.append('rect').attr('width', cell - 1).attr('height', cell - 1);
    cg.append('title');
    if (cell >= 30) {
      cg.append('text').attr('x', (cell - 1) / 2).attr('y', (cell - 1) / 2)
        .attr('text-anchor', 'middle').attr('dominant-baseline', 'central');
    }
    g.append('rect').attr('class', 'row-outline').attr('x', -1).attr('width', m * cell + 1).attr('height', cell + 1);
    // Clicking a cell selects its row (the query); the handler reads the current spec. The tooltip text
    // is written on hover rather than for every cell on every edit.
    cg.style('cursor', 'pointer')
      .on('click', (_, d) => this.spec.onSelectRow?.(d.i))
      .on('mouseenter', (event: MouseEvent, d) => {
        const s = this.spec;
        const v = s.values[d.i * s.m + d.j];
        const masked = !!s.masked?.[d.i * s.m + d.j];
        select(event.currentTarget as SVGGElement).select('title')
          .text(`${s.rowLabels[d.i]} → ${s.colLabels[d.j]}: ${masked ? 'masked, weight 0' : fmt(v, 4)}`);
      });
  }

  private fill(spec: HeatmapSpec): void {
    const svg = this.svg;
    if (!svg) return;
    const div = spec.palette === 'div';
    const scale = div ? makeScale('div', spec.values) : makeScale('seq', spec.values, 1);
    const hatch = `url(#hatch-${spec.name})`;
    const { m } = spec;
    const value = (d: Cell) => spec.values[d.i * m + d.j];
    const masked = (d: Cell) => !!spec.masked?.[d.i * m + d.j];
    const cg = svg.selectAll<SVGGElement, Cell>('g.cell');
    cg.select('rect').attr('fill', (d) => (masked(d) ? hatch : scale.colour(value(d))));
    cg.select<SVGTextElement>('text')
      .attr('fill', (d) => scale.ink(value(d)))
      .text((d) => {
        if (masked(d)) return '';
        const v = value(d);
        if (div) return Math.abs(v) < 0.005 ? '0' : v.toFixed(2).replace(/^(-?)0\./, '$1.');
        return v < 0.005 ? '≈0' : v >= 0.995 ? '1' : v.toFixed(2).replace(/^0\./, '.');
      });
    svg.attr('aria-label', `${spec.label}: ${spec.n} × ${spec.m} heatmap; the table of the same numbers follows.`);
    svg.selectAll('.row-labels text').classed('selected', (_, i) => i === spec.highlightRow);
    const hr = spec.highlightRow;
    svg.select('rect.row-outline')
      .attr('display', hr !== undefined && hr < spec.n ? null : 'none')
      .attr('y', (hr ?? 0) * this.cell - 1);
  }
}
