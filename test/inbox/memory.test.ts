/**
 * What the in-process inbox (src/stores/memory.ts) does beyond the contract every store runs
 * (test/inbox/inboxes.test.ts): its options, the bound on remembered keys, and what a listing holds.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { memoryInbox } from '../../src/stores/memory.js';
import type { InboxClaim, InboxEntry } from '../../src/delivery/port.js';

let serial = 0;
function entry(key = `m-${++serial}`, receivedAt = Date.now()): InboxEntry {
  const event = { trigger: 'message_sent', appId: 'app', data: { message: { id: key } } };
  return { key, trigger: 'message_sent', event: event as InboxEntry['event'], rawBody: JSON.stringify(event), receivedAt };
}
const LEASE = { leaseMs: 30_000, waitMs: 0 };

describe('memoryInbox', () => {
  it('is the memory kind and not durable', () => {
    const inbox = memoryInbox();
    expect(inbox.kind).toBe('memory');
    expect(inbox.durable).toBe(false);
  });

  it('refuses a maxKeys that is not a positive whole number and a windowMs that is not positive', () => {
    const maxKeys = new TypeError('memoryInbox: `maxKeys` must be a positive whole number.');
    const windowMs = new TypeError('memoryInbox: `windowMs` must be a positive number of milliseconds.');
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 53]) expect(() => memoryInbox({ maxKeys: bad })).toThrow(maxKeys);
    for (const bad of [0, -1, Number.NaN]) expect(() => memoryInbox({ windowMs: bad })).toThrow(windowMs);
    expect(() => memoryInbox({ maxKeys: 1, windowMs: 0.5 })).not.toThrow();
  });

  it('remembers at most maxKeys handled keys, forgetting the first finished first', async () => {
    const inbox = memoryInbox({ maxKeys: 2 });
    const [a, b, c] = [entry(), entry(), entry()];
    for (const e of [a, b, c]) await inbox.put(e);
    // Finished in the order b, a, c: b is the oldest done key.
    const claims = new Map<string, InboxClaim>();
    for (let i = 0; i < 3; i++) {
      const claim = (await inbox.claim(LEASE)) as InboxClaim;
      claims.set(claim.key, claim);
    }
    await inbox.complete(claims.get(b.key)!);
    await inbox.complete(claims.get(a.key)!);
    expect(await inbox.stats()).toMatchObject({ done: 2, running: 1 });
    await inbox.complete(claims.get(c.key)!);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 2, dead: 0 });
    expect((await inbox.list({ state: 'done' })).map((listing) => listing.key)).toEqual([a.key, c.key]);
    expect(await inbox.put(a)).toBe('duplicate');
    expect(await inbox.put(c)).toBe('duplicate');
    expect(await inbox.put(b)).toBe('stored');
  });

  it('remembers 10 000 handled keys by default', async () => {
    const inbox = memoryInbox();
    const entries = Array.from({ length: 10_001 }, () => entry());
    for (const e of entries) await inbox.put(e);
    for (let i = 0; i < entries.length; i++) await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
    expect((await inbox.stats()).done).toBe(10_000);
    expect(await inbox.put(entries[1]!)).toBe('duplicate');
    expect(await inbox.put(entries[0]!)).toBe('stored');
  });

  it('remembers a handled key for windowMs from its receipt, 10 minutes by default', async () => {
    const now = Date.now();
    const inbox = memoryInbox();
    const young = entry(undefined, now - 10 * 60_000 + 60_000);
    const old = entry(undefined, now - 10 * 60_000 - 1);
    // Finished oldest first: the done keys are checked in the order they were finished.
    for (const e of [old, young]) await inbox.put(e);
    for (let i = 0; i < 2; i++) await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
    expect((await inbox.list({ state: 'done' })).map((listing) => listing.key)).toEqual([young.key]);
    expect(await inbox.put(young)).toBe('duplicate');
    expect(await inbox.put(old)).toBe('stored');

    const short = memoryInbox({ windowMs: 1000 });
    const recent = entry(undefined, Date.now() - 500);
    await short.put(recent);
    await short.complete((await short.claim(LEASE)) as InboxClaim);
    expect(await short.put(recent)).toBe('duplicate');
  });

  it('a done key at exactly the end of its window is forgotten at the next put', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(1_000_000);
      const inbox = memoryInbox({ windowMs: 1000 });
      const stored = entry(undefined, 1_000_000);
      await inbox.put(stored);
      await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
      vi.setSystemTime(1_000_999);
      expect(await inbox.put(stored)).toBe('duplicate');
      expect((await inbox.stats()).done).toBe(1);
      vi.setSystemTime(1_001_000);
      expect((await inbox.stats()).done).toBe(0);
      expect(await inbox.put(stored)).toBe('stored');
    } finally {
      vi.useRealTimers();
    }
  });

  it('lists an entry with its event and body while pending or dead, its error once failed, neither once done', async () => {
    const inbox = memoryInbox();
    const [a, b] = [entry(), entry()];
    await inbox.put(a);
    await inbox.put(b);
    expect(await inbox.list({ state: 'pending' })).toEqual([
      { key: a.key, trigger: 'message_sent', state: 'pending', receivedAt: a.receivedAt, attempts: 0, event: a.event, rawBody: a.rawBody },
      { key: b.key, trigger: 'message_sent', state: 'pending', receivedAt: b.receivedAt, attempts: 0, event: b.event, rawBody: b.rawBody },
    ]);
    await inbox.fail((await inbox.claim(LEASE)) as InboxClaim, { dead: true, error: 'boom' });
    await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
    expect(await inbox.list({ state: 'dead' })).toEqual([
      { key: a.key, trigger: 'message_sent', state: 'dead', receivedAt: a.receivedAt, attempts: 1, lastError: 'boom', event: a.event, rawBody: a.rawBody },
    ]);
    expect(await inbox.list({ state: 'done' })).toEqual([
      { key: b.key, trigger: 'message_sent', state: 'done', receivedAt: b.receivedAt, attempts: 1 },
    ]);
  });

  it('lists 100 entries by default, and exactly `limit` when given', async () => {
    const inbox = memoryInbox();
    for (let i = 0; i < 120; i++) await inbox.put(entry());
    expect(await inbox.list({ state: 'pending' })).toHaveLength(100);
    expect(await inbox.list({ state: 'pending', limit: 1 })).toHaveLength(1);
    expect(await inbox.list({ state: 'pending', limit: 0 })).toHaveLength(0);
  });

  it('hands entries out in the order they were stored, across thousands of claims', async () => {
    const inbox = memoryInbox();
    const entries = Array.from({ length: 3000 }, () => entry());
    for (const e of entries.slice(0, 2000)) await inbox.put(e);
    const keys: string[] = [];
    for (let i = 0; i < 1500; i++) keys.push(((await inbox.claim(LEASE)) as InboxClaim).key);
    for (const e of entries.slice(2000)) await inbox.put(e);
    for (let i = 0; i < 1500; i++) keys.push(((await inbox.claim(LEASE)) as InboxClaim).key);
    expect(keys).toEqual(entries.map((e) => e.key));
    expect(await inbox.claim(LEASE)).toBeUndefined();
    expect(await inbox.stats()).toEqual({ pending: 0, running: 3000, done: 0, dead: 0 });
  });

  it('a retried dead entry is handed out again from attempt 1; retry(keys) skips keys that are not dead', async () => {
    const inbox = memoryInbox();
    const [a, b] = [entry(), entry()];
    await inbox.put(a);
    await inbox.put(b);
    const first = (await inbox.claim(LEASE)) as InboxClaim;
    await inbox.fail(first, { dead: true, error: 'x' });
    expect(await inbox.retry([b.key, 'unknown', first.key])).toBe(1);
    expect(await inbox.retry()).toBe(0);
    expect(await inbox.stats()).toEqual({ pending: 2, running: 0, done: 0, dead: 0 });
    const again = [(await inbox.claim(LEASE)) as InboxClaim, (await inbox.claim(LEASE)) as InboxClaim];
    expect(again.map((claim) => [claim.key, claim.attempt])).toEqual([
      [b.key, 1],
      [a.key, 1],
    ]);
  });

  it('purge counts and removes only that state, and keeps the counts right', async () => {
    const inbox = memoryInbox();
    for (let i = 0; i < 4; i++) await inbox.put(entry());
    for (let i = 0; i < 2; i++) await inbox.fail((await inbox.claim(LEASE)) as InboxClaim, { dead: true, error: 'x' });
    const retried = (await inbox.claim(LEASE)) as InboxClaim;
    await inbox.fail(retried, { retryAt: Date.now() + 60_000, error: 'later' });
    expect(await inbox.purge({ state: 'pending' })).toBe(2);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 2 });
    expect(await inbox.claim({ leaseMs: 1000, waitMs: 0 })).toBeUndefined();
    expect(await inbox.purge({ state: 'done' })).toBe(0);
    expect(await inbox.purge({ state: 'dead' })).toBe(2);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    await expect(inbox.purge({ state: 'gone' as 'dead' })).rejects.toThrow('Unknown inbox state "gone"; use one of pending, done, dead.');
  });

  it('a stale holder cannot renew, complete or fail an entry handed out again', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry());
    const stale = (await inbox.claim({ leaseMs: 1, waitMs: 0 })) as InboxClaim;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const current = (await inbox.claim(LEASE)) as InboxClaim;
    expect(current.attempt).toBe(2);
    expect(await inbox.renew(stale, 60_000)).toBe(false);
    await inbox.complete(stale);
    await inbox.fail(stale, { dead: true, error: 'stale' });
    expect(await inbox.stats()).toEqual({ pending: 0, running: 1, done: 0, dead: 0 });
    expect(await inbox.renew(current, 60_000)).toBe(true);
    expect(await inbox.renew({ ...current, key: 'other' }, 60_000)).toBe(false);
  });

  it('a renewed lease runs from the renewal', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(5_000_000);
      const inbox = memoryInbox();
      await inbox.put(entry());
      const claim = (await inbox.claim({ leaseMs: 1000, waitMs: 0 })) as InboxClaim;
      vi.setSystemTime(5_000_900);
      expect(await inbox.renew(claim, 1000)).toBe(true);
      vi.setSystemTime(5_001_899);
      expect(await inbox.claim({ leaseMs: 1000, waitMs: 0 })).toBeUndefined();
      vi.setSystemTime(5_001_900);
      expect(await inbox.claim({ leaseMs: 1000, waitMs: 0 })).toMatchObject({ attempt: 2 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a waiting claim is woken by a failure with a retry time, and by its signal', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry());
    const held = (await inbox.claim(LEASE)) as InboxClaim;
    const started = Date.now();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await inbox.fail(held, { retryAt: Date.now(), error: 'again' });
    expect(await waiting).toMatchObject({ key: held.key, attempt: 2 });
    expect(Date.now() - started).toBeLessThan(2000);

    const controller = new AbortController();
    const aborted = inbox.claim({ leaseMs: 30_000, waitMs: 5000, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await aborted).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a waiting claim wakes when the retry time it waits for comes', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry());
    const held = (await inbox.claim(LEASE)) as InboxClaim;
    await inbox.fail(held, { retryAt: Date.now() + 100, error: 'soon' });
    const started = Date.now();
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 5000 })).toMatchObject({ key: held.key, attempt: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('close wakes waiting claims and refuses claims and pings after it', async () => {
    const inbox = memoryInbox();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000 });
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await inbox.close();
    expect(await waiting).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(inbox.claim(LEASE)).rejects.toThrow('The memory inbox is closed.');
    await expect(inbox.ping!()).rejects.toThrow('The memory inbox is closed.');
    await expect(inbox.put(entry())).rejects.toThrow('The memory inbox is closed.');
  });

  it('oldestPendingAt is the oldest receipt of the pending entries, whatever order they were stored in', async () => {
    const inbox = memoryInbox();
    const now = Date.now();
    for (const age of [5000, 60_000, 1000]) await inbox.put(entry(undefined, now - age));
    expect(await inbox.oldestPendingAt!()).toBe(now - 60_000);
  });

  it('a put wakes a waiting claim at once; a claim that waited leaves no listener on its signal', async () => {
    const inbox = memoryInbox();
    const controller = new AbortController();
    const started = Date.now();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const stored = entry();
    await inbox.put(stored);
    expect((await waiting)?.key).toBe(stored.key);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 30, signal: controller.signal })).toBeUndefined();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a waiting claim sleeps until its deadline or the next retry, with one timer, not a busy loop', async () => {
    const inbox = memoryInbox();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      expect(await inbox.claim({ leaseMs: 30_000, waitMs: 100 })).toBeUndefined();
      expect(timers.mock.calls.length).toBeLessThanOrEqual(2);
      expect(timers.mock.calls[0]![1]).toBeGreaterThan(50);

      await inbox.put(entry());
      const held = (await inbox.claim(LEASE)) as InboxClaim;
      await inbox.fail(held, { retryAt: Date.now() + 100, error: 'soon' });
      timers.mockClear();
      expect(await inbox.claim({ leaseMs: 30_000, waitMs: 5000 })).toMatchObject({ key: held.key, attempt: 2 });
      expect(timers.mock.calls.length).toBeLessThanOrEqual(2);
      const first = timers.mock.calls[0]![1] as number;
      expect(first).toBeGreaterThan(50);
      expect(first).toBeLessThanOrEqual(100);
    } finally {
      timers.mockRestore();
    }
  });

  it('a key purged and stored again is handed out once, and not before its retry time', async () => {
    const inbox = memoryInbox();
    const stored = entry();
    await inbox.put(stored);
    expect(await inbox.purge({ state: 'pending' })).toBe(1);
    await inbox.put(stored);
    const claim = (await inbox.claim(LEASE)) as InboxClaim;
    expect(claim).toMatchObject({ key: stored.key, attempt: 1 });
    expect(await inbox.claim(LEASE)).toBeUndefined();

    await inbox.purge({ state: 'pending' });
    const again = memoryInbox();
    await again.put(stored);
    await again.purge({ state: 'pending' });
    await again.put(stored);
    const first = (await again.claim(LEASE)) as InboxClaim;
    await again.fail(first, { retryAt: Date.now() + 60_000, error: 'later' });
    expect(await again.claim(LEASE)).toBeUndefined();
  });

  it('a completed claim can no longer be renewed or failed', async () => {
    const inbox = memoryInbox();
    await inbox.put(entry());
    const claim = (await inbox.claim(LEASE)) as InboxClaim;
    await inbox.complete(claim);
    expect(await inbox.renew(claim, 60_000)).toBe(false);
    await inbox.fail(claim, { dead: true, error: 'late' });
    await inbox.fail(claim, { retryAt: Date.now(), error: 'late' });
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    expect(await inbox.list({ state: 'done' })).toMatchObject([{ key: claim.key, attempts: 1 }]);
  });

  it('a waiting claim wakes when the first of several leases runs out', async () => {
    const inbox = memoryInbox();
    const [short, long] = [entry(), entry()];
    await inbox.put(short);
    await inbox.put(long);
    await inbox.claim({ leaseMs: 100, waitMs: 0 });
    await inbox.claim({ leaseMs: 60_000, waitMs: 0 });
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const started = Date.now();
      expect(await inbox.claim({ leaseMs: 30_000, waitMs: 5000 })).toMatchObject({ key: short.key, attempt: 2 });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(timers.mock.calls[0]![1]).toBeLessThanOrEqual(100);
    } finally {
      timers.mockRestore();
    }
  });
});
