// The nav's "Save / load": the whole state as a JSON file, and back (the format: state/state-file.ts).
import '../styles/export.css';
import { el } from './dom';
import { download } from './export';
import { setNavLabel } from './nav-label';
import type { Store } from '../state/store';
import { parseStateJson, stateToJsonText, MAX_STATE_BYTES } from '../state/state-file';

/** The nav's "Save / load" chip and its panel: download the state as JSON, load it from a file or pasted text. */
export function saveLoadControls(store: Store): { item: HTMLElement; panel: HTMLElement } {
  const toggle = el('button', { type: 'button', class: 'chip', 'data-control': 'save-load', 'aria-expanded': 'false', 'aria-controls': 'save-load-panel' });
  setNavLabel(toggle, 'Save / load', 'Save');
  const message = el('p', { class: 'save-load-message', role: 'status', 'aria-live': 'polite', 'data-save-load-message': '' });
  const save = el('button', { type: 'button', class: 'chip', 'data-control': 'state-export', 'aria-label': 'Download the whole state as JSON', text: 'Download state (JSON)' });
  // The native file input stays hidden; the "Load from file…" button opens it (one labelled tab stop).
  const file = el('input', { type: 'file', accept: '.json,application/json', hidden: true, 'data-control': 'state-file' });
  const pick = el('button', { type: 'button', class: 'chip', 'data-control': 'state-import', text: 'Load from file…' });
  const paste = el('textarea', { rows: 3, spellcheck: 'false', 'data-control': 'state-paste', 'aria-label': 'Paste a state JSON', placeholder: 'or paste a state JSON here' });
  const loadPasted = el('button', { type: 'button', class: 'chip', 'data-control': 'state-load-pasted', text: 'Load pasted' });
  const close = el('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close save / load', text: '×' });
  const panel = el('div', { class: 'save-load-panel', id: 'save-load-panel', role: 'region', 'aria-label': 'Save or load the state', hidden: true },
    el('div', { class: 'save-load-row' }, save, pick, file, close),
    el('div', { class: 'save-load-row' }, paste, loadPasted),
    message);

  const setOpen = (open: boolean) => {
    panel.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
  };
  toggle.addEventListener('click', () => setOpen(panel.hidden));
  close.addEventListener('click', () => { setOpen(false); toggle.focus(); });
  panel.addEventListener('keydown', (e) => { if (e.key === 'Escape') { setOpen(false); toggle.focus(); } });

  // textContent only: names in the notice come from the file, and nothing from it is ever parsed as HTML.
  const say = (text: string, kind: 'ok' | 'warn') => {
    message.textContent = text;
    message.dataset.kind = kind;
  };
  save.addEventListener('click', () => {
    download(new Blob([stateToJsonText(store.state)], { type: 'application/json' }), 'attnlab-state.json');
    say('State downloaded as attnlab-state.json.', 'ok');
  });
  const load = (text: string, from: string) => {
    const r = parseStateJson(text);
    if (!r.ok) { say(`Nothing was loaded: ${r.error.length > 600 ? `${r.error.slice(0, 600)}…` : r.error}`, 'warn'); return; }
    store.update(r.state);
    store.flushUrl();
    const parts = [`Loaded the state from ${from}.`];
    const shown = r.rejected.slice(0, 20).map((k) => (k.length > 40 ? `${k.slice(0, 40)}…` : k));
    if (r.rejected.length) parts.push(`These fields were not valid and were reset to their defaults: ${shown.join(', ')}${r.rejected.length > shown.length ? ', …' : ''}.`);
    if (r.unknown) parts.push(`${r.unknown} unknown field${r.unknown > 1 ? 's were' : ' was'} ignored.`);
    say(parts.join(' '), r.rejected.length || r.unknown ? 'warn' : 'ok');
  };
  pick.addEventListener('click', () => file.click());
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    file.value = '';
    if (!f) return;
    if (f.size > MAX_STATE_BYTES) { say(`Nothing was loaded: the file is too large for a state file (over ${MAX_STATE_BYTES / 1024} kB).`, 'warn'); return; }
    load(await f.text(), 'the file');
  });
  loadPasted.addEventListener('click', () => load(paste.value, 'the pasted text'));
  return { item: el('li', { class: 'nav-save-load' }, toggle), panel };
}
