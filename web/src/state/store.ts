// A tiny observable store: labs read the state, call update() with a patch, and re-render on change.
// The URL is rewritten (replaceState, debounced) so the address bar always holds the current view.
import type { AppState } from './app-state';
import { toQuery } from './url-state';

export type Listener = (state: AppState, changed: Set<keyof AppState>) => void;

export class Store {
  private listeners: Listener[] = [];
  private urlTimer: number | undefined;

  constructor(private current: AppState) {}

  get state(): AppState {
    return this.current;
  }

  subscribe(fn: Listener): void {
    this.listeners.push(fn);
  }

  update(patch: Partial<AppState>): void {
    const changed = new Set(Object.keys(patch) as (keyof AppState)[]);
    this.current = { ...this.current, ...patch };
    // One lab failing must not stop the others from updating.
    for (const fn of this.listeners) {
      try {
        fn(this.current, changed);
      } catch (err) {
        console.error(err);
      }
    }
    this.scheduleUrl();
  }

  /** Writes the URL now (tests and the "copy link" button want it immediately). */
  flushUrl(): void {
    window.clearTimeout(this.urlTimer);
    this.urlTimer = undefined;
    delete document.body.dataset.urlPending;
    const url = `${location.pathname}${toQuery(this.current)}${location.hash}`;
    history.replaceState(null, '', url);
  }

  private scheduleUrl(): void {
    // Marked while a write is due, so that tests wait for the URL to catch up instead of sleeping.
    document.body.dataset.urlPending = 'true';
    window.clearTimeout(this.urlTimer);
    this.urlTimer = window.setTimeout(() => this.flushUrl(), 120);
  }
}
