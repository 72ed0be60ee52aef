/**
 * The Inbox contract (src/delivery/port.ts), as tests every store runs. A store's suite gives a factory that
 * opens a fresh, empty inbox (`windowMs` passed through), and for durable stores a way to reopen the same
 * one after closing it.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Inbox, InboxClaim, InboxEntry } from '../../src/delivery/port.js';
import { createWorker } from '../../src/delivery/worker.js';
import { idempotencyKey } from '../../src/receive/idempotency.js';
import type { ParsedWebhook } from '../../src/events/index.js';
import { assertBuilt, runCli } from '../cli/run-cli.js';

export interface InboxFactory {
  /** Opens a fresh inbox; `name` tells instances of one test apart when `reopen` is used. */
  open(options?: { windowMs?: number; name?: string }): Inbox | Promise<Inbox>;
  /** How long a lost lease takes to be noticed at most, beyond leaseMs (Redis's stalled check). */
  leaseSlackMs: number;
  durable: boolean;
  /**
   * Writes `count` dead entries (keys `dead-0`…) straight into the store opened with `open({ name })`, as
   * its own claims and failures would have left them: 100 000 through the port take minutes on a server.
   * Without it, the suite makes them through the port.
   */
  seedDead?(name: string, count: number): Promise<void>;
  /** The CLI's options naming the store opened with `open({ name })` (`--sqlite <path>`); none: not CLI-reachable. */
  cliArgs?(name: string): string[];
}

/** How many dead entries the admin calls are tried with (fewer with INBOX_DEAD_ENTRIES, to try things out). */
const DEAD_ENTRIES = Number(process.env.INBOX_DEAD_ENTRIES ?? 100_000);

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

    it('keeps the receiver\'s keys of distinct events distinct, exactly as put (issue 33)', async () => {
      const inbox = await open();
      // Events whose key parts, joined unescaped, met: a colon in a part, the form without appId against an
      // app's, ids differing in a lone surrogate (one U+FFFD in UTF-8) or after a NUL (PostgreSQL's text refuses it).
      const events = [
        { appId: 'a:b', webhook: 'c', id: '1' },
        { appId: 'a', webhook: 'b:c', id: '1' },
        { webhook: 'acme:wh', id: '1' },
        { appId: 'acme', webhook: 'wh', id: '1' },
        ...['\uD800', '\uD801', '\uFFFD', 'x\0y', 'x\0z'].map((id) => ({ appId: 'app', webhook: 'wh', id })),
      ].map(({ id, ...envelope }) => ({ ...envelope, trigger: 'message_sent', data: { message: { id } } }) as ParsedWebhook);
      const entries = events.map((event) => entry(idempotencyKey(event)));
      expect(new Set(entries.map((e) => e.key)).size).toBe(entries.length);
      expect(await Promise.all(entries.map((e) => inbox.put(e)))).toEqual(entries.map(() => 'stored'));
      expect(await Promise.all(entries.map((e) => inbox.put(e)))).toEqual(entries.map(() => 'duplicate'));
      const claims: InboxClaim[] = [];
      for (let i = 0; i < entries.length; i++) claims.push((await inbox.claim(LEASE)) as InboxClaim);
      expect(claims.map((claim) => claim?.key).sort()).toEqual(entries.map((e) => e.key).sort());
      await Promise.all(claims.map((claim) => inbox.complete(claim)));
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: entries.length, dead: 0 });
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

    it('claims that wait, woken by puts again and again with one signal (a worker loop), leave no abort listener on it', async () => {
      const inbox = await open();
      const { signal } = new AbortController();
      for (let round = 0; round < 15; round++) {
        const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 5000, signal });
        await inbox.put(entry());
        const claim = (await waiting) as InboxClaim;
        expect(claim).toBeDefined();
        // Past 10 listeners Node warns of a leak (MaxListenersExceededWarning) in the application's log.
        expect(getEventListeners(signal, 'abort')).toHaveLength(0);
        await inbox.complete(claim);
      }
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

    workersUnderAttack(factory, open);
    coordinationContract(factory, open);

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

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${ms} ms`);
    await sleep(10);
  }
}

/** The heap's growth over a call, sampled every 10 ms: what a call loading everything at once would show. */
async function peakHeapGrowth<T>(call: () => Promise<T>): Promise<{ result: T; ms: number; peakMb: number }> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 10);
  const started = Date.now();
  try {
    const result = await call();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { result, ms: Date.now() - started, peakMb: Math.round((peak - before) / 1024 / 1024) };
  } finally {
    clearInterval(sampler);
  }
}

type Opener = (options?: { windowMs?: number; name?: string }) => Promise<Inbox>;

/**
 * Workers against what goes wrong (issue 23, item 10): poison events, handlers that hang past their lease,
 * close() during runs, the CLI changing the store under running workers, and admin calls over 100 000 dead
 * entries. Workers keep their inbox open (`closeInbox: false`): the suite closes what it opened.
 */
function workersUnderAttack(factory: InboxFactory, open: Opener): void {
  const names = { serial: 0 };
  const nameOf = (what: string) => `${what}-${process.pid}-${++names.serial}`;
  /** Two handles on one store, as two processes would have: the same object for a store that cannot reopen. */
  async function twoHandles(): Promise<[Inbox, Inbox]> {
    if (!factory.durable) {
      const inbox = await open();
      return [inbox, inbox];
    }
    const name = nameOf('shared');
    return [await open({ name }), await open({ name })];
  }

  describe('workers under attack', () => {
    it('a poison event (always throws) goes dead after its attempts, once each, and the others are all handled', async () => {
      const inbox = await open();
      await inbox.put(entry('poison'));
      const good = Array.from({ length: 20 }, () => entry());
      for (const e of good) await inbox.put(e);
      const poisonAttempts: number[] = [];
      const handled: string[] = [];
      const worker = createWorker({ inbox, concurrency: 1, closeInbox: false, logger: {}, retry: { attempts: 3, minDelayMs: 20, maxDelayMs: 50 } })
        .on('message_sent', (_event, { key, attempt }) => {
          if (key !== 'poison') return void handled.push(key);
          poisonAttempts.push(attempt);
          throw new Error('poisoned');
        })
        .onError(() => undefined)
        .start();
      try {
        await until(async () => {
          const stats = await inbox.stats();
          return stats.dead === 1 && stats.done === 20;
        }, 10_000 + 3 * factory.leaseSlackMs);
      } finally {
        await worker.close();
      }
      expect(poisonAttempts).toEqual([1, 2, 3]);
      expect(handled.sort()).toEqual(good.map((e) => e.key).sort());
      expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 20, dead: 1 });
      const [dead] = await inbox.list({ state: 'dead' });
      expect(dead).toMatchObject({ key: 'poison', attempts: 3 });
      expect(dead?.lastError).toContain('poisoned');
    }, 30_000);

    it('a handler that hangs past its lease keeps it (renewed) until handlerTimeoutMs; then it runs once more, never beyond its attempts', async () => {
      const [first, second] = await twoHandles();
      await first.put(entry('hangs'));
      const runs: Array<{ attempt: number; at: number }> = [];
      const hang = (_event: unknown, { attempt }: { attempt: number }) => {
        runs.push({ attempt, at: Date.now() });
        // The first attempt never ends; the next ones succeed.
        return attempt === 1 ? new Promise<void>(() => undefined) : undefined;
      };
      const options = { concurrency: 1, closeInbox: false, logger: {}, leaseMs: 150, handlerTimeoutMs: 1000 + factory.leaseSlackMs, retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 2 } };
      const workers = [createWorker({ ...options, inbox: first }), createWorker({ ...options, inbox: second })].map((worker) =>
        worker.on('message_sent', hang).onError(() => undefined).start(),
      );
      try {
        await until(async () => (await first.stats()).done === 1, 10_000 + options.handlerTimeoutMs);
        // A little longer: a second holder would show up now if the lease had been lost.
        await sleep(300 + factory.leaseSlackMs);
      } finally {
        await Promise.all(workers.map((worker) => worker.close()));
      }
      expect(runs.map((run) => run.attempt)).toEqual([1, 2]);
      // Leased ten times over while it hung, and renewed: nobody took it before the handler timed out.
      expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(options.handlerTimeoutMs - 20);
      expect(await first.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    }, 30_000);

    it('a handler that stops the event loop past its lease may run twice (the bound: once per attempt); the event is done once', async () => {
      const [first, second] = await twoHandles();
      await first.put(entry('blocks'));
      const leaseMs = 200;
      const runs: number[] = [];
      const block = (_event: unknown, { attempt }: { attempt: number }) => {
        runs.push(attempt);
        // No renewal can run while the loop is stopped: the lease runs out under the handler.
        if (attempt === 1) for (const until = Date.now() + leaseMs + factory.leaseSlackMs + 300; Date.now() < until; );
      };
      const options = { concurrency: 1, closeInbox: false, logger: {}, leaseMs, retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 2 } };
      const workers = [createWorker({ ...options, inbox: first }), createWorker({ ...options, inbox: second })].map((worker) =>
        worker.on('message_sent', block).onError(() => undefined).start(),
      );
      try {
        await until(async () => (await first.stats()).done === 1, 10_000 + factory.leaseSlackMs);
        await sleep(leaseMs + factory.leaseSlackMs + 300);
      } finally {
        await Promise.all(workers.map((worker) => worker.close()));
      }
      // Once, or again by the next holder as attempt 2; the stale holder's completion changes nothing.
      expect([[1], [1, 2]]).toContainEqual(runs);
      expect(await first.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    }, 30_000);

    it('close() during runs waits for the running handlers; nothing claimed is left running, and another worker handles the rest once each', async () => {
      const inbox = await open();
      const all = Array.from({ length: 10 }, () => entry());
      for (const e of all) await inbox.put(e);
      const started: string[] = [];
      const finished: string[] = [];
      const handler = async (_event: unknown, { key }: { key: string }) => {
        started.push(key);
        await sleep(150);
        finished.push(key);
      };
      const worker = createWorker({ inbox, concurrency: 4, closeInbox: false, logger: {} }).on('message_sent', handler).start();
      await until(() => started.length === 4, 5000);
      await worker.close();
      expect(finished.sort()).toEqual(started.sort());
      const afterClose = await inbox.stats();
      expect(afterClose).toMatchObject({ running: 0, dead: 0 });
      expect(afterClose.done).toBe(finished.length);
      expect(afterClose.pending).toBe(10 - finished.length);
      const next = createWorker({ inbox, concurrency: 4, closeInbox: false, logger: {} }).on('message_sent', handler).start();
      try {
        await until(async () => (await inbox.stats()).done === 10, 10_000);
      } finally {
        await next.close();
      }
      expect(started.sort()).toEqual(all.map((e) => e.key).sort());
    }, 30_000);

    if (factory.cliArgs) {
      const cliArgs = factory.cliArgs;
      it('`inbox retry` and `inbox purge` from the CLI while workers run: each event handled once, nothing lost or doubled', async () => {
        assertBuilt();
        const name = nameOf('cli');
        const inbox = await open({ name });
        let healed = false;
        const handled: string[] = [];
        const worker = createWorker({ inbox, concurrency: 4, closeInbox: false, logger: {}, retry: { attempts: 1 } })
          .on('message_sent', (_event, { key }) => {
            if (!healed && key.startsWith('broken-')) throw new Error('not yet');
            handled.push(key);
          })
          .onError(() => undefined)
          .start();
        try {
          const broken = Array.from({ length: 30 }, (_, i) => entry(`broken-${name}-${i}`));
          for (const e of broken) await inbox.put(e);
          await until(async () => (await inbox.stats()).dead === 30, 10_000);
          healed = true;
          // Deliveries keep arriving while the CLI works.
          const flowing = Array.from({ length: 30 }, () => entry());
          const arriving = (async () => {
            for (const e of flowing) {
              await inbox.put(e);
              await sleep(5);
            }
          })();
          const retried = await runCli(['inbox', 'retry', ...cliArgs(name), '--json']);
          await arriving;
          expect(retried.code).toBe(0);
          expect(JSON.parse(retried.stdout)).toEqual({ retried: 30 });
          await until(async () => (await inbox.stats()).done === 60, 10_000);
          expect(handled.sort()).toEqual([...broken, ...flowing].map((e) => e.key).sort());

          // Purging the dead while the worker takes new events touches only the dead.
          healed = false;
          const doomed = Array.from({ length: 10 }, (_, i) => entry(`broken-${name}-doomed-${i}`));
          for (const e of doomed) await inbox.put(e);
          await until(async () => (await inbox.stats()).dead === 10, 10_000);
          const more = Array.from({ length: 10 }, () => entry());
          const purging = runCli(['inbox', 'purge', '--state', 'dead', ...cliArgs(name), '--json']);
          for (const e of more) await inbox.put(e);
          const purged = await purging;
          expect(purged.code).toBe(0);
          expect(JSON.parse(purged.stdout)).toEqual({ purged: 10, state: 'dead' });
          await until(async () => (await inbox.stats()).done === 70, 10_000);
          expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 70, dead: 0 });
        } finally {
          await worker.close();
        }
      }, 60_000);
    }

    it(`list(), retry() and purge() over ${DEAD_ENTRIES} dead entries: in batches, every one of them`, async () => {
      const name = nameOf('dead');
      const inbox = await open({ name });
      const seed = async () => {
        if (factory.seedDead) return factory.seedDead(name, DEAD_ENTRIES);
        // Through the port, 1 000 at a time side by side (a store's own seedDead is much faster).
        for (let start = 0; start < DEAD_ENTRIES; start += 1000) {
          const keys = Array.from({ length: Math.min(1000, DEAD_ENTRIES - start) }, (_, i) => `dead-${start + i}`);
          await Promise.all(keys.map((key) => inbox.put(entry(key))));
          const claims = await Promise.all(keys.map(() => inbox.claim({ leaseMs: 60_000, waitMs: 1000 })));
          await Promise.all(claims.map((claim) => inbox.fail(claim as InboxClaim, { dead: true, error: 'seeded' })));
        }
      };
      await seed();
      expect(await inbox.stats()).toMatchObject({ dead: DEAD_ENTRIES, pending: 0 });
      const listed = await peakHeapGrowth(() => inbox.list({ state: 'dead', limit: 100 }));
      expect(listed.result).toHaveLength(100);
      expect(listed.result[0]).toMatchObject({ state: 'dead', attempts: 1 });
      const purgedDead = await peakHeapGrowth(() => inbox.purge({ state: 'dead' }));
      expect(purgedDead.result).toBe(DEAD_ENTRIES);
      expect(await inbox.stats()).toMatchObject({ dead: 0, pending: 0 });

      await seed();
      const cliArgs = factory.cliArgs?.(name);
      // Through the CLI where the store is reachable from one, in one go however long it takes (a time limit
      // on the whole action used to cut it in half); its own process's heap is not measured here.
      const retried = await peakHeapGrowth(async () => {
        if (!cliArgs) return inbox.retry();
        const run = await runCli(['inbox', 'retry', ...cliArgs, '--json']);
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        return (JSON.parse(run.stdout) as { retried: number }).retried;
      });
      expect(retried.result).toBe(DEAD_ENTRIES);
      expect(await inbox.stats()).toMatchObject({ dead: 0, pending: DEAD_ENTRIES });
      expect(await inbox.claim({ leaseMs: 60_000, waitMs: 0 })).toMatchObject({ attempt: 1 });
      const purgedPending = await peakHeapGrowth(() => inbox.purge({ state: 'pending' }));
      expect(purgedPending.result).toBe(DEAD_ENTRIES - 1);
      const figures = { list: listed, purgeDead: purgedDead, [cliArgs ? '`inbox retry` (CLI)' : 'retry']: retried, purgePending: purgedPending };
      console.log(
        `${inbox.kind}, ${DEAD_ENTRIES} dead entries:`,
        Object.entries(figures)
          .map(([what, { ms, peakMb }]) => `${what} ${ms} ms (heap +${peakMb} MB at most)`)
          .join(', '),
      );
      // Loaded all at once, 100 000 entries cost hundreds of MB; in batches, a few.
      for (const { peakMb } of Object.values(figures)) expect(peakMb).toBeLessThan(64);
    }, 300_000);
  });
}

/**
 * The port's "Coordination" (catch-up's leased lock and high-water marks): two handles on one store, as two
 * receivers sharing it would have, take turns with the lock, a lease that ran out frees it, and a mark only rises.
 */
function coordinationContract(factory: InboxFactory, open: Opener): void {
  let names = 0;
  async function twoHandles(): Promise<[Inbox, Inbox]> {
    if (!factory.durable) {
      const inbox = await open();
      return [inbox, inbox];
    }
    const name = `coordination-${process.pid}-${++names}`;
    return [await open({ name }), await open({ name })];
  }

  describe('coordination', () => {
    it('one holder at a time holds a lock; renewing is the holder\'s; unlock frees it for another', async () => {
      const [a, b] = await twoHandles();
      expect(await a.tryLock!('catch-up', 'a', 30_000)).toBe(true);
      expect(await b.tryLock!('catch-up', 'b', 30_000)).toBe(false);
      expect(await a.tryLock!('catch-up', 'a', 30_000)).toBe(true);
      // Another name is another lock.
      expect(await b.tryLock!('other', 'b', 30_000)).toBe(true);
      // Only the holder frees it.
      await b.unlock!('catch-up', 'b');
      expect(await b.tryLock!('catch-up', 'b', 30_000)).toBe(false);
      await a.unlock!('catch-up', 'a');
      expect(await b.tryLock!('catch-up', 'b', 30_000)).toBe(true);
      expect(await a.tryLock!('catch-up', 'a', 30_000)).toBe(false);
    });

    it('a lease that ran out frees the lock: a dead holder blocks no one for ever', async () => {
      const [a, b] = await twoHandles();
      expect(await a.tryLock!('catch-up', 'a', 150)).toBe(true);
      expect(await b.tryLock!('catch-up', 'b', 150)).toBe(false);
      await sleep(250);
      expect(await b.tryLock!('catch-up', 'b', 30_000)).toBe(true);
      expect(await a.tryLock!('catch-up', 'a', 150)).toBe(false);
    });

    it('a mark is undefined until set, shared by every handle, and only rises', async () => {
      const [a, b] = await twoHandles();
      expect(await a.mark!('catch-up')).toBeUndefined();
      const now = Date.now();
      await a.setMark!('catch-up', now);
      expect(await b.mark!('catch-up')).toBe(now);
      await b.setMark!('catch-up', now - 60_000);
      expect(await a.mark!('catch-up')).toBe(now);
      await b.setMark!('catch-up', now + 1);
      expect(await a.mark!('catch-up')).toBe(now + 1);
      // A lock of the same name leaves the mark as it is, and the mark the lock.
      expect(await a.tryLock!('catch-up', 'a', 30_000)).toBe(true);
      expect(await b.mark!('catch-up')).toBe(now + 1);
      expect(await b.tryLock!('catch-up', 'b', 30_000)).toBe(false);
      expect(await b.mark!('other')).toBeUndefined();
    });
  });
}
