/**
 * The dedupe window's fingerprint comparison on collisions (src/receive/intake/dedupe.ts). Its seeds come from
 * `#platform` at random; here the test sets them, so that bodies can be built to collide in one lane, or in both
 * lanes with different lengths, and the test does not depend on chance (found by mutation testing,
 * tools/mutation/results.md).
 */
import { describe, expect, it, vi } from 'vitest';
import { DedupeWindow } from '../../src/receive/intake/dedupe.js';

/** Lane A's seed, then lane B's, for each window made next. */
const seeds = vi.hoisted(() => ({ a: 0x2545f491, b: -0x61c88647, calls: 0 }));
// Hoisted above the imports by vitest.
vi.mock('#platform', async (original) => {
  const platform = await original<typeof import('#platform')>();
  return { ...platform, randomInt32: () => (seeds.calls++ % 2 === 0 ? seeds.a : seeds.b) };
});

/** A window whose lanes start from these seeds. */
function windowWith(a: number, b: number, maxKeys: number): DedupeWindow {
  Object.assign(seeds, { a, b, calls: 0 });
  return new DedupeWindow({ maxKeys });
}

// The fingerprint's arithmetic, to build bodies for chosen lane values: each 32-bit word is scrambled as murmur3
// does, then lane A = (a ^ word) * 0x01000193 and lane B = (rotl(b, 13) ^ word) * 0x5bd1e995, from the seeds.
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
const rotr = (x: number, r: number) => (x >>> r) | (x << (32 - r));
/** The inverse of an odd number modulo 2^32 (Newton's iteration). */
const inverse = (odd: number) => {
  let x = odd;
  for (let i = 0; i < 5; i++) x = Math.imul(x, 2 - Math.imul(odd, x));
  return x;
};
/** The little-endian word that scrambles to `scrambled`. */
const unscramble = (scrambled: number) => Math.imul(rotr(Math.imul(scrambled, inverse(0x1b873593)), 15), inverse(0xcc9e2d51));
/** Bytes whose words scramble to the given values. */
function bodyOf(...scrambled: number[]): Uint8Array {
  const view = new DataView(new ArrayBuffer(4 * scrambled.length));
  scrambled.forEach((word, i) => view.setInt32(4 * i, unscramble(word), true));
  return new Uint8Array(view.buffer);
}

describe('DedupeWindow with chosen seeds', () => {
  it('tells apart 300 000 same-length bodies remembered at once: one lane of the fingerprint is not enough', () => {
    // Some of these share lane A by chance (about n^2 / 2^33 pairs for random fingerprints), and two sharing
    // lane A share their index home too. Only lane B and the length tell those apart: a window that compared
    // less would take the later body of each such pair for a repeat (ten of them with these seeds).
    const count = 300_000;
    const window = windowWith(0x2545f491, -0x61c88647, count);
    let refused = 0;
    for (let i = 0; i < count; i++) if (!window.add(`{"n":${String(i).padStart(6, '0')}}`, 0)) refused++;
    expect(refused).toBe(0);
    expect(window.add('{"n":000000}', 0)).toBe(false);
  });

  it('tells apart bodies sharing lane B but not lane A', () => {
    // Two words each: the second is chosen so that lane B ends at 0 whatever the first was; lane A differs.
    const seedB = 0x12345678;
    const bodies = Array.from({ length: 24 }, (_, k) => {
      const first = k + 1;
      const laneB = Math.imul(rotl(seedB, 13) ^ first, 0x5bd1e995);
      return bodyOf(first, rotl(laneB, 13));
    });
    // One remembered body, an index of two places: most bodies probe the place of the one before.
    const window = windowWith(0x2545f491, seedB, 1);
    for (const [k, body] of bodies.entries()) expect(window.add(body, 0), `body ${k}`).toBe(true);
  });

  it('tells apart bodies with the same lanes but different lengths', () => {
    // With seed A = rotl(seed B, 13), one word equal to seed A takes both lanes to 0, and a zero byte after it
    // leaves them at 0: the two bodies differ only in their length.
    const seedB = 0x12345678;
    const seedA = rotl(seedB, 13);
    const four = bodyOf(seedA);
    const five = new Uint8Array([...four, 0]);
    const window = windowWith(seedA, seedB, 10);
    expect(window.add(four, 0)).toBe(true);
    expect(window.add(five, 0)).toBe(true);
    expect(window.add(four, 0)).toBe(false);
    expect(window.add(five, 0)).toBe(false);
  });
});
