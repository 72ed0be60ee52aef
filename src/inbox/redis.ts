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
 * owner's job is stored.
 * A put takes two round trips: step 1 (one script call for all of a turn's new puts), then steps 2 and 3 in
 * one MULTI: the adds, then a script that marks `stored` only the keys whose job exists. Redis runs a MULTI
 * without other clients' commands in between, so "the job exists" there means this add (or an earlier one)
 * stored it, not that a worker has not removed it yet; an add that failed inside the MULTI (a script error,
 * which Redis does not roll back) leaves no job and so no `stored` mark, and its key is freed (only if still
 * `pending`: when the EXEC ran and only its reply was lost, the key stays `stored`). The 200 comes only after
 * EXEC replied. Each turn sends one pipeline: the MULTI for the keys owned since the last turn,
 * then step 1 for the turn's new puts (different puts' steps share the write; a put's own steps never do).
 * Receiver CPU per put went mostly to ioredis pipelines (each copies BullMQ's ~64 scripts onto itself, about
 * 60 µs) and BullMQ's `addBulk`: three pipelines a turn became one, and `addBulk` became `Job#addJob`.
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
import { Job, Queue, Worker, type RedisClient } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { sha256Base64 } from '#platform';
import {
  checkState,
  DEFAULT_DURABLE_WINDOW_MS,
  DEFAULT_LIST_LIMIT,
  newToken,
  pause,
  type ClaimOptions,
  type FailOutcome,
  type Inbox,
  type InboxClaim,
  type InboxEntry,
  type InboxListing,
  type InboxState,
  type InboxStats,
  type ListOptions,
  type PutResult,
} from './port.js';
import { eventOfBody, isStorableBody, unstorableBody } from './stored-event.js';

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

/**
 * Step 1 for a whole turn in one command: a pipeline of one SET per put cost the receiver a command object,
 * an encoding and a reply each. `false` (no previous value) is returned as 0: a nil would end Lua's array.
 */
const MARK_PENDING = {
  name: 'chatWebhooksMarkPending',
  lua: `local previous = {}
for i = 1, #KEYS do
  previous[i] = redis.pcall('SET', KEYS[i], 'pending', 'PX', ARGV[1], 'NX', 'GET') or 0
end
return previous`,
};
/** Step 3, run in the MULTI after the adds: KEYS are marker, job key pairs; ARGV[1] the window. */
const MARK_STORED = {
  name: 'chatWebhooksMarkStored',
  lua: `for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then
    redis.call('SET', KEYS[i], 'stored', 'PX', ARGV[1], 'XX')
  end
end
return 0`,
};

/**
 * Frees the keys of puts that were not stored, but only a key still `pending`: when EXEC ran and only its reply
 * was lost, the key is `stored` with its job, and freeing it would let the platform's retry run the event twice.
 */
const RELEASE_PENDING = {
  name: 'chatWebhooksReleasePending',
  lua: `for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == 'pending' then redis.call('DEL', KEYS[i]) end
end
return 0`,
};

/** The event is not stored beside its raw body (src/inbox/stored-event.ts). */
interface JobData {
  key: string;
  trigger: string;
  rawBody: string;
  receivedAt: number;
  event?: unknown;
}

/** The stored event; `event` is read from jobs that an earlier version stored with it. */
function eventOf(data: JobData): InboxClaim['event'] {
  return data.event !== undefined ? (data.event as InboxClaim['event']) : eventOfBody(data.rawBody);
}

type Put = { entry: InboxEntry; resolve: (result: PutResult) => void; reject: (error: unknown) => void };
/** A put whose key this process owns (step 1 found no marker). */
type Owned = { put: Put; hash: string; marker: string };
type RedisTransaction = ReturnType<RedisClient['pipeline']> & { multi(): unknown };

/** The key's hash: BullMQ ids must not be bare numbers nor contain `:`, and keys can be long. */
const hashOf = (key: string): string => sha256Base64(key);
const jobIdOf = (hash: string): string => `k_${hash}`;

function connect(options: RedisInboxOptions): { redis: Redis; owned: boolean } {
  const { url, connection } = options;
  if (connection instanceof Redis) return { redis: connection, owned: false };
  // BullMQ needs maxRetriesPerRequest: null on connections its workers block on.
  if (url) return { redis: new Redis(url, { maxRetriesPerRequest: null, ...(connection as RedisOptions | undefined) }), owned: true };
  if (connection) return { redis: new Redis({ maxRetriesPerRequest: null, ...connection }), owned: true };
  throw new TypeError('redisInbox needs `url` (redis://host:6379) or `connection` (an ioredis client or its options).');
}

/** Connects to the inbox on Redis (BullMQ queue `inbox` under `prefix`). */
export function redisInbox(options: RedisInboxOptions): Inbox {
  if (options?.windowMs !== undefined && !(options.windowMs > 0)) {
    throw new TypeError('redisInbox: `windowMs` must be a positive number of milliseconds.');
  }
  return new RedisInbox(options ?? {});
}

const BULL_STATES = { pending: ['waiting', 'delayed', 'prioritized'], running: ['active'], dead: ['failed'] } as const;

class RedisInbox implements Inbox {
  readonly kind = 'redis';
  readonly durable = true;
  readonly #redis: Redis;
  readonly #ownsConnection: boolean;
  readonly #prefix: string;
  readonly #windowMs: number;
  readonly #pollMs: number;
  readonly #queue: Queue<JobData>;
  #worker: Worker<JobData> | undefined;
  /** Jobs this process holds, by claim token (BullMQ's job objects carry the calls we need). */
  readonly #held = new Map<string, Job<JobData>>();
  #claiming: Promise<unknown> = Promise.resolve();
  /** Set when a fetch found no job; a put of this process or a successful fetch clears it. */
  #drained = false;
  /** New puts, for step 1 at the next flush. */
  #batch: Put[] = [];
  /** Puts whose key step 1 found free, for steps 2 and 3 at the next flush. */
  #owned: Owned[] = [];
  #flushing = false;
  /** BullMQ's view of the connection: its pipelines can add jobs (Job#addJob). */
  readonly #client: Promise<RedisClient>;
  #doneRecords: string[] = [];
  #doneWrite: Promise<unknown> | undefined;
  #closed = false;

  constructor(options: RedisInboxOptions) {
    const { redis, owned } = connect(options);
    this.#redis = redis;
    this.#ownsConnection = owned;
    this.#prefix = options.prefix ?? 'chat-webhooks';
    this.#windowMs = options.windowMs ?? DEFAULT_DURABLE_WINDOW_MS;
    this.#pollMs = options.pollMs ?? 50;
    this.#queue = new Queue<JobData>(QUEUE, { connection: redis, prefix: this.#prefix });
    // Without numberOfKeys, the first argument says how many keys follow: a turn marks any number.
    for (const { name, lua } of [MARK_PENDING, MARK_STORED, RELEASE_PENDING]) redis.defineCommand(name, { lua });
    this.#client = this.#queue.getBackend().client;
    this.#client.catch(() => undefined);
    // Without a listener BullMQ prints every connection error with its stack on the console; the commands
    // that fail reject, and that is where an error is reported.
    this.#queue.on('error', () => undefined);
  }

  put(entry: InboxEntry): Promise<PutResult> {
    if (this.#closed) return Promise.reject(new Error('The Redis inbox is closed.'));
    if (!isStorableBody(entry.rawBody)) return Promise.reject(unstorableBody('Redis'));
    return new Promise<PutResult>((resolve, reject) => this.#enqueue({ entry, resolve, reject }));
  }

  async claim({ leaseMs, waitMs, signal }: ClaimOptions): Promise<InboxClaim | undefined> {
    // While events flow, claims fetch side by side (each fetch is one atomic script); once the queue was
    // found empty, one claimer at a time polls, so that idle workers do not poll Redis at every turn.
    if (!this.#drained) {
      if (this.#closed) throw new Error('The Redis inbox is closed.');
      const claim = await this.#takeOne(leaseMs);
      if (claim) return claim;
      this.#drained = true;
    }
    const deadline = Date.now() + waitMs;
    const turn = this.#claiming.then(async () => {
      for (;;) {
        if (this.#closed) throw new Error('The Redis inbox is closed.');
        const claim = await this.#takeOne(leaseMs);
        if (claim) {
          this.#drained = false;
          return claim;
        }
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return undefined;
        await pause(Math.min(this.#pollMs, left), signal);
      }
    });
    this.#claiming = turn.catch(() => undefined);
    return turn;
  }

  async renew(claim: InboxClaim, leaseMs: number): Promise<boolean> {
    const job = this.#held.get(claim.token);
    if (!job) return false;
    try {
      return (await job.extendLock(claim.token, leaseMs)) > 0;
    } catch {
      return false;
    }
  }

  async complete(claim: InboxClaim): Promise<void> {
    const job = this.#held.get(claim.token);
    if (!job) return;
    this.#held.delete(claim.token);
    try {
      await job.moveToCompleted('done', claim.token, false);
    } catch {
      return; // The lock was lost: another holder has it now.
    }
    const record = JSON.stringify({ key: claim.key, trigger: claim.trigger, receivedAt: claim.receivedAt, attempts: claim.attempt });
    await this.#countDone(record);
  }

  /** The done count and recent list are written once per turn for every completion of that turn. */
  #countDone(record: string): Promise<unknown> {
    this.#doneRecords.push(record);
    this.#doneWrite ??= new Promise((resolve) => setImmediate(resolve)).then(() => {
      const records = this.#doneRecords;
      this.#doneRecords = [];
      this.#doneWrite = undefined;
      const { doneCount, recentDone } = this.#keys();
      return this.#redis.multi().incrby(doneCount, records.length).lpush(recentDone, ...records).ltrim(recentDone, 0, RECENT_DONE - 1).exec();
    });
    return this.#doneWrite;
  }

  async fail(claim: InboxClaim, outcome: FailOutcome): Promise<void> {
    const job = this.#held.get(claim.token);
    if (!job) return;
    this.#held.delete(claim.token);
    try {
      if ('dead' in outcome) await job.moveToFailed(new Error(outcome.error), claim.token, false);
      else await job.moveToDelayed(outcome.retryAt, claim.token);
    } catch {
      // The lock was lost: another holder has it now.
    }
  }

  async stats(): Promise<InboxStats> {
    const counts = await this.#queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'failed');
    const done = Number((await this.#redis.get(this.#keys().doneCount)) ?? 0);
    const pending = (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0);
    return { pending, running: counts.active ?? 0, done, dead: counts.failed ?? 0 };
  }

  async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions): Promise<InboxListing[]> {
    checkState(state);
    if (state !== 'done') return (await this.#jobsIn(state, limit)).map((job) => listingOf(job, state));
    const recent = await this.#redis.lrange(this.#keys().recentDone, 0, limit - 1);
    return recent.map((text) => ({ ...(JSON.parse(text) as Omit<InboxListing, 'state'>), state: 'done' as const }));
  }

  async retry(keys?: readonly string[]): Promise<number> {
    const jobs = keys
      ? await Promise.all(keys.map((key) => this.#queue.getJob(jobIdOf(hashOf(key)))))
      : await this.#jobsIn('dead', Number.MAX_SAFE_INTEGER);
    let count = 0;
    for (const job of jobs) {
      if (!job || !(await job.isFailed())) continue;
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      count += 1;
    }
    return count;
  }

  async purge({ state }: { state: Exclude<InboxState, 'running'> }): Promise<number> {
    checkState(state, false);
    const keys = this.#keys();
    if (state === 'done') {
      const done = Number((await this.#redis.get(keys.doneCount)) ?? 0);
      await this.#redis.del(keys.doneCount, keys.recentDone);
      await this.#forgetMarkersOfRemovedJobs();
      return done;
    }
    let count = 0;
    for (const job of await this.#jobsIn(state, Number.MAX_SAFE_INTEGER)) {
      await job.remove();
      await this.#redis.del(keys.marker(hashOf(job.data.key)));
      count += 1;
    }
    return count;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#claiming;
    await this.#worker?.close(true);
    await this.#queue.close();
    if (this.#ownsConnection) await this.#redis.quit();
  }

  #keys() {
    const base = `${this.#prefix}:${QUEUE}`;
    return {
      marker: (hash: string): string => `${base}:seen:${hash}`,
      markerPattern: `${base}:seen:*`,
      job: (jobId: string) => `${base}:${jobId}`,
      doneCount: `${base}:stats:done`,
      recentDone: `${base}:recent-done`,
    };
  }

  #enqueue(put: Put): void {
    this.#drained = false;
    this.#batch.push(put);
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => {
      this.#flushing = false;
      const puts = this.#batch;
      const owned = this.#owned;
      this.#batch = [];
      this.#owned = [];
      this.#flush(puts, owned).catch((error) => {
        for (const p of puts) p.reject(error);
      });
    });
  }

  /**
   * One write per turn: steps 2 and 3 (one MULTI) for the keys owned since the last turn, then step 1 for the
   * turn's new puts; the keys step 1 finds free are stored at the next turn. Each put still sees its steps
   * in order, and its 200 comes only after its EXEC replied: only the writes of different puts share a trip.
   */
  async #flush(puts: Put[], owned: Owned[]): Promise<void> {
    const hashes = puts.map(({ entry }) => hashOf(entry.key));
    const markers = hashes.map(this.#keys().marker);
    let replies: [Error | null, unknown][];
    try {
      const pipeline = (await this.#client).pipeline() as RedisTransaction;
      if (owned.length > 0) this.#addStore(pipeline, owned);
      if (puts.length > 0) pipeline.runCommand(MARK_PENDING.name, [markers.length, ...markers, PENDING_MARK_MS]);
      replies = (await pipeline.exec()) ?? [];
    } catch (error) {
      await this.#release(owned, error);
      throw error;
    }
    // The MULTI's replies: OK, one QUEUED per command, then EXEC's: the commands' own replies, errors as values.
    const [execError, results] = replies[owned.length + 2] ?? [new Error('no reply')];
    if (owned.length > 0) await this.#settleStored(owned, execError, results as unknown[] | undefined);
    if (puts.length === 0) return;
    const [markError, marks] = replies[replies.length - 1] ?? [new Error('no reply')];
    if (markError) throw markError;
    this.#settleMarks(puts, hashes, markers, marks as (string | 0 | Error)[]);
  }

  /** Step 1's outcome: the free keys are this process's to store (at the next turn). */
  #settleMarks(puts: Put[], hashes: string[], markers: string[], marks: (string | 0 | Error)[]): void {
    puts.forEach((put, index) => {
      const previous = marks[index] ?? new Error('no reply');
      if (previous instanceof Error) put.reject(previous);
      else if (previous === 0) this.#owned.push({ put, hash: hashes[index]!, marker: markers[index]! });
      else if (previous === 'stored') put.resolve('duplicate');
      else void this.#settleAfterOwner(put);
    });
    if (this.#owned.length > 0) this.#scheduleFlush();
  }

  /** Steps 2 and 3 in one MULTI: the jobs (ordinary BullMQ jobs, Job#addJob), then the conditional marks. */
  #addStore(pipeline: RedisTransaction, owned: Owned[]): void {
    const { job: jobKey } = this.#keys();
    pipeline.multi();
    for (const { put, hash } of owned) void this.#jobOf(put.entry, hash).addJob(pipeline);
    const pairs = owned.flatMap(({ hash, marker }) => [marker, jobKey(jobIdOf(hash))]);
    pipeline.runCommand(MARK_STORED.name, [pairs.length, ...pairs, this.#windowMs]);
    // Inside a pipeline, ioredis's exec() closes the MULTI (queues EXEC); the pipeline's own exec() sends it all.
    void pipeline.exec();
  }

  /** A lost `stored` mark (the last reply) only shortens the window to 5 s: the jobs are stored either way. */
  async #settleStored(owned: Owned[], execError: Error | null, results: unknown[] | undefined): Promise<void> {
    if (execError || !results) return this.#release(owned, execError);
    const failed: Owned[] = [];
    let failure: unknown;
    owned.forEach((one, index) => {
      const result = results[index];
      const error = result === undefined ? new Error('no reply') : result instanceof Error ? result : null;
      if (error) {
        failed.push(one);
        failure ??= error;
      } else one.put.resolve('stored');
    });
    if (failed.length > 0) await this.#release(failed, failure);
  }

  /** Nothing stored for these: free their keys so that the platform's retry is taken. */
  async #release(owned: Owned[], error: unknown): Promise<void> {
    const commands = this.#redis as unknown as Record<string, (count: number, ...keys: string[]) => Promise<unknown>>;
    const markers = owned.map(({ marker }) => marker);
    await commands[RELEASE_PENDING.name]!(markers.length, ...markers).catch(() => undefined);
    for (const { put } of owned) put.reject(error ?? new Error('The event was not stored.'));
  }

  #jobOf(entry: InboxEntry, hash: string): Job<JobData> {
    const { key, trigger, rawBody, receivedAt } = entry;
    const opts = { jobId: jobIdOf(hash), removeOnComplete: true, removeOnFail: false, attempts: 1 };
    return new Job<JobData>(this.#queue, trigger, { key, trigger, rawBody, receivedAt }, opts, opts.jobId);
  }

  /** A repeat whose first put is in flight: a duplicate once that one is stored, a new put if it gave up. */
  async #settleAfterOwner(put: Put): Promise<void> {
    const deadline = Date.now() + PENDING_WAIT_MS;
    const marker = this.#keys().marker(hashOf(put.entry.key));
    try {
      while (Date.now() < deadline) {
        await pause(20);
        const mark = await this.#redis.get(marker);
        if (mark === 'stored') return put.resolve('duplicate');
        if (mark === null) return this.#enqueue(put);
      }
      put.reject(new Error('An earlier delivery of this event is still being stored; retry later.'));
    } catch (error) {
      put.reject(error);
    }
  }

  #workerFor(leaseMs: number): Worker<JobData> {
    if (!this.#worker) {
      this.#worker = new Worker<JobData>(QUEUE, null, {
        connection: this.#redis,
        prefix: this.#prefix,
        autorun: false,
        lockDuration: leaseMs,
        stalledInterval: Math.max(100, Math.floor(leaseMs / 2)),
        maxStalledCount: Number.MAX_SAFE_INTEGER,
      });
      this.#worker.on('error', () => undefined);
      void this.#worker.startStalledCheckTimer();
    }
    return this.#worker;
  }

  async #takeOne(leaseMs: number): Promise<InboxClaim | undefined> {
    const token = newToken();
    const worker = this.#workerFor(leaseMs);
    const job = (await worker.getNextJob(token, { block: false })) as Job<JobData> | undefined;
    if (!job) return undefined;
    // The BullMQ worker's lock length is fixed when it is made; a claim asking for another lease extends it.
    if (leaseMs !== worker.opts.lockDuration) await job.extendLock(token, leaseMs);
    this.#held.set(token, job);
    const { data } = job;
    const { key, trigger, rawBody, receivedAt } = data;
    return { key, trigger, event: eventOf(data), rawBody, receivedAt, attempt: job.attemptsStarted, token };
  }

  async #jobsIn(state: Exclude<InboxState, 'done'>, limit: number): Promise<Job<JobData>[]> {
    const jobs = await this.#queue.getJobs([...BULL_STATES[state]], 0, limit - 1, true);
    return jobs.filter((job): job is Job<JobData> => Boolean(job));
  }

  /** After `purge({ state: 'done' })`: markers whose job is gone (finished) are deleted; pending and dead keep theirs. */
  async #forgetMarkersOfRemovedJobs(): Promise<void> {
    const keys = this.#keys();
    let cursor = '0';
    do {
      const [next, found] = await this.#redis.scan(cursor, 'MATCH', keys.markerPattern, 'COUNT', 1000);
      cursor = next;
      if (found.length === 0) continue;
      const checks = this.#redis.pipeline();
      for (const marker of found) checks.exists(keys.job(jobIdOf(marker.slice(marker.lastIndexOf(':') + 1))));
      const exists = (await checks.exec()) ?? [];
      const stale = found.filter((_, index) => exists[index]?.[1] === 0);
      if (stale.length > 0) await this.#redis.del(...stale);
    } while (cursor !== '0');
  }
}

function listingOf(job: Job<JobData>, state: InboxState): InboxListing {
  const { data } = job;
  return {
    key: data.key,
    trigger: data.trigger,
    state,
    receivedAt: data.receivedAt,
    attempts: job.attemptsStarted,
    ...(job.failedReason ? { lastError: job.failedReason } : {}),
    event: eventOf(data),
    rawBody: data.rawBody,
  };
}
