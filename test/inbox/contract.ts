/**
 * The Inbox contract (src/inbox/port.ts), as tests every store runs. A store's suite gives a factory that
 * opens a fresh, empty inbox (`windowMs` passed through), and for durable stores a way to reopen the same
 * one after closing it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Inbox, InboxClaim, InboxEntry } from '../../src/inbox/port.js';

export interface InboxFactory {
  /** Opens a fresh inbox; `name` tells instances of one test apart when `reopen` is used. */
  open(options?: { windowMs?: number; name?: string }): Inbox | Promise<Inbox>;
  /** How long a lost lease takes to be noticed at most, beyond leaseMs (Redis's stalled check). */
  leaseSlackMs: number;
  durable: boolean;
}

let serial = 0;
export function entry(key = `key-${++serial}`, trigger = 'message_sent'): InboxEntry {
  const event = { trigger, appId: 'app', data: { message: { id: key, text: 'héllo ✓' } } };
  // The raw body keeps its exact bytes: spacing the parsed event would not reproduce.
  return { key, trigger, event: event as InboxEntry['event'], rawBody: JSON.stringify(event, null, 1), receivedAt: Date.now() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function inboxContract(name: string, factory: InboxFactory): void {
  describe(`Inbox contract: ${name}`, () => {
    const opened: Inbox[] = [];
    async function open(options?: { windowMs?: number; name?: string }): Promise<Inbox> {
      const inbox = await factory.open(options);
      opened.push(inbox);
      return inbox;
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((inbox) => inbox.close().catch(() => undefined)));
    });
    const LEASE = { leaseMs: 30_000, waitMs: 0 };

    it('stores a new key, answers duplicate for the same key, and counts it pending', async () => {
      const inbox = await open();
      const first = entry();
      expect(await inbox.put(first)).toBe('stored');
      expect(await inbox.put({ ...first, rawBody: first.rawBody + ' ' })).toBe('duplicate');
      expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 0, dead: 0 });
    });

    it('stores keys BullMQ could confuse with its own (bare numbers, colons) as distinct keys', async () => {
      const inbox = await open();
      const keys = ['1', '2', 'a:b', 'a:b:', 'wait', 'webhook-1:message_sent:42'];
      expect(await Promise.all(keys.map((key) => inbox.put(entry(key))))).toEqual(keys.map(() => 'stored'));
      expect(await Promise.all(keys.map((key) => inbox.put(entry(key))))).toEqual(keys.map(() => 'duplicate'));
      expect((await inbox.stats()).pending).toBe(keys.length);
    });

    it('puts of one turn: distinct keys all stored, a key repeated in the same turn stored once', async () => {
      const inbox = await open();
      const same = entry();
      const puts = [inbox.put(same), ...Array.from({ length: 50 }, () => inbox.put(entry())), inbox.put(same), inbox.put(same)];
      const results = await Promise.all(puts);
      expect(results.filter((r) => r === 'stored')).toHaveLength(51);
      expect(results.filter((r) => r === 'duplicate')).toHaveLength(2);
      expect((await inbox.stats()).pending).toBe(51);
    });

    it('hands a stored entry to one claim, with its event and exact raw body, attempt 1', async () => {
      const inbox = await open();
      const stored = entry();
      await inbox.put(stored);
      const claim = (await inbox.claim(LEASE)) as InboxClaim;
      expect(claim).toMatchObject({ key: stored.key, trigger: stored.trigger, rawBody: stored.rawBody, attempt: 1 });
      expect(claim.event).toEqual(stored.event);
      expect(claim.receivedAt).toBe(stored.receivedAt);
      expect(await inbox.claim(LEASE)).toBeUndefined();
      expect(await inbox.stats()).toEqual({ pending: 0, running: 1, done: 0, dead: 0 });
    });

    it('a waiting claim gets an entry put while it waits', async () => {
      const inbox = await open();
      const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000 });
      await sleep(50);
      const stored = entry();
      await inbox.put(stored);
      expect((await waiting)?.key).toBe(stored.key);
    });

    it('a waiting claim with nothing to take resolves undefined after about waitMs', async () => {
      const inbox = await open();
      const started = Date.now();
      expect(await inbox.claim({ leaseMs: 1000, waitMs: 150 })).toBeUndefined();
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    });

    it('complete: done, counted, still a duplicate, never handed out again', async () => {
      const inbox = await open();
      const stored = entry();
      await inbox.put(stored);
      await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
      expect(await inbox.put(stored)).toBe('duplicate');
      expect(await inbox.claim(LEASE)).toBeUndefined();
      expect((await inbox.list({ state: 'done' })).map((e) => e.key)).toEqual([stored.key]);
    });

    it('completions of one turn are each counted done and listed', async () => {
      const inbox = await open();
      const stored = Array.from({ length: 5 }, () => entry());
      await Promise.all(stored.map((e) => inbox.put(e)));
      const claims: InboxClaim[] = [];
      for (let i = 0; i < stored.length; i++) claims.push((await inbox.claim(LEASE)) as InboxClaim);
      await Promise.all(claims.map((claim) => inbox.complete(claim)));
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 5, dead: 0 });
      expect((await inbox.list({ state: 'done' })).map((e) => e.key).sort()).toEqual(stored.map((e) => e.key).sort());
    });

    it('claims made side by side, after one found nothing, each take a different entry', async () => {
      const inbox = await open();
      expect(await inbox.claim(LEASE)).toBeUndefined();
      const stored = Array.from({ length: 8 }, () => entry());
      await Promise.all(stored.map((e) => inbox.put(e)));
      const claims = await Promise.all(stored.map(() => inbox.claim({ leaseMs: 30_000, waitMs: 1000 })));
      expect(claims.map((claim) => claim?.key).sort()).toEqual(stored.map((e) => e.key).sort());
    });

    it('fail with retryAt: not handed out before it, handed out after with attempt 2', async () => {
      const inbox = await open();
      await inbox.put(entry());
      const first = (await inbox.claim(LEASE)) as InboxClaim;
      await inbox.fail(first, { retryAt: Date.now() + 300, error: 'boom' });
      expect(await inbox.stats()).toMatchObject({ pending: 1, running: 0 });
      expect(await inbox.claim(LEASE)).toBeUndefined();
      const again = await inbox.claim({ leaseMs: 30_000, waitMs: 3000 });
      expect(again).toMatchObject({ key: first.key, attempt: 2 });
    });

    it('fail dead: kept with its body and error, still a duplicate; retry() makes it pending from attempt 1', async () => {
      const inbox = await open();
      const stored = entry();
      await inbox.put(stored);
      await inbox.fail((await inbox.claim(LEASE)) as InboxClaim, { dead: true, error: 'handler exploded' });
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 1 });
      const [dead] = await inbox.list({ state: 'dead' });
      expect(dead).toMatchObject({ key: stored.key, state: 'dead', rawBody: stored.rawBody, attempts: 1 });
      expect(dead?.lastError).toContain('handler exploded');
      expect(await inbox.put(stored)).toBe('duplicate');
      expect(await inbox.claim(LEASE)).toBeUndefined();

      expect(await inbox.retry()).toBe(1);
      expect(await inbox.stats()).toMatchObject({ pending: 1, dead: 0 });
      expect(await inbox.claim({ leaseMs: 30_000, waitMs: 2000 })).toMatchObject({ key: stored.key, attempt: 1 });
    });

    it('retry(keys) revives only those dead keys', async () => {
      const inbox = await open();
      const [a, b] = [entry(), entry()];
      await inbox.put(a);
      await inbox.put(b);
      for (let i = 0; i < 2; i++) await inbox.fail((await inbox.claim(LEASE)) as InboxClaim, { dead: true, error: 'x' });
      expect(await inbox.retry([b.key, 'no-such-key'])).toBe(1);
      expect((await inbox.list({ state: 'dead' })).map((e) => e.key)).toEqual([a.key]);
      expect((await inbox.list({ state: 'pending' })).map((e) => e.key)).toEqual([b.key]);
    });

    it('a lease that runs out hands the entry out again as the next attempt; the stale holder can no longer finish it', async () => {
      const inbox = await open();
      await inbox.put(entry());
      const lost = (await inbox.claim({ leaseMs: 200, waitMs: 0 })) as InboxClaim;
      const again = (await inbox.claim({ leaseMs: 30_000, waitMs: 200 + factory.leaseSlackMs + 2000 })) as InboxClaim;
      expect(again).toMatchObject({ key: lost.key, attempt: 2 });
      expect(await inbox.renew(lost, 30_000)).toBe(false);
      await inbox.complete(lost);
      expect(await inbox.stats()).toMatchObject({ running: 1, done: 0 });
      await inbox.complete(again);
      expect(await inbox.stats()).toMatchObject({ running: 0, done: 1 });
    });

    it('renew keeps a lease past its first end', async () => {
      const inbox = await open();
      await inbox.put(entry());
      const claim = (await inbox.claim({ leaseMs: 300, waitMs: 0 })) as InboxClaim;
      const until = Date.now() + 300 + factory.leaseSlackMs + 600;
      while (Date.now() < until) {
        expect(await inbox.renew(claim, 300)).toBe(true);
        expect(await inbox.claim({ leaseMs: 300, waitMs: 100 })).toBeUndefined();
      }
      await inbox.complete(claim);
      expect((await inbox.stats()).done).toBe(1);
    });

    it('a done key is forgotten after windowMs and stored again', async () => {
      const inbox = await open({ windowMs: 300 });
      const stored = entry();
      await inbox.put(stored);
      await inbox.complete((await inbox.claim(LEASE)) as InboxClaim);
      expect(await inbox.put(stored)).toBe('duplicate');
      await sleep(400);
      expect(await inbox.put({ ...stored, receivedAt: Date.now() })).toBe('stored');
    });

    it('list honours state and limit', async () => {
      const inbox = await open();
      for (let i = 0; i < 5; i++) await inbox.put(entry());
      expect(await inbox.list({ state: 'pending', limit: 3 })).toHaveLength(3);
      expect(await inbox.list({ state: 'running' })).toEqual([]);
      await expect(inbox.list({ state: 'finished' as 'done' })).rejects.toThrow(/pending, running, done, dead/);
    });

    it('purge removes one state: dead ones go, and a purged done key is no longer a duplicate', async () => {
      const inbox = await open();
      const [a, b, c] = [entry(), entry(), entry()];
      for (const e of [a, b, c]) await inbox.put(e);
      await inbox.fail((await inbox.claim(LEASE)) as InboxClaim, { dead: true, error: 'x' });
      const doneClaim = (await inbox.claim(LEASE)) as InboxClaim;
      await inbox.complete(doneClaim);
      expect(await inbox.purge({ state: 'dead' })).toBe(1);
      expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 1, dead: 0 });
      expect(await inbox.purge({ state: 'done' })).toBe(1);
      expect(await inbox.put({ ...entry(doneClaim.key), receivedAt: Date.now() })).toBe('stored');
      await expect(inbox.purge({ state: 'running' as 'done' })).rejects.toThrow(/state/);
    });

    it('keeps an entry’s traceparent and hands it back with every claim; an entry without one has none', async () => {
      const inbox = await open();
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const traced = { ...entry(), traceparent };
      const plain = entry();
      await inbox.put(traced);
      await inbox.put(plain);
      const claims = [(await inbox.claim(LEASE)) as InboxClaim, (await inbox.claim(LEASE)) as InboxClaim];
      const claimOf = (key: string) => claims.find((claim) => claim.key === key) as InboxClaim;
      expect(claimOf(traced.key).traceparent).toBe(traceparent);
      expect(claimOf(plain.key).traceparent).toBeUndefined();
      // A retry's claim carries it too: each attempt links to the same delivery.
      await inbox.fail(claimOf(traced.key), { retryAt: Date.now(), error: 'again' });
      expect(await inbox.claim({ leaseMs: 30_000, waitMs: 2000 })).toMatchObject({ key: traced.key, attempt: 2, traceparent });
    });

    it('ping resolves while the store takes writes, and rejects once it is closed', async () => {
      const inbox = await open();
      if (!inbox.ping) return;
      await expect(inbox.ping()).resolves.toBeUndefined();
      await inbox.close();
      await expect(inbox.ping()).rejects.toThrow();
    });

    it('oldestPendingAt: the receipt time of the oldest pending entry, retries included; undefined when none', async () => {
      const inbox = await open();
      if (!inbox.oldestPendingAt) return;
      expect(await inbox.oldestPendingAt()).toBeUndefined();
      const now = Date.now();
      const [older, newer] = [{ ...entry(), receivedAt: now - 60_000 }, { ...entry(), receivedAt: now - 1000 }];
      // In the order a receiver stores them (Redis reads its queue's oldest end).
      await inbox.put(older);
      await inbox.put(newer);
      expect(await inbox.oldestPendingAt()).toBe(older.receivedAt);
      // Waiting for a retry is still pending; running is not.
      const claims = [(await inbox.claim(LEASE)) as InboxClaim, (await inbox.claim(LEASE)) as InboxClaim];
      expect(await inbox.oldestPendingAt()).toBeUndefined();
      await inbox.fail(claims.find((claim) => claim.key === older.key) as InboxClaim, { retryAt: Date.now() + 60_000, error: 'later' });
      expect(await inbox.oldestPendingAt()).toBe(older.receivedAt);
    });

    it('after close, puts are refused (the receiver answers 503)', async () => {
      const inbox = await open();
      await inbox.close();
      await expect(inbox.put(entry())).rejects.toThrow(/closed/);
    });

    if (factory.durable) {
      it('what was stored is still there after closing and reopening the store', async () => {
        const name = `reopen-${++serial}`;
        const first = await open({ name });
        const stored = entry();
        await first.put(stored);
        await first.close();
        const second = await open({ name });
        expect(await second.put(stored)).toBe('duplicate');
        expect(await second.claim(LEASE)).toMatchObject({ key: stored.key, rawBody: stored.rawBody, attempt: 1 });
      });
    }
  });
}
