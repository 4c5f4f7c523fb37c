// The bench chart, as a self-contained SVG (no library): throughput vs n (log scale) per library, one panel per
// attention family (d, causal) plus one for row softmax, the measured SIMD peak as a dashed line.
import { LIBRARIES, fmtGf } from './report.mjs';

const STYLE = {
  'attnlab-simd': { color: '#c62828', width: 3.2, dash: '' },
  'attnlab-simd-out': { color: '#7f0000', width: 2, dash: '2 3' },
  'attnlab-scalar': { color: '#ef9a9a', width: 2, dash: '6 4' },
  'ort-graph-kt': { color: '#1565c0', width: 2, dash: '' },
  'ort-graph-transpose': { color: '#64b5f6', width: 2, dash: '6 4' },
  'ort-mha': { color: '#00acc1', width: 2, dash: '2 3' },
  tfjs: { color: '#ef6c00', width: 2, dash: '' },
  js: { color: '#757575', width: 2, dash: '' },
};

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(x) {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}
function ticks(max) {
  const p = 10 ** Math.floor(Math.log10(max));
  const step = [0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5].map((m) => m * p).find((s) => max / s <= 6);
  const out = [];
  for (let v = 0; v <= max + 1e-9; v += step) out.push(+v.toFixed(6));
  return out;
}

function panel({ x, y, w, h, title, subtitle, ns, series, yMax, yLabel, peak }) {
  const out = [];
  const span = Math.log2(ns.at(-1)) - Math.log2(ns[0]);
  const lx = (n) => (span > 0 ? x + 0.04 * w + ((Math.log2(n) - Math.log2(ns[0])) / span) * 0.92 * w : x + w / 2);
  const ly = (v) => y + h - (v / yMax) * h;
  out.push(`<text x="${x}" y="${y - 26}" class="pt">${esc(title)}</text>`);
  if (subtitle) out.push(`<text x="${x}" y="${y - 10}" class="ps">${esc(subtitle)}</text>`);
  out.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" class="frame"/>`);
  for (const t of ticks(yMax)) {
    out.push(`<line x1="${x}" x2="${x + w}" y1="${ly(t)}" y2="${ly(t)}" class="grid"/>`);
    out.push(`<text x="${x - 6}" y="${ly(t) + 4}" class="yt">${t}</text>`);
  }
  for (const n of ns) {
    out.push(`<line x1="${lx(n)}" x2="${lx(n)}" y1="${y}" y2="${y + h}" class="grid"/>`);
    out.push(`<text x="${lx(n)}" y="${y + h + 16}" class="xt">${n}</text>`);
  }
  out.push(`<text x="${x + w / 2}" y="${y + h + 34}" class="xl">n (log scale)</text>`);
  out.push(`<text transform="translate(${x - 40} ${y + h / 2}) rotate(-90)" class="xl">${esc(yLabel)}</text>`);
  if (peak && peak <= yMax) {
    out.push(`<line x1="${x}" x2="${x + w}" y1="${ly(peak)}" y2="${ly(peak)}" class="peak"/>`);
    out.push(`<text x="${x + 4}" y="${ly(peak) - 5}" class="pk">SIMD peak ${fmtGf(peak)}</text>`);
  }
  for (const s of series) {
    const pts = s.points.filter((p) => p.v > 0);
    if (!pts.length) continue;
    const st = STYLE[s.id] ?? { color: '#000', width: 2, dash: '' };
    if (pts.length > 1) {
      out.push(`<polyline fill="none" stroke="${st.color}" stroke-width="${st.width}" ${st.dash ? `stroke-dasharray="${st.dash}"` : ''} stroke-linejoin="round" points="${pts.map((p) => `${lx(p.n).toFixed(1)},${ly(Math.min(p.v, yMax)).toFixed(1)}`).join(' ')}"/>`);
    }
    for (const p of pts) out.push(`<circle cx="${lx(p.n).toFixed(1)}" cy="${ly(Math.min(p.v, yMax)).toFixed(1)}" r="${s.id === 'attnlab-simd' ? 3.6 : 2.6}" fill="${st.color}"><title>${esc(`${s.label}: n=${p.n} ${fmtGf(p.v)} ${yLabel}`)}</title></circle>`);
  }
  return out.join('\n');
}

export function chartSvg(results) {
  const W = 1140, panelW = 290, panelH = 220, left = 70, gapX = 85, top = 110, gapY = 100;
  const H = top + 2 * panelH + gapY + 60;
  const peak = results.peak?.gflops;
  const libs = LIBRARIES.filter((l) => [...results.attention, ...results.softmax].some((c) => c.results[l.id]?.ms));
  const attMax = niceMax(Math.max(peak ?? 0, ...results.attention.flatMap((c) => Object.values(c.results).map((r) => r.gflops ?? 0))) * 1.05);
  const families = [];
  const ds = [...new Set(results.attention.map((c) => c.d))].sort((a, b) => a - b);
  for (const d of ds) for (const causal of [false, true]) {
    const cells = results.attention.filter((c) => c.d === d && c.causal === causal).sort((a, b) => a.n - b.n);
    if (cells.length) families.push({ d, causal, cells });
  }
  const parts = [];
  const slot = (i) => ({ x: left + (i % 3) * (panelW + gapX), y: top + Math.floor(i / 3) * (panelH + gapY) });
  // Layout: row 1 = d64 dense, d64 causal, softmax; row 2 = d128 dense, d128 causal, legend.
  const slots = [0, 1, 3, 4];
  families.slice(0, 4).forEach((f, i) => {
    const { x, y } = slot(slots[i]);
    parts.push(panel({
      x, y, w: panelW, h: panelH, ns: f.cells.map((c) => c.n), yMax: attMax, yLabel: 'GFLOP/s', peak,
      title: `Attention, d = ${f.d}${f.causal ? ', causal' : ''}`,
      subtitle: f.causal ? 'GFLOP/s of the dense 4·n²·d: skipped work counts' : 'GFLOP/s = 4·n²·d / time',
      series: libs.map((l) => ({ id: l.id, label: l.label, points: f.cells.map((c) => ({ n: c.n, v: c.results[l.id]?.gflops })) })),
    }));
  });
  if (results.softmax.length) {
    const cells = [...results.softmax].sort((a, b) => a.n - b.n);
    const smMax = niceMax(Math.max(...cells.flatMap((c) => Object.values(c.results).map((r) => r.gelemPerS ?? 0))) * 1.05);
    const { x, y } = slot(2);
    parts.push(panel({
      x, y, w: panelW, h: panelH, ns: cells.map((c) => c.n), yMax: smMax, yLabel: 'G elements/s',
      title: 'Row softmax over n×n', subtitle: 'elements per second (n² / time)',
      series: libs.map((l) => ({ id: l.id, label: l.label, points: cells.map((c) => ({ n: c.n, v: c.results[l.id]?.gelemPerS })) })),
    }));
    // Outputs above glibc's 32 MiB mmap ceiling come back as fresh pages on every call: say what that costs.
    const fm = results.machine.freshMemory, big = cells.at(-1);
    if (fm && big.n * big.n * 4 > 32 * 2 ** 20) {
      const ms = ((big.n * big.n * 4) / 4096) * fm.usPerPage / 1000;
      parts.push(`<text x="${x}" y="${y + panelH + 52}" class="note">n = ${big.n}: each call returns a fresh ${(big.n * big.n * 4 / 2 ** 20).toFixed(0)} MiB array;</text>`);
      parts.push(`<text x="${x}" y="${y + panelH + 65}" class="note">page faults alone ≈ ${ms.toFixed(0)} ms per call here</text>`);
    }
  }
  // Legend
  const lg = slot(5);
  lg.y += 24;
  parts.push(`<text x="${lg.x - 20}" y="${lg.y - 10}" class="pt">Libraries (one thread, wasm, float32)</text>`);
  libs.forEach((l, i) => {
    const st = STYLE[l.id];
    const yy = lg.y + 14 + i * 24;
    parts.push(`<line x1="${lg.x - 20}" x2="${lg.x + 14}" y1="${yy}" y2="${yy}" stroke="${st.color}" stroke-width="${st.width}" ${st.dash ? `stroke-dasharray="${st.dash}"` : ''}/>`);
    parts.push(`<text x="${lg.x + 22}" y="${yy + 4}" class="lg">${esc(l.label)}</text>`);
  });
  const ly0 = lg.y + 14 + libs.length * 24 + 6;
  if (peak) {
    parts.push(`<line x1="${lg.x - 20}" x2="${lg.x + 14}" y1="${ly0}" y2="${ly0}" class="peak"/>`);
    parts.push(`<text x="${lg.x + 22}" y="${ly0 + 4}" class="lg">SIMD128 mul+add peak (${fmtGf(peak)} GFLOP/s)</text>`);
  }
  const m = results.machine;
  const title = 'attnlab vs onnxruntime-web, tfjs-backend-wasm and plain JS — single thread, higher is better';
  const sub = `${m.cpuModel}, ${m.logicalCpus} logical CPUs, Node ${m.node}, ${m.date.slice(0, 10)}; ${results.stat ?? 'median'} of repeated calls, JS arrays in → JS array out` +
    `${(m.otherCoresMean ?? 0) > 0.2 ? `; machine busy (others used ${m.otherCoresMean} cores on average)` : ''}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif">
<style>
  .bg { fill: #ffffff; }
  .frame { fill: #fcfcfc; stroke: #bdbdbd; stroke-width: 1; }
  .grid { stroke: #e6e6e6; stroke-width: 1; }
  .peak { stroke: #212121; stroke-width: 1.5; stroke-dasharray: 7 5; }
  .pt { font-size: 15px; font-weight: 600; fill: #212121; }
  .ps { font-size: 11.5px; fill: #616161; }
  .yt { font-size: 11px; fill: #616161; text-anchor: end; }
  .xt { font-size: 11px; fill: #616161; text-anchor: middle; }
  .xl { font-size: 11.5px; fill: #424242; text-anchor: middle; }
  .pk { font-size: 11px; fill: #212121; }
  .lg { font-size: 12.5px; fill: #212121; }
  .title { font-size: 18px; font-weight: 700; fill: #212121; }
  .sub { font-size: 12px; fill: #616161; }
  .note { font-size: 10.5px; fill: #757575; }
</style>
<rect class="bg" width="100%" height="100%"/>
<text x="${left - 40}" y="32" class="title">${esc(title)}</text>
<text x="${left - 40}" y="54" class="sub">${esc(sub)}</text>
${parts.join('\n')}
</svg>
`;
}
