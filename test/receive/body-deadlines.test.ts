import { afterEach, describe, expect, it, vi } from 'vitest';
import { BodyDeadlines, TIMED_OUT, type Arrival } from '../../src/receive/body-deadlines.js';
import type { WebhookBody } from '../../src/receive/parse.js';

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
});
