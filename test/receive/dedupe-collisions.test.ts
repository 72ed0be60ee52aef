/**
 * The dedupe window's fingerprint comparison on lane collisions (src/receive/dedupe.ts). Its seeds come from
 * `#platform` at random; here they are fixed, so that the bodies below are known to collide in lane A and the
 * test does not depend on chance (found by mutation testing, bench/results/mutation.md).
 */
import { describe, expect, it, vi } from 'vitest';
import { DedupeWindow } from '../../src/receive/dedupe.js';

// Hoisted above the imports by vitest.
vi.mock('#platform', async (original) => {
  const platform = await original<typeof import('#platform')>();
  let calls = 0;
  // Lane A's seed, then lane B's: the same two for every window made in this file.
  return { ...platform, randomInt32: () => (calls++ % 2 === 0 ? 0x2545f491 : -0x61c88647) };
});

describe('DedupeWindow with fixed seeds', () => {
  it('tells apart 300 000 same-length bodies remembered at once: one lane of the fingerprint is not enough', () => {
    // Some of these share lane A by chance (about n^2 / 2^33 pairs for random fingerprints), and two sharing
    // lane A share their index home too. Only lane B and the length tell those apart: a window that compared
    // less would take the later body of each such pair for a repeat.
    const count = 300_000;
    const window = new DedupeWindow({ maxKeys: count });
    let refused = 0;
    for (let i = 0; i < count; i++) if (!window.add(`{"n":${String(i).padStart(6, '0')}}`, 0)) refused++;
    expect(refused).toBe(0);
    expect(window.add('{"n":000000}', 0)).toBe(false);
  });
});
