/**
 * The Redis inbox's put protocol (top of src/inbox/redis.ts): one MULTI per batch reads which keys are known,
 * adds the jobs and marks stored the keys whose job exists. These tests break the adds inside the MULTI, lose
 * its reply, and repeat a key after its job was removed, and check that nothing is answered stored, or left
 * marked stored, without its job, and that no repeat adds a job.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { InboxEntry } from '../../src/inbox/port.js';
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

  it('an add that fails inside the MULTI is rejected and leaves neither job nor mark: its retry is stored', async () => {
    const prefix = `f-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix });
    try {
      expect(await inbox.put(entry())).toBe('stored');
      // BullMQ's add script starts with INCR of the queue's id key: a value that is not a number fails the add
      // (a script error inside the MULTI, which Redis does not roll back) and leaves no job.
      await redis.client.set(`${prefix}:inbox:id`, 'not a number');
      const failed = entry();
      const [lost, alsoLost] = await Promise.allSettled([inbox.put(failed), inbox.put(failed)]);
      expect([lost?.status, alsoLost?.status]).toEqual(['rejected', 'rejected']);
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

  it('a MULTI that ran but whose reply was lost is rejected, and its stored key stays stored: the retry is a duplicate', async () => {
    const prefix = `l-${++serial}`;
    await onOwnConnection(prefix, async (connection, inbox) => {
      // The pipeline holding the MULTI reaches Redis and runs; its caller hears of a lost connection instead.
      const pipeline = connection.pipeline.bind(connection);
      connection.pipeline = ((...args: Parameters<typeof pipeline>) => {
        const real = pipeline(...args) as ReturnType<typeof pipeline> & { multi(...multiArgs: unknown[]): unknown };
        const { exec, multi } = real;
        let execs = 0;
        let transaction = false;
        real.multi = (...multiArgs: unknown[]) => {
          transaction = true;
          return multi.apply(real, multiArgs);
        };
        // Inside a transaction the first exec() only queues EXEC; the second sends the pipeline.
        real.exec = ((...execArgs: Parameters<typeof exec>) => {
          const sent = exec.apply(real, execArgs);
          if (!transaction || ++execs !== 2) return sent;
          return sent.then(() => Promise.reject(new Error('Connection is closed.')));
        }) as typeof exec;
        return real;
      }) as typeof pipeline;
      const first = entry();
      await expect(inbox.put(first)).rejects.toThrow('Connection is closed.');
      connection.pipeline = pipeline;
      expect(await redis.client.exists(jobKeyOf(prefix, first.key))).toBe(1);
      expect(await redis.client.get(markerOf(prefix, first.key))).toBe('stored');
      expect(await inbox.put(first)).toBe('duplicate');
      expect((await inbox.stats()).pending).toBe(1);
    });
  });

  it('keeps two MULTIs in flight at most: puts made while two are in flight go together in the next', async () => {
    const prefix = `b-${++serial}`;
    await onOwnConnection(prefix, async (connection, inbox) => {
      await inbox.put(entry()); // BullMQ loads its scripts on the first use; count from here.
      const execs = async () => Number(/cmdstat_exec:calls=(\d+)/.exec(await connection.info('commandstats'))?.[1] ?? 0);
      const before = await execs();
      // Redis holds every write (EXEC among them) for 300 ms: the MULTIs sent meanwhile wait for their replies.
      await redis.client.call('CLIENT', 'PAUSE', '300', 'WRITE');
      const first = inbox.put(entry());
      // Puts over the next turns: the first of them go in a second MULTI, the others wait for a MULTI to end.
      const later: Promise<unknown>[] = [];
      for (let turn = 0; turn < 5; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        later.push(inbox.put(entry()), inbox.put(entry()));
      }
      expect(await Promise.all([first, ...later])).toEqual(Array.from({ length: 11 }, () => 'stored'));
      // One EXEC for the first put, one for the next turn's two, one for the eight after them (six if each turn
      // sent its own, two with one MULTI in flight at a time).
      expect((await execs()) - before).toBe(3);
    });
  });
});
