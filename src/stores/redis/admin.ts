/**
 * The Redis inbox's reads and admin calls (stats aside): listings, the oldest pending entry, retry and purge.
 * Each works in bounded steps: 100 000 dead entries loaded whole cost the CLI its time limit and hundreds of MB.
 */
import { eventOfBody } from '../../delivery/stored-event.js';
import type { InboxListing, InboxState } from '../../delivery/port.js';
import type { Redis } from './connection.js';
import { hashOf, jobIdOf, type InboxKeys, type JobData } from './keys.js';
import { runScript } from './scripts.js';

/** How many entries `retry` and `purge` handle in one script call. */
export const ADMIN_BATCH = 1000;

interface StoredJob {
  data: JobData;
  attempts: number;
  error: string | null;
}

/** These jobs' fields, in one round trip; a job gone meanwhile (finished, purged) is left out. */
async function jobsOf(redis: Redis, keys: InboxKeys, ids: string[]): Promise<StoredJob[]> {
  if (ids.length === 0) return [];
  const reads = redis.pipeline();
  for (const id of ids) reads.hmget(keys.job(id), 'data', 'attempts', 'error');
  const replies = (await reads.exec()) ?? [];
  return replies.flatMap(([, fields]) => {
    const [data, attempts, error] = (fields ?? []) as (string | null)[];
    return data ? [{ data: JSON.parse(data) as JobData, attempts: Number(attempts), error: error ?? null }] : [];
  });
}

/**
 * The oldest waiting entry (the list's head: entries wait in the order they were stored), and the first 100
 * retries (by due time): a bounded read.
 */
export async function oldestPendingAt(redis: Redis, keys: InboxKeys): Promise<number | undefined> {
  const [first, retries] = await Promise.all([redis.lindex(keys.pending, 0), redis.zrange(keys.retries, 0, '99')]);
  const jobs = await jobsOf(redis, keys, first === null ? retries : [first, ...retries]);
  return jobs.length > 0 ? Math.min(...jobs.map(({ data }) => data.receivedAt)) : undefined;
}

export async function listEntries(redis: Redis, keys: InboxKeys, state: InboxState, limit: number): Promise<InboxListing[]> {
  if (state === 'done') {
    const recent = await redis.lrange(keys.recentDone, 0, limit - 1);
    return recent.map((text) => ({ ...(JSON.parse(text) as Omit<InboxListing, 'state'>), state: 'done' as const }));
  }
  return (await jobsOf(redis, keys, await idsIn(redis, keys, state, limit))).slice(0, limit).map((job) => listingOf(job, state));
}

/** Up to `limit` job ids of the state, in its order (pending: the waiting, then the retries by due time). */
async function idsIn(redis: Redis, keys: InboxKeys, state: Exclude<InboxState, 'done'>, limit: number): Promise<string[]> {
  if (state === 'running') return redis.zrange(keys.running, 0, String(limit - 1));
  if (state === 'dead') return redis.zrange(keys.dead, 0, String(limit - 1));
  const waiting = await redis.lrange(keys.pending, 0, limit - 1);
  if (waiting.length >= limit) return waiting;
  return [...waiting, ...(await redis.zrange(keys.retries, 0, String(limit - waiting.length - 1)))];
}

/**
 * Revives the dead entries of these keys, or all of them: those dead when it began (a poison event dying
 * again while this runs is not retried twice). Resolves how many.
 */
export async function retryDead(redis: Redis, keys: InboxKeys, chosen?: readonly string[]): Promise<number> {
  const { dead, pending, base } = keys;
  let count = 0;
  if (chosen) {
    for (let start = 0; start < chosen.length; start += ADMIN_BATCH) {
      const ids = chosen.slice(start, start + ADMIN_BATCH).map((key) => jobIdOf(hashOf(key)));
      count += await runScript<number>(redis, 'retry', [dead, pending], [base, 0, ...ids]);
    }
    return count;
  }
  const total = await redis.zcard(dead);
  while (count < total) {
    const retried = await runScript<number>(redis, 'retry', [dead, pending], [base, Math.min(ADMIN_BATCH, total - count)]);
    if (retried === 0) break; // the rest were purged meanwhile
    count += retried;
  }
  return count;
}

/** Removes every entry of the state; purging done forgets the finished keys. Resolves how many. */
export async function purgeEntries(redis: Redis, keys: InboxKeys, state: Exclude<InboxState, 'running'>): Promise<number> {
  if (state === 'done') {
    // Read and reset in one transaction: a completion of another worker between a GET and a DEL was in
    // neither the count purged nor stats() after (198 of 2 000 completions, test/hostile/redis-model.test.ts).
    const [[, done] = []] = (await redis.multi().get(keys.doneCount).del(keys.doneCount, keys.recentDone).exec()) ?? [];
    await forgetMarkersOfRemovedJobs(redis, keys);
    return Number(done ?? 0);
  }
  let count = 0;
  for (const set of state === 'dead' ? [keys.dead] : [keys.pending, keys.retries]) {
    for (;;) {
      const removed = await runScript<number>(redis, 'purge', [set], [keys.base, ADMIN_BATCH]);
      count += removed;
      if (removed < ADMIN_BATCH) break;
    }
  }
  return count;
}

/** Markers whose job is gone (finished) are deleted; pending, running and dead entries keep theirs. */
async function forgetMarkersOfRemovedJobs(redis: Redis, keys: InboxKeys): Promise<void> {
  const hashAt = keys.marker('').length;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', keys.markerPattern, 'COUNT', 1000);
    cursor = next;
    if (found.length === 0) continue;
    const checks = redis.pipeline();
    for (const marker of found) checks.exists(keys.job(jobIdOf(marker.slice(hashAt))));
    const exists = (await checks.exec()) ?? [];
    const stale = found.filter((_, index) => exists[index]?.[1] === 0);
    if (stale.length > 0) await redis.del(...stale);
  } while (cursor !== '0');
}

function listingOf({ data, attempts, error }: StoredJob, state: InboxState): InboxListing {
  return {
    key: data.key,
    trigger: data.trigger,
    state,
    receivedAt: data.receivedAt,
    attempts,
    ...(error ? { lastError: error } : {}),
    event: eventOfBody(data.rawBody),
    rawBody: data.rawBody,
  };
}
