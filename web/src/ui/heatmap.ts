// An attention-weights heatmap in SVG (D3): rows are queries, columns are keys, like the Houston grid of “Self-attention”.
// It is the picture; the <table> next to it (MatrixTable) holds the same numbers for keyboards, screen
// readers and copy-paste, so the SVG itself is one labelled image. Cells are updated in place on each edit
// and only rebuilt when the shape or the labels change. Nothing is drawn smaller than a reader can read: the numbers
// in the cells go when the picture is shrunk below LEGIBLE_PX (a phone), labels are thinned to every k-th when
// cells are narrower than a line of text (a long text), and a readout under the picture names any cell pointed at
// or tapped, with its full labels and value.
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

/** Smallest on-screen size (px) of the numbers in the cells; below it they are left out and the readout gives them. */
export const LEGIBLE_PX = 10;
/** Font sizes of the cells' numbers and of the labels in SVG units (styles/labs.css), and a label's line pitch. */
const NUMBER_FONT = 11;
const LABEL_FONT = 12;
/** Smallest on-screen size (px) of the labels: a short word or number, read once, not a column of figures. */
export const LABEL_PX = 9;
const LABEL_PITCH = 14;
/** A column label is rotated by −55°: neighbours are cell · sin 55° apart across their baselines. */
const SIN55 = Math.sin((55 * Math.PI) / 180);

export class Heatmap {
  readonly root: HTMLElement;
  private shapeKey = '';
  private cell = 0;
  private svg: Selection<SVGSVGElement, unknown, null, undefined> | undefined;
  private spec: HeatmapSpec;
  private exportBar: ExportBar;
  /** The SVG's width in its own units (its viewBox), to tell how much the page shrinks it. */
  private width = 0;
  private rowStep = 1;
  private colStep = 1;
  private readout: HTMLElement;
  private scroll: HTMLElement;

  constructor(spec: HeatmapSpec) {
    this.root = el('div', { class: 'heatmap' });
    this.spec = spec;
    // PNG / SVG download buttons above the picture; the SVG goes between them and the readout (rebuilt in place).
    this.exportBar = heatmapExportBar(() => this.svg?.node() ?? undefined, () => this.spec.name, () => this.spec.label);
    // Not a live region: it changes as the pointer moves. Keyboards and screen readers have the table.
    this.readout = el('p', { class: 'heatmap-readout help', 'data-role': 'heatmap-readout' });
    // Its own box scrolls sideways where the page is too narrow to show the picture legibly (ui/scroll-focus.ts
    // makes it a focusable, labelled region then).
    this.scroll = el('div', { class: 'heatmap-scroll' });
    this.root.append(this.exportBar.root, this.scroll, this.readout);
    // The picture shrinks with its box (max-width: 100%): whether its numbers stay legible is known once laid out.
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => this.fitNumbers()).observe(this.root);
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
    // About 7 px a character of 12 px text, and room for the selected row's label in bold (about 8 % wider).
    const labelW = Math.min(130, 12 + longest * 7.6);
    const cell = Math.max(12, Math.min(spec.maxCell ?? 46, Math.floor(520 / Math.max(n, m, 1))));
    this.cell = cell;
    // The last column's label, rotated by -55°, reaches cos(55°) ≈ 0.58 of its length past its cell's centre.
    const width = labelW + m * cell + 4 + Math.max(0, Math.ceil(labelW * 0.58 - cell / 2));
    const height = labelW + n * cell + 4;
    this.width = width;
    // Labels closer than a line of text are thinned to every k-th, counted back from the last (the newest token in
    // a growing text keeps its label); the others are named by the readout.
    this.rowStep = Math.ceil(LABEL_PITCH / cell);
    this.colStep = Math.ceil(LABEL_PITCH / (cell * SIN55));

    select(this.scroll).selectAll('svg').remove();
    const svg = select(this.scroll).append('svg')
      .attr('viewBox', `0 0 ${width} ${height}`)
      .attr('width', width)
      .attr('height', height)
      .attr('class', 'heatmap-svg')
      .attr('role', 'img')
      .attr('data-heatmap', spec.name)
      // The picture shrinks with a narrow page only as far as its labels stay LABEL_PX; past that its box scrolls.
      .style('min-width', `${Math.min(width, Math.ceil((width * LABEL_PX) / LABEL_FONT))}px`);
    this.svg = svg;

    const hatchId = `hatch-${spec.name}`;
    svg.append('defs').append('pattern').attr('id', hatchId).attr('width', 6).attr('height', 6)
      .attr('patternUnits', 'userSpaceOnUse').attr('patternTransform', 'rotate(45)')
      .call((p) => {
        p.append('rect').attr('width', 6).attr('height', 6).attr('fill', '#e9e9ee');
        p.append('line').attr('x1', 0).attr('y1', 0).attr('x2', 0).attr('y2', 6).attr('stroke', '#9a9aa8').attr('stroke-width', 2);
      });

    // Column labels, rotated to fit long words.
    const colKept = (j: number) => (m - 1 - j) % this.colStep === 0;
    svg.append('g').attr('class', 'col-labels').selectAll('text').data(spec.colLabels).join('text')
      .attr('transform', (_, j) => `translate(${labelW + j * cell + cell / 2 + 4},${labelW - 6}) rotate(-55)`)
      .text((d, j) => (colKept(j) ? d : ''));
    svg.append('g').attr('class', 'row-labels').selectAll('text').data(spec.rowLabels).join('text')
      .attr('x', labelW - 6).attr('y', (_, i) => labelW + i * cell + cell / 2)
      .attr('text-anchor', 'end').attr('dominant-baseline', 'central');

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
    // Clicking (tapping) a cell selects its row (the query) and names the cell in the readout; the handler reads
    // the current spec. The tooltip text is written on hover rather than for every cell on every edit.
    cg.style('cursor', 'pointer')
      .on('click', (_, d) => { this.read(d); this.spec.onSelectRow?.(d.i); })
      .on('mouseenter', (event: MouseEvent, d) => {
        select(event.currentTarget as SVGGElement).select('title').text(this.read(d));
      });
  }

  /** The cell's full labels and value, shown in the readout (and returned for the tooltip). */
  private read(d: Cell): string {
    const s = this.spec;
    const v = s.values[d.i * s.m + d.j];
    const masked = !!s.masked?.[d.i * s.m + d.j];
    const text = `${s.rowLabels[d.i]} → ${s.colLabels[d.j]}: ${masked ? 'masked, weight 0' : fmt(v, 4)}`;
    this.readout.textContent = text;
    this.readout.dataset.cell = `${d.i},${d.j}`;
    return text;
  }

  /** Leaves the numbers out of the cells when the page shows them below LEGIBLE_PX; the readout says how to read them. */
  private fitNumbers(): void {
    const node = this.svg?.node();
    if (!node) return;
    const shown = node.getBoundingClientRect().width;
    if (shown === 0) return;  // not laid out (a closed disclosure, a hidden figure): decided when it is
    const hasNumbers = this.cell >= 30;
    const legible = hasNumbers && (NUMBER_FONT * shown) / this.width >= LEGIBLE_PX;
    node.dataset.numbers = legible ? 'shown' : 'hidden';
    const thinned = this.rowStep > 1 || this.colStep > 1;
    this.readout.hidden = (legible && !thinned) || this.spec.n === 0 || this.spec.m === 0;
    if (!this.readout.dataset.cell) {
      this.readout.textContent = `Point at or tap a cell to read its ${this.spec.palette === 'div' ? 'value' : 'weight'}${thinned ? ' and the labels left out' : ''}.`;
    }
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
    const hr = spec.highlightRow;
    // Row labels: every rowStep-th from the last, and the selected row's in place of its near neighbours.
    const near = (i: number) => hr !== undefined && i !== hr && Math.abs(i - hr) < this.rowStep;
    svg.selectAll<SVGTextElement, string>('.row-labels text')
      .text((d, i) => (i === hr || ((spec.n - 1 - i) % this.rowStep === 0 && !near(i)) ? d : ''))
      .classed('selected', (_, i) => i === hr);
    svg.select('rect.row-outline')
      .attr('display', hr !== undefined && hr < spec.n ? null : 'none')
      .attr('y', (hr ?? 0) * this.cell - 1);
    if (this.readout.dataset.cell) {
      const [i, j] = this.readout.dataset.cell.split(',').map(Number);
      if (i < spec.n && j < spec.m) this.read({ i, j });
      else delete this.readout.dataset.cell;
    }
    this.fitNumbers();
  }
}
