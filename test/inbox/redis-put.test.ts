/**
 * The Redis inbox's put protocol (top of src/stores/redis/index.ts, src/stores/redis/put.lua): one script call per
 * batch reads which keys are known, writes and queues the jobs of the others and marks them stored. These tests
 * break the writes inside the batch, lose its reply, and repeat a key after its job was removed, and check that
 * nothing is answered stored, or left marked stored, without its job, and that no repeat adds a job; and what a
 * stored job holds (src/stores/redis/keys.ts).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { InboxEntry } from '../../src/delivery/port.js';
import { redisInbox } from '../../src/stores/redis/index.js';
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
      // The pending list made a string: queueing the job fails (an error inside the batch's script, caught for
      // that put), and the job just written is taken back.
      await redis.client.del(`${prefix}:inbox:pending`);
      await redis.client.set(`${prefix}:inbox:pending`, 'not a list');
      const failed = entry();
      const [lost, alsoLost] = await Promise.allSettled([inbox.put(failed), inbox.put(failed)]);
      expect([lost?.status, alsoLost?.status]).toEqual(['rejected', 'rejected']);
      for (const outcome of [lost, alsoLost]) {
        expect(((outcome as PromiseRejectedResult).reason as Error).message).toMatch(/^Redis did not store the entry: WRONGTYPE/);
      }
      expect(await redis.client.exists(jobKeyOf(prefix, failed.key))).toBe(0);
      expect(await redis.client.exists(markerOf(prefix, failed.key))).toBe(0);

      await redis.client.del(`${prefix}:inbox:pending`);
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

  it('a stored job holds its entry as JSON (without the parsed event) and attempts 0, queued oldest first', async () => {
    const prefix = `j-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix });
    try {
      const [first, second] = [entry(), { ...entry(), traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }];
      expect(await Promise.all([inbox.put(first), inbox.put(second)])).toEqual(['stored', 'stored']);
      const { key, trigger, rawBody, receivedAt } = first;
      expect(await redis.client.hgetall(jobKeyOf(prefix, first.key))).toEqual({ data: JSON.stringify({ key, trigger, rawBody, receivedAt }), attempts: '0' });
      expect(JSON.parse((await redis.client.hget(jobKeyOf(prefix, second.key), 'data'))!)).toMatchObject({ traceparent: second.traceparent });
      const ids = [first, second].map((e) => `k_${sha256Base64(e.key)}`);
      expect(await redis.client.lrange(`${prefix}:inbox:pending`, 0, -1)).toEqual(ids);
    } finally {
      await inbox.close();
    }
  });

  it('a batch that ran but whose reply was lost is rejected, and its stored key stays stored: the retry is a duplicate', async () => {
    const prefix = `l-${++serial}`;
    await onOwnConnection(prefix, async (connection, inbox) => {
      const first = entry();
      // The script call holding the put reaches Redis and runs; its caller hears of a lost connection instead.
      // Once: ioredis resends a script Redis does not know yet (NOSCRIPT), and the resend is part of the same call.
      const sendCommand = connection.sendCommand.bind(connection);
      let lost = false;
      connection.sendCommand = ((...args: Parameters<typeof sendCommand>) => {
        const sent = sendCommand(...args);
        if (lost || !args[0].args.includes(jobKeyOf(prefix, first.key))) return sent;
        lost = true;
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
