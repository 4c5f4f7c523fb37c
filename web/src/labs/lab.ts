// What every lab gets from the page, and what it gives back.
import type { Engine } from '../engine';
import type { Store } from '../state/store';

export interface LabContext {
  engine: Engine;
  store: Store;
  /** Reports how long a recompute (engine + render) took, for the status line and the e2e timing test. */
  reportTiming(lab: string, ms: number): void;
}

export interface Lab {
  id: string;
  /** Short name for the section nav. */
  nav: string;
  mount(section: HTMLElement, ctx: LabContext): void;
}
