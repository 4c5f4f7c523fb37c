// A closed <details> for what most readers skip on a first pass: the tables behind a heatmap, the fine print of
// a calculator. The content stays in the document (screen readers, find-in-page once opened, the tests' reads).
import { el } from './dom';

export function disclosure(summary: string, content: HTMLElement, name: string, open = false): HTMLDetailsElement {
  const d = el('details', { class: 'disclosure', 'data-disclosure': name }, el('summary', { text: summary }), content);
  d.open = open;
  return d;
}
