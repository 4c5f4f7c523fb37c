// Every layer × head attention pattern of the learn lab's model on one example, as small canvas heatmaps (a 4 × 8
// grid of SVG cells would be 100 000+ nodes redrawn several times a second). Each is a button: choosing one shows it
// large, with its token labels, in the lab's Heatmap. Each button's text names its layer, head and measured score.
import { el, clear } from '../../ui/dom';
import { makeScale } from '../../ui/palette';

export interface HeadTag { text: string; strong: boolean }

export class HeadGrid {
  readonly root: HTMLElement;
  private canvases: HTMLCanvasElement[][] = [];
  private captions: HTMLElement[][] = [];
  private buttons: HTMLButtonElement[][] = [];
  private shape = '';
  private scale = makeScale('seq', [], 1);
  selected: [number, number] = [0, 0];

  constructor(private onSelect: (layer: number, head: number) => void) {
    this.root = el('div', { class: 'learn-heads', 'data-figure': 'learn-heads' });
  }

  /** attention: one [heads, t, t] array per layer; tags: per layer and head, what its scores say. */
  update(attention: Float32Array[], heads: number, t: number, tags: HeadTag[][]): void {
    const layers = attention.length;
    const key = `${layers}×${heads}`;
    if (key !== this.shape) this.build(layers, heads);
    this.shape = key;
    if (this.selected[0] >= layers || this.selected[1] >= heads) this.selected = [0, 0];
    const px = 2 * Math.max(2, Math.floor(120 / Math.max(t, 1)));
    for (let y = 0; y < layers; y++) {
      for (let h = 0; h < heads; h++) {
        const c = this.canvases[y][h];
        const side = px * t / 2;
        if (c.width !== t * px) { c.width = t * px; c.height = t * px; c.style.width = `${side}px`; c.style.height = `${side}px`; }
        const g = c.getContext('2d')!;
        const a = attention[y].subarray(h * t * t, (h + 1) * t * t);
        for (let i = 0; i < t; i++) {
          for (let j = 0; j < t; j++) {
            g.fillStyle = j > i ? '#e4e6eb' : this.scale.colour(a[i * t + j]);
            g.fillRect(j * px, i * px, px, px);
          }
        }
        const tag = tags[y]?.[h];
        this.captions[y][h].textContent = tag?.text ?? '';
        this.captions[y][h].classList.toggle('strong', !!tag?.strong);
        const b = this.buttons[y][h];
        b.setAttribute('aria-pressed', String(this.selected[0] === y && this.selected[1] === h));
      }
    }
  }

  private build(layers: number, heads: number): void {
    clear(this.root);
    this.canvases = []; this.captions = []; this.buttons = [];
    for (let y = 0; y < layers; y++) {
      const row = el('div', { class: 'learn-layer', role: 'group', 'aria-label': `Layer ${y + 1}` }, el('p', { class: 'learn-layer-name', text: `Layer ${y + 1}` }));
      const cs: HTMLCanvasElement[] = [], caps: HTMLElement[] = [], bs: HTMLButtonElement[] = [];
      for (let h = 0; h < heads; h++) {
        const canvas = el('canvas', { 'aria-hidden': 'true' });
        const cap = el('span', { class: 'learn-head-tag' });
        const b = el('button', { type: 'button', class: 'learn-head', 'data-layer': y + 1, 'data-head': h + 1 }, el('span', { class: 'learn-head-name' }, el('span', { class: 'visually-hidden', text: `Layer ${y + 1}, ` }), `head ${h + 1}`), canvas, cap);
        b.addEventListener('click', () => { this.selected = [y, h]; this.onSelect(y, h); });
        row.appendChild(b);
        cs.push(canvas); caps.push(cap); bs.push(b);
      }
      this.root.appendChild(row);
      this.canvases.push(cs); this.captions.push(caps); this.buttons.push(bs);
    }
  }
}

/** A weight in [0, 1] to two decimals. */
export const score = (x: number): string => x.toFixed(2);
