/**
 * The Redis inbox's put protocol (top of src/inbox/redis.ts): one script call per batch reads which keys are
 * known, adds the jobs by BullMQ's own add script and marks stored the keys whose job exists. These tests break
 * the adds inside the batch, lose its reply, and repeat a key after its job was removed, and check that nothing
 * is answered stored, or left marked stored, without its job, and that no repeat adds a job; and that a job is
 * stored as BullMQ's `Queue#add` stores it (as this inbox added jobs before), so either kind is claimed.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { InboxEntry } from '../../src/delivery/port.js';
import { redisInbox } from '../../src/inbox/redis.js';
import { sha256Base64 } from '../../src/platform/node.js';
import { redisPerSuite } from '../support/redis-server.js';

const redis = redisPerSuite();

let serial = 0;
function entry(key = `k-${++serial}`): InboxEntry {
  const rawBody = JSON.stringify({ trigger: 'message_sent', appId: 'a', data: { n: serial } });
  return { key, trigger: 'message_sent', event: JSON.parse(rawBody) as InboxEntry['event'], rawBody, receivedAt: Date.now() };
}
const markerOf = (prefix: string, key: string) => `${prefix}:inbox:seen:${sha256Base64(key)}`;
const jobKeyOf = (prefix: string, key: string) => `${prefix}:inbox:k_${sha256Base64(key)}`;

/** An inbox on a connection of its own, which a test may break; both are closed after `run`. */
async function onOwnConnection(prefix: string, run: (connection: Redis, inbox: ReturnType<typeof redisInbox>) => Promise<void>) {
  const connection = new Redis(redis.server.url, { maxRetriesPerRequest: null });
  const inbox = redisInbox({ connection, prefix });
  try {
    await run(connection, inbox);
  } finally {
    await inbox.close();
    await connection.quit();
  }
}

describe('redisInbox put', () => {
  it('a stored put leaves its job and a stored mark that lasts windowMs, in one turn for many puts', async () => {
    const prefix = `p-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix, windowMs: 60_000 });
    try {
      const entries = Array.from({ length: 20 }, () => entry());
      expect(await Promise.all(entries.map((e) => inbox.put(e)))).toEqual(entries.map(() => 'stored'));
      for (const e of entries) {
        expect(await redis.client.get(markerOf(prefix, e.key))).toBe('stored');
        expect(await redis.client.pttl(markerOf(prefix, e.key))).toBeGreaterThan(50_000);
        expect(await redis.client.exists(jobKeyOf(prefix, e.key))).toBe(1);
      }
      // A repeat in a later turn, and repeats within one turn, are duplicates and add nothing.
      const again = await Promise.all([inbox.put(entries[0]!), inbox.put(entries[1]!), inbox.put(entries[1]!)]);
      expect(again).toEqual(['duplicate', 'duplicate', 'duplicate']);
      expect((await inbox.stats()).pending).toBe(20);
    } finally {
      await inbox.close();
    }
  });

  it('an add that fails inside the batch is rejected and leaves neither job nor mark: its retry is stored', async () => {
    const prefix = `f-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix });
    try {
      expect(await inbox.put(entry())).toBe('stored');
      // BullMQ's add script starts with INCR of the queue's id key: a value that is not a number fails the add
      // (an error inside the batch's script, caught for that put) and leaves no job.
      await redis.client.set(`${prefix}:inbox:id`, 'not a number');
      const failed = entry();
      const [lost, alsoLost] = await Promise.allSettled([inbox.put(failed), inbox.put(failed)]);
      expect([lost?.status, alsoLost?.status]).toEqual(['rejected', 'rejected']);
      for (const outcome of [lost, alsoLost]) {
        expect(((outcome as PromiseRejectedResult).reason as Error).message).toMatch(/^Redis did not add the job: .*not an integer/);
      }
      expect(await redis.client.exists(jobKeyOf(prefix, failed.key))).toBe(0);
      expect(await redis.client.exists(markerOf(prefix, failed.key))).toBe(0);

      await redis.client.set(`${prefix}:inbox:id`, '100');
      expect(await inbox.put(failed)).toBe('stored');
      expect(await redis.client.get(markerOf(prefix, failed.key))).toBe('stored');
      expect((await inbox.list({ state: 'pending', limit: 10 })).map((e) => e.key)).toContain(failed.key);
    } finally {
      await inbox.close();
    }
  });

  it('a repeat after the job finished and was removed is a duplicate, adds no job and leaves no stand-in', async () => {
    const prefix = `r-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix, pollMs: 10 });
    try {
      const first = entry();
      expect(await inbox.put(first)).toBe('stored');
      const claim = await inbox.claim({ leaseMs: 5000, waitMs: 1000 });
      expect(claim?.key).toBe(first.key);
      await inbox.complete(claim!);
      expect(await redis.client.exists(jobKeyOf(prefix, first.key))).toBe(0);

      expect(await Promise.all([inbox.put(first), inbox.put(entry())])).toEqual(['duplicate', 'stored']);
      expect(await redis.client.exists(jobKeyOf(prefix, first.key))).toBe(0);
      expect(await inbox.stats()).toMatchObject({ pending: 1, done: 1 });
      expect(await redis.client.get(markerOf(prefix, first.key))).toBe('stored');
    } finally {
      await inbox.close();
    }
  });

  it('stores a job as BullMQ\'s Queue#add does, and claims jobs added that way (as earlier versions added them)', async () => {
    const prefix = `q-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix, pollMs: 10 });
    const queue = new Queue('inbox', { connection: { url: redis.server.url }, prefix });
    try {
      const [ours, theirs] = [entry(), entry()];
      ours.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      expect(await inbox.put(ours)).toBe('stored');
      const { key, trigger, rawBody, receivedAt } = theirs;
      const jobId = `k_${sha256Base64(theirs.key)}`;
      await queue.add(trigger, { key, trigger, rawBody, receivedAt }, { jobId, removeOnComplete: true, removeOnFail: false, attempts: 1 });

      const stored = await redis.client.hgetall(jobKeyOf(prefix, ours.key));
      const added = await redis.client.hgetall(jobKeyOf(prefix, theirs.key));
      const { key: k, trigger: t, rawBody: b, receivedAt: r, traceparent } = ours;
      expect(JSON.parse(stored.data!)).toEqual({ key: k, trigger: t, rawBody: b, receivedAt: r, traceparent });
      expect(JSON.parse(stored.opts!)).toEqual({ ...JSON.parse(added.opts!), jobId: `k_${sha256Base64(ours.key)}` });
      expect({ ...stored, data: 0, opts: 0, timestamp: 0 }).toEqual({ ...added, data: 0, opts: 0, timestamp: 0 });
      expect(Object.keys(stored).sort()).toEqual(Object.keys(added).sort());
      expect(Number(stored.timestamp)).toBeGreaterThan(Date.now() - 60_000);

      const claims = [await inbox.claim({ leaseMs: 5000, waitMs: 1000 }), await inbox.claim({ leaseMs: 5000, waitMs: 1000 })];
      expect(claims.map((claim) => claim?.key).sort()).toEqual([ours.key, theirs.key].sort());
      expect(claims.find((claim) => claim?.key === ours.key)).toMatchObject({ rawBody: ours.rawBody, traceparent: ours.traceparent, attempt: 1 });
      expect(claims.find((claim) => claim?.key === theirs.key)).toMatchObject({ rawBody: theirs.rawBody, trigger: 'message_sent', attempt: 1 });
      expect(await inbox.put(theirs)).toBe('duplicate');
    } finally {
      await queue.close();
      await inbox.close();
    }
  });

  it("writes what Queue#add writes (the queue's keys, its events, the workers' wake-up marker), in a paused queue too", async () => {
    const [ours, theirs] = [`wo-${++serial}`, `wt-${++serial}`];
    const inbox = redisInbox({ url: redis.server.url, prefix: ours });
    const queues = [ours, theirs].map((prefix) => new Queue('inbox', { connection: { url: redis.server.url }, prefix }));
    const add = (e: InboxEntry) => {
      const { key, trigger, rawBody, receivedAt } = e;
      const options = { jobId: `k_${sha256Base64(key)}`, removeOnComplete: true, removeOnFail: false, attempts: 1 };
      return queues[1]!.add(trigger, { key, trigger, rawBody, receivedAt }, options);
    };
    /** Every key under the prefix but the inbox's own markers: its name, type and what of it does not vary by time. */
    const written = async (prefix: string) => {
      const found: Record<string, unknown> = {};
      for (const key of (await redis.client.keys(`${prefix}:inbox:*`)).filter((name) => !name.includes(':seen:'))) {
        const type = await redis.client.type(key);
        const content =
          type === 'stream' ? (await redis.client.xrange(key, '-', '+')).map(([, fields]) => fields)
          : type === 'zset' ? await redis.client.zrange(key, '0', '-1', 'WITHSCORES')
          : type === 'list' ? await redis.client.lrange(key, 0, -1)
          : type === 'hash' ? Object.keys(await redis.client.hgetall(key)).sort()
          : await redis.client.get(key);
        found[key.slice(prefix.length)] = { type, content };
      }
      return found;
    };
    try {
      const [first, second] = [entry(), entry()];
      expect(await inbox.put(first)).toBe('stored');
      await add(first);
      expect(await written(ours)).toEqual(await written(theirs));
      expect(Object.keys(await written(ours)).sort()).toEqual([':inbox:events', ':inbox:id', ':inbox:marker', ':inbox:meta', ':inbox:wait', `:inbox:k_${sha256Base64(first.key)}`].sort());

      // Paused, BullMQ adds no wake-up mark: a paused queue's workers must not be woken.
      await Promise.all(queues.map((queue) => queue.pause()));
      await redis.client.del(`${ours}:inbox:marker`, `${theirs}:inbox:marker`);
      expect(await inbox.put(second)).toBe('stored');
      await add(second);
      const paused = await written(ours);
      expect(paused).toEqual(await written(theirs));
      expect(paused[':inbox:marker']).toBeUndefined();
    } finally {
      await Promise.all(queues.map((queue) => queue.close()));
      await inbox.close();
    }
  });

  it('a batch that ran but whose reply was lost is rejected, and its stored key stays stored: the retry is a duplicate', async () => {
    const prefix = `l-${++serial}`;
    await onOwnConnection(prefix, async (connection, inbox) => {
      const first = entry();
      // The script call holding the put reaches Redis and runs; its caller hears of a lost connection instead.
      const sendCommand = connection.sendCommand.bind(connection);
      connection.sendCommand = ((...args: Parameters<typeof sendCommand>) => {
        const sent = sendCommand(...args);
        if (!args[0].args.includes(jobKeyOf(prefix, first.key))) return sent;
        return (sent as Promise<unknown>).then(() => Promise.reject(new Error('Connection is closed.')));
      }) as typeof sendCommand;
      await expect(inbox.put(first)).rejects.toThrow('Connection is closed.');
      connection.sendCommand = sendCommand;
      expect(await redis.client.exists(jobKeyOf(prefix, first.key))).toBe(1);
      expect(await redis.client.get(markerOf(prefix, first.key))).toBe('stored');
      expect(await inbox.put(first)).toBe('duplicate');
      expect((await inbox.stats()).pending).toBe(1);
    });
  });

  it('keeps two batches in flight at most: puts made while two are in flight go together in the next', async () => {
    const prefix = `b-${++serial}`;
    await onOwnConnection(prefix, async (connection, inbox) => {
      await inbox.put(entry()); // The batch script is loaded on the first use; count from here.
      const calls = (stats: string, command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      const execs = async () => {
        const stats = await connection.info('commandstats');
        return calls(stats, 'evalsha') + calls(stats, 'eval');
      };
      const before = await execs();
      // Redis holds every write (scripts among them) for 300 ms: the batches sent meanwhile wait for their replies.
      await redis.client.call('CLIENT', 'PAUSE', '300', 'WRITE');
      const first = inbox.put(entry());
      // Puts over the next turns: the first of them go in a second batch, the others wait for a batch to end.
      const later: Promise<unknown>[] = [];
      for (let turn = 0; turn < 5; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        later.push(inbox.put(entry()), inbox.put(entry()));
      }
      expect(await Promise.all([first, ...later])).toEqual(Array.from({ length: 11 }, () => 'stored'));
      // One script call for the first put, one for the next turn's two, one for the eight after them (six if each
      // turn sent its own, two with one batch in flight at a time).
      expect((await execs()) - before).toBe(3);
    });
  });
});
