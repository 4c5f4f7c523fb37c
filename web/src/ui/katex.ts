// KaTeX rendering. katex.render builds DOM nodes and sets styles through the CSSOM, so it works under a
// Content-Security-Policy without 'unsafe-inline' (renderToString + innerHTML would not, and is never used).
import katex from 'katex';
import 'katex/dist/katex.min.css';
import { el } from './dom';

export function tex(source: string, display = false): HTMLElement {
  const node = el(display ? 'div' : 'span', { class: display ? 'tex tex-display' : 'tex' });
  katex.render(source, node, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' });
  return node;
}

/** Re-renders only when the source changed (KaTeX layout is the costliest part of a small update). */
export function setTex(node: HTMLElement, source: string, display = false): void {
  if (node.dataset.tex === source) return;
  node.dataset.tex = source;
  katex.render(source, node, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' });
}
