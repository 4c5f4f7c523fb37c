// How many workers the page's own pools start (the speed lab's and the cost curve's init({ threads })): one per
// logical core the browser reports, at most MAX_PAGE_THREADS (each worker holds its own engine instance, and a phone
// or a laptop on battery gains little past a handful of cores).
export const MAX_PAGE_THREADS = 8;
export const pageThreads = (): number => Math.max(1, Math.min(MAX_PAGE_THREADS, navigator.hardwareConcurrency || 1));
