// A matrix as an HTML <table>: the accessible, copy-pasteable form of every matrix and heatmap on the page.
// Cells are coloured with the lab's palette, carry their exact float32 value in data-value, are reachable
// with the keyboard (one tab stop per table, arrow keys inside), and can be editable number inputs.
import { el, clear, nextId } from './dom';
import { exact, fmt } from './format';
import { makeScale, type Palette } from './palette';
import { legend } from './legend';
import { markInvalid, restoreIfInvalid } from './controls';
import { matrixExportBar, type ExportBar } from './export';

export interface MatrixSpec {
  /** Stable name, exposed as data-matrix (tests and export find tables by it). */
  name: string;
  caption: string;
  rows: number;
  cols: number;
  values: ArrayLike<number>;
  rowLabels: string[];
  colLabels: string[];
  palette: Palette;
  fixedMax?: number;
  digits?: number;
  edited?: boolean[];
  onEdit?: (r: number, c: number, v: number) => void;
  /** The largest magnitude an editable cell takes (1000 unless given); a larger one is refused, and said why. */
  limit?: number;
  highlightRow?: number;
  /** Show the colour legend above the table. */
  showLegend?: boolean;
  /** Cells whose logit was masked (−∞): drawn hatched even where the value shown is a weight of 0. */
  maskedCells?: ArrayLike<boolean>;
  /** Column groups, e.g. heads in the concatenation: [label, span][]. */
  colGroups?: [string, number][];
}

const NUMBER = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?\s*$/;
const TYPING = /^\s*[+-]?(\d*\.?\d*)([eE][+-]?)?\s*$/;  // a number on its way: "", "-", "1.", "1e", "1e-"
const CELL_LIMIT = 1000;  // what an editable cell takes, either sign, unless its spec says less

export class MatrixTable {
  readonly root: HTMLElement;
  private table: HTMLTableElement;
  private legendSlot: HTMLElement;
  private spec: MatrixSpec | undefined;
  private cells: HTMLElement[] = [];
  private focusIndex = 0;
  private shapeKey = '';
  /** What each cell last showed, to skip cells whose value and colour scale did not change. */
  private shown: Float64Array = new Float64Array(0);
  private shownMax = NaN;
  private legendKey = '';
  private exportBar: ExportBar;
  /** Why a cell's text is refused, and what the table keeps meanwhile (empty while every cell holds a number). */
  private problem: HTMLElement;

  constructor(spec: MatrixSpec) {
    this.spec = spec;
    this.legendSlot = el('div', { class: 'legend-slot' });
    this.table = el('table', { class: 'matrix-table' });
    // CSV / JSON downloads of exactly the values the table holds (the spec's float32 array, not the rounded text).
    this.exportBar = matrixExportBar(() => {
      const sp = this.spec!;
      return { name: sp.name, caption: sp.caption, rows: sp.rows, cols: sp.cols, rowLabels: sp.rowLabels, colLabels: sp.colLabels, values: sp.values };
    });
    this.problem = el('p', { class: 'help warn-text cell-problem', role: 'status', id: nextId('cells') });  // (named by update)
    this.root = el('figure', { class: 'matrix' }, this.legendSlot, el('div', { class: 'table-scroll' }, this.table), this.problem, this.exportBar.root);
    this.table.addEventListener('keydown', (e) => this.onKey(e));
    this.table.addEventListener('input', (e) => this.onInput(e));
    this.table.addEventListener('focusin', (e) => this.onFocus(e));
    // Leaving a cell with a half-typed or invalid number puts the current value back. Cells are text fields, not
    // numberInputs (the arrow keys read the caret, which a number field does not expose), so the table does this.
    this.table.addEventListener('focusout', (e) => {
      const t = e.target;
      if (t instanceof HTMLInputElement && restoreIfInvalid(t, fmt(Number(t.dataset.value), this.spec?.digits ?? 3))) this.say('');
    });
    this.update(spec);
  }

  update(spec: MatrixSpec): void {
    const key = [spec.rows, spec.cols, !!spec.onEdit, spec.rowLabels.join('\u0001'), spec.colLabels.join('\u0001'),
      JSON.stringify(spec.colGroups ?? [])].join('|');
    this.spec = spec;
    this.table.dataset.matrix = spec.name;
    this.problem.dataset.matrixProblem = spec.name;
    this.table.dataset.rows = String(spec.rows);
    this.table.dataset.cols = String(spec.cols);
    if (key !== this.shapeKey) {
      this.build(spec);
      this.shown = new Float64Array(spec.rows * spec.cols).fill(NaN);
    }
    this.shapeKey = key;
    this.fill(spec);
    this.exportBar.refresh();
  }

  private build(spec: MatrixSpec): void {
    clear(this.table);
    this.table.appendChild(el('caption', { text: spec.caption }));
    const thead = el('thead');
    if (spec.colGroups) {
      const gr = el('tr', {}, el('td', { class: 'corner' }));
      for (const [label, span] of spec.colGroups) gr.appendChild(el('th', { scope: 'colgroup', colspan: span, class: 'group', text: label }));
      thead.appendChild(gr);
    }
    const hr = el('tr', {}, el('td', { class: 'corner' }));
    for (const c of spec.colLabels) hr.appendChild(el('th', { scope: 'col', text: c }));
    thead.appendChild(hr);
    const tbody = el('tbody');
    this.cells = [];
    for (let r = 0; r < spec.rows; r++) {
      const tr = el('tr', {}, el('th', { scope: 'row', text: spec.rowLabels[r] }));
      for (let c = 0; c < spec.cols; c++) {
        const td = el('td', { 'data-r': r, 'data-c': c, class: spec.onEdit ? 'editable' : undefined });
        if (spec.onEdit) {
          const input = el('input', {
            type: 'text', inputmode: 'decimal', spellcheck: 'false', autocomplete: 'off',
            'aria-label': `${spec.caption}, row ${spec.rowLabels[r]}, column ${spec.colLabels[c]}`,
            'data-r': r, 'data-c': c, tabindex: -1, 'aria-describedby': this.problem.id,
          });
          td.appendChild(input);
          this.cells.push(input);
        } else {
          td.tabIndex = -1;
          this.cells.push(td);
        }
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
    this.table.append(thead, tbody);
    this.focusIndex = Math.min(this.focusIndex, Math.max(0, this.cells.length - 1));
    if (this.cells.length) this.cells[this.focusIndex].tabIndex = 0;
  }

  private fill(spec: MatrixSpec): void {
    const scale = makeScale(spec.palette, spec.values, spec.fixedMax);
    const hasMasked = Array.prototype.some.call(spec.values, (v: number) => v === Number.NEGATIVE_INFINITY);
    const legendKey = `${spec.palette}|${scale.max}|${hasMasked}|${spec.showLegend}`;
    if (legendKey !== this.legendKey) {
      this.legendKey = legendKey;
      clear(this.legendSlot);
      if (spec.showLegend !== false && spec.palette !== 'none') {
        this.legendSlot.appendChild(legend(scale, spec.palette === 'seq' ? 'weight' : 'value', hasMasked));
      }
    }
    const recolour = scale.max !== this.shownMax;
    this.shownMax = scale.max;
    const rows = this.table.tBodies[0]?.rows;
    const active = document.activeElement;
    for (let r = 0; r < spec.rows; r++) {
      const tr = rows?.[r];
      if (tr && tr.classList.contains('highlight') !== (r === spec.highlightRow)) tr.classList.toggle('highlight');
      for (let c = 0; c < spec.cols; c++) {
        const i = r * spec.cols + c;
        const v = spec.values[i];
        const cell = this.cells[i];
        const td = (cell.tagName === 'TD' ? cell : cell.parentElement) as HTMLElement;
        const edited = !!spec.edited?.[i];
        if (td.classList.contains('edited') !== edited) td.classList.toggle('edited');
        if (Object.is(this.shown[i], v) && !recolour && cell !== active && !spec.maskedCells) continue;
        this.shown[i] = v;
        // backgroundColor and a class for light text: far cheaper per cell than the `background` shorthand
        // or an inline `color` (measured: ~10× for a few thousand cells).
        td.style.backgroundColor = scale.colour(v);
        const light = scale.ink(v) === '#fff';
        if (td.classList.contains('ink-light') !== light) td.classList.toggle('ink-light');
        td.setAttribute('data-value', exact(v));
        const isMasked = v === Number.NEGATIVE_INFINITY || !!spec.maskedCells?.[i];
        if (td.classList.contains('masked') !== isMasked) td.classList.toggle('masked');
        const text = fmt(v, spec.digits ?? 3);
        if (cell instanceof HTMLInputElement) {
          cell.setAttribute('data-value', exact(v));
          if (active !== cell) {
            cell.value = text;
            markInvalid(cell, false);
          }
        } else if (cell.firstChild instanceof Text) {
          if (cell.firstChild.data !== text) cell.firstChild.data = text;
        } else {
          cell.textContent = text;
        }
      }
    }
  }

  private indexOf(target: EventTarget | null): number {
    if (!(target instanceof HTMLElement)) return -1;
    const r = Number(target.dataset.r);
    const c = Number(target.dataset.c);
    if (!this.spec || !Number.isInteger(r) || !Number.isInteger(c)) return -1;
    return r * this.spec.cols + c;
  }

  private onFocus(e: FocusEvent): void {
    const i = this.indexOf(e.target);
    if (i < 0) return;
    this.cells[this.focusIndex].tabIndex = -1;
    this.focusIndex = i;
    this.cells[i].tabIndex = 0;
  }

  private onKey(e: KeyboardEvent): void {
    const spec = this.spec;
    const i = this.indexOf(e.target);
    if (!spec || i < 0) return;
    let r = Math.floor(i / spec.cols);
    let c = i % spec.cols;
    const input = e.target instanceof HTMLInputElement ? e.target : undefined;
    // In an input, left/right move the caret until it reaches the edge of the text.
    const atStart = !input || (input.selectionStart === 0 && input.selectionEnd === 0);
    const atEnd = !input || input.selectionStart === input.value.length;
    switch (e.key) {
      case 'ArrowUp': r -= 1; break;
      case 'ArrowDown': r += 1; break;
      case 'ArrowLeft': if (!atStart) return; c -= 1; break;
      case 'ArrowRight': if (!atEnd) return; c += 1; break;
      case 'Home': if (input) return; c = 0; break;
      case 'End': if (input) return; c = spec.cols - 1; break;
      case 'Enter': if (!input) return; r += 1; break;
      default: return;
    }
    e.preventDefault();
    r = Math.max(0, Math.min(spec.rows - 1, r));
    c = Math.max(0, Math.min(spec.cols - 1, c));
    const next = this.cells[r * spec.cols + c];
    next.focus();
    if (next instanceof HTMLInputElement) next.select();
  }

  private say(text: string): void {
    if (this.problem.textContent !== text) this.problem.textContent = text;
  }

  private onInput(e: Event): void {
    const spec = this.spec;
    const input = e.target;
    if (!spec?.onEdit || !(input instanceof HTMLInputElement)) return;
    const i = this.indexOf(input);
    const text = input.value.replace('−', '-');
    const v = Number(text);
    // A finite value in range recomputes at once; anything else is marked and changes nothing, and said why unless it
    // is a number still being typed ("", "-", "1e").
    const r = Math.floor(i / spec.cols), c = i % spec.cols;
    const limit = spec.limit ?? CELL_LIMIT;
    if (!NUMBER.test(text) || !Number.isFinite(v) || Math.abs(v) > limit) {
      markInvalid(input, true);
      const kept = fmt(Number(input.dataset.value), spec.digits ?? 3), name = spec.caption.replace(/\s*\(editable\)$/, '');
      this.say(!NUMBER.test(text) && TYPING.test(text) ? '' : `${name} [${spec.rowLabels[r]}, ${spec.colLabels[c]}] must be a number from −${limit} to ${limit}; the lab keeps ${kept} until it is.`);
      return;
    }
    markInvalid(input, false);
    this.say('');
    spec.onEdit(r, c, v);
  }
}
