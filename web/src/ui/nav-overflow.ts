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
  // (scrollLeft, not scrollIntoView, which could also move the page while the reader scrolls it).
  new MutationObserver(() => {
    const a = list.querySelector('[aria-current="true"]');
    if (!a) return;
    const r = a.getBoundingClientRect(), box = list.getBoundingClientRect();
    if (r.left < box.left + 24) list.scrollLeft -= box.left + 24 - r.left;
    else if (r.right > box.right - 24) list.scrollLeft += r.right - (box.right - 24);
  }).observe(list, { subtree: true, attributes: true, attributeFilter: ['aria-current'] });
  update();
}
