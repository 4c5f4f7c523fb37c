// A box that scrolls sideways (a wide table or formula on a phone) must say so and be reachable from the keyboard:
// while its content overflows it becomes a focusable, labelled region (arrow keys then scroll it), and the side
// with more content past it fades out (data-more-left / data-more-right, styled in labs.css), so a reader sees
// that the numbers go on. When everything fits it is a plain box again: wide screens get no extra tab stops.
const SELECTOR = '.table-scroll, .katex-display, .learn-big, .heatmap-scroll';

function label(box: Element): string {
  const caption = box.querySelector('caption')?.textContent?.trim();
  if (caption) return `Table, scrolls sideways: ${caption}`;
  // A heatmap's own box, or a plain box around one (the model view's large head): named after the picture.
  const svg = box.querySelector('svg[role="img"]');
  const picture = svg?.getAttribute('aria-label')?.split(':')[0];
  if (picture) return `${box.matches('.heatmap-scroll') || svg!.matches('.heatmap-svg') ? 'Heatmap' : 'Figure'}, scrolls sideways: ${picture}`;
  const tex = box.querySelector('annotation')?.textContent?.trim();
  if (tex) return `Formula, scrolls sideways: ${tex.length > 80 ? `${tex.slice(0, 80)}…` : tex}`;
  return 'Scrolls sideways';
}

/** Marks the ends that have more content past them (2 px of slack for sub-pixel widths). */
function edges(box: HTMLElement): void {
  const more = box.scrollWidth - box.clientWidth;
  box.toggleAttribute('data-more-left', more > 1 && box.scrollLeft > 2);
  box.toggleAttribute('data-more-right', more > 1 && box.scrollLeft < more - 2);
}

function update(box: HTMLElement): void {
  // Only a box that scrolls itself: one whose overflow a page style has made visible (the model view's heatmap, whose
  // outer box scrolls instead) would be a second, dead tab stop around the same picture.
  const over = box.scrollWidth > box.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(box).overflowX);
  edges(box);
  if (over === box.hasAttribute('data-scrolls')) return;
  if (over) {
    box.dataset.scrolls = '';
    box.tabIndex = 0;
    box.setAttribute('role', 'region');
    box.setAttribute('aria-label', label(box));
  } else {
    delete box.dataset.scrolls;
    box.removeAttribute('tabindex');
    box.removeAttribute('role');
    box.removeAttribute('aria-label');
  }
}

export function keyboardScrollable(root: HTMLElement): void {
  const watched = new WeakSet<Element>();
  // Boxes to measure when the page is idle. Below the screen content-visibility leaves a step unlaid-out, so its
  // boxes get no ResizeObserver entry and would become regions only once seen; a tab stop, and a screen reader's
  // list of regions, must not wait for that. Reading a box's scrollWidth lays out its step (once, off the screen's
  // critical path). root[data-overflow-pending] is set while boxes wait.
  const pending = new Set<HTMLElement>();
  let queued = false;
  const idle = (run: (d?: IdleDeadline) => void) => ('requestIdleCallback' in window ? requestIdleCallback(run, { timeout: 1000 }) : setTimeout(run, 50));
  const measure = (d?: IdleDeadline) => {
    queued = false;
    for (const box of pending) {
      pending.delete(box);
      if (box.isConnected) update(box);
      if (d && d.timeRemaining() <= 0 && !d.didTimeout) break;
    }
    if (pending.size) later();
    else delete root.dataset.overflowPending;
  };
  const later = (box?: HTMLElement) => {
    if (box) pending.add(box);
    root.dataset.overflowPending = '';
    if (!queued) { queued = true; idle(measure); }
  };
  const all = () => root.querySelectorAll<HTMLElement>(SELECTOR).forEach((b) => later(b));
  const resize = new ResizeObserver((entries) => {
    for (const e of entries) {
      const box = e.target.matches(SELECTOR) ? e.target : e.target.parentElement?.closest(SELECTOR);
      if (box instanceof HTMLElement) update(box);
    }
  });
  // A box can start to overflow without changing size itself (a formula's inline content, a section laid out only
  // when it nears the screen: content-visibility): check again each time it comes into view.
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting && e.target instanceof HTMLElement) update(e.target);
  });
  const watch = (box: Element) => {
    if (!(box instanceof HTMLElement)) return;
    later(box); // new, or new content (a table drawn again): measured, here or off screen
    if (watched.has(box)) return;
    watched.add(box);
    resize.observe(box);
    seen.observe(box);
    if (box.firstElementChild) resize.observe(box.firstElementChild);
    box.addEventListener('scroll', () => edges(box), { passive: true });
  };
  root.querySelectorAll(SELECTOR).forEach(watch);
  new MutationObserver((records) => {
    for (const r of records) {
      r.addedNodes.forEach((n) => {
        if (!(n instanceof Element)) return;
        if (n.matches(SELECTOR)) watch(n);
        n.querySelectorAll(SELECTOR).forEach(watch);
        const box = n.parentElement?.closest(SELECTOR);
        if (box) { watch(box); if (box.firstElementChild) resize.observe(box.firstElementChild); }
      });
    }
  }).observe(root, { childList: true, subtree: true });
  // Off-screen boxes do not see a new window width (no layout there, so no ResizeObserver entry): measure them
  // again. Only on a new width: a phone's toolbar sliding away changes the height alone.
  let width = window.innerWidth;
  window.addEventListener('resize', () => { if (window.innerWidth !== width) { width = window.innerWidth; all(); } });
}
