// The "Copy as NumPy code" panel of the attention and multi-head labs (the code itself: model/numpy-code.ts).
import '../styles/export.css';
import { el } from './dom';

/**
 * "Copy as NumPy code": copies the script to the clipboard and always shows it in a read-only textarea,
 * so it can be selected by hand where the clipboard is not available (no permission, no secure context).
 */
export function codePanel(labName: string, generate: () => string | undefined): HTMLElement {
  const button = el('button', { type: 'button', class: 'chip code-copy', 'data-control': `copy-code-${labName}`, text: 'Copy as NumPy code' });
  const status = el('span', { class: 'code-status', role: 'status', 'aria-live': 'polite' });
  const area = el('textarea', { class: 'code-text', readonly: true, spellcheck: 'false', rows: 14, 'aria-label': 'NumPy code reproducing this view', 'data-code': labName });
  const box = el('div', { class: 'code-box', hidden: true }, area);
  button.addEventListener('click', async () => {
    const code = generate();
    if (code === undefined) { status.textContent = 'Nothing to export: type a sentence first.'; return; }
    area.value = code;
    box.hidden = false;
    try {
      await navigator.clipboard.writeText(code);
      status.textContent = 'Copied. The code is also below.';
    } catch {
      area.focus();
      area.select();
      status.textContent = 'Could not reach the clipboard: the code is selected below, copy it with Ctrl+C / ⌘C.';
    }
  });
  return el('div', { class: 'code-panel' }, el('div', { class: 'code-actions' }, button, status), box);
}
