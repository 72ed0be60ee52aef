/**
 * BodyArrival (src/receive/http.ts), the callback form of a body still arriving: one outcome, told once, whether
 * the receiver listens before or after it (found by mutation testing, tools/mutation/results.md).
 */
import { describe, expect, it, vi } from 'vitest';
import { BodyArrival } from '../../src/index.js';

/** A listener pair that records what it was told. */
function listener() {
  const told: Array<[string, unknown]> = [];
  const arrived = vi.fn((body: unknown) => void told.push(['arrived', body]));
  const failed = vi.fn((cause: unknown) => void told.push(['failed', cause]));
  return { told, arrived, failed };
}

describe('BodyArrival', () => {
  it('tells a listener registered first the body once; later arrivals and failures are ignored', () => {
    const arrival = new BodyArrival();
    const { told, arrived, failed } = listener();
    arrival.onArrival(arrived, failed);
    expect(arrival.pending).toBe(true);
    arrival.arrive('first');
    arrival.arrive('second');
    arrival.fail(new Error('late'));
    expect(arrival.pending).toBe(false);
    expect(told).toEqual([['arrived', 'first']]);
  });

  it('tells a listener registered first the failure once; later failures and arrivals are ignored', () => {
    const arrival = new BodyArrival();
    const { told, arrived, failed } = listener();
    arrival.onArrival(arrived, failed);
    const cause = new Error('reset');
    arrival.fail(cause);
    arrival.fail(new Error('again'));
    arrival.arrive('late');
    expect(told).toEqual([['failed', cause]]);
  });

  it('an outcome before anyone listens is kept, and told at once to the listener that comes', () => {
    const arrived = new BodyArrival();
    arrived.arrive('early');
    arrived.arrive('second');
    const first = listener();
    arrived.onArrival(first.arrived, first.failed);
    expect(first.told).toEqual([['arrived', 'early']]);

    const failed = new BodyArrival();
    const cause = new Error('gone');
    // Nobody listens yet: failing must not throw.
    expect(() => failed.fail(cause)).not.toThrow();
    failed.fail(new Error('again'));
    failed.arrive('late');
    const second = listener();
    failed.onArrival(second.arrived, second.failed);
    expect(second.told).toEqual([['failed', cause]]);
  });
});
