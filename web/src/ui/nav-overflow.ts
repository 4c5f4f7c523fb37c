// The section list scrolls sideways when it does not fit: a fade and an arrow button at each end that has more
// sections past it, so the reader sees that there are more and can reach them without a trackpad.
import { el } from './dom';

export function navOverflow(list: HTMLElement): void {
  const wrap = list.parentElement!; // div.nav-scroller, which holds only the list
  const button = (dir: -1 | 1) => {
    const b = el('button', { type: 'button', class: `nav-more nav-more-${dir < 0 ? 'left' : 'right'}`, 'aria-label': dir < 0 ? 'Show earlier sections' : 'Show more sections', 'data-control': `nav-more-${dir < 0 ? 'left' : 'right'}`, text: dir < 0 ? '‹' : '›' });
    b.addEventListener('click', () => list.scrollBy({ left: dir * list.clientWidth * 0.7, behavior: 'smooth' }));
    return b;
  };
  const left = button(-1), right = button(1);
  wrap.append(left, right);
  const update = () => {
    const more = list.scrollWidth - list.clientWidth;
    const atStart = list.scrollLeft <= 2, atEnd = list.scrollLeft >= more - 2;
    wrap.classList.toggle('more-left', more > 2 && !atStart);
    wrap.classList.toggle('more-right', more > 2 && !atEnd);
    left.hidden = more <= 2 || atStart;
    right.hidden = more <= 2 || atEnd;
  };
  list.addEventListener('scroll', update, { passive: true });
  new ResizeObserver(update).observe(list);
  // The section in view is highlighted in the list: keep it visible when the list scrolls.
  new MutationObserver(() => {
    const a = list.querySelector('[aria-current="true"]');
    if (a) reveal(list, a);
  }).observe(list, { subtree: true, attributes: true, attributeFilter: ['aria-current'] });
  // A link reached by Tab: the browser scrolls it only to the very edge, under the arrow and the fade. (Again a
  // frame later, after the browser's own scroll.)
  list.addEventListener('focusin', (e) => {
    const a = (e.target as Element).closest('a');
    if (!a) return;
    reveal(list, a);
    requestAnimationFrame(() => reveal(list, a));
  });
  update();
}

/** Room kept at each end of the list for its arrow button (32 px, 2 px from the edge) and a little of the fade. */
const CLEAR = 40;

/**
 * Scrolls the list (scrollLeft, not scrollIntoView, which could also move the page while the reader scrolls it) so
 * `a` lies clear of the arrows; a link wider than the room between them (a phone's narrow list) is centred.
 */
function reveal(list: HTMLElement, a: Element): void {
  const r = a.getBoundingClientRect(), box = list.getBoundingClientRect();
  if (r.width > box.width - 2 * CLEAR) list.scrollLeft += (r.left + r.right - box.left - box.right) / 2;
  else if (r.left < box.left + CLEAR) list.scrollLeft -= box.left + CLEAR - r.left;
  else if (r.right > box.right - CLEAR) list.scrollLeft += r.right - (box.right - CLEAR);
}
