// @vitest-environment jsdom
// Vitest, jsdom environment: window exists, but this is still Node (the package must read the file, not fetch it).
import { expect, test } from 'vitest';
import { init } from 'attnlab';
import { init as initInline } from 'attnlab/inline';
import { check } from '../check.js';

test('attnlab in Vitest (jsdom)', async () => {
  expect(typeof window).toBe('object');
  expect(typeof document.createElement).toBe('function');
  for (const entry of [init, initInline]) {
    const r = await check(entry);
    expect(r.backend).toBe('wasm-simd');
    expect(r.scalar).toBe('wasm');
    expect([r.source, r.fallback]).toEqual([entry === init ? 'file' : 'inline', undefined]); // read from disk, never the fallback
    expect(r.p[0]).toBeCloseTo(0.25, 6);
    expect(r.output[0]).toBeCloseTo(15, 4);
    expect(r.weights).toEqual([0.5, 0.5]);
  }
});
