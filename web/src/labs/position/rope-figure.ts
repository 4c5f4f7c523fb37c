// RoPE in two dimensions: a query q at position m and a key k at position n, each turned by the engine's lab.rope
// (d_k = 2: one pair, θ = 1 radian per position), drawn as arrows; their dot product; and the whole table of
// q_m·k_n for m, n = 0…11, whose diagonals (same m − n) hold one value each.
import { select } from 'd3';
import type { Engine } from '../../engine';
import { el } from '../../ui/dom';
import { fmt } from '../../ui/format';
import { Heatmap } from '../../ui/heatmap';

const Q = [1, 0.35], K = [0.9, -0.45];
const N = 12;

export class RopeFigure {
  readonly root: HTMLElement;
  private m = 3;
  private n = 1;
  private svg;
  private readout = el('p', { class: 'position-claim', 'data-figure': 'rope-readout', 'aria-live': 'polite' });
  private claim = el('p', { class: 'position-claim', 'data-figure': 'rope-claim' });
  private grid = new Heatmap({ name: 'rope-dots', label: 'q·k after rotation, query position m (rows) by key position n (columns)', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 30, palette: 'div' });

  constructor(private engine: Engine) {
    const slider = (label: string, value: number, name: string, set: (v: number) => void) => {
      const input = el('input', { type: 'range', min: 0, max: 15, step: 1, value, 'data-control': name });
      const out = el('output', { class: 'slider-value', text: String(value) });
      input.addEventListener('input', () => { out.textContent = input.value; set(Number(input.value)); this.render(); });
      const id = `${name}-input`;
      input.id = id;
      return el('div', { class: 'field slider' }, el('label', { for: id, text: label }), el('div', { class: 'slider-row' }, input, out));
    };
    const pic = el('div', { class: 'rope-plane' });
    this.svg = select(pic).append('svg').attr('viewBox', '-1.7 -1.3 3.4 2.6').attr('width', 340).attr('height', 260).attr('role', 'img').attr('data-figure', 'rope-plane');
    this.root = el('div', {},
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' },
          slider('Query position m', this.m, 'rope-m', (v) => { this.m = v; }),
          slider('Key position n', this.n, 'rope-n', (v) => { this.n = v; }),
          pic, this.readout),
        el('div', { class: 'panel' }, this.grid.root, this.claim)));
  }

  /** Rows of `v` placed at positions 0…count−1, rotated by the engine. */
  private rotated(v: number[], positions: number[]): Float32Array {
    const x = new Float32Array(positions.length * 2);
    positions.forEach((_, i) => { x[2 * i] = v[0]; x[2 * i + 1] = v[1]; });
    return this.engine.rope(x, { dk: 2, positions: Int32Array.from(positions) });
  }

  render(): void {
    const q = this.rotated(Q, [this.m]), k = this.rotated(K, [this.n]);
    const dot = this.engine.matmul(q, k, { m: 1, k: 2, n: 1, transposeB: true })[0];
    const svg = this.svg;
    svg.selectAll('*').remove();
    svg.append('circle').attr('r', 1).attr('fill', 'none').attr('stroke', '#dfe2e8').attr('stroke-width', 0.01);
    svg.append('line').attr('x1', -1.2).attr('x2', 1.2).attr('stroke', '#dfe2e8').attr('stroke-width', 0.008);
    svg.append('line').attr('y1', -1.2).attr('y2', 1.2).attr('stroke', '#dfe2e8').attr('stroke-width', 0.008);
    const arrow = (v: ArrayLike<number>, colour: string, label: string, ghost: boolean) => {
      const g = svg.append('g').attr('opacity', ghost ? 0.35 : 1);
      g.append('line').attr('x1', 0).attr('y1', 0).attr('x2', v[0]).attr('y2', -v[1]).attr('stroke', colour).attr('stroke-width', 0.03).attr('stroke-dasharray', ghost ? '0.05 0.04' : null);
      g.append('circle').attr('cx', v[0]).attr('cy', -v[1]).attr('r', 0.045).attr('fill', colour);
      if (!ghost) g.append('text').attr('x', v[0] * 1.1).attr('y', -v[1] * 1.1 + 0.04).attr('font-size', 0.12).attr('text-anchor', v[0] < 0 ? 'end' : 'start').attr('fill', colour).text(label);
    };
    arrow(Q, '#1f4e89', '', true);
    arrow(K, '#b35806', '', true);
    arrow(q, '#1f4e89', `q at ${this.m}`, false);
    arrow(k, '#b35806', `k at ${this.n}`, false);
    svg.attr('aria-label', `q turned by ${this.m} radians, k by ${this.n} radians; their dot product ${fmt(dot, 4)}`);
    const d = this.m - this.n;
    this.readout.textContent = `q turned by ${this.m} rad, k by ${this.n} rad: the angle between them changed by m − n = ${d} rad, and q·k = ${fmt(dot, 4)}. Move both sliders by the same amount: the arrows turn together and q·k stays put.`;
    this.readout.dataset.dot = String(dot);

    // The table: every query position against every key position, one engine product.
    const pos = Array.from({ length: N }, (_, i) => i);
    const qs = this.rotated(Q, pos), ks = this.rotated(K, pos);
    const dots = this.engine.matmul(qs, ks, { m: N, k: 2, n: N, transposeB: true });
    let spread = 0;
    for (let dist = -(N - 1); dist < N; dist++) {
      let lo = Infinity, hi = -Infinity;
      for (let i = 0; i < N; i++) { const j = i - dist; if (j < 0 || j >= N) continue; lo = Math.min(lo, dots[i * N + j]); hi = Math.max(hi, dots[i * N + j]); }
      spread = Math.max(spread, hi - lo);
    }
    const labels = pos.map(String);
    this.grid.update({ name: 'rope-dots', label: 'q·k after rotation, query position m (rows) by key position n (columns)', n: N, m: N, values: dots, rowLabels: labels, colLabels: labels, maxCell: 30, palette: 'div' });
    this.claim.dataset.spread = String(spread);
    this.claim.textContent = `q_m·k_n for m, n = 0…${N - 1} (rows m, columns n). Along each diagonal the distance m − n is the same, and so is the dot product: the largest spread along any diagonal is ${spread === 0 ? 'exactly 0' : `${spread.toExponential(1)}, float32 rounding`}. Off the diagonals the values change: the score sees how far apart two words are, not where they are.`;
  }
}
