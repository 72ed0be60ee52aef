/**
 * The `Inbox` port: the one contract between the receiver (which stores each delivery before answering it),
 * the worker (which runs handlers for stored deliveries) and a store (memory, SQLite, Redis). Every store
 * passes the same contract suite (test/inbox/contract.ts).
 *
 * Receive side — `put(entry)`:
 * - resolves `'stored'` only once the entry is committed as durably as the store can (SQLite: its transaction
 *   is on disk; Redis: the server acknowledged the writes; memory: in this process only, never durable);
 * - resolves `'duplicate'` when the key is already known within the store's window (pending, running, dead,
 *   or done less than `windowMs` ago): nothing is stored and no handler will run for it;
 * - rejects when it cannot say either; the receiver then answers 503 and the platform may send it again.
 *   A store that cannot reach its server rejects at once rather than queueing the entry, and drops an entry
 *   it still holds once `options.signal` says the caller gave up: nothing is kept for a request answered 503.
 *   A key counts as seen only once committed: a put of a key whose first put is still in flight never
 *   resolves `'duplicate'` before that first put committed (it waits for it, or rejects).
 *
 * Worker side — leases:
 * - `claim({ leaseMs, waitMs })` hands out one due entry (pending and due, or running with an expired lease),
 *   marks it running until `now + leaseMs`, and counts the claim as an attempt: `attempt` is 1 on the first
 *   claim and grows with every claim, so an attempt cut off by a crash (its lease simply ran out) is counted.
 *   It may wait up to `waitMs` for an entry to become due and resolves `undefined` when none did.
 * - `renew(claim, leaseMs)` extends a running lease; false when the claim is no longer this holder's.
 * - `complete(claim)` marks the entry done (it stays known for the window, its body may be dropped).
 * - `fail(claim, { retryAt })` puts it back as pending, due at `retryAt`; `fail(claim, { dead: true })`
 *   marks it dead (kept, with its body, until retried or purged). `error` is kept as its last error.
 *   Both are no-ops for a claim whose lease was lost to another holder.
 *
 * Observability — optional, for `health()` and the `chat-webhooks/otel` gauges (a store without them still works:
 * health then goes by the outcomes of puts and claims alone, and the oldest-pending gauge is not reported):
 * - `ping()` resolves once the store can take writes now, cheaply (Redis: PING on a ready connection; SQLite:
 *   an empty write transaction, which needs the file's write lock); it rejects (or does not settle) when it
 *   cannot. `health()` calls it at most about once a second, and only when no put or claim said more recently.
 * - `oldestPendingAt()` resolves the `receivedAt` of the oldest pending entry (due or waiting for a retry),
 *   `undefined` when none is pending. Read once per metrics collection, never on the request path: it may
 *   cost a query, but should use an index or a bounded scan rather than read every entry.
 *
 * Transactions — optional (`transactions`, PostgreSQL only), for workers with `transaction: true`:
 * - `reserve(count)` keeps a connection ready for each of `count` more handlers in flight; the function it
 *   returns gives them back.
 * - `claimInTransaction(options)` claims as `claim` does (the attempt is counted, committed at once) and opens a
 *   transaction on a connection of its own that holds the entry's row lock: while it is open no other worker
 *   takes the entry, and once it ends (a commit, a rollback, the connection dropped by a crash) the entry is
 *   free again, without waiting for a lease. Its `complete()` marks the entry done in that transaction and
 *   commits; its `fail(outcome)` rolls back what the handlers wrote, then records the outcome and commits
 *   (attempts, the last error, retry time or dead state survive the rollback). Either way the connection goes
 *   back to the pool; the handlers' `transaction` refuses queries from then on.
 *
 * Coordination — optional, for catch-up (`catchUp` from chat-webhooks/reconcile), which runs once across every
 * receiver sharing the store and remembers where it got to. Both live in the store, beside the entries:
 * - `tryLock(name, holder, ttlMs)` resolves true when `holder` now holds the lock `name` until `now + ttlMs`: it
 *   was free, its lease ran out (a dead holder blocks no one for longer), or `holder` held it already (a renewal).
 *   False while another holder's lease runs. `unlock(name, holder)` frees it, only if `holder` still holds it.
 * - `mark(name)` resolves the high-water mark `name` (epoch milliseconds), `undefined` when none was set;
 *   `setMark(name, value)` raises it to `value`, never lowers it (two holders finishing out of order leave the
 *   newest). Marks are kept until purged by hand: they are one small record each.
 *
 * Admin — usable from a plain script (the CLI's `inbox` command is one): `stats()`, `list({ state, limit })`,
 * `retry(keys?)` (dead entries become pending, attempts reset; all dead ones without keys), `purge({ state })`
 * (removes entries in that state; purging `done` forgets them as duplicates too) and `close()`.
 *
 * Deliberately not part of the port: the retry policy (attempts, backoff: the worker's, so every store retries
 * the same way), handler dispatch and error reporting (the worker's), idempotency keys (the receiver derives
 * them), and any notion of ordering between entries (none is promised).
 */
import type { ParsedWebhook } from '../events/index.js';
import type { HandlerTransaction } from '../dispatch/dispatcher.js';

/** Where an entry is in its life. */
export type InboxState = 'pending' | 'running' | 'done' | 'dead';

export const INBOX_STATES: readonly InboxState[] = ['pending', 'running', 'done', 'dead'];

/** What the receiver stores before it answers 200. */
export interface InboxEntry {
  /** The idempotency key: the same delivery sent again has the same key. */
  key: string;
  trigger: string;
  event: ParsedWebhook;
  /** The exact body as received (text). */
  rawBody: string;
  /** Milliseconds since the epoch. */
  receivedAt: number;
  /**
   * The W3C `traceparent` of the span that stored the entry, when telemetry is on: every store keeps it with
   * the entry and hands it back with each claim, so the worker's span can link to the delivery's trace.
   */
  traceparent?: string;
}

/** An entry handed to one worker for one attempt. */
export interface InboxClaim extends InboxEntry {
  /** 1 on the first claim; every later claim (after a failure, or a lease that ran out) adds one. */
  attempt: number;
  /** Identifies this holder's lease: `renew`, `complete` and `fail` with a stale claim do nothing. */
  token: string;
}

export type PutResult = 'stored' | 'duplicate';

export interface PutOptions {
  /**
   * Aborted once the caller has given up on the put (the receiver's commit timeout: it answered 503, and the
   * platform sends the delivery again). A store that has not yet sent the entry on drops it and rejects, so
   * that nothing is kept for a request already answered; one already sent may still commit it.
   */
  signal?: AbortSignal;
}

export type FailOutcome = { retryAt: number; error: string } | { dead: true; error: string };

export interface ClaimOptions {
  /** How long the claim is this holder's before another may take it. */
  leaseMs: number;
  /** How long to wait for an entry to become due. 0: answer at once. */
  waitMs: number;
  /** Stops the wait early (the worker is closing). */
  signal?: AbortSignal;
}

export interface InboxStats {
  pending: number;
  running: number;
  done: number;
  dead: number;
}

/** One entry as the admin sees it. */
export interface InboxListing {
  key: string;
  trigger: string;
  state: InboxState;
  receivedAt: number;
  attempts: number;
  /** The last handler error, for entries that failed at least once. */
  lastError?: string;
  /** The event, where the store still holds it (done entries may have dropped it). */
  event?: ParsedWebhook;
  rawBody?: string;
}

export interface ListOptions {
  state: InboxState;
  /** Default 100. */
  limit?: number;
}

/** A store for acknowledged deliveries. See the top of this file for what each method promises. */
export interface Inbox {
  /** A short name for logs and stats: 'memory', 'sqlite', 'redis'. */
  readonly kind: string;
  /** False only for the memory inbox: what it holds dies with the process. */
  readonly durable: boolean;
  put(entry: InboxEntry, options?: PutOptions): Promise<PutResult>;
  claim(options: ClaimOptions): Promise<InboxClaim | undefined>;
  renew(claim: InboxClaim, leaseMs: number): Promise<boolean>;
  complete(claim: InboxClaim): Promise<void>;
  fail(claim: InboxClaim, outcome: FailOutcome): Promise<void>;
  stats(): Promise<InboxStats>;
  list(options: ListOptions): Promise<InboxListing[]>;
  /** Dead entries (all, or those keys) become pending with attempts reset. Resolves how many did. */
  retry(keys?: readonly string[]): Promise<number>;
  /** Removes every entry in that state (not `running`: a handler holds those). Resolves how many. */
  purge(options: { state: Exclude<InboxState, 'running'> }): Promise<number>;
  /** Releases the store's resources; puts and claims after it reject. Entries stay where they are. */
  close(): Promise<void>;
  /** Optional: resolves when the store can take writes now (see "Observability" at the top of this file). */
  ping?(): Promise<void>;
  /** Optional: the `receivedAt` of the oldest pending entry, `undefined` when none is (see the top of this file). */
  oldestPendingAt?(): Promise<number | undefined>;
  /** Optional: claims in a database transaction, for `transaction: true` (see the top of this file). */
  readonly transactions?: InboxTransactions;
  /** Optional (catch-up's): takes or renews the leased lock `name` (see "Coordination" at the top of this file). */
  tryLock?(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Optional: frees the lock `name` if `holder` holds it. */
  unlock?(name: string, holder: string): Promise<void>;
  /** Optional: the high-water mark `name`, epoch milliseconds. */
  mark?(name: string): Promise<number | undefined>;
  /** Optional: raises the mark `name` to `value` (never lowers it). */
  setMark?(name: string, value: number): Promise<void>;
}

/** An inbox with the coordination operations: what catch-up needs of a store. */
export type CoordinatingInbox = Inbox & Required<Pick<Inbox, 'tryLock' | 'unlock' | 'mark' | 'setMark'>>;

/** Whether `inbox` has the coordination operations catch-up needs. */
export function canCoordinate(inbox: Inbox): inbox is CoordinatingInbox {
  return typeof inbox.tryLock === 'function' && typeof inbox.unlock === 'function' && typeof inbox.mark === 'function' && typeof inbox.setMark === 'function';
}

/** Optional: claims whose handlers run in a transaction of the inbox's database (see the top of this file). */
export interface InboxTransactions {
  reserve(count: number): () => void;
  /** `timeoutMs`: the handlers' time limit (0: none), set on the server too, as a backstop. */
  claimInTransaction(options: ClaimOptions & { timeoutMs: number }): Promise<InboxTransaction | undefined>;
}

/** One claimed entry and the open transaction its handlers write through. */
export interface InboxTransaction {
  readonly claim: InboxClaim;
  readonly transaction: HandlerTransaction;
  complete(): Promise<void>;
  fail(outcome: FailOutcome): Promise<void>;
}

/** Every inbox there is, for the messages refusing something that is not one. */
export const INBOX_CHOICES = 'memoryInbox(), sqliteInbox({ path }), redisInbox({ url }) or postgresInbox({ connectionString })';

export const DEFAULT_LIST_LIMIT = 100;
/** 24 hours: the durable stores remember a key this long after it was first stored. */
export const DEFAULT_DURABLE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Checks an admin state argument, so a typo from a script fails clearly instead of matching nothing. */
export function checkState(state: unknown, allowRunning = true): InboxState {
  if (!INBOX_STATES.includes(state as InboxState) || (!allowRunning && state === 'running')) {
    const allowed = INBOX_STATES.filter((s) => allowRunning || s !== 'running').join(', ');
    throw new TypeError(`Unknown inbox state ${JSON.stringify(state)}; use one of ${allowed}.`);
  }
  return state as InboxState;
}

/** A claim token: unique enough to tell two holders of one entry apart. */
export function newToken(): string {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/**
 * Resolves after `ms`, or at once when the signal aborts or (given `waiters`) when the pause's entry in that
 * set is called. However it ends, its timer and its abort listener go: a pause ended early that kept its
 * listener until its timer would pile listeners on a worker's signal, one per wake-up, under a burst.
 */
export function pause(ms: number, signal?: AbortSignal, waiters?: Set<() => void>): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      waiters?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    // Not `{ once: true }`: done takes the listener away itself, however the pause ends.
    signal?.addEventListener('abort', done);
    waiters?.add(done);
  });
}
