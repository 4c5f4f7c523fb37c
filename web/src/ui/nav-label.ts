// The section bar's two actions (Copy link, Save / load) at phone width show a short word instead of their label, so
// the list of sections keeps room for its longest link between its arrows; the stylesheet picks which shows
// (base.css). The full label stays the button's name, and the short word is part of it.
import { el } from './dom';

export function setNavLabel(button: HTMLElement, label: string, short: string): void {
  button.setAttribute('aria-label', label);
  button.replaceChildren(el('span', { class: 'label-long', text: label }), el('span', { class: 'label-short', text: short }));
}
