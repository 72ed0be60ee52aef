/**
 * Helpers for the Redis inbox's own tests (test/inbox/redis-*.test.ts): what Redis says it ran, and dead jobs
 * written straight into Redis (thousands in one round trip, where the inbox would need a claim and a fail each).
 */
import type { Redis } from 'ioredis';
import { sha256Base64 } from '../../src/platform/node.js';

/** What `promise` rejected with, undefined when it resolved: for checking a message whole. */
export function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => undefined, (error: unknown) => error);
}

/** How many times Redis ran `command` (lower case, as INFO names it) since it started or its stats were reset. */
export async function commandCalls(client: Redis, command: string): Promise<number> {
  const stats = await client.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/** Script calls Redis ran: one per batch of puts (put.lua), one per claim, retry or purge step. */
export async function batches(client: Redis): Promise<number> {
  return (await commandCalls(client, 'evalsha')) + (await commandCalls(client, 'eval'));
}

/**
 * Writes `count` dead entries under `prefix` straight into Redis, as claims and a dead failure leave them (keys
 * dead-0…, each claimed `attempts` times; src/stores/redis/keys.ts), with their markers. Resolves their keys.
 */
export async function seedDead(client: Redis, prefix: string, count: number, { attempts = 1 } = {}): Promise<string[]> {
  const base = `${prefix}:inbox:`;
  const now = Date.now();
  const keys: string[] = [];
  const multi = client.multi();
  for (let i = 0; i < count; i++) {
    const key = `dead-${i}`;
    keys.push(key);
    const id = `k_${sha256Base64(key)}`;
    const data = JSON.stringify({ key, trigger: 'message_sent', rawBody: JSON.stringify({ trigger: 'message_sent', data: { key } }), receivedAt: now });
    multi.hset(`${base}${id}`, 'data', data, 'attempts', attempts, 'error', 'seeded', 'token', 'seeded');
    multi.zadd(`${base}dead`, now, id);
    multi.set(`${base}seen:${sha256Base64(key)}`, 'stored', 'PX', 86_400_000);
  }
  await multi.exec();
  return keys;
}
