/**
 * `redisInbox({ url | connection })`: the durable inbox for many machines, on BullMQ and Redis (optional peer
 * dependencies: `npm install bullmq ioredis`). Every receiver and worker pointed at the same Redis and
 * prefix shares one queue and one duplicate window.
 *
 * How a put decides "stored" or "duplicate" without ever losing an event (BullMQ's `add` does not say
 * whether a job id was new): the puts go to Redis together as one script call, PUT_BATCH (those of one turn, or
 * all that arrived while the calls in flight, two at most, waited), which Redis runs with no other client's
 * command in between and which its AOF keeps whole or not at all. For every key, the script:
 * 1. reads whether it is known: its job exists (pending, running or dead), or its marker does (kept for
 *    `windowMs`, 24 h by default, after the job finished and was removed). A known key is a duplicate;
 * 2. for a key not known, adds the job, its id derived from the key, by BullMQ's own add script (the one
 *    `Queue#add` runs), which PUT_BATCH holds as a function;
 * 3. marks the key for `windowMs` when its job exists.
 * So a `200` only ever follows a script that stored the event (or found it stored), whichever receiver sent it;
 * a crash before the call stores nothing and answers nothing; a lost reply is a 503, and the platform's retry
 * finds the key known. An add that fails (an error inside BullMQ's script, caught per key) leaves no job, so no
 * marker: it is rejected, and its retry is stored.
 * One round trip and one command per batch. Receiver CPU per put went mostly to building one MULTI of
 * commands per put (a BullMQ `Job`, its options packed with msgpack, an ioredis command and promise for each);
 * one call with plain string arguments costs the receiver about half as much (bench/redis-putcost.mjs).
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
  type PutOptions,
  type PutResult,
} from '../delivery/port.js';
import { eventOfBody, isStorableBody, unstorableBody } from '../delivery/stored-event.js';

// Loaded as this module is: without them, importing chat-webhooks/redis says which to install.
const [{ Queue, Worker }, { Redis }] = requirePeers('chat-webhooks/redis', ['bullmq', 'ioredis']) as [typeof BullMQ, typeof IORedis];
type Job<T> = BullMQ.Job<T>;
type Queue<T> = BullMQ.Queue<T>;
type Worker<T> = BullMQ.Worker<T>;
type Redis = IORedis.Redis;
type RedisOptions = IORedis.RedisOptions;

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
 * Two batches in flight at most: while Redis runs one, the next fills with the puts arriving meanwhile. With one,
 * the receiver and Redis took turns, each idle while the other worked: 64 connections made one batch, answered
 * together, then sent together again. Receive-only, side by side with the memory inbox on 2 cores
 * (bench/inboxes.mjs, 3 rounds): 0.41× with one, 0.50–0.51× with two, 0.52× with four.
 */
const MAX_IN_FLIGHT = 2;
/**
 * The bodies one batch carries at most (at least one put). A batch sent is ioredis's until Redis answers: while
 * Redis stalls, the puts beyond the two in flight wait here, where they are dropped once their caller gives up.
 */
const MAX_BATCH_BYTES = 1024 * 1024;
/** How many jobs `retry` and `purge` handle at a time. */
const ADMIN_BATCH = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** While puts wait (Redis slow, or not yet connected), how often those whose caller gave up are dropped. */
const SWEEP_MS = 250;

/** BullMQ's add script for a job with no delay, priority or parent: its Lua (`content`) and how many KEYS it takes. */
interface BullScript {
  name: string;
  content: string;
  keys: number;
}

/**
 * The keys BullMQ 6's add script takes, in its order (its `Scripts#addStandardJob` passes the same): the keys
 * of a queue named `inbox`, under its prefix. Some are read only by adds the inbox never makes.
 */
const ADD_JOB_KEYS = [
  'wait',
  // Stryker disable next-line StringLiteral: equivalent: BullMQ 6 reads no `paused` list (paused jobs stay in `wait`)
  'paused',
  'meta',
  'id',
  // Stryker disable next-line StringLiteral: equivalent: read only for a job id that exists, and PUT_BATCH adds only new ones
  'completed',
  // Stryker disable next-line StringLiteral: equivalent: read only for a job with deduplication options; the inbox sets none
  'delayed',
  // Stryker disable next-line StringLiteral: equivalent: read only for a queue with a global concurrency; the inbox sets none
  'active',
  'events',
  'marker',
];

/** BullMQ's own add script, loaded with BullMQ (`bullmq/dist/cjs/scripts`, where BullMQ 6 keeps its Lua). */
function bullAddScript(): BullScript {
  let scripts: Record<string, BullScript> | undefined;
  try {
    [scripts] = requirePeers('chat-webhooks/redis', ['bullmq/dist/cjs/scripts/index.js']) as [Record<string, BullScript>];
  } catch {
    // Below: the same error whatever failed.
  }
  const found = Object.values(scripts ?? {}).find((script) => script?.name === 'addStandardJob');
  // Stryker disable next-line StringLiteral,ConditionalExpression,LogicalOperator: the checks fail only with a bullmq other than 6, which no test can install beside it
  if (!found || found.keys !== ADD_JOB_KEYS.length) throw new Error('chat-webhooks/redis needs bullmq 6 (its addStandardJob script was not found, or takes other keys): npm install bullmq@6');
  return found;
}

const ADD_JOB = bullAddScript();

/**
 * Steps 1 to 3 of the top of this file for every put of a batch. KEYS: BullMQ's add script's own (ADD_JOB.keys
 * of them), then a marker, job key pair per put. ARGV: the window, the job key prefix, the time added, then a job
 * id, name and data (JSON) per put. Replies, per put: 1 known, 0 stored, or the add's error message. The job's
 * arguments and options are packed as BullMQ's `Job#addJob` packs them: `{ jobId, removeOnComplete: true,
 * removeOnFail: false, attempts: 1 }`, no parent, no delay, no priority.
 */
const PUT_BATCH = {
  name: 'chatWebhooksPutBatch',
  lua: `local function addJob(KEYS, ARGV)
${ADD_JOB.content}
end
local queueKeys = {}
for i = 1, ${ADD_JOB.keys} do queueKeys[i] = KEYS[i] end
local replies = {}
for put = 1, (#KEYS - ${ADD_JOB.keys}) / 2 do
  local marker, job = KEYS[${ADD_JOB.keys} + put * 2 - 1], KEYS[${ADD_JOB.keys} + put * 2]
  local id, name, data = ARGV[put * 3 + 1], ARGV[put * 3 + 2], ARGV[put * 3 + 3]
  if redis.call('EXISTS', job) == 1 then
    redis.call('SET', marker, 'stored', 'PX', ARGV[1])
    replies[put] = 1
  elseif redis.call('EXISTS', marker) == 1 then
    replies[put] = 1
  else
    local args = cmsgpack.pack({ARGV[2], id, name, tonumber(ARGV[3])})
    -- A map of four, its entries in Job#addJob's order (as msgpack writes them), so the stored options read the same.
    local opts = '\\132' .. cmsgpack.pack('attempts', 1, 'jobId', id, 'removeOnComplete', true, 'removeOnFail', false)
    local added, failure = pcall(addJob, queueKeys, {args, data, opts})
    local exists = redis.call('EXISTS', job) == 1
    -- A job that exists is marked even when its add failed midway: a repeat is then a duplicate of it.
    if exists then redis.call('SET', marker, 'stored', 'PX', ARGV[1]) end
    if not added then
      replies[put] = type(failure) == 'table' and tostring(failure.err) or tostring(failure)
    else
      replies[put] = exists and 0 or 'no job was added'
    end
  end
end
return replies`,
};

/**
 * `retry()` of every dead job, ARGV[1] of them at a time: what BullMQ's `Job#retry` (its reprocessJob script)
 * does for a failed job with attempts reset, for a batch of ids in one call, without reading the jobs' data
 * (100 000 jobs one by one took 34 s). The inbox's jobs have no priority and no parent.
 * KEYS: failed set, wait list, marker, job key prefix.
 */
const RETRY_DEAD = {
  name: 'chatWebhooksRetryDead',
  lua: `local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[4] .. id, 'finishedOn', 'processedOn', 'failedReason', 'atm', 'ats')
  redis.call('LPUSH', KEYS[2], id)
end
if #ids > 0 then redis.call('ZADD', KEYS[3], 0, '0') end
return #ids`,
};

/** The event is not stored beside its raw body (src/inbox/stored-event.ts). */
interface JobData {
  key: string;
  trigger: string;
  rawBody: string;
  receivedAt: number;
  event?: unknown;
  /** Only when telemetry stored one. */
  traceparent?: string | undefined;
}

/** The job's data as BullMQ stores it (`Job#asJSON`): JSON of JobData, without `event`. */
function jobDataOf({ key, trigger, rawBody, receivedAt, traceparent }: InboxEntry): string {
  // JSON leaves out a traceparent that is undefined.
  const data: JobData = { key, trigger, rawBody, receivedAt, traceparent };
  return JSON.stringify(data);
}

/** The stored event; `event` is read from jobs that an earlier version stored with it. */
function eventOf(data: JobData): InboxClaim['event'] {
  return data.event !== undefined ? (data.event as InboxClaim['event']) : eventOfBody(data.rawBody);
}

/** The first put of a key settles as the outcome says; the same key's later puts of the turn are its duplicates. */
function settle(puts: Put[], first: PutResult): void {
  puts.forEach((put, index) => put.resolve(index === 0 ? first : 'duplicate'));
}

type Put = { entry: InboxEntry; signal: AbortSignal | undefined; resolve: (result: PutResult) => void; reject: (error: unknown) => void };

/**
 * Whether Redis can be reached: `connecting` until the first connection is ready (puts wait), `up`, or
 * `down` once a connection was lost or failed (puts fail at once until it is back).
 */
type Reach = 'connecting' | 'up' | 'down';
/** The puts of one key in one turn: the first is sent, the others are its duplicates. */
type KeyPuts = { hash: string; puts: Put[] };

/** The key's hash: BullMQ ids must not be bare numbers nor contain `:`, and keys can be long. */
const hashOf = (key: string): string => sha256Base64(key);
const jobIdOf = (hash: string): string => `k_${hash}`;

function connect(options: RedisInboxOptions): { redis: Redis; owned: boolean } {
  const { url, connection } = options;
  if (connection instanceof Redis) return { redis: connection, owned: false };
  const given = connection as RedisOptions | undefined;
  // BullMQ needs maxRetriesPerRequest: null on connections its workers block on. A socket closed while Redis
  // is unreachable waits disconnectTimeout (2 s by default) before it is destroyed, and holds the process.
  const defaults: RedisOptions = { maxRetriesPerRequest: null, disconnectTimeout: 200 };
  if (url) return { redis: new Redis(url, { ...defaults, ...given }), owned: true };
  if (given) return { redis: new Redis({ ...defaults, ...given }), owned: true };
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

// The inbox adds no job with a priority (nor did it ever): BullMQ's `prioritized` state stays empty.
const BULL_STATES = { pending: ['waiting', 'delayed'], running: ['active'], dead: ['failed'] } as const;

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
  // Stryker disable next-line BooleanLiteral: equivalent: only which claims fetch side by side and which poll in turn (the same claims, sooner or later)
  #drained = false;
  /** New puts, for the next batch. */
  #batch: Put[] = [];
  #scheduled = false;
  /** The batches sent and not answered yet (MAX_IN_FLIGHT at most). */
  readonly #sent = new Set<Put[]>();
  /** PUT_BATCH's first KEYS: those of BullMQ's add script (the queue's lists, counters and events). */
  readonly #queueKeys: string[];
  #doneRecords: string[] = [];
  #doneWrite: Promise<unknown> | undefined;
  #closed = false;
  #reach: Reach;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(options: RedisInboxOptions) {
    const { redis, owned } = connect(options);
    this.#redis = redis;
    this.#ownsConnection = owned;
    this.#prefix = options.prefix ?? 'chat-webhooks';
    this.#windowMs = options.windowMs ?? DEFAULT_DURABLE_WINDOW_MS;
    this.#pollMs = options.pollMs ?? 50;
    this.#queue = new Queue<JobData>(QUEUE, { connection: redis, prefix: this.#prefix });
    // Without numberOfKeys, the first argument says how many keys follow: a batch has any number of puts.
    redis.defineCommand(PUT_BATCH.name, { lua: PUT_BATCH.lua });
    redis.defineCommand(RETRY_DEAD.name, { lua: RETRY_DEAD.lua, numberOfKeys: 4 });
    this.#queueKeys = ADD_JOB_KEYS.map(this.#keys().job);
    // Without a listener BullMQ prints every connection error with its stack on the console; the commands
    // that fail reject, and that is where an error is reported.
    this.#queue.on('error', () => undefined);
    // Stryker disable next-line StringLiteral: equivalent for 'connecting': the inbox tells only 'up' and 'down' apart
    this.#reach = redis.status === 'ready' ? 'up' : 'connecting';
    this.#watchConnection(redis);
  }

  /**
   * While Redis is unreachable a put fails at once: ioredis would keep it (and its body) in its offline queue
   * for the outage's length, long after the receiver answered 503 (1 000 puts of 100 KB kept ~300 MB).
   */
  put(entry: InboxEntry, { signal }: PutOptions = {}): Promise<PutResult> {
    if (this.#closed) return Promise.reject(new Error('The Redis inbox is closed.'));
    if (this.#reach === 'down') return Promise.reject(unreachable('the put was not queued (the receiver answers 503; the platform sends it again)'));
    if (!isStorableBody(entry.rawBody)) return Promise.reject(unstorableBody('Redis'));
    return new Promise<PutResult>((resolve, reject) => this.#enqueue({ entry, signal, resolve, reject }));
  }

  async claim({ leaseMs, waitMs, signal }: ClaimOptions): Promise<InboxClaim | undefined> {
    // While events flow, claims fetch side by side (each fetch is one atomic script); once the queue was
    // found empty, one claimer at a time polls, so that idle workers do not poll Redis at every turn.
    // While Redis is unreachable a claim fails at once (the worker pauses and tries again): waiting in
    // ioredis's offline queue, it would hold the worker's close(), and a SIGTERM, until Redis is back.
    if (this.#closed) throw new Error('The Redis inbox is closed.');
    if (this.#reach === 'down') throw unreachable('nothing was claimed (the worker asks again after a pause)');
    // Stryker disable next-line BooleanLiteral,ConditionalExpression,BlockStatement: equivalent: only which claims fetch side by side and which poll in turn (the same claims, sooner or later)
    if (!this.#drained) {
      const claim = await this.#takeOne(leaseMs, signal);
      if (claim) return claim;
      // Stryker disable next-line BooleanLiteral: equivalent: only which claims fetch side by side and which poll in turn (the same claims, sooner or later)
      this.#drained = true;
    }
    const deadline = Date.now() + waitMs;
    const turn = this.#claiming.then(async () => {
      for (;;) {
        if (this.#closed) throw new Error('The Redis inbox is closed.');
        const claim = await this.#takeOne(leaseMs, signal);
        if (claim) {
          // Stryker disable next-line BooleanLiteral: equivalent: only which claims fetch side by side and which poll in turn (the same claims, sooner or later)
          this.#drained = false;
          return claim;
        }
        const left = deadline - Date.now();
        // Stryker disable next-line EqualityOperator: equivalent: with 0 ms left, one more fetch, then less than 0 left
        if (left <= 0 || signal?.aborted) return undefined;
        await pause(Math.min(this.#pollMs, left), signal);
      }
    });
    this.#claiming = turn.catch(() => undefined);
    return turn;
  }

  async renew(claim: InboxClaim, leaseMs: number): Promise<boolean> {
    const job = this.#held.get(claim.token);
    // Stryker disable next-line ConditionalExpression: equivalent: without it, the missing job's call throws a TypeError, caught the same way
    if (!job) return false;
    try {
      return (await job.extendLock(claim.token, leaseMs)) > 0;
    } catch {
      return false;
    }
  }

  async complete(claim: InboxClaim): Promise<void> {
    const job = this.#held.get(claim.token);
    // Stryker disable next-line ConditionalExpression: equivalent: without it, the missing job's call throws a TypeError, caught the same way
    if (!job) return;
    this.#held.delete(claim.token);
    try {
      // Stryker disable next-line StringLiteral: equivalent: the return value of a job removed as it completes is never read
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
    // Stryker disable next-line ConditionalExpression: equivalent: without it, the missing job's call throws a TypeError, caught the same way
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
    const counts = await this.#queue.getJobCounts('waiting', 'delayed', 'active', 'failed');
    const done = Number((await this.#redis.get(this.#keys().doneCount)) ?? 0);
    const pending = (counts.waiting ?? 0) + (counts.delayed ?? 0);
    return { pending, running: counts.active ?? 0, done, dead: counts.failed ?? 0 };
  }

  /** Fails at once while the connection is lost (ioredis would queue the command until it is back). */
  async ping(): Promise<void> {
    if (this.#closed) throw new Error('The Redis inbox is closed.');
    if (this.#reach === 'down') throw new Error(`Redis is unreachable (the connection is ${this.#redis.status}).`);
    await this.#redis.ping();
  }

  /**
   * The oldest waiting job (the queue's oldest end: jobs wait in the order they were stored), and the first 100
   * delayed ones (retries, by due time): a bounded read.
   */
  async oldestPendingAt(): Promise<number | undefined> {
    const [waiting, delayed] = await Promise.all([
      this.#queue.getJobs(['waiting'], 0, 0, true),
      this.#queue.getJobs(['delayed'], 0, 99, true),
    ]);
    // Stryker disable next-line MethodExpression: equivalent but for a race no test can time: getJobs gives undefined for a job removed between the reads of its id and of its hash
    const times = [...waiting, ...delayed].filter(Boolean).map((job) => job.data.receivedAt);
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions): Promise<InboxListing[]> {
    checkState(state);
    if (state !== 'done') return (await this.#jobsIn(state, limit)).map((job) => listingOf(job, state));
    const recent = await this.#redis.lrange(this.#keys().recentDone, 0, limit - 1);
    return recent.map((text) => ({ ...(JSON.parse(text) as Omit<InboxListing, 'state'>), state: 'done' as const }));
  }

  /**
   * In batches of ADMIN_BATCH jobs, never all at once: 100 000 dead jobs loaded whole cost the CLI its time
   * limit and hundreds of MB. All dead jobs means those dead when it began (a poison event dying again while
   * this runs is not retried twice).
   */
  async retry(keys?: readonly string[]): Promise<number> {
    if (keys) {
      let count = 0;
      // Stryker disable next-line EqualityOperator: equivalent: the extra turn revives an empty slice of keys
      for (let start = 0; start < keys.length; start += ADMIN_BATCH) {
        const jobs = await Promise.all(keys.slice(start, start + ADMIN_BATCH).map((key) => this.#queue.getJob(jobIdOf(hashOf(key)))));
        count += await this.#retryJobs(jobs.filter((job): job is Job<JobData> => job !== undefined));
      }
      return count;
    }
    const { job } = this.#keys();
    const dead = await this.#queue.getFailedCount();
    const sets = [job('failed'), job('wait'), job('marker'), job('')];
    let count = 0;
    // Stryker disable next-line EqualityOperator: equivalent: once every one is retried, the script retries none and the loop ends
    while (count < dead) {
      const retryDead = (this.#redis as unknown as Record<string, (...args: unknown[]) => Promise<number>>)[RETRY_DEAD.name]!;
      // Stryker disable next-line ArithmeticOperator: equivalent: asking for more than are left, the script retries those left
      const retried = await retryDead.call(this.#redis, ...sets, Math.min(ADMIN_BATCH, dead - count));
      // Stryker disable next-line ConditionalExpression: reached only when the dead entries are purged while retry() runs, a race no test can time
      if (retried === 0) break;
      count += retried;
    }
    return count;
  }

  /** How many of these jobs were dead and are pending now (one a worker or purge took meanwhile is skipped). */
  async #retryJobs(jobs: Job<JobData>[]): Promise<number> {
    const retried = await Promise.all(
      jobs.map((job) => job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }).then(() => 1, () => 0)),
    );
    return retried.reduce<number>((sum, one) => sum + one, 0);
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
    // BullMQ's clean removes them in batches, in Redis, skipping none and touching no job a worker holds; a
    // timestamp a day ahead takes every one whatever the clocks of this machine and Redis say.
    let count = 0;
    for (const type of BULL_STATES[state]) {
      for (;;) {
        const removed = await this.#queue.clean(-DAY_MS, ADMIN_BATCH, type);
        if (removed.length > 0) await this.#redis.del(...removed.map((jobId) => keys.marker(jobId.slice('k_'.length))));
        count += removed.length;
        if (removed.length < ADMIN_BATCH) break;
      }
    }
    return count;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#dropWaiting(() => new Error('The Redis inbox is closed.'));
    clearInterval(this.#sweeper);
    // Unreachable, nothing in flight will be answered before Redis is back: close without waiting for it.
    const reachable = this.#reach === 'up';
    // ioredis keeps those until Redis is back, which may be never: their callers hear now.
    if (!reachable) for (const puts of this.#sent) for (const put of puts) put.reject(unreachable('the inbox was closed before Redis answered'));
    // Stryker disable next-line ConditionalExpression: equivalent: a claim fails at once while Redis is unreachable, so none runs to be waited for
    if (reachable) await this.#claiming;
    // Stryker disable next-line BooleanLiteral: equivalent: the BullMQ worker runs no job itself (jobs are fetched by hand): none to wait for
    await this.#worker?.close(true);
    await this.#queue.close();
    if (!this.#ownsConnection) return;
    // Stryker disable next-line ConditionalExpression: equivalent with ioredis 5 and 6: quit() on a connection that is down and has nothing queued disconnects at once
    if (reachable) await this.#redis.quit();
    else this.#redis.disconnect();
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

  #watchConnection(redis: Redis): void {
    redis.on('ready', () => {
      this.#reach = 'up';
      // Stryker disable next-line ConditionalExpression: equivalent: a second send in the same turn finds nothing left to send
      if (!this.#scheduled) this.#sendBatch();
    });
    redis.on('close', () => {
      this.#reach = 'down';
      this.#dropWaiting(() => unreachable('the put was not sent (the receiver answers 503; the platform sends it again)'));
    });
  }

  /** Rejects every put not sent yet. */
  #dropWaiting(reason: () => Error): void {
    const waiting = this.#batch;
    this.#batch = [];
    for (const put of waiting) put.reject(reason());
  }

  #enqueue(put: Put): void {
    // Stryker disable next-line BooleanLiteral: equivalent: only which claims fetch side by side and which poll in turn (the same claims, sooner or later)
    this.#drained = false;
    this.#batch.push(put);
    // Stryker disable next-line ConditionalExpression: equivalent: without it, the send that follows sends nothing either and starts the same sweep
    if (!this.#canSend()) return this.#sweepWhileWaiting();
    // Stryker disable next-line ConditionalExpression: equivalent: the first send of a turn takes all its puts; the others find none
    if (this.#scheduled) return;
    // Stryker disable next-line BooleanLiteral: equivalent: the first send of a turn takes all its puts; the others find none
    this.#scheduled = true;
    setImmediate(() => this.#sendBatch());
  }

  #canSend(): boolean {
    return this.#sent.size < MAX_IN_FLIGHT && this.#reach === 'up';
  }

  /** Puts that wait for Redis are dropped once their caller gave up (PutOptions.signal): nothing is kept for a 503. */
  #sweepWhileWaiting(): void {
    if (this.#sweeper) return;
    this.#sweeper = setInterval(() => {
      const given = this.#batch.filter((put) => put.signal?.aborted);
      this.#batch = this.#batch.filter((put) => !put.signal?.aborted);
      for (const put of given) put.reject(givenUp());
      if (this.#batch.length === 0) {
        clearInterval(this.#sweeper);
        this.#sweeper = undefined;
      }
    }, SWEEP_MS);
    this.#sweeper.unref();
  }

  /**
   * Sends the waiting puts as batches of MAX_BATCH_BYTES at most while fewer than MAX_IN_FLIGHT are in flight
   * (the first to end sends the rest) and Redis is reachable. What waits can be dropped when its caller gives
   * up; what was sent is ioredis's until Redis answers, so a stalled Redis holds two batches' bodies at most.
   */
  #sendBatch(): void {
    this.#scheduled = false;
    while (this.#canSend()) {
      const puts = this.#takeBatch();
      if (puts.length === 0) break;
      this.#sent.add(puts);
      void this.#flush(puts)
        .catch((error: unknown) => {
          for (const put of puts) put.reject(error);
        })
        .finally(() => {
          this.#sent.delete(puts);
          // Stryker disable next-line ConditionalExpression: equivalent: a second send in the same turn finds nothing left to send
          if (!this.#scheduled) this.#sendBatch();
        });
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent for `true` and `>= 0` (a sweep started with nothing waiting stops at its first tick); `false` and `<= 0` are killed by redis-inbox.test.ts
    if (this.#batch.length > 0) this.#sweepWhileWaiting();
  }

  /** The next batch's puts, oldest first, up to MAX_BATCH_BYTES of bodies (one at least); puts given up on are dropped. */
  #takeBatch(): Put[] {
    let bytes = 0;
    let taken = 0;
    const puts: Put[] = [];
    for (const put of this.#batch) {
      if (bytes > 0 && bytes + put.entry.rawBody.length > MAX_BATCH_BYTES) break;
      taken += 1;
      if (put.signal?.aborted) {
        put.reject(givenUp());
        continue;
      }
      bytes += put.entry.rawBody.length;
      puts.push(put);
    }
    this.#batch = this.#batch.slice(taken);
    return puts;
  }

  /** A batch's puts in one PUT_BATCH call: which keys are known, the adds, the marks (see the top of this file). */
  async #flush(puts: Put[]): Promise<void> {
    const byKey = new Map<string, KeyPuts>();
    for (const put of puts) {
      const same = byKey.get(put.entry.key);
      if (same) same.puts.push(put);
      else byKey.set(put.entry.key, { hash: hashOf(put.entry.key), puts: [put] });
    }
    const keys = [...byKey.values()];
    const { marker, job } = this.#keys();
    const keyArgs = [...this.#queueKeys];
    const argv: (string | number)[] = [this.#windowMs, job(''), Date.now()];
    for (const { hash, puts: [first] } of keys) {
      const jobId = jobIdOf(hash);
      keyArgs.push(marker(hash), job(jobId));
      argv.push(jobId, first!.entry.trigger, jobDataOf(first!.entry));
    }
    const putBatch = (this.#redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[PUT_BATCH.name]!;
    // One reply per key: 1, 0 or the add's error message.
    const replies = (await putBatch.call(this.#redis, keyArgs.length, ...keyArgs, ...argv)) as unknown[];
    keys.forEach(({ puts: same }, index) => {
      const reply = replies[index];
      if (reply === 1) settle(same, 'duplicate');
      else if (reply === 0) settle(same, 'stored');
      else for (const put of same) put.reject(new Error(`Redis did not add the job: ${String(reply)}`));
    });
  }

  #workerFor(leaseMs: number): Worker<JobData> {
    if (!this.#worker) {
      this.#worker = new Worker<JobData>(QUEUE, null, {
        connection: this.#redis,
        prefix: this.#prefix,
        lockDuration: leaseMs,
        // Stryker disable next-line MethodExpression: equivalent in results: a stalled check more often than every 100 ms costs Redis work and hands an abandoned lease out sooner, never later
        stalledInterval: Math.max(100, Math.floor(leaseMs / 2)),
        maxStalledCount: Number.MAX_SAFE_INTEGER,
      });
      this.#worker.on('error', () => undefined);
      void this.#worker.startStalledCheckTimer();
    }
    return this.#worker;
  }

  /**
   * One fetch; resolves `undefined` at once when `signal` aborts (the worker is closing) while the fetch waits
   * for a Redis that went away. A job that fetch takes after all is this process's until its lease runs out,
   * then handed out again as its next attempt, as after a crash.
   */
  #takeOne(leaseMs: number, signal: AbortSignal | undefined): Promise<InboxClaim | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    const taking = this.#fetchOne(leaseMs);
    if (!signal) return taking;
    return new Promise((resolve, reject) => {
      const abandon = () => resolve(undefined);
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent: the listener is removed once the fetch settles, and a second resolve does nothing
      signal.addEventListener('abort', abandon, { once: true });
      taking.then(resolve, reject).finally(() => signal.removeEventListener('abort', abandon));
    });
  }

  async #fetchOne(leaseMs: number): Promise<InboxClaim | undefined> {
    const token = newToken();
    const worker = this.#workerFor(leaseMs);
    const job = (await worker.getNextJob(token, { block: false })) as Job<JobData> | undefined;
    if (!job) return undefined;
    // The BullMQ worker's lock length is fixed when it is made; a claim asking for another lease extends it.
    // Stryker disable next-line ConditionalExpression: equivalent: extending a lock to the length it has changes nothing
    if (leaseMs !== worker.opts.lockDuration) await job.extendLock(token, leaseMs);
    this.#held.set(token, job);
    const { data } = job;
    const { key, trigger, rawBody, receivedAt, traceparent } = data;
    const claim: InboxClaim = { key, trigger, event: eventOf(data), rawBody, receivedAt, attempt: job.attemptsStarted, token };
    // Stryker disable next-line ConditionalExpression: equivalent: a claim with `traceparent: undefined` reads as one without
    if (traceparent) claim.traceparent = traceparent;
    return claim;
  }

  /** Up to `limit` of them: BullMQ reads the range in each of the state's lists (pending: waiting, then delayed). */
  async #jobsIn(state: Exclude<InboxState, 'done'>, limit: number): Promise<Job<JobData>[]> {
    // Stryker disable next-line ArithmeticOperator: equivalent for `limit + 1`: two more read from each list, then cut to `limit`
    const jobs = await this.#queue.getJobs([...BULL_STATES[state]], 0, limit - 1, true);
    // Stryker disable next-line MethodExpression: equivalent but for a race no test can time: getJobs gives undefined for a job removed between the reads of its id and of its hash
    const found = jobs.filter((job): job is Job<JobData> => Boolean(job));
    return found.slice(0, limit);
  }

  /** After `purge({ state: 'done' })`: markers whose job is gone (finished) are deleted; pending and dead keep theirs. */
  async #forgetMarkersOfRemovedJobs(): Promise<void> {
    const keys = this.#keys();
    // Stryker disable next-line StringLiteral: equivalent: Redis reads an empty SCAN cursor as 0
    let cursor = '0';
    do {
      const [next, found] = await this.#redis.scan(cursor, 'MATCH', keys.markerPattern, 'COUNT', 1000);
      cursor = next;
      // Stryker disable next-line ConditionalExpression: equivalent: an empty pipeline finds nothing stale
      if (found.length === 0) continue;
      const checks = this.#redis.pipeline();
      for (const marker of found) checks.exists(keys.job(jobIdOf(marker.slice(marker.lastIndexOf(':') + 1))));
      // Stryker disable next-line ArrayDeclaration: equivalent: ioredis's exec() of a pipeline with commands in it never gives null
      const exists = (await checks.exec()) ?? [];
      // Stryker disable next-line OptionalChaining: equivalent: every scanned key has its reply
      const stale = found.filter((_, index) => exists[index]?.[1] === 0);
      if (stale.length > 0) await this.#redis.del(...stale);
    } while (cursor !== '0');
  }
}

function givenUp(): Error {
  return new Error('The put was dropped before it was sent: its caller gave up waiting for Redis.');
}

function unreachable(consequence: string): Error {
  return new Error(`Redis is unreachable: ${consequence}.`);
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
