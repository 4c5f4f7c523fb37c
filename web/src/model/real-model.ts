// The page's current real model: a Hugging Face checkpoint loaded with lab.loadModel (the shipped one, or one the
// learner opened from disk or from the Hub). The views that run on a real model read it here and listen for a new
// one; whoever replaces it disposes of the old one only after the new one is set, so a failed load never leaves the
// page without a model.
import type { Model } from 'attnlab';

export interface RealModelInfo {
  /** What the page calls it: the folder's or the repository's name. */
  name: string;
  source: 'shipped' | 'disk' | 'hub';
  /** The Hub repository id, for source 'hub'. */
  repo?: string;
}

let current: { model: Model; info: RealModelInfo } | undefined;
const listeners = new Set<(model: Model, info: RealModelInfo) => void>();

/** Makes `model` the page's real model and tells every listener; the previous one is disposed of afterwards. */
export function setRealModel(model: Model, info: RealModelInfo): void {
  const old = current;
  current = { model, info };
  for (const f of listeners) f(model, info);
  if (old && old.model !== model) old.model.dispose();
}

/** The current real model and what it is, or undefined before the first one is set. */
export const realModel = (): { model: Model; info: RealModelInfo } | undefined => current;

/** Calls `cb` with every new real model (not with the current one). */
export function onRealModel(cb: (model: Model, info: RealModelInfo) => void): void {
  listeners.add(cb);
}
