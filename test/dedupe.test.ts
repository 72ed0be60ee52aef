import { describe, expect, it } from 'vitest';
import { DedupeWindow } from '../src/dedupe.js';

describe('DedupeWindow', () => {
  it('refuses a key seen within the window and takes it again after', () => {
    const window = new DedupeWindow({ windowMs: 100 });
    expect(window.add('a', 0)).toBe(true);
    expect(window.add('a', 99)).toBe(false);
    expect(window.add('a', 100)).toBe(true);
  });

  it('forgets the oldest keys first beyond maxKeys', () => {
    const window = new DedupeWindow({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c', 'd']) expect(window.add(key, 1)).toBe(true);
    expect(window.add('a', 1)).toBe(true); // forgotten to make room for d
    expect(window.add('c', 1)).toBe(false);
    expect(window.add('d', 1)).toBe(false);
  });

  it('takes a deleted key again, and its old slot does not forget the new entry early', () => {
    const window = new DedupeWindow({ maxKeys: 3, windowMs: 1000 });
    window.add('a', 1);
    window.delete('a');
    expect(window.add('a', 2)).toBe(true);
    window.add('b', 3); // ring: a(1), a(2), b(3) — full
    window.add('c', 4); // evicts the stale slot a(1), which must not forget a(2)
    expect(window.add('a', 5)).toBe(false);
  });
});
