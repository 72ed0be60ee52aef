import { afterEach, describe, expect, it, vi } from 'vitest';
import { BodyDeadlines, TIMED_OUT, type Arrival } from '../../src/receive/intake/body-deadlines.js';
import type { WebhookBody } from '../../src/receive/parse/parse.js';

/** The watch's outcome as a promise, as the tests read it. */
const watched = (deadlines: BodyDeadlines, reading: Promise<WebhookBody>) =>
  new Promise<Arrival>((resolve, reject) => deadlines.watch(reading, resolve, reject));

afterEach(() => void vi.useRealTimers());

describe('BodyDeadlines: one coarse timer for every body still arriving', () => {
  it('expires the late ones in order, passes on the ones that arrive, and stops its timer when none wait', async () => {
    vi.useFakeTimers();
    const deadlines = new BodyDeadlines(100);
    const never = new Promise<string>(() => undefined);
    let arrive: (body: string) => void = () => undefined;
    const arriving = new Promise<string>((resolve) => (arrive = resolve));
    const results: unknown[] = [];
    watched(deadlines, never).then((value) => results.push(['first', value]));
    watched(deadlines, arriving).then((value) => results.push(['second', value]));
    await vi.advanceTimersByTimeAsync(50);
    watched(deadlines, never).then((value) => results.push(['third', value]));
    expect(vi.getTimerCount()).toBe(1);
    arrive('body');
    await vi.advanceTimersByTimeAsync(60);
    expect(results).toEqual([
      ['second', 'body'],
      ['first', TIMED_OUT],
    ]);
    await vi.advanceTimersByTimeAsync(60);
    expect(results).toContainEqual(['third', TIMED_OUT]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('passes a failed read on as its rejection, and ignores one after the deadline', async () => {
    vi.useFakeTimers();
    const deadlines = new BodyDeadlines(20);
    await expect(watched(deadlines, Promise.reject(new Error('reset')))).rejects.toThrow('reset');
    let fail: (error: Error) => void = () => undefined;
    const late = watched(deadlines, new Promise<string>((_resolve, reject) => (fail = reject)));
    await vi.advanceTimersByTimeAsync(30);
    fail(new Error('too late'));
    await expect(late).resolves.toBe(TIMED_OUT);
  });

  it('calls exactly one of its callbacks, once: a read failing after the deadline is not reported', async () => {
    vi.useFakeTimers();
    const deadlines = new BodyDeadlines(20);
    const arrived = vi.fn();
    const failed = vi.fn();
    let fail: (error: Error) => void = () => undefined;
    deadlines.watch(new Promise<string>((_resolve, reject) => (fail = reject)), arrived, failed);
    await vi.advanceTimersByTimeAsync(30);
    fail(new Error('too late'));
    await vi.advanceTimersByTimeAsync(1);
    expect(arrived.mock.calls).toEqual([[TIMED_OUT]]);
    expect(failed).not.toHaveBeenCalled();
  });

  it('checks every tenth of the limit: a deadline is met to within that tick, never before', async () => {
    vi.useFakeTimers();
    // 2 500 ms: a tick of 250 ms (not the 1 000 ms cap), so the body expires at 2 500 ms, not 3 000.
    const deadlines = new BodyDeadlines(2500);
    const results: unknown[] = [];
    void watched(deadlines, new Promise<string>(() => undefined)).then((value) => results.push(value));
    await vi.advanceTimersByTimeAsync(2499);
    expect(results).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(results).toEqual([TIMED_OUT]);
  });

  it('a body watched just before a tick still gets its whole limit, and at most a tick more', async () => {
    vi.useFakeTimers();
    const deadlines = new BodyDeadlines(100);
    const results: unknown[] = [];
    void watched(deadlines, new Promise<string>(() => undefined)).then((value) => results.push(['first', value]));
    await vi.advanceTimersByTimeAsync(9);
    void watched(deadlines, new Promise<string>(() => undefined)).then((value) => results.push(['second', value]));
    await vi.advanceTimersByTimeAsync(100);
    expect(results).toEqual([['first', TIMED_OUT]]);
    await vi.advanceTimersByTimeAsync(10);
    expect(results).toEqual([
      ['first', TIMED_OUT],
      ['second', TIMED_OUT],
    ]);
  });

  it('ticks at most every second for long limits and at least every 5 ms for short ones', async () => {
    vi.useFakeTimers();
    const long = new BodyDeadlines(20_000);
    const results: unknown[] = [];
    void watched(long, new Promise<string>(() => undefined)).then((value) => results.push(['long', value]));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(results).toEqual([['long', TIMED_OUT]]);
    // 32 ms: a tenth is 3.2 ms, so the 5 ms floor applies: checked at 30 and 35 ms, expired at 35.
    const short = new BodyDeadlines(32);
    void watched(short, new Promise<string>(() => undefined)).then((value) => results.push(['short', value]));
    await vi.advanceTimersByTimeAsync(34);
    expect(results).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(results).toEqual([
      ['long', TIMED_OUT],
      ['short', TIMED_OUT],
    ]);
  });

  it('starts its timer again for a body watched after the last one left', async () => {
    vi.useFakeTimers();
    const deadlines = new BodyDeadlines(50);
    await watched(deadlines, Promise.resolve('first'));
    await vi.advanceTimersByTimeAsync(10);
    expect(vi.getTimerCount()).toBe(0);
    const late = watched(deadlines, new Promise<string>(() => undefined));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    await expect(late).resolves.toBe(TIMED_OUT);
  });

  it('a body arriving from the middle or the end of the waiting list leaves the others waiting', async () => {
    vi.useFakeTimers();
    const deadlines = new BodyDeadlines(100);
    const arrivals: Array<(body: string) => void> = [];
    const results: unknown[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      const reading = new Promise<string>((resolve) => arrivals.push(resolve));
      void watched(deadlines, reading).then((value) => results.push([name, value]));
    }
    arrivals[1]?.('b body');
    arrivals[3]?.('d body');
    await vi.advanceTimersByTimeAsync(10);
    const e = watched(deadlines, new Promise<string>(() => undefined));
    void e.then((value) => results.push(['e', value]));
    // a and c came at 0 ms, e after the first tick: a tick (10 ms) of precision keeps them apart.
    await vi.advanceTimersByTimeAsync(101);
    expect(results).toEqual([
      ['b', 'b body'],
      ['d', 'd body'],
      ['a', TIMED_OUT],
      ['c', TIMED_OUT],
    ]);
    await vi.advanceTimersByTimeAsync(10);
    expect(results).toContainEqual(['e', TIMED_OUT]);
  });
});
