/** The helpers every store shares (src/delivery/port.ts): the admin state check, claim tokens, the poll pause. */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { checkState, DEFAULT_DURABLE_WINDOW_MS, DEFAULT_LIST_LIMIT, INBOX_STATES, newToken, pause } from '../../src/delivery/port.js';

describe('the Inbox port helpers', () => {
  it('names the four states in order, a list limit of 100 and a durable window of 24 hours', () => {
    expect(INBOX_STATES).toEqual(['pending', 'running', 'done', 'dead']);
    expect(DEFAULT_LIST_LIMIT).toBe(100);
    expect(DEFAULT_DURABLE_WINDOW_MS).toBe(86_400_000);
  });

  it('checkState returns a known state and refuses anything else, naming the states allowed', () => {
    for (const state of INBOX_STATES) expect(checkState(state)).toBe(state);
    expect(checkState('dead', false)).toBe('dead');
    expect(() => checkState('finished')).toThrow(new TypeError('Unknown inbox state "finished"; use one of pending, running, done, dead.'));
    expect(() => checkState(undefined)).toThrow(new TypeError('Unknown inbox state undefined; use one of pending, running, done, dead.'));
    expect(() => checkState('running', false)).toThrow(new TypeError('Unknown inbox state "running"; use one of pending, done, dead.'));
    expect(() => checkState('nope', false)).toThrow(new TypeError('Unknown inbox state "nope"; use one of pending, done, dead.'));
  });

  it('newToken: the time in base 36, a dash, ten random base-36 characters; two are never alike', () => {
    const before = Date.now();
    const token = newToken();
    const [time, random] = token.split('-') as [string, string];
    expect(parseInt(time, 36)).toBeGreaterThanOrEqual(before);
    expect(parseInt(time, 36)).toBeLessThanOrEqual(Date.now());
    expect(random).toMatch(/^[0-9a-z]{10}$/);
    expect(new Set(Array.from({ length: 1000 }, newToken)).size).toBe(1000);
  });

  it('pause waits its time, ends at once on an abort (before or during), and leaves no listener', async () => {
    let started = performance.now();
    await pause(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);

    started = performance.now();
    await pause(0);
    await pause(-5);
    const aborted = new AbortController();
    aborted.abort();
    await pause(10_000, aborted.signal);
    const later = new AbortController();
    const waiting = pause(10_000, later.signal);
    expect(getEventListeners(later.signal, 'abort')).toHaveLength(1);
    later.abort();
    await waiting;
    expect(performance.now() - started).toBeLessThan(1000);

    const kept = new AbortController();
    await pause(5, kept.signal);
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
  });

  it('pause with waiters: calling its entry ends it at once, and takes its entry, listener and timer away', async () => {
    const waiters = new Set<() => void>();
    const controller = new AbortController();
    const started = performance.now();
    const waiting = pause(10_000, controller.signal, waiters);
    expect(waiters.size).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    for (const wake of waiters) wake();
    await waiting;
    expect(performance.now() - started).toBeLessThan(1000);
    expect(waiters.size).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);

    // Ended by its timer or its signal, it leaves the set too.
    await pause(5, undefined, waiters);
    const aborted = pause(10_000, controller.signal, waiters);
    controller.abort();
    await aborted;
    expect(waiters.size).toBe(0);
  });

  it('pause(0) resolves before a timer of 0 ms would', async () => {
    const order: string[] = [];
    const timer = new Promise<void>((resolve) => setTimeout(() => (order.push('timer'), resolve()), 0));
    await pause(0).then(() => order.push('pause'));
    await timer;
    expect(order).toEqual(['pause', 'timer']);
  });
});
