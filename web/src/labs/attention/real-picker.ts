// The choice between the page's own weights and a real model's layer (and head), for the figures that have their
// own controls: a switch, and selects filled from the model's configuration once it has loaded.
import type { Store } from '../../state/store';
import type { AppState } from '../../state/app-state';
import { el, clear } from '../../ui/dom';
import { field, select, toggle } from '../../ui/controls';
import { loadShippedModel, realModel } from '../../model/real-model';

export interface RealPicker {
  root: HTMLElement;
  sync(s: AppState): void;
}

/**
 * `on` reads whether the figure is on the real model and `set` switches it; with `head`, a head select too. The
 * layer and head are the page's one choice (realLayer, realHead).
 */
export function realPicker(store: Store, name: string, on: (s: AppState) => boolean, set: (v: boolean) => Partial<AppState>, head: boolean): RealPicker {
  const sw = toggle('real model', on(store.state), (v) => {
    store.update(set(v));
    if (v && !realModel()) loadShippedModel().catch(() => { /* the figure says it did not load */ });
  }, `${name}-real`, 'A real language model’s attention on the text above, cut into its tokens; off: the page’s own weights.');
  const layer = select([], '0', (v) => store.update({ realLayer: Number(v) }), `${name}-real-layer`);
  const headSel = select([], '0', (v) => store.update({ realHead: Number(v) }), `${name}-real-head`);
  const choice = el('div', { class: 'field-row', 'data-real-hide': '' }, field('Layer', layer), ...(head ? [field('Head', headSel)] : []));
  const root = el('div', { class: 'real-picker', 'data-figure': `${name}-real-picker` }, sw.root, choice);
  const fill = (sel: HTMLSelectElement, count: number, label: string, value: number) => {
    if (sel.options.length !== count) {
      clear(sel);
      for (let i = 0; i < count; i++) sel.appendChild(el('option', { value: String(i), text: `${label} ${i + 1}` }));
    }
    sel.value = String(Math.min(value, count - 1));
  };
  return {
    root,
    sync(s) {
      const active = on(s);
      sw.input.checked = active;
      const m = realModel()?.model;
      choice.hidden = !active || !m;
      if (m) {
        fill(layer, m.config.layers, 'layer', s.realLayer);
        fill(headSel, m.config.heads, 'head', s.realHead);
      }
    },
  };
}
