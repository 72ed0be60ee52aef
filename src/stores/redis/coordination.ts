/**
 * The Redis inbox's coordination operations (the port's "Coordination": catch-up's leased lock and marks),
 * each one script (lock.lua, unlock.lua, mark.lua) or one GET, on the inbox's keys (keys.ts).
 */
import type { Redis } from './connection.js';
import type { InboxKeys } from './keys.js';
import { runScript } from './scripts.js';

export async function tryLock(redis: Redis, keys: InboxKeys, name: string, holder: string, ttlMs: number): Promise<boolean> {
  return (await runScript<number>(redis, 'lock', [keys.lock(name)], [holder, Math.max(1, Math.round(ttlMs))])) === 1;
}

export async function unlock(redis: Redis, keys: InboxKeys, name: string, holder: string): Promise<void> {
  await runScript(redis, 'unlock', [keys.lock(name)], [holder]);
}

export async function readMark(redis: Redis, keys: InboxKeys, name: string): Promise<number | undefined> {
  const mark = await redis.get(keys.mark(name));
  return mark === null ? undefined : Number(mark);
}

export async function setMark(redis: Redis, keys: InboxKeys, name: string, value: number): Promise<void> {
  await runScript(redis, 'mark', [keys.mark(name)], [Math.round(value)]);
}
