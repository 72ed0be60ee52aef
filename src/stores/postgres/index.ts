/**
 * `postgresInbox({ connectionString | pool })`: the durable inbox on PostgreSQL (node-postgres, an optional
 * peer dependency: `npm install pg`). Every receiver and worker pointed at the same database and schema
 * shares one queue and one duplicate window.
 *
 * - Puts: those of one event-loop turn (or all that arrived while two batches were in flight) go as ONE
 *   statement, a multi-row `INSERT … ON CONFLICT (key) DO UPDATE … WHERE <the known row has expired>
 *   RETURNING key`: a key returned was stored, any other is a duplicate (the update touches only a done row
 *   past its window, which is then stored again; a known key is left as it is). The statement is its own
 *   transaction: its answer comes after the commit, as durable as the server's `synchronous_commit` makes it.
 *   Keys go in sorted order, so two receivers' batches never lock each other's rows in opposite orders. A key
 *   whose first put is still uncommitted (another batch, another receiver) makes the second insert wait on its
 *   row until that commit or rollback: it is then a duplicate, or stored.
 * - Claims: `FOR UPDATE SKIP LOCKED` on due rows (pending and due, or running with a lease run out); the
 *   claims of one turn take their rows in one statement. Each claim adds an attempt and sets the lease.
 *   Idle workers wait on LISTEN/NOTIFY (src/stores/postgres/listener.ts) and on a timer set for the next due
 *   row (a retry, a lease running out), not by polling in a loop.
 * - `renew`, `complete`, `fail` match the row's token: a stale holder changes nothing. Completions of one turn
 *   are one statement.
 * - Admin (`stats`, `list`, `retry`, `purge`) works in batches of BATCH rows, each its own statement: 100 000
 *   dead entries are never held in memory nor in one long transaction. Done rows past their window are
 *   deleted in the background, EXPIRY_BATCH at a time (a timer that does not keep the process alive).
 * - The schema (src/stores/postgres/schema.ts) is created or upgraded on first use.
 * - Times are milliseconds since the epoch from the clocks of the processes (as in the other inboxes): keep
 *   them in sync (NTP), or leases and retries move by the skew.
 */
import type * as Pg from 'pg';
import { requirePeers } from '#platform';
import {
  checkState,
  DEFAULT_LIST_LIMIT,
  INBOX_STATES,
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
import { claimLoop, claimOfRow, inBatches, listingOfRow, newToken, startSweeps, TurnBatch, windowOption, type ClaimSource, type EntryRow } from '../kit/index.js';
import { Listener } from './listener.js';
import { makePools } from './pools.js';
import { coordination, type Coordination } from './coordination.js';
import { migrate, quotedSchema } from './schema.js';
import { BATCH, paddedRows, putStatement, statements, TRANSACTION_TOKEN, type Statements } from './statements.js';
import { PgTransactions } from './transactions.js';
import { isStorableBody, unstorableBody } from '../../delivery/stored-event.js';

// Loaded as this module is: without it, importing chat-webhooks/postgres says to install it.
const [pg] = requirePeers('chat-webhooks/postgres', ['pg']) as [typeof Pg];

/**
 * A node-postgres `Pool` (`new pg.Pool(...)`), as far as these declarations need to say: they compile without
 * pg installed (`skipLibCheck: false`). Its `options` (the settings it was made with) also open the inbox's own
 * connections.
 */
export interface PgPoolLike {
  query(...args: never[]): Promise<unknown>;
  connect(...args: never[]): Promise<unknown>;
  readonly options: object;
}

export { migrationScript, SCHEMA_VERSION } from './schema.js';

/**
 * Creates or upgrades the inbox's tables now (what `postgresInbox` does on first use), for a deploy step or
 * `chat-webhooks inbox migrate --apply`. Resolves the version found before and the version now.
 *
 * @example
 * ```ts
 * import { migratePostgresInbox } from 'chat-webhooks/postgres';
 *
 * const { from, to } = await migratePostgresInbox({ connectionString: process.env.DATABASE_URL! });
 * console.log(`inbox schema ${from} -> ${to}`);
 * ```
 */
export async function migratePostgresInbox(options: { connectionString: string; schema?: string }): Promise<{ from: number; to: number }> {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 1 });
  pool.on('error', () => undefined);
  try {
    return await migrate(pool, options.schema ?? 'chat_webhooks');
  } finally {
    await pool.end();
  }
}

export interface PostgresInboxOptions {
  /** `postgres://user:password@host:5432/database`. */
  connectionString?: string;
  /**
   * Or a `pg.Pool` of yours, for puts and admin (this inbox does not end it). Its settings also open the
   * inbox's own connections: up to 4 for the worker's writes and one that LISTENs.
   */
  pool?: PgPoolLike;
  /** The schema holding the inbox's tables. Default `chat_webhooks`. */
  schema?: string;
  /** How long a key is remembered after it was stored. Default 24 hours. */
  windowMs?: number;
  /**
   * Statements running longer are cancelled by the server (rolled back: nothing stays of a put the receiver
   * answered 503). Default 1 500 ms, below the receiver's 2 s commit timeout. Applies to the pool this inbox
   * makes; with your own pool, set `statement_timeout` on it.
   */
  statementTimeoutMs?: number;
  /** The longest a waiting worker sleeps without a notification (a safety net; LISTEN wakes it). Default 2 000 ms. */
  pollMs?: number;
  /** Connections of the pool this inbox makes. Default 10. */
  poolSize?: number;
}

/** Two put statements in flight: while the server commits one, the next fills (as in the Redis inbox). */
const PUTS_IN_FLIGHT = 2;
/** A due row that a claim found locked is someone else's claim in progress: look again this soon. */
const LOCKED_RETRY_MS = 20;


type Put = InboxEntry;

/**
 * Text for a column PostgreSQL's `text` takes: it refuses NUL, which an unknown trigger's name (`"\u0000"` in
 * the JSON) or a handler's error quoting the event may hold. Refused, a put failed every event of its statement
 * (503), and a failure's write left the event running until its lease ran out. The key never holds NUL
 * (src/events/idempotency.ts escapes it) and the raw body cannot (JSON has no bare NUL).
 */
const columnText = (text: string): string => text.replaceAll('\0', '\uFFFD');
type Completion = { key: string; token: string };
/** A claim's lease, and whether a transaction will hold its row (its token says so). */
type Take = { leaseMs: number; transaction: boolean };

/**
 * Connects to the inbox in PostgreSQL (tables in `schema`, created on first use).
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { postgresInbox } from 'chat-webhooks/postgres';
 *
 * const inbox = postgresInbox({ connectionString: process.env.DATABASE_URL! });
 * const webhooks = createWebhooks({ auth: { username: 'app', password: 's3cret' }, inbox });
 * ```
 */
export function postgresInbox(options: PostgresInboxOptions): Inbox {
  if (!options || (!options.connectionString && !options.pool)) {
    throw new TypeError('postgresInbox needs `connectionString` (postgres://user@host:5432/db) or `pool` (a pg.Pool).');
  }
  const windowMs = windowOption('postgresInbox', options.windowMs);
  quotedSchema(options.schema ?? 'chat_webhooks');
  return new PostgresInbox(options, windowMs);
}

class PostgresInbox implements Inbox {
  readonly kind = 'postgres';
  readonly durable = true;
  readonly #pool: Pg.Pool;
  readonly #workerPool: Pg.Pool;
  readonly #ownsPool: boolean;
  readonly #schema: string;
  readonly #sql: Statements;
  readonly #coordination: Coordination;
  readonly #windowMs: number;
  readonly #pollMs: number;
  readonly #listener: Listener;
  readonly #puts: TurnBatch<Put, PutResult>;
  readonly #claims: TurnBatch<Take, InboxClaim | undefined>;
  readonly #completions: TurnBatch<Completion, void>;
  readonly #expiry: { stop(): void };
  readonly #putStatements: Pg.QueryArrayConfig[] = [];
  /**
   * The claims of one turn take their rows in one statement; idle ones wait for a notification (noted before
   * the look: one landing in between is not slept through) or the next due row.
   */
  readonly #source: ClaimSource = {
    assertOpen: () => this.#assertOpen(),
    take: (leaseMs) => this.#claims.add({ leaseMs, transaction: false }),
    mark: () => this.#listener.generation,
    wait: (left, signal, seen) => this.#wait(left, signal, seen),
  };
  /** The claims of `transaction: true` workers (src/stores/postgres/transactions.ts). */
  readonly transactions: PgTransactions;
  #ready: Promise<void> | undefined;
  #nextDue: Promise<number> | undefined;
  #closed = false;

  constructor(options: PostgresInboxOptions, windowMs: number) {
    const { pool, owned, worker, listen, transactions } = makePools(options);
    this.#pool = pool;
    this.#workerPool = worker;
    this.#ownsPool = owned;
    this.#schema = options.schema ?? 'chat_webhooks';
    this.#sql = statements(this.#schema);
    this.#coordination = coordination(quotedSchema(this.#schema), (text, values) => this.#query(text, values));
    this.#windowMs = windowMs;
    this.#pollMs = options.pollMs ?? 2000;
    this.#listener = new Listener(() => new pg.Client(listen), this.#sql.channel);
    this.#puts = new TurnBatch((puts) => this.#insert(puts), PUTS_IN_FLIGHT, BATCH);
    this.#claims = new TurnBatch((leases) => this.#take(leases), 1, BATCH);
    this.#completions = new TurnBatch((done) => this.#markDone(done), 1, BATCH);
    // Another process's expiry skips the rows this one deletes (SKIP LOCKED).
    this.transactions = new PgTransactions({
      pool: (max) => transactions(max),
      claim: (claimOptions) => this.#claimFor(claimOptions, true),
      sql: this.#sql,
      windowMs,
      columnText,
    });
    this.#expiry = startSweeps(() => !this.#closed && this.#ready && this.#work(this.#sql.expire, [Date.now()]));
  }

  /** A put whose `signal` aborts before its batch is sent is dropped (nothing kept for a request answered 503). */
  put(entry: InboxEntry, options?: PutOptions): Promise<PutResult> {
    if (this.#closed) return Promise.reject(new Error('The PostgreSQL inbox is closed.'));
    if (!isStorableBody(entry.rawBody)) return Promise.reject(unstorableBody('PostgreSQL'));
    return this.#puts.add(entry, options?.signal);
  }

  claim(options: ClaimOptions): Promise<InboxClaim | undefined> {
    return this.#claimFor(options, false);
  }

  async #claimFor(options: ClaimOptions, transaction: boolean): Promise<InboxClaim | undefined> {
    const startedAt = Date.now();
    if (options.waitMs > 0) await this.#listener.start();
    const source = transaction ? { ...this.#source, take: (leaseMs: number) => this.#claims.add({ leaseMs, transaction }) } : this.#source;
    return claimLoop(source, options, startedAt);
  }

  async #wait(left: number, signal: AbortSignal | undefined, seen: number): Promise<void> {
    const untilDue = await this.#untilNextDue();
    await this.#listener.wait(seen, Math.min(left, this.#pollMs, Math.max(untilDue, LOCKED_RETRY_MS)), signal);
  }

  async renew(claim: InboxClaim, leaseMs: number): Promise<boolean> {
    const result = await this.#work(this.#sql.renew, [claim.key, claim.token, Date.now() + leaseMs]);
    return (result.rowCount ?? 0) > 0;
  }

  async complete(claim: InboxClaim): Promise<void> {
    await this.#completions.add({ key: claim.key, token: claim.token });
  }

  async fail(claim: InboxClaim, outcome: FailOutcome): Promise<void> {
    const error = columnText(outcome.error);
    if ('dead' in outcome) await this.#work(this.#sql.bury, [claim.key, claim.token, Date.now(), error]);
    else await this.#work(this.#sql.retryLater, [claim.key, claim.token, outcome.retryAt, error]);
  }

  async stats(): Promise<InboxStats> {
    const counts: InboxStats = { pending: 0, running: 0, done: 0, dead: 0 };
    const { rows } = await this.#query<{ state: number; n: number }>(this.#sql.counts, [Date.now()]);
    for (const { state, n } of rows) counts[INBOX_STATES[state] as InboxState] = n;
    return counts;
  }

  /** For health(): a cheap statement on a pooled connection, which needs the server to answer. */
  async ping(): Promise<void> {
    this.#assertOpen();
    await this.#query('SELECT 1', []);
  }

  /** For the oldest-pending gauge, read once per metrics collection. */
  async oldestPendingAt(): Promise<number | undefined> {
    this.#assertOpen();
    const { rows } = await this.#query<{ at: string | null }>(this.#sql.oldestPending, []);
    // min() answers one row, NULL when there is none.
    return rows[0]!.at === null ? undefined : Number(rows[0]!.at);
  }

  async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions): Promise<InboxListing[]> {
    const code = INBOX_STATES.indexOf(checkState(state));
    const { rows } = await this.#query<EntryRow>(this.#sql.list, [code, limit]);
    return rows.map((row) => listingOfRow(row));
  }

  async retry(keys?: readonly string[]): Promise<number> {
    let count = 0;
    if (keys) {
      for (let start = 0; start < keys.length; start += BATCH) {
        const result = await this.#query(this.#sql.reviveKeys, [Date.now(), keys.slice(start, start + BATCH)]);
        count += result.rowCount ?? 0;
      }
    } else {
      count = await inBatches(() => this.#count(this.#sql.reviveSome, [Date.now()]), BATCH);
    }
    if (count > 0) await this.#query(this.#sql.notify, [String(count)]);
    return count;
  }

  async purge({ state }: { state: Exclude<InboxState, 'running'> }): Promise<number> {
    const code = INBOX_STATES.indexOf(checkState(state, false));
    return inBatches(() => this.#count(this.#sql.purgeSome, [code]), BATCH);
  }

  async tryLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    this.#assertOpen();
    return this.#coordination.tryLock(name, holder, ttlMs);
  }

  async unlock(name: string, holder: string): Promise<void> {
    this.#assertOpen();
    await this.#coordination.unlock(name, holder);
  }

  async mark(name: string): Promise<number | undefined> {
    this.#assertOpen();
    return this.#coordination.mark(name);
  }

  async setMark(name: string, value: number): Promise<void> {
    this.#assertOpen();
    await this.#coordination.setMark(name, value);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#expiry.stop();
    await Promise.all([this.#puts.settled(), this.#completions.settled(), this.#claims.settled()]);
    await this.#listener.close();
    await this.#ready?.catch(() => undefined);
    await this.transactions.close();
    await this.#workerPool.end();
    if (this.#ownsPool) await this.#pool.end();
  }

  /** Runs a statement once the schema is there. */
  async #query<R extends Pg.QueryResultRow = Pg.QueryResultRow>(
    query: string | Pg.QueryConfig,
    values: unknown[],
    pool = this.#pool,
  ): Promise<Pg.QueryResult<R>> {
    await this.#schemaReady();
    const config = typeof query === 'string' ? { text: query, values } : { ...query, values };
    return pool.query<R>(config);
  }

  /** A statement of the worker's (WORKER_COMMITS). */
  #work<R extends Pg.QueryResultRow = Pg.QueryResultRow>(query: string | Pg.QueryConfig, values: unknown[]): Promise<Pg.QueryResult<R>> {
    return this.#query<R>(query, values, this.#workerPool);
  }

  /** How many rows a statement changed. */
  async #count(query: string, values: unknown[]): Promise<number> {
    return (await this.#query(query, values)).rowCount ?? 0;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('The PostgreSQL inbox is closed.');
  }

  /** One INSERT for a batch of puts (see the top of this file); a key repeated in the batch is sent once. */
  async #insert(puts: Put[]): Promise<PutResult[]> {
    // By position: the same entry object may be put twice in one turn.
    const first = new Map<string, number>();
    puts.forEach((put, index) => first.has(put.key) || first.set(put.key, index));
    // In key order (UTF-16 code units): every put statement takes its rows' locks in the same order.
    const sent = [...first.keys()].sort().map((key) => puts[first.get(key)!]!);
    const rows = paddedRows(sent.length);
    const values: unknown[] = new Array(1 + rows * 5).fill(null);
    values[0] = Date.now();
    sent.forEach((put, row) => {
      const n = 1 + row * 5;
      values[n] = put.key;
      values[n + 1] = columnText(put.trigger);
      values[n + 2] = put.receivedAt;
      values[n + 3] = put.rawBody;
      values[n + 4] = put.traceparent ?? null;
    });
    const statement = (this.#putStatements[rows] ??= putStatement(this.#schema, rows));
    const result = await this.#query(statement, values);
    // The notification is sent once (an uncorrelated sub-select), and only when some key was stored.
    const stored = new Set((result.rows as unknown as string[][]).map((row) => row[0]));
    return puts.map((put, index) => (first.get(put.key) === index && stored.has(put.key) ? 'stored' : 'duplicate'));
  }

  /** The claims of one turn: one statement takes up to as many due rows, each with the same fresh token. */
  async #take(takes: Take[]): Promise<Array<InboxClaim | undefined>> {
    const byLease = new Map<string, number[]>();
    takes.forEach(({ leaseMs, transaction }, index) => {
      const group = `${transaction ? TRANSACTION_TOKEN : ''}${leaseMs}`;
      byLease.set(group, [...(byLease.get(group) ?? []), index]);
    });
    const claims: Array<InboxClaim | undefined> = takes.map(() => undefined);
    for (const indexes of byLease.values()) {
      const { leaseMs, transaction } = takes[indexes[0]!]!;
      // One token for the statement's rows: a token tells holders of one key apart, and each row is one key.
      const token = (transaction ? TRANSACTION_TOKEN : '') + newToken();
      const now = Date.now();
      const { rows } = await this.#work<EntryRow>(this.#sql.claim, [now, now + leaseMs, token, indexes.length]);
      rows.forEach((row, n) => (claims[indexes[n]!] = claimOfRow(row, token)));
    }
    return claims;
  }

  /** Completions of one turn in one statement; keys sorted, as the puts' (no lock-order deadlocks). */
  async #markDone(done: Completion[]): Promise<void[]> {
    const sorted = [...done].sort((a, b) => {
      if (a.key < b.key) return -1;
      return a.key > b.key ? 1 : 0;
    });
    await this.#work(this.#sql.complete, [this.#windowMs, sorted.map((c) => c.key), sorted.map((c) => c.token)]);
    return done.map(() => undefined);
  }

  /** Milliseconds until the next pending or running row falls due (Infinity: none); one query a turn at most. */
  #untilNextDue(): Promise<number> {
    this.#nextDue ??= this.#work<{ due: string | null }>(this.#sql.nextDue, [Date.now()])
      // least() answers one row, NULL when no row is pending or running.
      .then(({ rows }) => (rows[0]!.due === null ? Infinity : Number(rows[0]!.due)))
      .finally(() => setImmediate(() => (this.#nextDue = undefined)));
    return this.#nextDue.then((due) => due - Date.now());
  }

  #schemaReady(): Promise<void> {
    this.#ready ??= migrate(this.#pool, this.#schema).then(
      () => undefined,
      (error: unknown) => {
        this.#ready = undefined; // The next statement tries again (the server may have been down).
        throw error;
      },
    );
    return this.#ready;
  }
}
