// Form controls used by the labs: labelled selects, switches, log sliders and button groups.
import { el, nextId } from './dom';

export function field(label: string, control: HTMLElement, help?: string): HTMLElement {
  const id = control.id || nextId('f');
  control.id = id;
  const helpId = help ? `${id}-help` : undefined;
  if (helpId) control.setAttribute('aria-describedby', helpId);
  return el('div', { class: 'field' },
    el('label', { for: id, text: label }),
    control,
    help ? el('p', { class: 'help', id: helpId, text: help }) : null);
}

export function select(options: { value: string; label: string }[], value: string, onChange: (v: string) => void, name: string): HTMLSelectElement {
  const s = el('select', { 'data-control': name });
  for (const o of options) s.appendChild(el('option', { value: o.value, text: o.label }));
  s.value = value;
  s.addEventListener('change', () => onChange(s.value));
  return s;
}

/** A checkbox styled as a switch (still a native checkbox for keyboards and screen readers). */
export function toggle(label: string, checked: boolean, onChange: (v: boolean) => void, name: string, help?: string): { root: HTMLElement; input: HTMLInputElement } {
  const input = el('input', { type: 'checkbox', role: 'switch', 'data-control': name });
  input.checked = checked;
  input.addEventListener('change', () => onChange(input.checked));
  const root = el('label', { class: 'switch' }, input, el('span', { class: 'switch-track', 'aria-hidden': 'true' }), el('span', { text: label }));
  return { root: help ? el('div', { class: 'field' }, root, el('p', { class: 'help', text: help })) : root, input };
}

/** A log slider's step, in log10 of the value. */
const LOG_STEP = 0.01;

/** A slider on a log scale (temperature): the thumb moves in log10 units. */
export function logSlider(min: number, max: number, value: number, onChange: (v: number) => void, name: string, label: string): { root: HTMLElement; input: HTMLInputElement; set(v: number): void } {
  const input = el('input', {
    type: 'range', min: Math.log10(min), max: Math.log10(max), step: LOG_STEP, 'data-control': name,
  });
  const out = el('output', { class: 'slider-value' });
  const set = (v: number) => {
    input.value = String(Math.log10(v));
    out.textContent = formatTemp(v);
    input.setAttribute('aria-valuetext', formatTemp(v));
  };
  set(value);
  input.addEventListener('input', () => {
    // Snap near 1 so the neutral temperature is easy to hit, but only within half a step: a wider zone would send
    // an arrow key's one step from 1 straight back to 1, and the keyboard could never leave it.
    let v = 10 ** Number(input.value);
    v = Math.abs(Math.log10(v)) < LOG_STEP / 2 ? 1 : Number(v.toPrecision(3));
    out.textContent = formatTemp(v);
    input.setAttribute('aria-valuetext', formatTemp(v));
    onChange(v);
  });
  const id = nextId('slider');
  input.id = id;
  const root = el('div', { class: 'field slider' }, el('label', { for: id, text: label }), el('div', { class: 'slider-row' }, input, out));
  return { root, input, set };
}

export function formatTemp(v: number): string {
  return v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toPrecision(2);
}

export function buttonGroup(label: string, items: { label: string; title?: string; onClick: () => void; pressed?: boolean; name?: string }[]): HTMLElement {
  const g = el('div', { class: 'button-group', role: 'group', 'aria-label': label });
  for (const it of items) {
    const b = el('button', { type: 'button', class: 'chip', title: it.title, 'data-control': it.name });
    b.textContent = it.label;
    if (it.pressed !== undefined) b.setAttribute('aria-pressed', String(it.pressed));
    b.addEventListener('click', it.onClick);
    g.appendChild(b);
  }
  return g;
}

/**
 * Marks a field's value as one the page cannot use, or clears the mark. aria-invalid must say "true": the empty value
 * that toggleAttribute writes means "false" to assistive technology, and the invalid style (base.css) asks for "true".
 */
export function markInvalid(input: HTMLElement, bad: boolean): void {
  if (bad) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

/**
 * Puts a good value back into a field that is left holding one the page refused (marked invalid), and clears the
 * mark: the field then shows the value the page is using.
 */
export function restoreIfInvalid(input: HTMLInputElement, good: string): boolean {
  if (input.getAttribute('aria-invalid') !== 'true') return false;
  input.value = good;
  markInvalid(input, false);
  return true;
}

/**
 * A number field that applies only values in [min, max] on its step: one it refuses is marked invalid and changes
 * nothing, and leaving the field puts back `current()`, the value the page uses now (which may have changed
 * elsewhere while the field had focus: a dragged bar). A caller that writes a good value into the field clears a mark
 * it had with markInvalid.
 */
export function numberInput(value: number, opts: { min?: number; max?: number; step?: number; name: string; label: string; current: () => number }, onChange: (v: number) => void): HTMLInputElement {
  const whole = Number.isInteger(opts.step) && (opts.min ?? -1) >= 0;  // a phone's keyboard without '.' or '−'
  const input = el('input', {
    type: 'number', min: opts.min, max: opts.max, step: opts.step ?? 'any', 'data-control': opts.name, 'aria-label': opts.label, inputmode: whole ? 'numeric' : 'decimal',
  });
  input.value = String(value);
  // A step is kept as the browser's step rule keeps it (min + k·step): a step of 1 takes whole numbers only.
  const onStep = (v: number) => opts.step === undefined || Number.isInteger((v - (opts.min ?? 0)) / opts.step);
  input.addEventListener('input', () => {
    const v = Number(input.value);
    const ok = input.value.trim() !== '' && Number.isFinite(v) && (opts.min === undefined || v >= opts.min) && (opts.max === undefined || v <= opts.max) && onStep(v);
    markInvalid(input, !ok);
    if (ok) onChange(v);
  });
  // Left holding a refused value: put the page's value back as if it had been typed, so callers clear their
  // messages the way they do for any good value (onChange hears the value the page already uses).
  input.addEventListener('blur', () => {
    if (restoreIfInvalid(input, String(opts.current()))) input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  return input;
}

/**
 * A line under a number field that says why a value is refused (`why`) while the field is marked invalid, and is
 * empty (and takes no room) otherwise; the field names it as its description. An emptied field, on its way to a new
 * number, is not scolded: leaving it puts the value back.
 */
export function problemLine(input: HTMLInputElement, name: string, why: () => string): HTMLElement {
  const line = el('p', { class: 'help warn-text field-problem', role: 'status', id: nextId('problem'), 'data-control': `${name}-problem` });
  input.setAttribute('aria-describedby', line.id);
  input.addEventListener('input', () => {
    const bad = input.getAttribute('aria-invalid') === 'true' && (input.value !== '' || input.validity.badInput);
    const text = bad ? why() : '';
    if (line.textContent !== text) line.textContent = text;
  });
  return line;
}

/**
 * A numbered random draw ("random weights #7"): the number picks the draw, so a link reproduces it exactly;
 * "shuffle" moves to the next draw. setDisabled greys both (a shuffle left live beside a greyed number would change a
 * draw nothing on screen uses).
 */
export function randomDraw(label: string, value: number, onChange: (v: number) => void, name: string, current: () => number): { root: HTMLElement; input: HTMLInputElement; setDisabled(d: boolean): void } {
  const input = numberInput(value, { min: 0, max: 999999, step: 1, name, label: `${label} number`, current }, onChange);
  input.classList.add('draw-number');
  // (numberInput puts the draw back when the field is left)
  const problem = problemLine(input, name, () => 'A draw is a whole number from 0 to 999,999; the lab keeps the last one until it is.');
  const shuffle = el('button', { type: 'button', class: 'chip', 'data-control': `${name}-shuffle`, text: 'shuffle' });
  shuffle.addEventListener('click', () => {
    const next = (Math.round(Number(input.value) || 0) + 1) % 1000000;
    input.value = String(next);
    markInvalid(input, false);
    problem.textContent = '';
    onChange(next);
  });
  const id = nextId('draw');
  input.id = id;
  const root = el('div', { class: 'field draw' },
    el('div', { class: 'draw-row' }, el('label', { for: id, text: `${label} #` }), input, shuffle), problem);
  return { root, input, setDisabled: (d) => { input.disabled = shuffle.disabled = d; } };
}
