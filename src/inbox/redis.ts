/**
 * `redisInbox({ url | connection })`: the durable inbox for many machines, on BullMQ and Redis (optional peer
 * dependencies: `npm install bullmq ioredis`). Every receiver and worker pointed at the same Redis and
 * prefix shares one queue and one duplicate window.
 *
 * How a put decides "stored" or "duplicate" without ever losing an event (BullMQ's `add` does not say
 * whether a job id was new):
 * 1. `SET <marker> pending NX PX 5000 GET`: the first writer of a key owns it for 5 s;
 * 2. the owner adds the job (its id derives from the key, so a second add of the same key is a no-op);
 * 3. the owner turns the marker into `stored`, kept for `windowMs` (24 h by default): a later repeat,
 *    even long after the job finished and was removed, is a duplicate.
 * A crash between 1 and 2 leaves a marker that expires within 5 s (before the platform's first retry, after
 * 10 s) and no 200 was sent. A crash between 2 and 3 leaves a stored job: a retry adds nothing new while it
 * exists. A repeat that finds `pending` waits for the owner's outcome and is never answered 200 before the
 * owner's job is stored. The writes of one turn go together: one pipeline per step, one `addBulk`.
 *
 * Finished jobs are removed at once (their bodies would fill a `noeviction` Redis: 24 h at 100 events/s is
 * 8.6 million bodies); the marker alone remembers the key, about 100 bytes each (see README "Redis").
 * Dead jobs are kept, with their bodies, until retried or purged.
 *
 * The retry policy is the worker's (`createWorker`), not BullMQ's: jobs are fetched manually
 * (`getNextJob`), moved back with `moveToDelayed` at the time the worker computed, or to failed when dead.
 * A job whose lock ran out (its worker died) is moved back by BullMQ's stalled checker and counted as an
 * attempt (`attemptsStarted`); `maxStalledCount` is set out of reach so BullMQ never fails one silently.
 *
 * Durability is Redis's: run it with `appendonly yes`; `appendfsync always` loses nothing acknowledged,
 * `everysec` (Redis's default) may lose the last second of acknowledged events on a power cut or a kill of
 * Redis itself; and `maxmemory-policy noeviction`, or Redis may evict jobs and markers under memory pressure.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { digest } from '../platform/digest.js';
import {
  checkState,
  DEFAULT_DURABLE_WINDOW_MS,
  DEFAULT_LIST_LIMIT,
  newToken,
  pause,
  type ClaimOptions,
  type Inbox,
  type InboxClaim,
  type InboxEntry,
  type InboxListing,
  type InboxState,
  type PutResult,
} from './port.js';

export interface RedisInboxOptions {
  /** A Redis URL (`redis://host:6379/0`). */
  url?: string;
  /** Or the connection: an ioredis client (this inbox does not close it) or ioredis options. */
  connection?: Redis | RedisOptions;
  /** Prefix of every key this inbox writes. Default `chat-webhooks`. */
  prefix?: string;
  /** How long a key is remembered after it was stored. Default 24 hours. */
  windowMs?: number;
  /** How often a waiting worker asks Redis for work. Default 50 ms. */
  pollMs?: number;
}

const QUEUE = 'inbox';
/** Shorter than the platform's first retry (10 s): a crashed owner's marker is gone by then. */
const PENDING_MARK_MS = 5000;
const PENDING_WAIT_MS = 1500;
const RECENT_DONE = 1000;

interface JobData {
  key: string;
  trigger: string;
  event: unknown;
  rawBody: string;
  receivedAt: number;
}

type Put = { entry: InboxEntry; resolve: (result: PutResult) => void; reject: (error: unknown) => void };

/** The key's hash: BullMQ ids must not be bare numbers nor contain `:`, and keys can be long. */
const hashOf = (key: string): string => digest('sha256', key, 'base64');
const jobIdOf = (key: string): string => `k_${hashOf(key)}`;

function connect(options: RedisInboxOptions): { redis: Redis; owned: boolean } {
  const { url, connection } = options;
  if (connection instanceof Redis) return { redis: connection, owned: false };
  // BullMQ needs maxRetriesPerRequest: null on connections its workers block on.
  if (url) return { redis: new Redis(url, { maxRetriesPerRequest: null, ...connection }), owned: true };
  if (connection) return { redis: new Redis({ maxRetriesPerRequest: null, ...connection }), owned: true };
  throw new TypeError('redisInbox needs `url` (redis://host:6379) or `connection` (an ioredis client or its options).');
}

export function redisInbox(options: RedisInboxOptions): Inbox {
  const { redis, owned } = connect(options ?? {});
  const prefix = options.prefix ?? 'chat-webhooks';
  const windowMs = options.windowMs ?? DEFAULT_DURABLE_WINDOW_MS;
  const pollMs = options.pollMs ?? 50;
  if (!(windowMs > 0)) throw new TypeError('redisInbox: `windowMs` must be a positive number of milliseconds.');
  const queue = new Queue<JobData>(QUEUE, { connection: redis, prefix });
  const keys = {
    marker: (key: string) => `${prefix}:${QUEUE}:seen:${hashOf(key)}`,
    markerPattern: `${prefix}:${QUEUE}:seen:*`,
    job: (jobId: string) => `${prefix}:${QUEUE}:${jobId}`,
    doneCount: `${prefix}:${QUEUE}:stats:done`,
    recentDone: `${prefix}:${QUEUE}:recent-done`,
  };
  let worker: Worker<JobData> | undefined;
  /** Jobs this process holds, by claim token (BullMQ's job objects carry the calls we need). */
  const held = new Map<string, Job<JobData>>();
  let claiming: Promise<unknown> = Promise.resolve();
  let batch: Put[] = [];
  let closed = false;

  function workerFor(leaseMs: number): Worker<JobData> {
    if (!worker) {
      worker = new Worker<JobData>(QUEUE, null, {
        connection: redis,
        prefix,
        autorun: false,
        lockDuration: leaseMs,
        stalledInterval: Math.max(100, Math.floor(leaseMs / 2)),
        maxStalledCount: Number.MAX_SAFE_INTEGER,
      });
      worker.on('error', () => undefined);
      void worker.startStalledCheckTimer();
    }
    return worker;
  }

  async function commit(puts: Put[]): Promise<void> {
    const marking = redis.pipeline();
    for (const { entry } of puts) marking.set(keys.marker(entry.key), 'pending', 'PX', PENDING_MARK_MS, 'NX', 'GET');
    const marks = (await marking.exec()) ?? [];
    const owned: Put[] = [];
    const others: { put: Put; mark: string }[] = [];
    puts.forEach((put, index) => {
      const [error, previous] = marks[index] ?? [new Error('no reply')];
      if (error) put.reject(error);
      else if (previous === null) owned.push(put);
      else others.push({ put, mark: previous as string });
    });
    if (owned.length > 0) {
      try {
        await queue.addBulk(
          owned.map(({ entry }) => ({
            name: entry.trigger,
            data: { key: entry.key, trigger: entry.trigger, event: entry.event, rawBody: entry.rawBody, receivedAt: entry.receivedAt },
            opts: { jobId: jobIdOf(entry.key), removeOnComplete: true, removeOnFail: false, attempts: 1 },
          })),
        );
      } catch (error) {
        // Nothing stored: free the keys so the platform's retry is taken.
        const unmark = redis.pipeline();
        for (const { entry } of owned) unmark.del(keys.marker(entry.key));
        await unmark.exec().catch(() => undefined);
        for (const put of owned) put.reject(error);
        owned.length = 0;
      }
      if (owned.length > 0) {
        const marking = redis.pipeline();
        for (const { entry } of owned) marking.set(keys.marker(entry.key), 'stored', 'PX', windowMs, 'XX');
        // The jobs are stored either way; a lost `stored` mark only shortens the window to 5 s.
        await marking.exec().catch(() => undefined);
        for (const put of owned) put.resolve('stored');
      }
    }
    for (const { put, mark } of others) {
      if (mark === 'stored') put.resolve('duplicate');
      else settleAfterOwner(put);
    }
  }

  /** A repeat whose first put is in flight: a duplicate once that one is stored, a new put if it gave up. */
  async function settleAfterOwner(put: Put): Promise<void> {
    const deadline = Date.now() + PENDING_WAIT_MS;
    try {
      while (Date.now() < deadline) {
        await pause(20);
        const mark = await redis.get(keys.marker(put.entry.key));
        if (mark === 'stored') return put.resolve('duplicate');
        if (mark === null) return enqueue(put);
      }
      put.reject(new Error('An earlier delivery of this event is still being stored; retry later.'));
    } catch (error) {
      put.reject(error);
    }
  }

  function enqueue(put: Put): void {
    if (batch.push(put) === 1) {
      setImmediate(() => {
        const puts = batch;
        batch = [];
        commit(puts).catch((error) => {
          for (const p of puts) p.reject(error);
        });
      });
    }
  }

  function claimOf(job: Job<JobData>, token: string): InboxClaim {
    const { data } = job;
    return {
      key: data.key,
      trigger: data.trigger,
      event: data.event as InboxClaim['event'],
      rawBody: data.rawBody,
      receivedAt: data.receivedAt,
      attempt: job.attemptsStarted,
      token,
    };
  }

  async function takeOne(leaseMs: number): Promise<InboxClaim | undefined> {
    const token = newToken();
    const job = (await workerFor(leaseMs).getNextJob(token, { block: false })) as Job<JobData> | undefined;
    if (!job) return undefined;
    // The BullMQ worker's lock length is fixed when it is made; a claim asking for another lease extends it.
    if (leaseMs !== worker?.opts.lockDuration) await job.extendLock(token, leaseMs);
    held.set(token, job);
    return claimOf(job, token);
  }

  function listing(job: Job<JobData>, state: InboxState): InboxListing {
    const { data } = job;
    return {
      key: data.key,
      trigger: data.trigger,
      state,
      receivedAt: data.receivedAt,
      attempts: job.attemptsStarted,
      ...(job.failedReason ? { lastError: job.failedReason } : {}),
      event: data.event as InboxListing['event'],
      rawBody: data.rawBody,
    };
  }

  const bullStates = { pending: ['waiting', 'delayed', 'prioritized'], running: ['active'], dead: ['failed'] } as const;

  async function jobsIn(state: Exclude<InboxState, 'done'>, limit: number): Promise<Job<JobData>[]> {
    const jobs = await queue.getJobs([...bullStates[state]], 0, limit - 1, true);
    return jobs.filter((job): job is Job<JobData> => Boolean(job));
  }

  async function forgetMarkersOfRemovedJobs(): Promise<void> {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', keys.markerPattern, 'COUNT', 1000);
      cursor = next;
      if (found.length === 0) continue;
      const checks = redis.pipeline();
      for (const marker of found) checks.exists(keys.job(`k_${marker.slice(marker.lastIndexOf(':') + 1)}`));
      const exists = (await checks.exec()) ?? [];
      const stale = found.filter((_, index) => exists[index]?.[1] === 0);
      if (stale.length > 0) await redis.del(...stale);
    } while (cursor !== '0');
  }

  const inbox: Inbox = {
    kind: 'redis',
    durable: true,
    put(entry) {
      if (closed) return Promise.reject(new Error('The Redis inbox is closed.'));
      return new Promise<PutResult>((resolve, reject) => enqueue({ entry, resolve, reject }));
    },
    async claim({ leaseMs, waitMs, signal }: ClaimOptions) {
      const deadline = Date.now() + waitMs;
      // One fetch at a time per process: BullMQ's worker object is not meant for concurrent fetches.
      const turn = claiming.then(async () => {
        for (;;) {
          if (closed) throw new Error('The Redis inbox is closed.');
          const claim = await takeOne(leaseMs);
          if (claim) return claim;
          const left = deadline - Date.now();
          if (left <= 0 || signal?.aborted) return undefined;
          await pause(Math.min(pollMs, left), signal);
        }
      });
      claiming = turn.catch(() => undefined);
      return turn;
    },
    async renew(claim, leaseMs) {
      const job = held.get(claim.token);
      if (!job) return false;
      try {
        return (await job.extendLock(claim.token, leaseMs)) > 0;
      } catch {
        return false;
      }
    },
    async complete(claim) {
      const job = held.get(claim.token);
      if (!job) return;
      held.delete(claim.token);
      try {
        await job.moveToCompleted('done', claim.token, false);
      } catch {
        return; // The lock was lost: another holder has it now.
      }
      const record = JSON.stringify({ key: claim.key, trigger: claim.trigger, receivedAt: claim.receivedAt, attempts: claim.attempt });
      await redis.multi().incr(keys.doneCount).lpush(keys.recentDone, record).ltrim(keys.recentDone, 0, RECENT_DONE - 1).exec();
    },
    async fail(claim, outcome) {
      const job = held.get(claim.token);
      if (!job) return;
      held.delete(claim.token);
      try {
        if ('dead' in outcome) await job.moveToFailed(new Error(outcome.error), claim.token, false);
        else await job.moveToDelayed(outcome.retryAt, claim.token);
      } catch {
        // The lock was lost: another holder has it now.
      }
    },
    async stats() {
      const counts = await queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'failed');
      const done = Number((await redis.get(keys.doneCount)) ?? 0);
      const pending = (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0);
      return { pending, running: counts.active ?? 0, done, dead: counts.failed ?? 0 };
    },
    async list({ state, limit = DEFAULT_LIST_LIMIT }) {
      checkState(state);
      if (state !== 'done') return (await jobsIn(state, limit)).map((job) => listing(job, state));
      const recent = await redis.lrange(keys.recentDone, 0, limit - 1);
      return recent.map((text) => ({ ...(JSON.parse(text) as Omit<InboxListing, 'state'>), state: 'done' as const }));
    },
    async retry(chosen) {
      const jobs = chosen
        ? await Promise.all(chosen.map((key) => queue.getJob(jobIdOf(key))))
        : await jobsIn('dead', Number.MAX_SAFE_INTEGER);
      let count = 0;
      for (const job of jobs) {
        if (!job || !(await job.isFailed())) continue;
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        count += 1;
      }
      return count;
    },
    async purge({ state }) {
      checkState(state, false);
      if (state === 'done') {
        const done = Number((await redis.get(keys.doneCount)) ?? 0);
        await redis.del(keys.doneCount, keys.recentDone);
        await forgetMarkersOfRemovedJobs();
        return done;
      }
      let count = 0;
      for (const job of await jobsIn(state, Number.MAX_SAFE_INTEGER)) {
        await job.remove();
        await redis.del(keys.marker(job.data.key));
        count += 1;
      }
      return count;
    },
    async close() {
      if (closed) return;
      closed = true;
      await claiming;
      await worker?.close(true);
      await queue.close();
      if (owned) await redis.quit();
    },
  };
  return inbox;
}
