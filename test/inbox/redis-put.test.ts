/**
 * The Redis inbox's put protocol (top of src/inbox/redis.ts): one script call marks a turn's keys pending,
 * one MULTI adds the jobs and marks stored the keys whose job exists. These tests break the adds inside the
 * MULTI and check that nothing is answered stored or left marked stored without its job.
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
/** The script that frees the keys of puts that were not stored (RELEASE_PENDING in src/inbox/redis.ts). */
const RELEASE = 'chatWebhooksReleasePending';
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

  it('an add that fails inside the MULTI is not answered stored and never leaves a stored mark, even if freeing its key fails', async () => {
    const prefix = `f-${++serial}`;
    await onOwnConnection(prefix, async (connection, inbox) => {
      expect(await inbox.put(entry())).toBe('stored');
      // BullMQ's add script starts with INCR of the queue's id key: a value that is not a number fails the add
      // (a script error inside the MULTI, which Redis does not roll back) and leaves no job.
      await redis.client.set(`${prefix}:inbox:id`, 'not a number');
      // The owner frees a failed key with a script; a crash (or a lost connection) before that reaches Redis
      // is simulated by a release that does nothing.
      const commands = connection as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const release = commands[RELEASE]!;
      commands[RELEASE] = () => Promise.resolve(0);
      const lost = entry();
      await expect(inbox.put(lost)).rejects.toThrow();
      commands[RELEASE] = release;
      expect(await redis.client.exists(jobKeyOf(prefix, lost.key))).toBe(0);
      // Left pending, it expires before the platform's first retry (10 s); it is never `stored`.
      expect(await redis.client.get(markerOf(prefix, lost.key))).toBe('pending');
      expect(await redis.client.pttl(markerOf(prefix, lost.key))).toBeLessThanOrEqual(5000);

      // With the key freed (as the release does when it reaches Redis), the retry is stored and handed out.
      const freed = entry();
      await expect(inbox.put(freed)).rejects.toThrow();
      expect(await redis.client.exists(markerOf(prefix, freed.key))).toBe(0);
      await redis.client.set(`${prefix}:inbox:id`, '100');
      expect(await inbox.put(freed)).toBe('stored');
      expect(await redis.client.get(markerOf(prefix, freed.key))).toBe('stored');
      expect((await inbox.list({ state: 'pending', limit: 10 })).map((e) => e.key)).toContain(freed.key);
    });
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

  it('a key whose marking script fails is rejected alone; the other puts of the turn are stored', async () => {
    const prefix = `w-${++serial}`;
    const inbox = redisInbox({ url: redis.server.url, prefix });
    try {
      const [good, bad] = [entry(), entry()];
      // SET … GET on a key that holds a list fails with WRONGTYPE for that key only.
      await redis.client.rpush(markerOf(prefix, bad.key), 'x');
      const settled = await Promise.allSettled([inbox.put(good), inbox.put(bad)]);
      expect(settled[0]).toEqual({ status: 'fulfilled', value: 'stored' });
      expect(settled[1]?.status).toBe('rejected');
      expect(await redis.client.exists(jobKeyOf(prefix, bad.key))).toBe(0);
    } finally {
      await inbox.close();
    }
  });
});
