/**
 * `redisInbox({ url | connection })`: the durable inbox for many machines, on Redis (optional peer dependency:
 * `npm install ioredis`). Every receiver and worker pointed at the same Redis and prefix shares one set of
 * entries and one duplicate window.
 *
 * The data model is the inbox's own (src/stores/redis/keys.ts), written only by its Lua scripts (the .lua files
 * in src/stores/redis/), each one atomic: Redis runs a script with no other client's command in between, and
 * its AOF keeps a script's writes whole or not at all. It was BullMQ's queue, written by BullMQ's private add
 * script loaded from its build folder with its KEYS pinned: a BullMQ minor release could break the import.
 *
 * How a put decides "stored" or "duplicate" without ever losing an event: the puts go to Redis together as one
 * call of put.lua (those of one turn, or all that arrived while the calls in flight, two at most, waited).
 * For every key, the script:
 * 1. reads whether it is known: its job exists (pending, running or dead), or its marker does (kept for
 *    `windowMs`, 24 h by default, after the put). A known key is a duplicate;
 * 2. for a key not known, writes the job and queues it, then marks the key for `windowMs`; a write that fails
 *    leaves neither, and the put is rejected (its retry is stored).
 * So a `200` only ever follows a script that stored the event (or found it stored), whichever receiver sent it;
 * a crash before the call stores nothing and answers nothing; a lost reply is a 503, and the platform's retry
 * finds the key known. One round trip and one command per batch.
 *
 * A claim (claim.lua) first moves back the retries now due and the running entries whose lease ran out (their
 * worker died), then takes the oldest pending one, counts the attempt and records the lease's end and token.
 * renew, complete and fail act only for the token holding the lease. Finished jobs are removed at once (their
 * bodies would fill a `noeviction` Redis); the marker alone remembers the key, about 100 bytes each. Dead jobs
 * are kept, with their bodies, until retried or purged. The retry policy is the worker's (`createWorker`).
 *
 * Durability is Redis's: run it with `appendonly yes`; `appendfsync always` loses nothing acknowledged,
 * `everysec` (Redis's default) may lose the last second of acknowledged events on a power cut or a kill of
 * Redis itself; and `maxmemory-policy noeviction`, or Redis may evict jobs and markers under memory pressure.
 */
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
} from '../../delivery/port.js';
import { listEntries, oldestPendingAt, purgeEntries, retryDead } from './admin.js';
import { connect, type Redis } from './connection.js';
import type { RedisClientLike, RedisConnectionOptions } from './options.js';
import { hashOf, inboxKeys, jobIdOf, type InboxKeys, type JobData } from './keys.js';
import { defineScripts, runScript } from './scripts.js';
import * as coordination from './coordination.js';
import { eventOfBody, isStorableBody, unstorableBody } from '../../delivery/stored-event.js';
import { TurnBatch } from '../kit/turn-batch.js';
import { claimLoop, type ClaimSource } from '../kit/claim-loop.js';

export type { RedisClientLike, RedisConnectionOptions };

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
 * Redis stalls, the puts beyond the two in flight wait in the TurnBatch, dropped once their caller gives up.
 */
const MAX_BATCH_BYTES = 1024 * 1024;
const MAX_BATCH_PUTS = 10_000;

function jobDataOf({ key, trigger, rawBody, receivedAt, traceparent }: InboxEntry): string {
  // JSON leaves out a traceparent that is undefined.
  const data: JobData = { key, trigger, rawBody, receivedAt, traceparent };
  return JSON.stringify(data);
}

type Put = InboxEntry;

/**
 * Whether Redis can be reached: `connecting` until the first connection is ready, `up`, or `down` once a
 * connection was lost or failed (puts fail at once until it is back).
 */
type Reach = 'connecting' | 'up' | 'down';

/**
 * Connects to the inbox on Redis (keys under `<prefix>:inbox:`).
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

class RedisInbox implements Inbox {
  readonly kind = 'redis';
  readonly durable = true;
  readonly #redis: Redis;
  readonly #ownsConnection: boolean;
  readonly #keys: InboxKeys;
  readonly #windowMs: number;
  readonly #pollMs: number;
  readonly #puts: TurnBatch<Put, PutResult>;
  /** Rejects the batches in flight when the inbox is closed while Redis is unreachable (ioredis keeps them). */
  #abandon: (error: Error) => void = () => undefined;
  readonly #abandoned: Promise<never>;
  /** Claims whose claim.lua call is in flight: failed when the connection goes (see `#takeOne`). */
  readonly #inFlightClaims = new Set<(error: Error) => void>();
  /** Claims that wait for work: a put this process stored wakes them before their next poll. */
  readonly #waiters = new Set<() => void>();
  #claiming: Promise<unknown> = Promise.resolve();
  /** Set when a claim found nothing; a put of this process or a claim that took an entry clears it. */
  #drained = false;
  #closed = false;
  #reach: Reach;

  constructor(options: RedisInboxOptions) {
    const { redis, owned } = connect(options);
    this.#redis = redis;
    this.#ownsConnection = owned;
    this.#keys = inboxKeys(options.prefix ?? 'chat-webhooks');
    this.#windowMs = options.windowMs ?? DEFAULT_DURABLE_WINDOW_MS;
    this.#pollMs = options.pollMs ?? 50;
    defineScripts(redis);
    this.#puts = new TurnBatch((puts) => this.#store(puts), MAX_IN_FLIGHT, MAX_BATCH_PUTS, {
      maxBytes: MAX_BATCH_BYTES,
      sizeOf: (put) => put.rawBody.length,
    });
    this.#abandoned = new Promise<never>((_, reject) => (this.#abandon = reject));
    this.#abandoned.catch(() => undefined);
    this.#reach = redis.status === 'ready' ? 'up' : 'connecting';
    redis.on('ready', () => (this.#reach = 'up'));
    redis.on('close', () => {
      this.#reach = 'down';
      this.#puts.dropWaiting(() => unreachable('the put was not sent (the receiver answers 503; the platform sends it again)'));
      for (const fail of this.#inFlightClaims) fail(unreachable('the claim was cut off (the worker asks again after a pause)'));
    });
    // Without a listener, ioredis prints every connection error; the commands that fail reject, and report it.
    redis.on('error', () => undefined);
  }

  /**
   * While Redis is unreachable a put fails at once: ioredis would keep it (and its body) in its offline queue
   * for the outage's length, long after the receiver answered 503 (1 000 puts of 100 KB kept ~300 MB).
   */
  put(entry: InboxEntry, { signal }: PutOptions = {}): Promise<PutResult> {
    if (this.#closed) return Promise.reject(new Error('The Redis inbox is closed.'));
    if (this.#reach === 'down') return Promise.reject(unreachable('the put was not queued (the receiver answers 503; the platform sends it again)'));
    if (!isStorableBody(entry.rawBody)) return Promise.reject(unstorableBody('Redis'));
    this.#drained = false;
    return this.#puts.add(entry, signal);
  }

  /** A batch's puts in one call of put.lua (see the top of this file); a key's later puts in it are its duplicates. */
  async #store(puts: Put[]): Promise<Array<PutResult | Error>> {
    if (this.#reach === 'down') return puts.map(() => unreachable('the put was not sent (the receiver answers 503; the platform sends it again)'));
    const replyOf = new Map<string, number>();
    const keys = [this.#keys.pending];
    const args: (string | number)[] = [this.#windowMs];
    for (const put of puts) {
      if (replyOf.has(put.key)) continue;
      replyOf.set(put.key, replyOf.size);
      const hash = hashOf(put.key);
      keys.push(this.#keys.marker(hash), this.#keys.job(jobIdOf(hash)));
      args.push(jobIdOf(hash), jobDataOf(put));
    }
    const replies = await Promise.race([runScript<unknown[]>(this.#redis, 'put', keys, args), this.#abandoned]);
    const answered = new Set<string>();
    const outcomes = puts.map((put) => {
      const outcome = outcomeOf(replies[replyOf.get(put.key)!]);
      if (outcome instanceof Error || !answered.has(put.key)) return answered.add(put.key), outcome;
      return 'duplicate' as const;
    });
    if (outcomes.includes('stored')) this.#wake();
    return outcomes;
  }

  async claim({ leaseMs, waitMs, signal }: ClaimOptions): Promise<InboxClaim | undefined> {
    // While events flow, claims fetch side by side (each fetch is one atomic script); once one found nothing,
    // one claimer at a time polls, so that idle workers do not ask Redis at every turn. While Redis is
    // unreachable a claim fails at once (the worker pauses and tries again): waiting in ioredis's offline
    // queue, it would hold the worker's close(), and a SIGTERM, until Redis is back.
    if (this.#closed) throw new Error('The Redis inbox is closed.');
    if (this.#reach === 'down') throw unreachable('nothing was claimed (the worker asks again after a pause)');
    if (!this.#drained) {
      const claim = await this.#takeOne(leaseMs, signal);
      if (claim) return claim;
      this.#drained = true;
    }
    const startedAt = Date.now();
    const turn = this.#claiming.then(() => claimLoop(this.#claims, { leaseMs, waitMs, signal }, startedAt));
    this.#claiming = turn.catch(() => undefined);
    return turn;
  }

  /**
   * What the kit's claim loop asks of Redis: one claim.lua call a look, and between looks a pause of `pollMs`
   * that a put or retry of this process ends early.
   */
  readonly #claims: ClaimSource = {
    assertOpen: () => {
      if (this.#closed) throw new Error('The Redis inbox is closed.');
    },
    take: async (leaseMs, signal) => {
      const claim = await this.#takeOne(leaseMs, signal);
      if (claim) this.#drained = false;
      return claim;
    },
    wait: (leftMs, signal) => pause(Math.min(this.#pollMs, leftMs), signal, this.#waiters),
  };

  /**
   * One claim.lua call; resolves `undefined` at once when `signal` aborts (the worker is closing) while the call
   * waits for a Redis that went away. An entry that call takes after all is this process's until its lease
   * runs out, then handed out again as its next attempt, as after a crash.
   */
  #takeOne(leaseMs: number, signal: AbortSignal | undefined): Promise<InboxClaim | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    // The kit's loop looks again between polls: while Redis is down, that look fails as a new claim does.
    if (this.#reach === 'down') return Promise.reject(unreachable('nothing was claimed (the worker asks again after a pause)'));
    const { pending, retries, running, base } = this.#keys;
    const token = newToken();
    const taking = runScript<[string, number, string] | null>(this.#redis, 'claim', [pending, retries, running], [Date.now(), leaseMs, token, base])
      .then((reply) => (reply ? claimOf(JSON.parse(reply[2]) as JobData, reply[1], token) : undefined));
    // A call in flight when the connection goes would wait in ioredis's queue until Redis is back, and the
    // worker would never hear of the outage: it fails then instead.
    return new Promise((resolve, reject) => {
      const abandon = () => resolve(undefined);
      signal?.addEventListener('abort', abandon, { once: true });
      this.#inFlightClaims.add(reject);
      taking.then(resolve, reject).finally(() => {
        signal?.removeEventListener('abort', abandon);
        this.#inFlightClaims.delete(reject);
      });
    });
  }

  async renew(claim: InboxClaim, leaseMs: number): Promise<boolean> {
    if (this.#closed) return false;
    const id = jobIdOf(hashOf(claim.key));
    try {
      const renewed = await runScript<number>(this.#redis, 'renew', [this.#keys.job(id), this.#keys.running], [id, claim.token, Date.now() + leaseMs]);
      return renewed === 1;
    } catch {
      return false;
    }
  }

  async complete(claim: InboxClaim): Promise<void> {
    const { job, running, doneCount, recentDone } = this.#keys;
    const id = jobIdOf(hashOf(claim.key));
    const record = JSON.stringify({ key: claim.key, trigger: claim.trigger, receivedAt: claim.receivedAt, attempts: claim.attempt });
    await runScript(this.#redis, 'complete', [job(id), running, doneCount, recentDone], [id, claim.token, record, RECENT_DONE]);
  }

  async fail(claim: InboxClaim, outcome: FailOutcome): Promise<void> {
    const { job, running, retries, dead } = this.#keys;
    const id = jobIdOf(hashOf(claim.key));
    const [at, state] = 'dead' in outcome ? [Date.now(), 'dead'] : [outcome.retryAt, ''];
    await runScript(this.#redis, 'fail', [job(id), running, retries, dead], [id, claim.token, outcome.error, at, state]);
  }

  async stats(): Promise<InboxStats> {
    const { pending, retries, running, dead, doneCount } = this.#keys;
    const replies = await this.#redis.multi().llen(pending).zcard(retries).zcard(running).zcard(dead).get(doneCount).exec();
    const [waiting, delayed, held, died, done] = (replies ?? []).map(([, value]) => Number(value ?? 0));
    return { pending: waiting! + delayed!, running: held!, done: done!, dead: died! };
  }

  oldestPendingAt(): Promise<number | undefined> {
    return oldestPendingAt(this.#redis, this.#keys);
  }

  async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions): Promise<InboxListing[]> {
    return listEntries(this.#redis, this.#keys, checkState(state), limit);
  }

  /** In batches (src/stores/redis/admin.ts); the claims waiting here ask at once for what it revived. */
  async retry(keys?: readonly string[]): Promise<number> {
    const count = await retryDead(this.#redis, this.#keys, keys);
    if (count > 0) this.#wake();
    return count;
  }

  async purge({ state }: { state: Exclude<InboxState, 'running'> }): Promise<number> {
    checkState(state, false);
    return purgeEntries(this.#redis, this.#keys, state);
  }

  /** Fails at once while the connection is lost (ioredis would queue the command until it is back). */
  async ping(): Promise<void> {
    if (this.#closed) throw new Error('The Redis inbox is closed.');
    if (this.#reach === 'down') throw new Error(`Redis is unreachable (the connection is ${this.#redis.status}).`);
    await this.#redis.ping();
  }

  async tryLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return coordination.tryLock(this.#redis, this.#keys, name, holder, ttlMs);
  }

  async unlock(name: string, holder: string): Promise<void> {
    await coordination.unlock(this.#redis, this.#keys, name, holder);
  }

  async mark(name: string): Promise<number | undefined> {
    return coordination.readMark(this.#redis, this.#keys, name);
  }

  async setMark(name: string, value: number): Promise<void> {
    await coordination.setMark(this.#redis, this.#keys, name, value);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#puts.dropWaiting(() => new Error('The Redis inbox is closed.'));
    this.#wake();
    // Unreachable, nothing in flight will be answered before Redis is back: close without waiting for it.
    const reachable = this.#reach === 'up';
    // ioredis keeps those until Redis is back, which may be never: their callers hear now.
    if (!reachable) this.#abandon(unreachable('the inbox was closed before Redis answered'));
    if (reachable) await this.#claiming;
    if (!this.#ownsConnection) return;
    if (reachable) await this.#redis.quit();
    else this.#redis.disconnect();
  }

  /** Ends the waiting claims' pauses: they ask Redis now. */
  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

}

/** A put's reply from put.lua: 1 known, 0 stored, or why it was not. */
function outcomeOf(reply: unknown): PutResult | Error {
  if (reply === 1) return 'duplicate';
  if (reply === 0) return 'stored';
  return new Error(`Redis did not store the entry: ${String(reply)}`);
}

function claimOf(data: JobData, attempt: number, token: string): InboxClaim {
  const { key, trigger, rawBody, receivedAt, traceparent } = data;
  const claim: InboxClaim = { key, trigger, event: eventOfBody(rawBody), rawBody, receivedAt, attempt, token };
  if (traceparent) claim.traceparent = traceparent;
  return claim;
}

function unreachable(consequence: string): Error {
  return new Error(`Redis is unreachable: ${consequence}.`);
}

