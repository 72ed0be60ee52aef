/**
 * What the Redis inbox (src/stores/redis/index.ts) does that the contract suite and redis-inbox.test.ts left unchecked
 * (found by mutation testing): which pending entry is the oldest, the order of a listing, how retry reads and
 * revives dead entries and wakes the claims waiting, a purge of done that has nothing to forget, claims and their
 * AbortSignal, claims after close(), the polling pause, renew on a closed inbox, and how soon an abandoned lease
 * is handed out again. Against a real redis-server.
 */
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { Inbox, InboxClaim, InboxEntry } from '../../src/delivery/port.js';
import { redisInbox, type RedisInboxOptions } from '../../src/stores/redis/index.js';
import { sha256Base64 } from '../../src/platform/node.js';
import { commandCalls, rejectionOf, seedDead } from '../support/redis-inbox.js';
import { redisPerSuite } from '../support/redis-server.js';

const redis = redisPerSuite();
let serial = 0;
function entry(receivedAt = Date.now(), key = `c-${++serial}`): InboxEntry {
  const rawBody = JSON.stringify({ trigger: 'message_sent', appId: 'a', data: { n: serial } });
  return { key, trigger: 'message_sent', event: JSON.parse(rawBody) as InboxEntry['event'], rawBody, receivedAt };
}
const LEASE = { leaseMs: 30_000, waitMs: 0 };

const opened: Inbox[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((inbox) => inbox.close().catch(() => undefined)));
  await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => undefined)));
});
function open(options: RedisInboxOptions = {}): Inbox & { prefix: string } {
  const prefix = options.prefix ?? `rc-${++serial}`;
  const inbox = redisInbox({ url: redis.server.url, ...options, prefix });
  opened.push(inbox);
  return Object.assign(inbox, { prefix });
}
/** An inbox on a connection the test owns: the inbox does not close it, so Redis stays reachable after close(). */
function onGivenConnection(): Inbox {
  const connection = new Redis(redis.server.url, { maxRetriesPerRequest: null });
  clients.push(connection);
  const inbox = redisInbox({ connection, prefix: `given-${++serial}` });
  opened.push(inbox);
  return inbox;
}
const keysOf = (listed: { key: string }[]) => listed.map((one) => one.key);

describe('redisInbox oldestPendingAt', () => {
  it('is the receivedAt of the first stored waiting entry, or of an older retry waiting for its time', async () => {
    const waiting = open();
    expect(await waiting.oldestPendingAt!()).toBeUndefined();
    for (const at of [3000, 4000, 5000]) await waiting.put(entry(at));
    expect(await waiting.oldestPendingAt!()).toBe(3000);

    const retries = open();
    // Two retries, received before any waiting entry: the one due first is the older.
    for (const at of [1000, 2000]) await retries.put(entry(at));
    const now = Date.now();
    for (const dueIn of [60_000, 120_000]) {
      const claim = (await retries.claim(LEASE))!;
      await retries.fail(claim, { retryAt: now + dueIn + claim.receivedAt, error: 'later' });
    }
    for (const at of [3000, 4000, 5000]) await retries.put(entry(at));
    expect(await retries.stats()).toMatchObject({ pending: 5, running: 0 });
    expect(await retries.oldestPendingAt!()).toBe(1000);
  });

  it('reads the first 100 retries by due time: with 150, the oldest is the one due first', async () => {
    const inbox = open();
    // Received at 1 (the oldest), then 10 001… 10 149; each is due in its receivedAt order.
    await Promise.all(Array.from({ length: 150 }, (_, i) => inbox.put(entry(i === 0 ? 1 : 10_000 + i))));
    const due = Date.now() + 3_600_000;
    for (let i = 0; i < 150; i++) {
      const claim = (await inbox.claim(LEASE))!;
      await inbox.fail(claim, { retryAt: due + claim.receivedAt, error: 'later' });
    }
    await inbox.put(entry(20_000));
    expect(await inbox.stats()).toMatchObject({ pending: 151, running: 0 });
    expect(await inbox.oldestPendingAt!()).toBe(1);
  });
});

describe('redisInbox list', () => {
  it('lists pending entries the longest waiting first, `limit` of them', async () => {
    const inbox = open();
    const entries = [entry(), entry(), entry(), entry()];
    for (const e of entries) await inbox.put(e);
    expect(keysOf(await inbox.list({ state: 'pending', limit: 2 }))).toEqual(keysOf(entries.slice(0, 2)));
    expect(keysOf(await inbox.list({ state: 'pending' }))).toEqual(keysOf(entries));
  });

  it('lists at most `limit` pending entries, waiting and retries together (the waiting first)', async () => {
    const inbox = open();
    const [retried, ...waiting] = [entry(), entry(), entry(), entry()];
    await inbox.put(retried!);
    await inbox.fail((await inbox.claim(LEASE))!, { retryAt: Date.now() + 60_000, error: 'later' });
    for (const e of waiting) await inbox.put(e);
    expect(keysOf(await inbox.list({ state: 'pending', limit: 1 }))).toEqual(keysOf(waiting.slice(0, 1)));
    expect(keysOf(await inbox.list({ state: 'pending', limit: 3 }))).toEqual(keysOf(waiting));
    expect(keysOf(await inbox.list({ state: 'pending', limit: 4 }))).toEqual(keysOf([...waiting, retried!]));
  });
});

describe('redisInbox retry', () => {
  it('retry(keys) revives them a batch of 1 000 at a time, in one script each, reading no job', async () => {
    const inbox = open();
    const keys = await seedDead(redis.client, inbox.prefix, 1001);
    await redis.client.config('RESETSTAT');
    expect(await inbox.retry(keys)).toBe(1001);
    expect((await commandCalls(redis.client, 'evalsha')) + (await commandCalls(redis.client, 'eval'))).toBe(2);
    expect(await commandCalls(redis.client, 'hgetall')).toBe(0);
    expect(await inbox.stats()).toMatchObject({ dead: 0, pending: 1001 });
  });

  it('retry(keys) counts the entries it revived, and resets their attempts: the next claim is attempt 1', async () => {
    const inbox = open();
    const pending = entry();
    await inbox.put(pending);
    const [first, second, third] = await seedDead(redis.client, inbox.prefix, 3, { attempts: 3 });
    expect((await inbox.list({ state: 'dead' })).map((dead) => dead.attempts)).toEqual([3, 3, 3]);
    expect(await inbox.retry([first!, 'no-such-key', pending.key, second!])).toBe(2);
    expect(await inbox.retry([first!])).toBe(0); // pending now
    expect(await inbox.stats()).toMatchObject({ dead: 1, pending: 3 });
    const claims = [(await inbox.claim(LEASE))!, (await inbox.claim(LEASE))!, (await inbox.claim(LEASE))!];
    expect(claims.map((claim) => claim.key).sort()).toEqual([first, second, pending.key].sort());
    expect(claims.map((claim) => claim.attempt)).toEqual([1, 1, 1]);
    // As retry() and the claim leave a revived entry: its first attempt, no error of its dead life, the claim's lease.
    for (const claim of claims.filter(({ key }) => key !== pending.key)) {
      expect(await redis.client.hmget(`${inbox.prefix}:inbox:k_${sha256Base64(claim.key)}`, 'attempts', 'error', 'token')).toEqual(['1', null, claim.token]);
    }
    expect(await inbox.list({ state: 'dead' })).toMatchObject([{ key: third, attempts: 3 }]);
  });

  it('retry() of every dead entry wakes a claim of this inbox waiting between its polls', async () => {
    const inbox = open({ pollMs: 5000 });
    const [key] = await seedDead(redis.client, inbox.prefix, 1);
    expect(await inbox.claim(LEASE)).toBeUndefined(); // found nothing: the next claim waits between polls
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 4000 });
    await sleep(200);
    const started = Date.now();
    expect(await inbox.retry()).toBe(1);
    expect(await waiting).toMatchObject({ key, attempt: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('redisInbox wakes its waiting claims', () => {
  it('a put this inbox stores wakes its claim waiting between polls; a duplicate does not', async () => {
    const inbox = open({ pollMs: 5000 });
    const stored = entry();
    await inbox.put(stored);
    await inbox.complete((await inbox.claim(LEASE))!);
    expect(await inbox.claim(LEASE)).toBeUndefined();
    const idle = inbox.claim({ leaseMs: 30_000, waitMs: 600 });
    await sleep(100);
    expect(await inbox.put(stored)).toBe('duplicate');
    const idleStarted = Date.now();
    expect(await idle).toBeUndefined();
    expect(Date.now() - idleStarted).toBeGreaterThan(300); // woken by nothing: it waited out waitMs
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 4000 });
    await sleep(100);
    const fresh = entry();
    const started = Date.now();
    expect(await inbox.put(fresh)).toBe('stored');
    expect(await waiting).toMatchObject({ key: fresh.key, attempt: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('redisInbox purge of done', () => {
  it('with only pending and dead entries marked, forgets nothing and resolves', async () => {
    const inbox = open();
    const [dead, pending] = [entry(), entry()];
    await inbox.put(dead);
    await inbox.fail((await inbox.claim(LEASE))!, { dead: true, error: 'no' });
    await inbox.put(pending);
    expect(await inbox.purge({ state: 'done' })).toBe(0);
    expect(await redis.client.keys(`${inbox.prefix}:inbox:seen:*`)).toHaveLength(2);
    expect(await inbox.put(pending)).toBe('duplicate');
    expect(await inbox.put(dead)).toBe('duplicate');
    expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 0, dead: 1 });
  });
});

describe('redisInbox claims and their AbortSignal', () => {
  it('a claim whose signal has already aborted takes nothing', async () => {
    const inbox = open();
    await inbox.put(entry());
    expect(await inbox.claim({ ...LEASE, signal: AbortSignal.abort() })).toBeUndefined();
    expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 0, dead: 0 });
  });

  it('a claim whose fetch is held by Redis ends with nothing as soon as its signal aborts', async () => {
    const inbox = open();
    expect(await inbox.claim(LEASE)).toBeUndefined(); // its scripts are loaded
    await inbox.put(entry());
    // A claim is a script that writes: Redis holds it for 1.5 s.
    await redis.client.call('CLIENT', 'PAUSE', '1500', 'WRITE');
    const stop = new AbortController();
    const started = Date.now();
    const claiming = inbox.claim({ leaseMs: 30_000, waitMs: 0, signal: stop.signal });
    await sleep(100);
    stop.abort();
    expect(await claiming).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('a settled claim leaves no listener on its signal', async () => {
    const inbox = open({ pollMs: 50 });
    await inbox.put(entry());
    const { signal } = new AbortController();
    expect(await inbox.claim({ ...LEASE, signal })).toBeDefined();
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    expect(await inbox.claim({ ...LEASE, signal })).toBeUndefined();
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 120, signal })).toBeUndefined();
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('redisInbox claims after close() and while idle', () => {
  it('a claim after close() rejects, whether the inbox had found its queue empty or not', async () => {
    const fresh = onGivenConnection();
    await fresh.put(entry());
    await fresh.close();
    const error = await rejectionOf(fresh.claim(LEASE));
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('The Redis inbox is closed.');

    const drained = onGivenConnection();
    expect(await drained.claim(LEASE)).toBeUndefined();
    await drained.close();
    const again = await rejectionOf(drained.claim(LEASE));
    expect(again).toBeInstanceOf(Error);
    expect((again as Error).message).toBe('The Redis inbox is closed.');

    // On a connection the inbox made, closed by close(): still "closed", not "unreachable".
    const own = open();
    await own.put(entry());
    await own.close();
    await sleep(100);
    expect(((await rejectionOf(own.claim(LEASE))) as Error).message).toBe('The Redis inbox is closed.');
    expect(((await rejectionOf(own.ping!())) as Error).message).toBe('The Redis inbox is closed.');
  });

  it('a claim polling an empty queue when close() is called ends at its next poll, closed', async () => {
    const inbox = onGivenConnection();
    expect(await inbox.claim(LEASE)).toBeUndefined(); // found empty: the next claims poll
    const waiting = rejectionOf(inbox.claim({ leaseMs: 30_000, waitMs: 10_000 }));
    await sleep(100);
    const started = Date.now();
    await inbox.close();
    expect(((await waiting) as Error).message).toBe('The Redis inbox is closed.');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('claims open no connection of their own: ten more claims open no more connections', async () => {
    const inbox = open();
    const connected = async () => Number(/connected_clients:(\d+)/.exec(await redis.client.info('clients'))?.[1]);
    expect(await inbox.claim(LEASE)).toBeUndefined();
    await sleep(100);
    const before = await connected();
    for (let claims = 0; claims < 10; claims += 1) expect(await inbox.claim(LEASE)).toBeUndefined();
    await sleep(100);
    expect(await connected()).toBe(before);
  });

  it('an idle claim returns after waitMs even when pollMs is longer', async () => {
    const inbox = open({ pollMs: 2000 });
    const started = Date.now();
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 100 })).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('renew of a held claim after close() says the lease is not renewed', async () => {
    const inbox = open();
    await inbox.put(entry());
    const claim = (await inbox.claim(LEASE)) as InboxClaim;
    await inbox.close();
    expect(await inbox.renew(claim, 30_000)).toBe(false);
  });
});

describe('redisInbox abandoned leases', () => {
  it('a claim never completed is handed out again soon after its lease ran out (by the next claim that asks)', async () => {
    const inbox = open({ pollMs: 20 });
    expect(await inbox.claim({ leaseMs: 1000, waitMs: 0 })).toBeUndefined(); // found nothing: the next claims poll
    const e = entry();
    await inbox.put(e);
    const started = Date.now();
    expect(await inbox.claim({ leaseMs: 1000, waitMs: 0 })).toMatchObject({ key: e.key, attempt: 1 });
    const again = await inbox.claim({ leaseMs: 1000, waitMs: 6000 });
    const took = Date.now() - started;
    expect(again).toMatchObject({ key: e.key, attempt: 2 });
    // The lease ends at 1 s; the claim asking every 20 ms takes it back then.
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(1300);
  });
});
