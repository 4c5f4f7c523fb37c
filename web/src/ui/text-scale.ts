// Text that keeps its size on screen in an SVG that scales with its box (a fixed viewBox, width 100%): as the box
// narrows, the picture shrinks and so would its text. The stylesheet sizes such text as
// calc(N px * var(--text-scale, 1)); this sets --text-scale on the SVG to how much the picture is shrunk.

/** Keeps `svg`'s --text-scale at viewBoxWidth / its shown width (at least 1) while `box` changes size. */
export function keepTextSize(svg: SVGSVGElement, box: Element, viewBoxWidth: number): void {
  if (typeof ResizeObserver === 'undefined') return;
  new ResizeObserver(() => {
    const shown = svg.getBoundingClientRect().width;
    if (shown > 0) svg.style.setProperty('--text-scale', Math.max(1, viewBoxWidth / shown).toFixed(3));
  }).observe(box);
}
