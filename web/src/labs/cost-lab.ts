// "The context is full" (seed 000): attention keeps an n×n matrix of scores per head per layer, so its memory
// and its FLOPs grow with n², while q, k, v and the projections grow with n. The calculator does the arithmetic
// (web/src/model/cost.ts, exact BigInt); the measured curve runs the engine itself in a Web Worker, on both
// paths: materialized (returnWeights keeps the n×n matrix) and streaming (online softmax over 32×64 tiles).
import type { Lab, LabContext } from './lab';
import type { AppState } from '../state/app-state';
import type { Store } from '../state/store';
import { el, clear, reducedMotion } from '../ui/dom';
import { tex, setTex } from '../ui/katex';
import { field, select as selectControl, buttonGroup, numberInput } from '../ui/controls';
import {
  cost, validate, formatBytes, formatBinary, formatFlops, shortSI, squareBytes, COST_LIMITS, COST_PRESETS,
  TILE_KEYS, TILE_ROWS, type CostInput,
} from '../model/cost';
import type { CurveMessage, CurvePath, CurvePoint, CurveRequest } from '../workers/curve-worker';
// Keep exactly this `?worker` form: the offline build (singleFile in web/vite.config.ts) rewrites it to
// `?worker&inline`, so the worker travels inside the single HTML file.
import CurveWorker from '../workers/curve-worker.ts?worker';
import { axisBottom, axisLeft, line, scaleLog, select, type Selection } from 'd3';
import '../styles/cost.css';

/** Width of the measured q, k, v (one head of a typical model). */
const CURVE_D = 64;
/**
 * The materialized path stops here: 4096² float32 scores = 64 MiB, the same again for the weights the engine fills
 * in wasm memory, and a third copy when they are handed back to JS.
 */
const MAX_MATERIALIZED_N = 4096;
const MAX_N_OPTIONS = [256, 512, 1024, 2048, 4096, 8192];
const CURVE_SEED = 2024;

const COLOURS: Record<CurvePath | 'theory', string> = { materialized: '#b35806', streaming: '#1f4e89', theory: '#6b7080' };
const PATH_LABEL: Record<CurvePath, string> = { materialized: 'materialized (n×n kept)', streaming: 'streaming (online softmax)' };

const digits = (v: bigint) => v.toString().replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009');
const texDigits = (v: bigint) => v.toString().replace(/\B(?=(\d{3})+(?!\d))/g, '\\,');

// ---------------------------------------------------------------------------------------------------------
// A log-log line chart in SVG. It is redrawn at the container's width (ResizeObserver, as in ui/bars.ts) with a
// matching viewBox, so text keeps its size on a 390 px phone and the SVG still scales if the width changes.

interface Series {
  key: string;
  label: string;
  colour: string;
  points: { x: number; y: number }[];
  dashed?: boolean;
  markers?: boolean;
}

interface ChartSpec {
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

class LogLogChart {
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
function decades(lo: number, hi: number): { domain: [number, number]; ticks: number[] } {
  const a = Math.floor(Math.log10(lo));
  const b = Math.max(a + 1, Math.ceil(Math.log10(hi)));
  return { domain: [10 ** a, 10 ** b], ticks: Array.from({ length: b - a + 1 }, (_, i) => 10 ** (a + i)) };
}

const fmtMs = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toPrecision(3) : ms.toPrecision(2));
const tickMs = (ms: number) => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);

// ---------------------------------------------------------------------------------------------------------

export const costLab: Lab = {
  id: 'cost',
  nav: 'Cost',
  mount(section: HTMLElement, ctx: LabContext) {
    section.append(
      el('h2', { text: 'The cost of attention' }),
      el('p', { class: 'intro', text: '“The context is full” has a concrete cause. Every head of every layer scores every token against every other: an n × n matrix. The q, k and v matrices are n × d, so they grow linearly with the context; the scores grow with its square. Double the context and that matrix quadruples, in every head and every layer.' }),
    );
    mountCalculator(section, ctx.store);
    mountCurve(section);
  },
};

// ---- 1. the calculator --------------------------------------------------------------------------------------

// The calculator's inputs live in the app state (URL parameters cn, cd, ch, cl, cb), so a link or a saved state
// file brings back the same numbers.
const fromState = (s: AppState): CostInput => ({ n: s.costN, d: s.costD, heads: s.costHeads, layers: s.costLayers, bytes: s.costBytes });
const toState = (x: CostInput): Partial<AppState> => ({ costN: x.n, costD: x.d, costHeads: x.heads, costLayers: x.layers, costBytes: x.bytes });
const COST_KEYS = ['costN', 'costD', 'costHeads', 'costLayers', 'costBytes'] as const;
const presetOf = (x: CostInput): string | null =>
  COST_PRESETS.find((p) => (Object.keys(p.input) as (keyof CostInput)[]).every((k) => p.input[k] === x[k]))?.id ?? null;

function mountCalculator(section: HTMLElement, store: Store): void {
  const cur: CostInput = fromState(store.state);
  // The preset whose numbers these are, if any: its button shows pressed and its note applies.
  let presetId: string | null = presetOf(cur);
  const edit = (key: keyof CostInput) => (v: number | string) => {
    cur[key] = Number(v);
    presetId = presetOf(cur);
    store.update(toState(cur));
    render();
  };
  const inputs = {
    n: numberInput(cur.n, { min: COST_LIMITS.n.min, max: COST_LIMITS.n.max, step: 1, name: 'cost-n', label: 'n (tokens)' }, edit('n')),
    d: numberInput(cur.d, { min: COST_LIMITS.d.min, max: COST_LIMITS.d.max, step: 1, name: 'cost-d', label: 'd (model width)' }, edit('d')),
    heads: numberInput(cur.heads, { min: COST_LIMITS.heads.min, max: COST_LIMITS.heads.max, step: 1, name: 'cost-heads', label: 'heads' }, edit('heads')),
    layers: numberInput(cur.layers, { min: COST_LIMITS.layers.min, max: COST_LIMITS.layers.max, step: 1, name: 'cost-layers', label: 'layers' }, edit('layers')),
  };
  const bytes = selectControl(
    [{ value: '4', label: '4 (fp32)' }, { value: '2', label: '2 (fp16 / bf16)' }, { value: '1', label: '1 (int8)' }],
    String(cur.bytes), edit('bytes'), 'cost-bytes');
  const note = el('p', { class: 'preset-note', 'aria-live': 'polite', 'data-cost': 'preset-note' });
  const error = el('p', { class: 'cost-error warn-text', role: 'alert', 'data-cost': 'error' });
  const presets = buttonGroup('Presets', COST_PRESETS.map((p) => ({
    label: p.label, name: `cost-preset-${p.id}`, pressed: p.id === COST_PRESETS[0].id,
    onClick: () => {
      Object.assign(cur, p.input);
      showInputs();
      presetId = p.id;
      store.update(toState(cur));
      render();
    },
  })));

  // numberInput leaves out-of-range values unreported (it only marks them aria-invalid): say why here.
  for (const [key, input] of Object.entries(inputs) as [keyof typeof inputs, HTMLInputElement][]) {
    input.addEventListener('input', () => {
      if (!input.hasAttribute('aria-invalid')) return;
      const lim = COST_LIMITS[key];
      error.textContent = `${key} must be a whole number from ${lim.min.toLocaleString('en-US')} to ${lim.max.toLocaleString('en-US')}; the numbers below are for the last valid inputs.`;
      section.dataset.costValid = 'false';
    });
  }
  const memTable = el('table', { class: 'plain-table cost-table', 'data-table': 'cost-calc' });
  const flopTable = el('table', { class: 'plain-table cost-table', 'data-table': 'cost-flops' });
  const crossover = el('p', { class: 'cost-crossover', 'data-cost': 'crossover' });
  const idealFormula = el('div', { class: 'tex tex-display cost-ideal-formula' });
  const ideal = el('output', { class: 'cost-big', 'data-cost': 'ideal' });
  const idealNote = el('p', { 'data-cost': 'ideal-note' });
  const flopsChart = new LogLogChart('cost-flops', 'n (tokens in the context)', 'FLOPs per layer');

  section.append(
    el('h3', { text: 'Calculator' }),
    el('div', { class: 'cost-inputs' },
      field('n (tokens)', inputs.n), field('d (model width)', inputs.d), field('heads', inputs.heads),
      field('layers', inputs.layers), field('bytes per number', bytes)),
    presets, note, error,
    el('div', { class: 'callout cost-ideal' },
      el('p', {}, el('strong', { text: 'Seed 000’s “ideal” tensor: ' }), 'a d × d matrix for every pair of tokens, saying how token A changes token B. That is n · n · d · d numbers:'),
      idealFormula,
      el('p', {}, 'One such tensor: ', ideal, '.'),
      idealNote),
    el('h4', { text: 'Memory: the score matrices' }),
    // Separate blocks so the formulas wrap on a phone instead of scrolling sideways.
    el('div', { class: 'cost-formulas' },
      tex(String.raw`M_{\text{materialized}} = L\,h\,n^2 b`, true),
      tex(String.raw`M_{\text{streaming}} = L\,h\,\big(${TILE_ROWS}\cdot${TILE_KEYS} + ${TILE_ROWS}\,d_h + 2\cdot${TILE_ROWS}\big)\,b`, true),
      tex(String.raw`d_h = d/h`, true)),
    el('p', { class: 'help cost-counts', text: `What is counted. Materialized: one n × n matrix per head, the minimum (softmax can overwrite the scores in place; this engine keeps scores and weights in two separate n × n buffers, twice this, as the measured curve below shows), for every head of a layer at once and, in the last rows, for every layer (what training keeps for the backward pass). Streaming, as this engine does it: a tile of ${TILE_ROWS} query rows × ${TILE_KEYS} keys of scores, a ${TILE_ROWS} × d_h output accumulator, and a running max and sum for each of the ${TILE_ROWS} rows — no n anywhere. The layer and model rows count one tile per head, as when heads run in parallel; this engine runs the heads of a call one after another, so it holds one tile at a time. Both paths also need q, k, v and the output, n × d numbers each per layer (4 L n d b): they grow with n, not n². Not counted: weights, the MLP, the KV cache across requests, and the engine’s packed copy of Kᵀ (another n × d_h per head).` }),
    el('div', { class: 'table-scroll' }, memTable),
    el('h4', { text: 'Compute: projections vs attention' }),
    el('div', { class: 'cost-formulas' },
      tex(String.raw`F_{\text{proj}} = \underbrace{4}_{Q,K,V,O} \cdot 2\,n\,d^2 = 8\,n d^2`, true),
      tex(String.raw`F_{\text{attn}} = \underbrace{2}_{QK^{\top},\;PV} \cdot 2\,n^2 d = 4\,n^2 d`, true),
      tex(String.raw`\frac{F_{\text{attn}}}{F_{\text{proj}}} = \frac{n}{2d}`, true)),
    el('p', { class: 'help', text: 'A multiply-add counts as 2 FLOPs; per layer, summed over the heads (h heads of width d/h do the same work as one of width d). Softmax itself (a few FLOPs per score) and the MLP are left out. Seed 001 puts the O(nd²) cost on QKᵀ: that is the projections; QKᵀ and P·V are the O(n²d) part.' }),
    el('div', { class: 'table-scroll' }, flopTable),
    crossover,
    flopsChart.root,
  );

  function render(): void {
    const err = validate(cur);
    error.textContent = err ?? '';
    section.querySelectorAll<HTMLButtonElement>('button[data-control^="cost-preset-"]')
      .forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.control === `cost-preset-${presetId}`)));
    note.textContent = COST_PRESETS.find((p) => p.id === presetId)?.note ?? '';
    section.dataset.costValid = String(!err);
    if (err) return; // keep the last valid numbers, marked stale by the error line
    const r = cost(cur);
    const { n, d, bytes: b } = cur;

    setTex(idealFormula, String.raw`\begin{aligned} n^2 d^2 b &= ${n}^2 \cdot ${d}^2 \cdot ${b}\ \text{B} \\ &= ${texDigits(r.idealTensor)}\ \text{B} \end{aligned}`, true);
    ideal.dataset.value = r.idealTensor.toString();
    ideal.textContent = `${formatBytes(r.idealTensor)} (${formatBinary(r.idealTensor)})`;
    idealNote.textContent = `What attention stores instead: W_q, W_k and W_v, d × d each, 3 · d² · b ${eq(formatBytes(r.qkvWeights))} — ${fmtRatio(Number(r.idealTensor) / Number(r.qkvWeights))} times smaller.`;
    idealNote.dataset.value = r.qkvWeights.toString();

    const cell = (v: bigint, col: string) => el('td', { 'data-col': col, 'data-value': v.toString(), title: `${digits(v)} bytes` },
      el('span', { class: 'cost-dec', text: formatBytes(v) }), el('span', { class: 'cost-bin', text: formatBinary(v) }));
    const row = (id: string, label: string, a: bigint, s: bigint) =>
      el('tr', { 'data-row': id }, el('th', { scope: 'row', text: label }), cell(a, 'naive'), cell(s, 'stream'));
    clear(memTable);
    memTable.append(
      el('caption', { text: `n = ${n}, d = ${d} (d_h = ${r.headDim}), ${cur.heads} heads, ${cur.layers} layers, ${b} B per number. Decimal units (1 KB = 1000 B) as in seed 000; binary below.` }),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: '' }),
        el('th', { scope: 'col', text: 'materialized (n × n)' }), el('th', { scope: 'col', text: 'streaming (online softmax)' }))),
      el('tbody', {},
        row('scores-head', 'Scores, one head', r.scoresPerHead, r.tilePerHead),
        row('scores-layer', `Scores, one layer (${cur.heads} heads)`, r.scoresPerLayer, r.tilePerLayer),
        row('scores-all', `Scores, ${cur.heads} heads × ${cur.layers} layers`, r.scoresAll, r.tileAll),
        row('qkvo-all', `q, k, v, output (4 n d b), ${cur.layers} layers`, r.qkvoAll, r.qkvoAll),
        row('total-all', 'Total, all layers', r.materializedAll, r.streamingAll)),
    );
    memTable.querySelector('tr[data-row="total-all"]')?.classList.add('sum-row');

    const fcell = (v: bigint, col: string) => el('td', { 'data-col': col, 'data-value': v.toString(), title: `${digits(v)} FLOPs`, text: formatFlops(v) });
    const totalLayer = r.projFlopsPerLayer + r.attnFlopsPerLayer;
    const totalAll = r.projFlopsAll + r.attnFlopsAll;
    const share = Number((r.attnFlopsPerLayer * 10000n) / totalLayer) / 100;
    clear(flopTable);
    flopTable.append(
      el('caption', { text: 'FLOPs of one forward pass over the n tokens' }),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: '' }), el('th', { scope: 'col', text: 'one layer' }), el('th', { scope: 'col', text: `${cur.layers} layers` }))),
      el('tbody', {},
        el('tr', { 'data-row': 'proj' }, el('th', { scope: 'row', text: 'Projections Q, K, V, O: 8 n d²' }), fcell(r.projFlopsPerLayer, 'layer'), fcell(r.projFlopsAll, 'all')),
        el('tr', { 'data-row': 'attn' }, el('th', { scope: 'row', text: 'Attention QKᵀ and P·V: 4 n² d' }), fcell(r.attnFlopsPerLayer, 'layer'), fcell(r.attnFlopsAll, 'all')),
        el('tr', { 'data-row': 'total', class: 'sum-row' }, el('th', { scope: 'row', text: `Total (attention: ${share}%)` }), fcell(totalLayer, 'layer'), fcell(totalAll, 'all'))),
    );
    crossover.dataset.value = String(r.crossoverN);
    crossover.dataset.ratio = String(r.attnOverProj);
    crossover.textContent = r.attnOverProj === 1
      ? `The n² term overtakes at n = 2d = ${r.crossoverN}: here, exactly at the crossover, attention and the projections cost the same.`
      : r.attnOverProj > 1
        ? `The n² term overtakes at n = 2d = ${r.crossoverN}. At n = ${n}, attention costs ${fmtRatio(r.attnOverProj)} × the projections, and every doubling of n doubles that ratio.`
        : `The n² term overtakes at n = 2d = ${r.crossoverN}. At n = ${n} the projections still dominate: attention is ${fmtRatio(r.attnOverProj)} × their cost.`;

    // FLOPs per layer against n: two straight lines in log-log (slope 1 and slope 2) crossing at n = 2d.
    const lo = 2 ** Math.max(0, Math.floor(Math.log2(Math.min(n, 2 * d))) - 3);
    const hi = 2 ** (Math.ceil(Math.log2(Math.max(n, 2 * d))) + 3);
    const proj = (m: number) => 8 * m * d * d;
    const attn = (m: number) => 4 * m * m * d;
    const yr = decades(Math.min(proj(lo), attn(lo)), Math.max(proj(hi), attn(hi)));
    const xTicks: number[] = [];
    const stepPow = Math.max(1, Math.ceil((Math.log2(hi) - Math.log2(lo)) / 7));
    for (let p = Math.log2(lo); p <= Math.log2(hi); p += stepPow) xTicks.push(2 ** p);
    const yStep = Math.max(1, Math.ceil(yr.ticks.length / 6));
    flopsChart.update({
      series: [
        { key: 'proj', label: 'projections 8nd²', colour: COLOURS.streaming, points: [{ x: lo, y: proj(lo) }, { x: hi, y: proj(hi) }] },
        { key: 'attn', label: 'attention 4n²d', colour: COLOURS.materialized, points: [{ x: lo, y: attn(lo) }, { x: hi, y: attn(hi) }] },
      ],
      x: [lo, hi], y: yr.domain, xTicks, yTicks: yr.ticks.filter((_, i) => i % yStep === 0),
      xFormat: shortCount, yFormat: (v) => shortSI(v, 'FLOP'),
      guides: [{ x: 2 * d, label: 'n = 2d' }, ...(n !== 2 * d ? [{ x: n, label: 'your n' }] : [])],
      label: `FLOPs per layer against n at d = ${d}: projections 8nd² (slope 1) and attention 4n²d (slope 2) cross at n = 2d = ${2 * d}.`,
    });
  }
  section.append(el('ul', { class: 'cost-legend', 'aria-label': 'Legend of the FLOPs chart' },
    legendItem(COLOURS.streaming, 'projections Q, K, V, O: 8nd²'),
    legendItem(COLOURS.materialized, 'attention QKᵀ and P·V: 4n²d')));

  function showInputs(): void {
    inputs.n.value = String(cur.n); inputs.d.value = String(cur.d);
    inputs.heads.value = String(cur.heads); inputs.layers.value = String(cur.layers);
    for (const i of Object.values(inputs)) i.removeAttribute('aria-invalid');
    bytes.value = String(cur.bytes);
  }
  // A loaded state file changes the inputs from outside: follow it.
  store.subscribe((s, changed) => {
    if (!COST_KEYS.some((k) => changed.has(k))) return;
    const next = fromState(s);
    if ((Object.keys(next) as (keyof CostInput)[]).every((k) => next[k] === cur[k])) return; // our own update
    Object.assign(cur, next);
    presetId = presetOf(cur);
    showInputs();
    render();
  });
  render();
}

const SUP: Record<string, string> = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
/** "= 1.00 MB" or "≈ 201 MB": never "= ≈". */
const eq = (s: string) => (s.startsWith('≈') ? s : `= ${s}`);
/** 3 significant digits; powers of ten written out (2.24 × 10⁷) from a million up and below 0.001. */
const fmtRatio = (x: number) => {
  if (x < 1e6 && x >= 1e-3) return Number(x.toPrecision(3)).toString();
  const [m, e] = x.toExponential(2).split('e');
  return `${m} × 10${[...String(Number(e))].map((c) => SUP[c]).join('')}`;
};
const shortCount = (v: number) => (v >= 1e6 ? `${v / 2 ** 20}M` : v >= 1024 ? `${v / 1024}k` : String(v));

function legendItem(colour: string, label: string, opts: { dashed?: boolean; marker?: boolean } = {}): HTMLElement {
  const sw = el('span', { class: `cost-swatch${opts.dashed ? ' dashed' : ''}${opts.marker ? ' marker' : ''}`, 'aria-hidden': 'true' });
  sw.style.setProperty('--swatch', colour); // CSSOM, allowed by the CSP (no inline style attribute parsing)
  return el('li', {}, sw, label);
}

// ---- 2. the measured curve ------------------------------------------------------------------------------------

function mountCurve(section: HTMLElement): void {
  let maxN = 4096;
  const maxSelect = selectControl(MAX_N_OPTIONS.map((v) => ({
    value: String(v), label: v > MAX_MATERIALIZED_N ? `${v} (streaming only above ${MAX_MATERIALIZED_N})` : String(v),
  })), String(maxN), (v) => { maxN = Number(v); }, 'cost-max-n');
  const measure = el('button', { type: 'button', class: 'chip cost-run', 'data-control': 'cost-measure', text: 'Measure in this browser' });
  const cancel = el('button', { type: 'button', class: 'chip', 'data-control': 'cost-cancel', text: 'Cancel', disabled: true });
  const progress = el('progress', { class: 'cost-progress', 'data-progress': 'cost-curve', max: 1, value: 0, 'aria-label': 'Measurement progress' });
  const status = el('p', { class: 'cost-status', role: 'status', 'aria-live': 'polite', 'data-status': 'cost-curve', text: 'Not measured yet.' });
  const timeChart = new LogLogChart('cost-time', 'n (tokens)', 'time per call');
  const memChart = new LogLogChart('cost-memory', 'n (tokens)', 'wasm memory');
  const table = el('table', { class: 'plain-table', 'data-table': 'cost-curve' });

  section.append(
    el('h3', { text: 'Measured in this browser' }),
    el('p', { class: 'intro', text: `The engine runs one attention call, q, k, v of n × ${CURVE_D} (fixed seeded random numbers), at n = 64, 128, … on both paths. Materialized asks for the weights, so the engine builds the n × n matrix and hands it back; streaming asks for the output only, so the engine walks the keys in ${TILE_ROWS} × ${TILE_KEYS} tiles with an online softmax and never holds more than a tile of scores. It runs in a Web Worker, so this page stays responsive.` }),
    el('p', { class: 'help', text: `Memory is measured: every point gets a fresh engine instance (wasm memory grows and never shrinks) and reports its memory after the calls, starting from 1 MiB. The dashed line is the theory for one n × n float32 matrix, 4n² bytes. The materialized instance ends near twice that line: the engine keeps the scores and the weights in two n × n buffers. Streaming grows too, but linearly: q, k, v, the output and a packed copy of Kᵀ, 5 · n · ${CURVE_D} floats. Time: a warm-up (at least one call, at least 10 ms), then the median of up to 5 timed batches within about a second per point (small n repeat the call within a batch). A materialized call also copies its n × n weights out to a new JavaScript array, and that copy is in its time. Sizes stay bounded: the materialized path stops at n = ${MAX_MATERIALIZED_N} (64 MiB of scores, twice that with the copy handed back), and a path whose single call takes over 4 s skips its larger n. Streaming can go to 8192.` }),
    el('div', { class: 'cost-run-row' },
      field('largest n', maxSelect),
      el('div', { class: 'button-group', role: 'group', 'aria-label': 'Measurement' }, measure, cancel)),
    el('div', { class: 'cost-progress-row' }, progress, status),
    el('ul', { class: 'cost-legend', 'aria-label': 'Legend of the measured charts' },
      legendItem(COLOURS.materialized, PATH_LABEL.materialized, { marker: true }),
      legendItem(COLOURS.streaming, PATH_LABEL.streaming, { marker: true }),
      legendItem(COLOURS.theory, 'one n × n float32 matrix, 4n² B (theory)', { dashed: true })),
    el('div', { class: 'two-col cost-charts' },
      el('figure', { class: 'panel cost-figure' }, el('figcaption', { text: 'Time per attention call (log-log)' }), timeChart.root),
      el('figure', { class: 'panel cost-figure' }, el('figcaption', { text: 'Wasm memory after the call (log-log)' }), memChart.root)),
    el('details', { class: 'cost-numbers' }, el('summary', { text: 'The measured numbers' }), el('div', { class: 'table-scroll' }, table)),
  );

  const points = new Map<string, CurvePoint>();
  let worker: Worker | null = null;
  let backend = '';

  const setState = (s: 'idle' | 'running' | 'done' | 'cancelled' | 'error') => {
    section.dataset.curveState = s;
    measure.disabled = s === 'running';
    cancel.disabled = s !== 'running';
    maxSelect.disabled = s === 'running';
  };
  setState('idle');

  function draw(): void {
    const all = [...points.values()].sort((a, b) => a.n - b.n);
    const of = (p: CurvePath) => all.filter((q) => q.path === p);
    const xs = all.map((p) => p.n);
    const xMax = Math.max(maxN, ...xs);
    const xTicks: number[] = [];
    for (let m = 64; m <= xMax; m *= 2) xTicks.push(m);
    const x: [number, number] = [48, xMax * 1.35];
    // Axes fit the data (empty charts get a plausible frame) and always span whole decades.
    const t = all.length ? decades(Math.min(...all.map((p) => p.ms)), Math.max(...all.map((p) => p.ms))) : decades(0.01, 1000);
    timeChart.update({
      series: (['materialized', 'streaming'] as CurvePath[]).map((p) => ({
        key: p, label: PATH_LABEL[p], colour: COLOURS[p], markers: true, points: of(p).map((q) => ({ x: q.n, y: q.ms })),
      })),
      x, y: t.domain, xTicks, yTicks: t.ticks, xFormat: String, yFormat: tickMs,
      label: `Time per attention call against n, log-log. ${all.map((p) => `${p.path} n=${p.n}: ${fmtMs(p.ms)} ms`).join('; ') || 'No points yet.'}`,
    });
    const theory = [64, xMax].map((m) => ({ x: m, y: squareBytes(m) }));
    const m = decades(Math.min(2 ** 14, ...all.map((p) => p.memoryBytes)), Math.max(squareBytes(xMax), ...all.map((p) => p.memoryBytes)));
    memChart.update({
      series: [
        { key: 'theory', label: 'one n×n float32 matrix', colour: COLOURS.theory, dashed: true, points: theory },
        ...(['materialized', 'streaming'] as CurvePath[]).map((p) => ({
          key: p, label: PATH_LABEL[p], colour: COLOURS[p], markers: true, points: of(p).map((q) => ({ x: q.n, y: q.memoryBytes })),
        })),
      ],
      x, y: m.domain, xTicks, yTicks: m.ticks, xFormat: String, yFormat: (v) => shortSI(v, 'B'),
      label: `Wasm memory after the call against n, log-log. ${all.map((p) => `${p.path} n=${p.n}: ${formatBinary(BigInt(p.memoryBytes))}`).join('; ') || 'No points yet.'}`,
    });

    clear(table);
    table.append(
      el('caption', { text: `Attention at d = ${CURVE_D}${backend ? `, ${backend} engine` : ''}, in a Web Worker` }),
      el('thead', {}, el('tr', {}, ...['n', 'path', 'median time per call', 'calls timed', 'wasm memory after (measured)', 'n × n float32 (theory)']
        .map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, ...all.map((p) => el('tr', { 'data-path': p.path, 'data-n': p.n },
        el('th', { scope: 'row', text: String(p.n) }),
        el('td', { text: p.path }),
        el('td', { 'data-col': 'ms', 'data-value': String(p.ms), text: `${fmtMs(p.ms)} ms` }),
        el('td', { 'data-col': 'calls', 'data-value': String(p.batches * p.reps), text: `${p.batches} × ${p.reps}` }),
        el('td', { 'data-col': 'memory', 'data-value': String(p.memoryBytes), text: formatBinary(BigInt(p.memoryBytes)) }),
        el('td', { 'data-col': 'theory', 'data-value': String(squareBytes(p.n)), text: formatBinary(BigInt(squareBytes(p.n))) })))),
    );
  }
  draw();

  measure.addEventListener('click', () => {
    if (worker) return;
    const plan: CurveRequest['points'] = [];
    for (let n = 64; n <= maxN; n *= 2) {
      if (n <= MAX_MATERIALIZED_N) plan.push({ n, path: 'materialized' });
      plan.push({ n, path: 'streaming' });
    }
    points.clear();
    draw();
    progress.max = plan.length;
    progress.value = 0;
    status.textContent = 'Starting the worker…';
    // Measure is disabled while running: focus moves to Cancel instead of being lost.
    const hadFocus = document.activeElement === measure;
    setState('running');
    if (hadFocus) cancel.focus();
    const w = new CurveWorker();
    worker = w;
    const finish = (state: 'done' | 'error', text: string) => {
      w.terminate();
      if (worker === w) worker = null;
      status.textContent = text;
      const onCancel = document.activeElement === cancel;
      setState(state);
      if (onCancel) measure.focus(); // Cancel is about to be disabled
    };
    w.addEventListener('message', (e: MessageEvent<CurveMessage>) => {
      if (worker !== w) return; // a message queued before Cancel
      const msg = e.data;
      if (msg.type === 'start') {
        status.textContent = `n = ${msg.n}, ${msg.path} (${msg.index + 1}/${msg.total})`;
      } else if (msg.type === 'point') {
        progress.value = msg.index + 1;
        backend = msg.point.backend;
        points.set(`${msg.point.path}:${msg.point.n}`, msg.point);
        draw();
      } else if (msg.type === 'skip') {
        progress.value = msg.index + 1;
        status.textContent = `n = ${msg.n}, ${msg.path} skipped: ${msg.reason} (${msg.index + 1}/${msg.total})`;
      } else if (msg.type === 'done') {
        progress.value = progress.max;
        finish('done', `Done: ${points.size} points measured (${backend}).`);
      } else {
        finish('error', `The measurement failed: ${msg.message}`);
      }
    });
    w.addEventListener('error', (e) => finish('error', `The worker failed: ${e.message || 'could not start'}`));
    w.postMessage({ type: 'run', points: plan, d: CURVE_D, seed: CURVE_SEED, budgetMs: 1000, maxCallMs: 4000 } satisfies CurveRequest);
  });

  cancel.addEventListener('click', () => {
    if (!worker) return;
    // terminate() stops the worker mid-call: nothing more arrives, and the points so far stay plotted.
    worker.terminate();
    worker = null;
    status.textContent = `Cancelled after ${points.size} of ${progress.max} points; those stay plotted.`;
    setState('cancelled');
    measure.focus();
  });
}
