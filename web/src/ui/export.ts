// Export: heatmaps as SVG and PNG, matrices as CSV and JSON (the whole state: save-load.ts; NumPy code:
// code-panel.ts). Files leave through a Blob URL on an <a download>, which the page's
// CSP does not restrict (it is a download, not an image or a fetch). PNGs are drawn straight onto a canvas
// from the live SVG rather than by loading the SVG as an <img>: img-src is 'self' only, so a blob: or
// data: image would be blocked, and drawing the shapes needs no font or image from anywhere.
import '../styles/export.css';
import { el } from './dom';
import { f32repr } from '../model/float32';

/** System fonts ending in a generic family: an exported SVG or PNG needs no web font. */
const FONT = 'system-ui, "Segoe UI", Roboto, Helvetica, Arial, sans-serif';
/** Height of the title band above an exported heatmap, in SVG units. */
const TITLE_H = 26;

const safeName = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 60) || 'matrix';

export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: filename, hidden: true });
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoke later: the download reads the blob asynchronously.
  window.setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

export interface ExportAction { format: string; run: () => void | Promise<void> }

export interface ExportBar { root: HTMLElement; /** Re-reads the name for the labels (captions change with the state). */ refresh(): void }

/** A row of small labelled buttons: "CSV", "JSON"… named "Download <what> as CSV" for assistive tech. */
export function exportBar(what: () => string, actions: ExportAction[], cls = ''): ExportBar {
  const root = el('div', { class: `export-bar ${cls}`.trim(), role: 'group' });
  const buttons = actions.map((a) => {
    const b = el('button', { type: 'button', class: 'export-btn', 'data-export': a.format.toLowerCase(), text: a.format });
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await a.run();
      } catch (err) {
        console.error(err);
      } finally {
        b.disabled = false;
      }
    });
    root.appendChild(b);
    return { b, format: a.format };
  });
  let shown = '';
  const refresh = () => {
    const name = what();
    if (name === shown) return;
    shown = name;
    root.setAttribute('aria-label', `Export ${name}`);
    for (const { b, format } of buttons) {
      b.setAttribute('aria-label', `Download ${name} as ${format}`);
      b.title = `Download as ${format}`;
    }
  };
  refresh();
  return { root, refresh };
}

// ---------------------------------------------------------------- matrices

export interface MatrixData {
  name: string;
  caption?: string;
  rows: number;
  cols: number;
  rowLabels: string[];
  colLabels: string[];
  values: ArrayLike<number>;
}

/** RFC 4180 quoting, and a leading apostrophe on labels a spreadsheet would run as a formula. */
function csvText(s: string): string {
  const t = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/**
 * Header row of column labels (the corner holds the matrix name), one row per matrix row with its label
 * first. Numbers: the shortest decimal that reads back as the same float32 (-Infinity for masked scores).
 */
export function matrixToCsv(m: MatrixData): string {
  const lines = [[m.name, ...m.colLabels].map(csvText).join(',')];
  for (let r = 0; r < m.rows; r++) {
    const cells = [csvText(m.rowLabels[r] ?? String(r))];
    for (let c = 0; c < m.cols; c++) cells.push(f32repr(m.values[r * m.cols + c]));
    lines.push(cells.join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** {name, caption, rows, cols, rowLabels, colLabels, values: [[…]]}; JSON has no ±Infinity/NaN, so those are strings. */
export function matrixToJson(m: MatrixData): string {
  const values: (number | string)[][] = [];
  for (let r = 0; r < m.rows; r++) {
    const row: (number | string)[] = [];
    for (let c = 0; c < m.cols; c++) {
      const v = m.values[r * m.cols + c];
      row.push(Number.isFinite(v) ? Number(f32repr(v)) : f32repr(v));
    }
    values.push(row);
  }
  const meta = { name: m.name, caption: m.caption, rows: m.rows, cols: m.cols, rowLabels: m.rowLabels, colLabels: m.colLabels };
  // One matrix row per line: readable, and still plain JSON.
  const head = JSON.stringify(meta, null, 2).replace(/\n\}$/, '');
  return `${head},\n  "values": [\n${values.map((r) => `    ${JSON.stringify(r)}`).join(',\n')}\n  ]\n}\n`;
}

export function matrixExportBar(get: () => MatrixData): ExportBar {
  return exportBar(() => get().caption ?? get().name, [
    { format: 'CSV', run: () => download(new Blob([matrixToCsv(get())], { type: 'text/csv' }), `attnlab-${safeName(get().name)}.csv`) },
    { format: 'JSON', run: () => download(new Blob([matrixToJson(get())], { type: 'application/json' }), `attnlab-${safeName(get().name)}.json`) },
  ], 'matrix-export');
}

// ---------------------------------------------------------------- heatmaps

/** Properties that CSS (not attributes) may set on the heatmap's shapes; copied inline so a lone file looks the same. */
const SHAPE_PROPS = ['fill', 'stroke', 'stroke-width', 'opacity', 'display'];
const TEXT_PROPS = ['fill', 'font-size', 'font-weight', 'font-style', 'font-variant-numeric', 'text-anchor', 'dominant-baseline'];

function svgSize(svg: SVGSVGElement): { width: number; height: number } {
  const vb = svg.viewBox.baseVal;
  return { width: vb?.width || Number(svg.getAttribute('width')) || 300, height: vb?.height || Number(svg.getAttribute('height')) || 150 };
}

const xmlEscape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)
  // Characters XML 1.0 forbids (controls other than tab/newline/return, lone surrogates) would make the file unreadable.
  .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/**
 * Writes one element and its subtree as XML text, with the shapes' computed styles inlined. The markup is
 * written as text rather than cloned: a cloned style="" attribute is inline CSS, which the page's CSP
 * (style-src 'self') reports, while writing a string touches no DOM at all.
 */
function writeSvgNode(node: Element, out: string[]): void {
  const tag = node.tagName;
  const attrs: string[] = [];
  for (const a of node.attributes) {
    // Page-only attributes: ARIA, handlers, and the style attribute (rebuilt from computed values below).
    // Classes stay: they name the parts (g.cell, .row-labels) for anyone post-processing the file.
    if (a.name === 'style' || a.name === 'role' || a.name.startsWith('aria-') || a.name.startsWith('on')) continue;
    attrs.push(`${a.name}="${xmlEscape(a.value)}"`);
  }
  const lower = tag.toLowerCase();
  const props = lower === 'text' ? TEXT_PROPS : lower === 'rect' || lower === 'line' ? SHAPE_PROPS : [];
  if (props.length && !node.closest('defs')) {
    const cs = getComputedStyle(node);
    const style: string[] = [];
    for (const p of props) {
      const v = cs.getPropertyValue(p);
      // A paint server (the hatch pattern) stays as the attribute's local #id; a computed url() may be absolute.
      if (v && !v.includes('url(')) style.push(`${p}: ${v}`);
    }
    if (style.length) attrs.push(`style="${xmlEscape(style.join('; '))}"`);
  }
  out.push(`<${tag}${attrs.length ? ` ${attrs.join(' ')}` : ''}>`);
  for (const child of node.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) out.push(xmlEscape(child.textContent ?? ''));
    else if (child instanceof Element && child.tagName.toLowerCase() !== 'title') writeSvgNode(child, out); // hover tooltips stay behind
  }
  out.push(`</${tag}>`);
}

/** A self-contained SVG document: computed styles inlined, a white background, a <title> and a visible title. */
export function standaloneSvg(svg: SVGSVGElement, title: string): string {
  const { width, height } = svgSize(svg);
  const H = height + TITLE_H;
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H}" viewBox="0 0 ${width} ${H}" font-family="${xmlEscape(FONT)}" font-size="12">`,
    `<title>${xmlEscape(title)}</title>`,
    `<rect width="${width}" height="${H}" fill="#ffffff"/>`,
    `<text x="6" y="17" font-size="14" font-weight="600" fill="#1b1e28">${xmlEscape(title)}</text>`,
    `<g transform="translate(0,${TITLE_H})">`,
  ];
  for (const child of svg.children) writeSvgNode(child, out);
  out.push('</g></svg>\n');
  return out.join('');
}

/** The transform from a shape's own coordinates to the SVG's viewBox, from the transform attributes alone. */
function toSvgSpace(node: SVGGraphicsElement, svg: SVGSVGElement): DOMMatrix {
  let m = new DOMMatrix();
  for (let n: Element | null = node; n && n !== svg; n = n.parentElement) {
    const t = (n as SVGGraphicsElement).transform?.baseVal.consolidate();
    if (t) m = new DOMMatrix([t.matrix.a, t.matrix.b, t.matrix.c, t.matrix.d, t.matrix.e, t.matrix.f]).multiply(m);
  }
  return m;
}

const num = (a: SVGAnimatedLength | undefined) => a?.baseVal.value ?? 0;
const firstLen = (a: SVGAnimatedLengthList) => (a.baseVal.numberOfItems ? a.baseVal.getItem(0).value : 0);

/** A canvas pattern from an SVG <pattern> of rects and lines (the masked-cell hatch). */
function canvasPattern(ctx: CanvasRenderingContext2D, pat: SVGPatternElement, pixelScale: number): CanvasPattern | null {
  const w = num(pat.width), h = num(pat.height);
  const tile = document.createElement('canvas');
  tile.width = Math.max(1, Math.round(w * pixelScale));
  tile.height = Math.max(1, Math.round(h * pixelScale));
  const t = tile.getContext('2d')!;
  t.scale(pixelScale, pixelScale);
  for (const c of pat.querySelectorAll('rect, line')) {
    if (c instanceof SVGRectElement) {
      t.fillStyle = c.getAttribute('fill') ?? '#000';
      t.fillRect(num(c.x), num(c.y), num(c.width), num(c.height));
    } else if (c instanceof SVGLineElement) {
      t.strokeStyle = c.getAttribute('stroke') ?? '#000';
      t.lineWidth = Number(c.getAttribute('stroke-width') ?? 1);
      t.beginPath();
      t.moveTo(num(c.x1), num(c.y1));
      t.lineTo(num(c.x2), num(c.y2));
      t.stroke();
    }
  }
  const p = ctx.createPattern(tile, 'repeat');
  const pt = pat.patternTransform.baseVal.consolidate();
  // The tile was drawn at pixelScale; scale it back so the pattern lives in SVG units like the shapes.
  let m = new DOMMatrix().scale(1 / pixelScale, 1 / pixelScale);
  if (pt) m = new DOMMatrix([pt.matrix.a, pt.matrix.b, pt.matrix.c, pt.matrix.d, pt.matrix.e, pt.matrix.f]).multiply(m);
  p?.setTransform(m);
  return p;
}

/**
 * Draws the heatmap's SVG onto a canvas (rects, lines and text, with their computed colours and fonts)
 * and encodes it as PNG at `pixelScale`× resolution.
 */
export async function svgToPng(svg: SVGSVGElement, title: string, pixelScale = 2): Promise<Blob> {
  const { width, height } = svgSize(svg);
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(width * pixelScale);
  canvas.height = Math.ceil((height + TITLE_H) * pixelScale);
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2D canvas');
  const base = new DOMMatrix().scale(pixelScale, pixelScale);
  ctx.setTransform(base);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height + TITLE_H);
  ctx.fillStyle = '#1b1e28';
  ctx.font = `600 14px ${FONT}`;
  ctx.textBaseline = 'alphabetic';
  ctx.fillText(title, 6, 17);
  const origin = base.translate(0, TITLE_H);
  const patterns = new Map<string, CanvasPattern | null>();
  const paint = (v: string): string | CanvasPattern | null => {
    const ref = /url\(["']?[^#"')]*#([^"')]+)["']?\)/.exec(v);
    if (!ref) return v === 'none' || v === '' ? null : v;
    if (!patterns.has(ref[1])) {
      const pat = svg.querySelector<SVGPatternElement>(`pattern[id="${CSS.escape(ref[1])}"]`);
      patterns.set(ref[1], pat ? canvasPattern(ctx, pat, pixelScale) : null);
    }
    return patterns.get(ref[1]) ?? null;
  };
  for (const node of svg.querySelectorAll<SVGGraphicsElement>('rect, text')) {
    if (node.closest('defs') || node.closest('[display="none"]')) continue;
    const cs = getComputedStyle(node);
    if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    ctx.setTransform(origin.multiply(toSvgSpace(node, svg)));
    if (node instanceof SVGRectElement) {
      const x = num(node.x), y = num(node.y), w = num(node.width), h = num(node.height);
      const fill = paint(cs.fill);
      if (fill) { ctx.fillStyle = fill; ctx.fillRect(x, y, w, h); }
      const stroke = paint(cs.stroke);
      const sw = parseFloat(cs.strokeWidth);
      if (stroke && sw > 0) { ctx.strokeStyle = stroke; ctx.lineWidth = sw; ctx.strokeRect(x, y, w, h); }
    } else if (node instanceof SVGTextElement) {
      const text = node.textContent ?? '';
      const fill = paint(cs.fill);
      if (!text || !fill) continue;
      ctx.fillStyle = fill;
      ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${FONT}`;
      ctx.textAlign = cs.textAnchor === 'middle' ? 'center' : cs.textAnchor === 'end' ? 'right' : 'left';
      ctx.textBaseline = cs.dominantBaseline === 'central' || cs.dominantBaseline === 'middle' ? 'middle' : 'alphabetic';
      ctx.fillText(text, firstLen(node.x), firstLen(node.y));
    }
  }
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'));
}

export function heatmapExportBar(getSvg: () => SVGSVGElement | undefined, name: () => string, label: () => string): ExportBar {
  return exportBar(label, [
    { format: 'PNG', run: async () => { const s = getSvg(); if (s) download(await svgToPng(s, label()), `attnlab-${safeName(name())}.png`); } },
    { format: 'SVG', run: () => { const s = getSvg(); if (s) download(new Blob([standaloneSvg(s, label())], { type: 'image/svg+xml' }), `attnlab-${safeName(name())}.svg`); } },
  ], 'heatmap-export');
}
