/**
 * What the Redis inbox (src/stores/redis/index.ts) does beyond the Inbox contract and its put protocol
 * (redis-put.test.ts), against real redis-servers: its options and connections, a Redis that goes away, puts
 * that wait while two batches are in flight, admin calls over more than one batch, and a claim asking for a
 * longer lease than the first (found untested by mutation testing, tools/mutation/results.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Inbox, InboxClaim, InboxEntry } from '../../src/delivery/port.js';
import { redisInbox, type RedisInboxOptions } from '../../src/stores/redis/index.js';
import { GaveUp } from '../../src/stores/kit/turn-batch.js';
import { sha256Base64 } from '../../src/platform/node.js';
import { batches, rejectionOf, seedDead as seedDeadIn } from '../support/redis-inbox.js';
import { redisPerSuite, startRedis, type RedisServer } from '../support/redis-server.js';

const redis = redisPerSuite();
let serial = 0;
function entry(key = `k-${++serial}`, body = ''): InboxEntry {
  const rawBody = JSON.stringify({ trigger: 'message_sent', appId: 'a', data: { n: serial, body } });
  return { key, trigger: 'message_sent', event: JSON.parse(rawBody) as InboxEntry['event'], rawBody, receivedAt: Date.now() };
}
const LEASE = { leaseMs: 30_000, waitMs: 0 };
/** What a put dropped before it was sent rejects with (src/stores/kit/turn-batch.ts, as the PostgreSQL inbox's). */
const GAVE_UP = new GaveUp().message;

const opened: Inbox[] = [];
const servers: RedisServer[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((inbox) => inbox.close().catch(() => undefined)));
  await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});
function open(options: RedisInboxOptions = {}): Inbox & { prefix: string } {
  const prefix = options.prefix ?? `ri-${++serial}`;
  const inbox = redisInbox({ url: redis.server.url, ...options, prefix });
  opened.push(inbox);
  return Object.assign(inbox, { prefix });
}
/** An inbox on a connection the test made, one put already made (its script loaded before anything is counted). */
async function onOwnConnection(): Promise<{ connection: Redis; inbox: Inbox }> {
  const connection = new Redis(redis.server.url, { maxRetriesPerRequest: null });
  clients.push(connection);
  const inbox = redisInbox({ connection, prefix: `own-${++serial}` });
  opened.push(inbox);
  await inbox.put(entry());
  return { connection, inbox };
}
async function ownServer(): Promise<RedisServer> {
  const server = await startRedis();
  servers.push(server);
  return server;
}
/** Ends a server's process, leaving its folder for a restart (stop() removes it after the test). */
async function kill(server: RedisServer): Promise<void> {
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGTERM');
  await exited;
}
const seedDead = (prefix: string, count: number) => seedDeadIn(redis.client, prefix, count);
const messageOf = async (promise: Promise<unknown>): Promise<string | undefined> => {
  const error = await rejectionOf(promise);
  return error instanceof Error ? error.message : `not an Error: ${String(error)}`;
};
const turn = () => new Promise((resolve) => setImmediate(resolve));
const connectedClients = async (client: Redis) => Number(/connected_clients:(\d+)/.exec(await client.info('clients'))?.[1]);
/** Waits until `check` holds, or `ms` passed. */
async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(20)) if (await check()) return true;
  return check();
}
const commands = async (client: Redis) => Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1] ?? 0);

describe('redisInbox options and connections', () => {
  it('says what it needs: a url or a connection, a positive windowMs', () => {
    expect(() => redisInbox({})).toThrow('redisInbox needs `url` (redis://host:6379) or `connection` (an ioredis client or its options).');
    expect(() => redisInbox(undefined as unknown as RedisInboxOptions)).toThrow(/needs `url`/);
    for (const windowMs of [0, -5, Number.NaN]) {
      expect(() => redisInbox({ url: redis.server.url, windowMs })).toThrow('redisInbox: `windowMs` must be a positive number of milliseconds.');
    }
  });

  it('is a durable inbox of kind redis', () => {
    const inbox = open();
    expect([inbox.kind, inbox.durable]).toEqual(['redis', true]);
  });

  it('writes under `chat-webhooks` by default; takes ioredis options as its connection, and closes the one it made', async () => {
    const server = await ownServer();
    const inbox = redisInbox({ connection: { host: '127.0.0.1', port: server.port } });
    opened.push(inbox);
    const e = entry();
    expect(await inbox.put(e)).toBe('stored');
    const client = new Redis(server.url);
    clients.push(client);
    expect(await client.get(`chat-webhooks:inbox:seen:${sha256Base64(e.key)}`)).toBe('stored');
    expect(await client.exists(`chat-webhooks:inbox:k_${sha256Base64(e.key)}`)).toBe(1);
    await inbox.close();
    // Only the test's own client is left.
    expect(await eventually(async () => (await connectedClients(client)) === 1)).toBe(true);
  });

  it('a url with ioredis options: the options apply (a database of its own)', async () => {
    const server = await ownServer();
    const inbox = redisInbox({ url: server.url, connection: { db: 3 }, prefix: 'dbs' });
    opened.push(inbox);
    expect(await inbox.put(entry())).toBe('stored');
    const client = new Redis(server.url, { db: 3 });
    clients.push(client);
    expect((await client.keys('dbs:inbox:seen:*')).length).toBe(1);
  });

  it('an ioredis client given (already connected) is used at once and stays open after close(); one it made is closed', async () => {
    const client = new Redis(redis.server.url, { maxRetriesPerRequest: null });
    clients.push(client);
    // Connected before the inbox sees it: no 'ready' event will come.
    await client.ping();
    const inbox = redisInbox({ connection: client, prefix: `given-${++serial}` });
    expect(await inbox.put(entry())).toBe('stored');
    await inbox.close();
    await inbox.close(); // twice: nothing more
    expect(await client.ping()).toBe('PONG');
    const own = open();
    await own.put(entry());
    const clientsBefore = Number(/connected_clients:(\d+)/.exec(await redis.client.info('clients'))?.[1]);
    await own.close();
    await sleep(100);
    expect(Number(/connected_clients:(\d+)/.exec(await redis.client.info('clients'))?.[1])).toBeLessThan(clientsBefore);
  });
});

describe('redisInbox while Redis is away', () => {
  it('puts and claims fail at once, ping names the state, close() does not wait; all work again once Redis is back', async () => {
    const server = await ownServer();
    const inbox = redisInbox({ url: server.url, prefix: 'away' });
    opened.push(inbox);
    expect(await inbox.put(entry())).toBe('stored');
    expect(await inbox.claim(LEASE)).toBeDefined(); // a claim ran too
    // Connection errors are the commands' to report, not printed by ioredis.
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await kill(server);
    const deadline = Date.now() + 5000;
    let refused: unknown;
    while (!refused && Date.now() < deadline) {
      // A put sent before the inbox heard of the outage waits in ioredis until Redis is back: not waited for here.
      refused = await Promise.race([rejectionOf(inbox.put(entry())), sleep(200)]);
      if (!refused) await sleep(20);
    }
    const unreachable = 'Redis is unreachable: the put was not queued (the receiver answers 503; the platform sends it again).';
    // Refused as it was made, or dropped unsent when the connection closed.
    expect((refused as Error).message).toMatch(/^Redis is unreachable: the put was not (queued|sent) \(the receiver answers 503; the platform sends it again\)\.$/);
    // At once: before the next turn of the event loop, not at ioredis's next failed reconnection.
    const order: string[] = [];
    const refusedNow = messageOf(inbox.put(entry())).then((message) => order.push(message ?? 'stored'));
    await turn();
    order.push('next turn');
    await refusedNow;
    expect(order).toEqual([unreachable, 'next turn']);
    let started = Date.now();
    expect(await messageOf(inbox.claim({ leaseMs: 30_000, waitMs: 5000 }))).toBe('Redis is unreachable: nothing was claimed (the worker asks again after a pause).');
    await expect(inbox.ping!()).rejects.toThrow(/^Redis is unreachable \(the connection is (reconnecting|connecting|close|end)\)\.$/);
    expect(Date.now() - started).toBeLessThan(1000);

    const back = await startRedis([], { port: server.port, dir: server.dir });
    servers.push(back);
    const until = Date.now() + 10_000;
    let stored: unknown;
    while (stored !== 'stored' && Date.now() < until) {
      stored = await inbox.put(entry()).catch(() => undefined);
      if (stored !== 'stored') await sleep(50);
    }
    expect(stored).toBe('stored');
    await expect(inbox.ping!()).resolves.toBeUndefined();

    await kill(back);
    await sleep(300);
    started = Date.now();
    await inbox.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
  });

  it('Redis gone with batches in flight: a waiting put is rejected at once; close() does not wait and rejects the sent ones', async () => {
    const server = await ownServer();
    const inbox = redisInbox({ url: server.url, prefix: 'gone' });
    opened.push(inbox);
    expect(await inbox.put(entry())).toBe('stored');
    const client = new Redis(server.url);
    await client.call('CLIENT', 'PAUSE', '10000', 'WRITE');
    const sent = (await twoInFlight(inbox)).map(messageOf);
    const waiting = messageOf(inbox.put(entry()));
    await sleep(50);
    client.disconnect();
    const exited = new Promise((resolve) => server.process.once('exit', resolve));
    server.process.kill('SIGKILL');
    await exited;
    expect(await waiting).toBe('Redis is unreachable: the put was not sent (the receiver answers 503; the platform sends it again).');
    await sleep(300);
    const started = Date.now();
    await inbox.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await Promise.all(sent)).toEqual(Array.from({ length: 2 }, () => 'Redis is unreachable: the inbox was closed before Redis answered.'));
  });

  it('puts that wait behind two stalled batches are dropped once their caller gives up; the others are stored after', async () => {
    const inbox = open();
    await inbox.put(entry());
    await redis.client.call('CLIENT', 'PAUSE', '700', 'WRITE');
    const inFlight = [inbox.put(entry())];
    await new Promise((resolve) => setImmediate(resolve));
    inFlight.push(inbox.put(entry()));
    await new Promise((resolve) => setImmediate(resolve));
    const giveUp = new AbortController();
    const abandoned = inbox.put(entry(), { signal: giveUp.signal });
    const kept = inbox.put(entry());
    await sleep(50);
    giveUp.abort();
    const started = Date.now();
    await expect(abandoned).rejects.toThrow(GAVE_UP);
    expect(Date.now() - started).toBeLessThan(600); // at once, not when Redis answers
    expect(await Promise.all([...inFlight, kept])).toEqual(['stored', 'stored', 'stored']);
    expect((await inbox.stats()).pending).toBe(4);
  });

  it('a put given up before its batch is sent is not sent', async () => {
    const inbox = open();
    await inbox.put(entry());
    const dropped = entry();
    const results = await Promise.allSettled([inbox.put(dropped, { signal: AbortSignal.abort() }), inbox.put(entry())]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled']);
    expect(await redis.client.exists(`${inbox.prefix}:inbox:k_${sha256Base64(dropped.key)}`)).toBe(0);
  });

  it('one batch carries at most 1 MiB of bodies (one put at least)', async () => {
    const { connection, inbox } = await onOwnConnection();
    const big = 'x'.repeat(400 * 1024);
    let before = await batches(connection);
    // 3 × 400 KB: two fit in one batch, the third goes in the next.
    expect(await Promise.all([1, 2, 3].map(() => inbox.put(entry(undefined, big))))).toEqual(['stored', 'stored', 'stored']);
    expect((await batches(connection)) - before).toBe(2);
    before = await batches(connection);
    // One body over the limit still goes, alone.
    expect(await inbox.put(entry(undefined, 'y'.repeat(1100 * 1024)))).toBe('stored');
    expect((await batches(connection)) - before).toBe(1);
  });
});

/** An entry whose raw body is exactly `length` characters. */
function entryOfLength(length: number): InboxEntry {
  const key = `sized-${++serial}`;
  const frame = JSON.stringify({ trigger: 'message_sent', appId: 'a', data: { pad: '' } });
  const rawBody = JSON.stringify({ trigger: 'message_sent', appId: 'a', data: { pad: 'x'.repeat(length - frame.length) } });
  return { key, trigger: 'message_sent', event: JSON.parse(rawBody) as InboxEntry['event'], rawBody, receivedAt: Date.now() };
}
/** Holds every write, scripts among them, for `ms`: the batches sent meanwhile wait for their replies. */
const pauseWrites = (ms: number) => redis.client.call('CLIENT', 'PAUSE', String(ms), 'WRITE');
/** Two puts in flight, sent in turns of their own (two batches): a put made after them waits. */
async function twoInFlight(inbox: Inbox): Promise<Promise<unknown>[]> {
  const running = [inbox.put(entry())];
  await turn();
  running.push(inbox.put(entry()));
  await turn();
  return running;
}
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe('redisInbox puts that wait', () => {
  it('close() rejects the puts still waiting, and lets the batches Redis is running finish', async () => {
    const inbox = open();
    await inbox.put(entry());
    await pauseWrites(500);
    const running = await twoInFlight(inbox);
    const waiting = inbox.put(entry());
    await sleep(20);
    const closing = inbox.close();
    expect(await messageOf(waiting)).toBe('The Redis inbox is closed.');
    await closing;
    expect(await Promise.all(running)).toEqual(['stored', 'stored']);
  });

  it('one given up while it waits is dropped at once, its body released; the others are stored after', async () => {
    const inbox = open();
    await inbox.put(entry());
    await pauseWrites(2000);
    const running = await twoInFlight(inbox);
    const giveUp = new AbortController();
    let given: WeakRef<InboxEntry>;
    const abandoned = (() => {
      const e = entry(undefined, 'y'.repeat(100_000));
      given = new WeakRef(e);
      return messageOf(inbox.put(e, { signal: giveUp.signal }));
    })();
    const kept = inbox.put(entry());
    await sleep(400);
    giveUp.abort();
    const abortedAt = Date.now();
    expect(await abandoned).toBe(GAVE_UP);
    expect(Date.now() - abortedAt).toBeLessThan(100); // at once, not when Redis answers
    collectGarbage();
    expect(given!.deref()).toBeUndefined();
    expect(await Promise.all([...running, kept])).toEqual(['stored', 'stored', 'stored']);
  });

  it('a put left waiting behind two batches of large bodies sent in its own turn is swept too', async () => {
    const inbox = open();
    await inbox.put(entry());
    await sleep(300); // connected
    await pauseWrites(2000);
    // 600 KB each: the first two go in two batches (both together are over 1 MiB), the third waits.
    const giveUp = new AbortController();
    const [first, second] = [inbox.put(entryOfLength(600_000)), inbox.put(entryOfLength(600_000))];
    const third = messageOf(inbox.put(entryOfLength(600_000), { signal: giveUp.signal }));
    await sleep(50);
    giveUp.abort();
    const abortedAt = Date.now();
    expect(await third).toBe(GAVE_UP);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(await Promise.all([first, second])).toEqual(['stored', 'stored']);
  });

  it('bodies of exactly 1 MiB together go in one batch; one character more, in two', async () => {
    const { connection, inbox } = await onOwnConnection();
    for (const [extra, calls] of [[0, 1], [1, 2]] as const) {
      const before = await batches(connection);
      const puts = [entryOfLength(512 * 1024), entryOfLength(512 * 1024 + extra)].map((e) => inbox.put(e));
      expect(await Promise.all(puts)).toEqual(['stored', 'stored']);
      expect((await batches(connection)) - before).toBe(calls);
    }
  });
});

describe('redisInbox claims', () => {
  it('an idle claim asks Redis every pollMs (50 ms by default), not in a loop', async () => {
    const inbox = open({ pollMs: undefined });
    expect(await inbox.claim(LEASE)).toBeUndefined();
    const before = await commands(redis.client);
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 500 })).toBeUndefined();
    const used = (await commands(redis.client)) - before;
    expect(used).toBeGreaterThan(3);
    expect(used).toBeLessThan(250); // about 7 commands a fetch, 10 fetches; at every turn, thousands
  });

  it('a claim whose signal aborts while it waits ends at once with nothing', async () => {
    const inbox = open({ pollMs: 50 });
    expect(await inbox.claim(LEASE)).toBeUndefined();
    const stop = new AbortController();
    const started = Date.now();
    const waiting = inbox.claim({ leaseMs: 30_000, waitMs: 10_000, signal: stop.signal });
    await sleep(100);
    stop.abort();
    expect(await waiting).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a claim asking for a longer lease than the first keeps its entry that long', async () => {
    const inbox = open();
    await inbox.put(entry());
    await inbox.put(entry());
    const short = await inbox.claim({ leaseMs: 300, waitMs: 0 }); // the worker's lock length: 300 ms
    const long = await inbox.claim({ leaseMs: 30_000, waitMs: 0 });
    await sleep(1500);
    const again = await inbox.claim({ leaseMs: 30_000, waitMs: 1500 });
    expect(again).toMatchObject({ key: short!.key, attempt: 2 });
    expect(await inbox.claim({ leaseMs: 30_000, waitMs: 0 })).toBeUndefined();
    expect(await inbox.renew(long!, 30_000)).toBe(true);
    expect(await inbox.renew({ ...long!, token: 'not-a-holder' }, 30_000)).toBe(false);
  });

  it('complete, fail and renew of a claim this inbox does not hold change nothing', async () => {
    const inbox = open();
    const e = entry();
    await inbox.put(e);
    const claim = (await inbox.claim(LEASE)) as InboxClaim;
    const stranger = { ...claim, token: 'someone-else' };
    await inbox.complete(stranger);
    await inbox.fail(stranger, { dead: true, error: 'no' });
    expect(await inbox.renew(stranger, 1000)).toBe(false);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 1, done: 0, dead: 0 });
    await inbox.complete(claim);
    await inbox.complete(claim); // again: no longer held
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
  });

  it('a dead entry lists its error, attempts and body; a done one its record', async () => {
    const inbox = open();
    const [e, f] = [entry(), entry()];
    await inbox.put(e);
    await inbox.put(f);
    await inbox.fail((await inbox.claim(LEASE))!, { dead: true, error: 'TypeError: boom' });
    await inbox.complete((await inbox.claim(LEASE))!);
    const [dead] = await inbox.list({ state: 'dead' });
    expect(dead).toEqual({ key: e.key, trigger: 'message_sent', state: 'dead', receivedAt: e.receivedAt, attempts: 1, lastError: 'TypeError: boom', event: e.event, rawBody: e.rawBody });
    expect(await inbox.list({ state: 'done' })).toEqual([{ key: f.key, trigger: 'message_sent', receivedAt: f.receivedAt, attempts: 1, state: 'done' }]);
    const [pending] = [await inbox.list({ state: 'pending' })];
    expect(pending).toEqual([]);
  });
});

describe('redisInbox admin in batches', () => {
  it('retry() and retry(keys) over more than 1 000 dead entries revive every one, and wake the waiting', async () => {
    const inbox = open();
    const keys = await seedDead(inbox.prefix, 2100);
    expect(await inbox.stats()).toMatchObject({ dead: 2100 });
    const scriptsBefore = await batches(redis.client);
    expect(await inbox.retry()).toBe(2100);
    // The retries, 1 000 at a time: three scripts (the count is a ZCARD).
    expect((await batches(redis.client)) - scriptsBefore).toBe(3);
    expect(await inbox.stats()).toMatchObject({ dead: 0, pending: 2100 });
    expect(await inbox.claim(LEASE)).toMatchObject({ attempt: 1 });
    expect(await inbox.retry()).toBe(0);

    const other = open();
    const otherKeys = await seedDead(other.prefix, 2100);
    expect(await other.retry([...otherKeys.slice(0, 2050), 'no-such-key'])).toBe(2050);
    expect(await other.stats()).toMatchObject({ dead: 50, pending: 2050 });
    expect(keys).toHaveLength(2100);
  });

  it('list() without a limit shows 100; the done list keeps the last 1 000 completions', async () => {
    const inbox = open();
    await seedDead(inbox.prefix, 150);
    expect(await inbox.list({ state: 'dead' })).toHaveLength(100);
    const recent = `${inbox.prefix}:inbox:recent-done`;
    const old = JSON.stringify({ key: 'old', trigger: 'message_sent', receivedAt: 1, attempts: 1 });
    await redis.client.lpush(recent, ...Array.from({ length: 1000 }, () => old));
    await inbox.put(entry());
    await inbox.complete((await inbox.claim(LEASE))!);
    expect(await redis.client.llen(recent)).toBe(1000);
    expect((await inbox.list({ state: 'done', limit: 1000 }))[0]!.key).not.toBe('old');
    expect(await inbox.list({ state: 'done' })).toHaveLength(100);
  });

  it('purge of done forgets the keys of finished jobs only, over more than one scan', async () => {
    const inbox = open();
    const finished = Array.from({ length: 3 }, () => entry());
    for (const e of finished) await inbox.put(e);
    for (const _ of finished) await inbox.complete((await inbox.claim(LEASE))!);
    const waiting = entry();
    await inbox.put(waiting);
    // Markers of keys long gone, more than one SCAN's worth.
    const base = `${inbox.prefix}:inbox:seen:`;
    const pipeline = redis.client.pipeline();
    for (let i = 0; i < 2500; i++) pipeline.set(`${base}gone-${i}`, 'stored');
    await pipeline.exec();
    expect(await inbox.purge({ state: 'done' })).toBe(3);
    expect(await redis.client.keys(`${base}*`)).toEqual([`${base}${sha256Base64(waiting.key)}`]);
    expect(await inbox.stats()).toEqual({ pending: 1, running: 0, done: 0, dead: 0 });
    expect(await inbox.list({ state: 'done' })).toEqual([]);
    expect(await inbox.put(finished[0]!)).toBe('stored');
    expect(await inbox.put(waiting)).toBe('duplicate');
  });

  it('purge of pending removes waiting, delayed and their markers, more than one batch', async () => {
    const inbox = open();
    const keys = await seedDead(inbox.prefix, 1200);
    expect(await inbox.retry(keys.slice(0, 1100))).toBe(1100);
    const e = entry();
    await inbox.put(e);
    const claim = (await inbox.claim(LEASE))!;
    await inbox.fail(claim, { retryAt: Date.now() + 60_000, error: 'later' });
    expect(await inbox.purge({ state: 'pending' })).toBe(1101);
    expect(await inbox.stats()).toEqual({ pending: 0, running: 0, done: 0, dead: 100 });
    expect(await inbox.put(entry(keys[0]))).toBe('stored');
    expect(await inbox.put(entry(keys[1150]))).toBe('duplicate');
  });
});
