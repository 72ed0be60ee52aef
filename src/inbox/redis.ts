/**
 * `redisInbox({ url | connection })`: the durable inbox for many machines, on BullMQ and Redis (optional peer
 * dependencies: `npm install bullmq ioredis`). Every receiver and worker pointed at the same Redis and
 * prefix shares one queue and one duplicate window.
 *
 * How a put decides "stored" or "duplicate" without ever losing an event (BullMQ's `add` does not say
 * whether a job id was new): the puts go to Redis together as one MULTI (those of one turn, or all that arrived
 * while the MULTIs in flight, two at most, waited), which Redis runs with no other client's command in between
 * and which its AOF keeps whole or not at all:
 * 1. a script reads, for every key, whether it is known: its job exists (pending, running or dead), or its
 *    marker does (kept for `windowMs`, 24 h by default, after the job finished and was removed). For a key
 *    known by its marker alone it writes a stand-in at the job's key, so that the add which follows adds
 *    nothing (BullMQ ignores an add whose job id exists);
 * 2. the jobs are added, their ids derived from the keys;
 * 3. a script deletes the stand-ins and marks every key whose job exists, for `windowMs`.
 * A known key is a duplicate; any other is stored by the add that follows in the same MULTI. So a `200` only
 * ever follows an EXEC that stored the event (or found it stored), whichever receiver sent it; a crash before
 * EXEC stores nothing and answers nothing; a lost EXEC reply is a 503, and the platform's retry finds the key
 * known. An add that fails (a script error, which Redis does not roll back) leaves no job, so no marker: it is
 * rejected, and its retry is stored.
 * One round trip per batch: the previous design (mark pending, then add and mark stored) took two. Receiver
 * CPU per put went mostly to ioredis pipelines (each copies BullMQ's ~64 scripts onto itself) and BullMQ's
 * `addBulk`: one pipeline a batch, and `Job#addJob`.
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
import type * as BullMQ from 'bullmq';
import type * as IORedis from 'ioredis';
import { requirePeers, sha256Base64 } from '#platform';
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

// Loaded as this module is: without them, importing chat-webhooks/redis says which to install.
const [{ Job, Queue, Worker }, { Redis }] = requirePeers('chat-webhooks/redis', ['bullmq', 'ioredis']) as [typeof BullMQ, typeof IORedis];
type Job<T> = BullMQ.Job<T>;
type Queue<T> = BullMQ.Queue<T>;
type Worker<T> = BullMQ.Worker<T>;
type Redis = IORedis.Redis;
type RedisOptions = IORedis.RedisOptions;
type RedisClient = BullMQ.RedisClient;

/**
 * An ioredis client, as far as these declarations need to say: they compile without ioredis installed
 * (`skipLibCheck: false`). An ioredis `Redis` instance is one.
 */
export interface RedisClientLike {
  readonly status: string;
  duplicate(...args: never[]): unknown;
  quit(...args: never[]): Promise<unknown>;
}

/**
 * ioredis connection options (`RedisOptions`: host, port, password, tls, ...), handed to `new Redis()` as they
 * are; described loosely so that these declarations compile without ioredis installed.
 */
export interface RedisConnectionOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  // `any`, not `unknown`: an ioredis `RedisOptions` (an interface, with no index signature) is assignable only to this.
  [option: string]: any;
}

export interface RedisInboxOptions {
  /** A Redis URL (`redis://host:6379/0`). */
  url?: string;
  /** Or the connection: an ioredis client (this inbox does not close it) or ioredis options. */
  connection?: RedisClientLike | RedisConnectionOptions;
  /** Prefix of every key this inbox writes. Default `chat-webhooks`. */
  prefix?: string;
  /** How long a key is remembered after it was stored. Default 24 hours. */
  windowMs?: number;
  /** How often a waiting worker asks Redis for work. Default 50 ms. */
  pollMs?: number;
}

const QUEUE = 'inbox';
const RECENT_DONE = 1000;
/**
 * Two MULTIs in flight at most: while Redis runs one, the next fills with the puts arriving meanwhile. With one,
 * the receiver and Redis took turns, each idle while the other worked: 64 connections made one batch, answered
 * together, then sent together again. Receive-only, side by side with the memory inbox on 2 cores
 * (bench/inboxes.mjs, 3 rounds): 0.41× with one, 0.50–0.51× with two, 0.52× with four.
 */
const MAX_IN_FLIGHT = 2;

/** A field no BullMQ job has: the job hash holding it is a stand-in of KNOWN_KEYS. */
const STAND_IN = 'chatWebhooksStandIn';

/** Step 1: KEYS are marker, job key pairs; 1 for a known key. */
const KNOWN_KEYS = {
  name: 'chatWebhooksKnownKeys',
  lua: `local known = {}
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then
    known[#known + 1] = 1
  elseif redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HSET', KEYS[i + 1], '${STAND_IN}', 1)
    known[#known + 1] = 1
  else
    known[#known + 1] = 0
  end
end
return known`,
};

/** Step 3: KEYS as for KNOWN_KEYS, ARGV[1] the window. */
const MARK_STORED = {
  name: 'chatWebhooksMarkStored',
  lua: `for i = 1, #KEYS, 2 do
  if redis.call('HEXISTS', KEYS[i + 1], '${STAND_IN}') == 1 then
    redis.call('DEL', KEYS[i + 1])
  elseif redis.call('EXISTS', KEYS[i + 1]) == 1 then
    redis.call('SET', KEYS[i], 'stored', 'PX', ARGV[1])
  end
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

/** The first put of a key settles as the outcome says; the same key's later puts of the turn are its duplicates. */
function settle(puts: Put[], first: PutResult): void {
  puts.forEach((put, index) => put.resolve(index === 0 ? first : 'duplicate'));
}

type Put = { entry: InboxEntry; resolve: (result: PutResult) => void; reject: (error: unknown) => void };
/** The puts of one key in one turn: the first is sent, the others are its duplicates. */
type KeyPuts = { hash: string; puts: Put[] };
type RedisTransaction = ReturnType<RedisClient['pipeline']> & { multi(): unknown };

/** The key's hash: BullMQ ids must not be bare numbers nor contain `:`, and keys can be long. */
const hashOf = (key: string): string => sha256Base64(key);
const jobIdOf = (hash: string): string => `k_${hash}`;

function connect(options: RedisInboxOptions): { redis: Redis; owned: boolean } {
  const { url, connection } = options;
  if (connection instanceof Redis) return { redis: connection, owned: false };
  const given = connection as RedisOptions | undefined;
  // BullMQ needs maxRetriesPerRequest: null on connections its workers block on.
  if (url) return { redis: new Redis(url, { maxRetriesPerRequest: null, ...given }), owned: true };
  if (given) return { redis: new Redis({ maxRetriesPerRequest: null, ...given }), owned: true };
  throw new TypeError('redisInbox needs `url` (redis://host:6379) or `connection` (an ioredis client or its options).');
}

/**
 * Connects to the inbox on Redis (BullMQ queue `inbox` under `prefix`).
 *
 * @example
 * ```ts
 * import { createWebhooks, createWorker } from 'chat-webhooks';
 * import { redisInbox } from 'chat-webhooks/redis';
 *
 * // Receivers store and answer; workers (here, or on other machines) run the handlers.
 * const receiver = createWebhooks({ auth: false, inbox: redisInbox({ url: 'redis://localhost:6379' }), consume: false });
 * const worker = createWorker({ inbox: redisInbox({ url: 'redis://localhost:6379' }) });
 * worker.on('message_sent', (event) => console.log(event.data.message.id)).start();
 * ```
 */
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
  /** New puts, for the next MULTI. */
  #batch: Put[] = [];
  #scheduled = false;
  #inFlight = 0;
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
    for (const { name, lua } of [KNOWN_KEYS, MARK_STORED]) redis.defineCommand(name, { lua });
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
    if (this.#scheduled || this.#inFlight >= MAX_IN_FLIGHT) return;
    this.#scheduled = true;
    setImmediate(() => this.#sendBatch());
  }

  /** Sends the waiting puts as one MULTI, unless MAX_IN_FLIGHT are in flight: the first to end sends them. */
  #sendBatch(): void {
    this.#scheduled = false;
    if (this.#batch.length === 0 || this.#inFlight >= MAX_IN_FLIGHT) return;
    const puts = this.#batch;
    this.#batch = [];
    this.#inFlight += 1;
    void this.#flush(puts)
      .catch((error: unknown) => {
        for (const put of puts) put.reject(error);
      })
      .finally(() => {
        this.#inFlight -= 1;
        if (!this.#scheduled) this.#sendBatch();
      });
  }

  /** A batch's puts in one MULTI: which keys are known, the adds, the marks (see the top of this file). */
  async #flush(puts: Put[]): Promise<void> {
    const byKey = new Map<string, KeyPuts>();
    for (const put of puts) {
      const same = byKey.get(put.entry.key);
      if (same) same.puts.push(put);
      else byKey.set(put.entry.key, { hash: hashOf(put.entry.key), puts: [put] });
    }
    const keys = [...byKey.values()];
    const { marker, job } = this.#keys();
    const pairs = keys.flatMap(({ hash }) => [marker(hash), job(jobIdOf(hash))]);
    const pipeline = (await this.#client).pipeline() as RedisTransaction;
    pipeline.multi();
    pipeline.runCommand(KNOWN_KEYS.name, [pairs.length, ...pairs]);
    for (const { puts: [first], hash } of keys) void this.#jobOf(first!.entry, hash).addJob(pipeline);
    pipeline.runCommand(MARK_STORED.name, [pairs.length, ...pairs, this.#windowMs]);
    // Inside a pipeline, ioredis's exec() closes the MULTI (queues EXEC); the pipeline's own exec() sends it all.
    void pipeline.exec();
    const replies = (await pipeline.exec()) ?? [];
    // The replies: OK, one QUEUED per command, then EXEC's: the commands' own replies, errors as values.
    const [execError, results] = replies[keys.length + 3] ?? [new Error('no reply')];
    if (execError || !Array.isArray(results)) throw execError ?? new Error('no reply');
    const [known, ...rest] = results as unknown[];
    const marked = rest.pop();
    // Without the marks, a late repeat could be stored again: a 503 now, and the platform's retry is a duplicate.
    if (!Array.isArray(known) || marked instanceof Error) throw [known, marked].find((r) => r instanceof Error) ?? new Error('no reply');
    keys.forEach(({ puts: same }, index) => {
      const added = rest[index];
      if (known[index] === 1) settle(same, 'duplicate');
      else if (added === undefined || added instanceof Error) for (const put of same) put.reject(added ?? new Error('no reply'));
      else settle(same, 'stored');
    });
  }

  #jobOf(entry: InboxEntry, hash: string): Job<JobData> {
    const { key, trigger, rawBody, receivedAt } = entry;
    const opts = { jobId: jobIdOf(hash), removeOnComplete: true, removeOnFail: false, attempts: 1 };
    return new Job<JobData>(this.#queue, trigger, { key, trigger, rawBody, receivedAt }, opts, opts.jobId);
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
