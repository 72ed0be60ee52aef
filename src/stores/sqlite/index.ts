/**
 * `sqliteInbox({ path })`: the durable inbox for one machine, in one SQLite file (better-sqlite3, an optional
 * peer dependency: `npm install better-sqlite3`).
 *
 * - Durable before the 200: WAL, and no put is answered before the WAL holding its commit was fsynced, which is
 *   the guarantee of `synchronous=FULL`. The fsync runs off the event loop (src/stores/sqlite/file-sync.ts): SQLite
 *   commits with `synchronous=NORMAL` (the WAL written, not flushed), then the WAL file is flushed on libuv's
 *   thread pool while the receiver goes on reading requests. With FULL the driver, being synchronous, stopped
 *   the event loop for every commit's fsync, and a receiver that only stores (`consume: false`) acknowledged a
 *   third less than with the memory inbox.
 * - Every write of one event-loop turn (puts, and the worker's claims and completions) shares one transaction
 *   (group commit), and turns that commit while a flush runs share the next flush. A turn with only the
 *   worker's writes (claims, renewals, completions, failures, expiry) is not flushed: a process crash loses
 *   none of it, and what a power cut could take back is a claim or a completion, whose event is then handed
 *   out again (delivery to handlers is at-least-once anyway). The next put's flush makes those writes durable
 *   too: the WAL is one log.
 * - A key stays known for `windowMs` (24 h by default) from when it was stored; expired done rows are
 *   deleted in the background in small batches, so no delete ever holds the file for long.
 * - The driver is synchronous: a write waiting for another process's lock blocks the event loop. The busy
 *   timeout (1 s) stays below the receiver's 2 s commit timeout, so a locked file gets a 503, not a hang.
 * - Several processes may share the file (receivers, workers, the CLI); each claim is one atomic UPDATE.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
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
  type PutResult,
} from '../../delivery/port.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { FileSync } from './file-sync.js';
import { coordination, COORDINATION_SCHEMA, type Coordination } from './coordination.js';
import { claimLoop, claimOfRow, inBatches, listingOfRow, newToken, startSweeps, Waiters, windowOption, WriteBatch, type ClaimSource } from '../kit/index.js';
import { ADMIN_BATCH, eventOfRow, SCHEMA, stateCode, statements, type Row, type Statements } from './statements.js';
import { isStorableBody, unstorableBody } from '../../delivery/stored-event.js';
import { requirePeers } from '#platform';

// Loaded as this module is: without it, importing chat-webhooks/sqlite says how to install it.
const [Database] = requirePeers('chat-webhooks/sqlite', ['better-sqlite3']) as [typeof BetterSqlite3];
type Database = BetterSqlite3.Database;

/**
 * An open better-sqlite3 `Database`, described by what this inbox uses of it, so that these declarations
 * compile without better-sqlite3 installed (`skipLibCheck: false`).
 */
export interface SqliteDatabase {
  /** The file it opened (`:memory:` for an in-memory database). */
  readonly name: string;
  readonly open: boolean;
  readonly memory: boolean;
  readonly readonly: boolean;
  prepare(source: string): unknown;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction(fn: (...args: never[]) => unknown): unknown;
  close(): unknown;
}

export interface SqliteInboxOptions {
  /** The database file; its folder is created if missing. Give this or `database`. */
  path?: string;
  /**
   * Or a better-sqlite3 database the application opened already: the inbox keeps its `inbox` table there. The
   * inbox sets `journal_mode = WAL`, `synchronous = NORMAL` (it flushes the WAL itself before a put resolves)
   * and `wal_autocheckpoint = 0` (a worker thread checkpoints) on it, and does not close it unless
   * `closeDatabase` says so.
   */
  database?: SqliteDatabase;
  /** With `database`: close it when the inbox closes. Default false: whoever opened it closes it. */
  closeDatabase?: boolean;
  /** How long a key is remembered after it was stored. Default 24 hours. */
  windowMs?: number;
  /** How often a waiting worker looks for work written by another process. Default 100 ms. */
  pollMs?: number;
}

/** Below the receiver's 2 s commit timeout (see the top of this file). */
const BUSY_TIMEOUT_MS = 1000;
/** SQLite's default. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
const inMemory = (path: string): boolean => path === ':memory:';

function openDatabase(path: string): Database {
  if (!inMemory(path)) mkdirSync(dirname(path), { recursive: true });
  return prepareDatabase(new Database(path, { timeout: BUSY_TIMEOUT_MS }));
}

function prepareDatabase(db: Database): Database {
  db.pragma('journal_mode = WAL');
  // The WAL is flushed by walSync below, off the event loop, before any put is answered.
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  db.exec(COORDINATION_SCHEMA);
  addTraceparentColumn(db);
  return db;
}

/** Files written before telemetry lack the column; another process opening the same file may add it first. */
function addTraceparentColumn(db: Database): void {
  const hasIt = () => (db.pragma('table_info(inbox)') as { name: string }[]).some((column) => column.name === 'traceparent');
  if (hasIt()) return;
  try {
    db.exec('ALTER TABLE inbox ADD COLUMN traceparent TEXT');
  } catch (error) {
    if (!hasIt()) throw error;
  }
}

/**
 * The WAL's flusher (the file exists once the schema was read). The folder is flushed too, once: with
 * `synchronous=FULL` SQLite would do it at the WAL's first fsync, so that a new WAL's name survives a power cut.
 */
function walSync(path: string): FileSync | undefined {
  if (inMemory(path)) return undefined;
  // SQLite names the WAL after the database's real path when `path` is a symbolic link.
  const wal = new FileSync(`${realpathSync(path)}-wal`);
  flushFolder(dirname(path));
  return wal;
}

function flushFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // Windows cannot open a folder; its file system needs no flush of it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Opens (or creates) the inbox in one SQLite file, or in a database the application opened.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'chat-webhooks';
 * import { sqliteInbox } from 'chat-webhooks/sqlite';
 *
 * const webhooks = createWebhooks({ inbox: sqliteInbox({ path: './.data/inbox.db' }) });
 * ```
 */
export function sqliteInbox(options: SqliteInboxOptions): Inbox {
  const hasPath = typeof options?.path === 'string' && options.path !== '';
  if (hasPath === (options?.database !== undefined)) {
    throw new TypeError(
      'sqliteInbox needs `path` (the database file, e.g. sqliteInbox({ path: "./.data/inbox.db" })) or `database` (an open better-sqlite3 database), one of them.',
    );
  }
  if (options.database !== undefined && (!options.database.open || options.database.readonly)) {
    throw new TypeError('sqliteInbox: `database` must be open for writing.');
  }
  return new SqliteInbox(options, windowOption('sqliteInbox', options.windowMs));
}

class SqliteInbox implements Inbox {
  readonly kind = 'sqlite';
  readonly durable = true;
  readonly #db: Database;
  readonly #closeDatabase: boolean;
  readonly #sql: Statements;
  readonly #coordination: Coordination;
  readonly #batch: WriteBatch;
  readonly #wal: FileSync | undefined;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #windowMs: number;
  readonly #pollMs: number;
  /** Workers of this process waiting for work: a local put wakes them without waiting for a poll. */
  readonly #waiters = new Waiters();
  /** Another process's writes are seen by polling; this one's wake the waiters at once. */
  readonly #source: ClaimSource = {
    assertOpen: () => this.#assertOpen(),
    // A read first: claiming is a write, and an idle worker should not commit empty transactions.
    take: (leaseMs) => (this.#sql.anyDue.get(Date.now()) ? this.#takeOne(leaseMs) : undefined),
    wait: (left, signal) => this.#waiters.wait(Math.min(this.#pollMs, left), signal),
  };
  readonly #expiry: { stop(): void };
  #closed = false;

  constructor(options: SqliteInboxOptions, windowMs: number) {
    this.#windowMs = windowMs;
    this.#pollMs = options.pollMs ?? 100;
    const given = options.database as Database | undefined;
    const path = given ? (given.memory ? ':memory:' : given.name) : (options.path as string);
    this.#db = given ? prepareDatabase(given) : openDatabase(path);
    this.#closeDatabase = given ? options.closeDatabase === true : true;
    this.#sql = statements(this.#db);
    this.#coordination = coordination(this.#db);
    this.#wal = walSync(path);
    this.#checkpointer = this.#checkpointOffTheLoop(path);
    this.#batch = new WriteBatch((body, mustSync) => {
      this.#db.transaction(body).immediate();
      return mustSync ? this.#wal?.sync() : undefined;
    });
    this.#expiry = startSweeps(() => this.#expire());
  }

  put(entry: InboxEntry): Promise<PutResult> {
    const { key, trigger, receivedAt, rawBody, traceparent } = entry;
    if (!isStorableBody(rawBody)) return Promise.reject(unstorableBody('SQLite'));
    return this.#write(() => {
      const changes = this.#sql.put.run(key, trigger, receivedAt, receivedAt, rawBody, traceparent ?? null, Date.now()).changes;
      return (changes > 0 ? 'stored' : 'duplicate') as PutResult;
    }).then((result) => {
      if (result === 'stored') this.#waiters.wake();
      return result;
    });
  }

  claim(options: ClaimOptions): Promise<InboxClaim | undefined> {
    return claimLoop(this.#source, options);
  }

  renew(claim: InboxClaim, leaseMs: number): Promise<boolean> {
    return this.#workerWrite(() => this.#sql.renew.run({ key: claim.key, token: claim.token, leaseEnd: Date.now() + leaseMs }).changes > 0);
  }

  async complete(claim: InboxClaim): Promise<void> {
    await this.#workerWrite(() => this.#sql.complete.run({ key: claim.key, token: claim.token, windowMs: this.#windowMs }));
  }

  async fail(claim: InboxClaim, outcome: FailOutcome): Promise<void> {
    const params = { key: claim.key, token: claim.token, error: outcome.error };
    if ('dead' in outcome) {
      await this.#workerWrite(() => this.#sql.bury.run({ ...params, due: Date.now() }));
    } else {
      await this.#workerWrite(() => this.#sql.retryLater.run({ ...params, due: outcome.retryAt }));
      this.#waiters.wakeAll();
    }
  }

  async stats(): Promise<InboxStats> {
    const counts: InboxStats = { pending: 0, running: 0, done: 0, dead: 0 };
    for (const { state, n } of this.#sql.counts.all(Date.now()) as { state: number; n: number }[]) {
      counts[INBOX_STATES[state] as InboxState] = n;
    }
    return counts;
  }

  /** An empty write transaction: it needs the file's write lock, as a put does (not flushed: nothing changed). */
  async ping(): Promise<void> {
    await this.#workerWrite(() => undefined);
  }

  async oldestPendingAt(): Promise<number | undefined> {
    this.#assertOpen();
    return (this.#sql.oldestPending.get() as number | null) ?? undefined;
  }

  async list({ state, limit = DEFAULT_LIST_LIMIT }: ListOptions): Promise<InboxListing[]> {
    return (this.#sql.list.all(stateCode(checkState(state)), limit) as Row[]).map((row) => listingOfRow(row, eventOfRow));
  }

  /**
   * Every dead entry (those dead when it began), ADMIN_BATCH per transaction: one UPDATE of 100 000 rows holds
   * the file's write lock throughout (0.3–0.6 s here), and the receivers of other processes wait for it with
   * their event loops stopped, up to their busy timeout (1 s), after which they answer 503.
   */
  async retry(keys?: readonly string[]): Promise<number> {
    const now = Date.now();
    const { revive, reviveSome, deadCount } = this.#sql;
    let count = 0;
    if (keys) count = await this.#write(() => keys.reduce((n, key) => n + revive.run(now, key).changes, 0));
    else {
      const dead = deadCount.get() as number;
      while (count < dead) {
        const revived = await this.#write(() => reviveSome.run(now).changes);
        if (revived === 0) break;
        count += revived;
        this.#waiters.wakeAll();
      }
    }
    if (count > 0) this.#waiters.wakeAll();
    return count;
  }

  /** ADMIN_BATCH rows per transaction, as `retry`. */
  async purge({ state }: { state: Exclude<InboxState, 'running'> }): Promise<number> {
    const code = stateCode(checkState(state, false));
    return inBatches(() => this.#write(() => this.#sql.purgeSome.run(code).changes), ADMIN_BATCH);
  }

  async tryLock(name: string, holder: string, ttlMs: number): Promise<boolean> {
    this.#assertOpen();
    return this.#coordination.tryLock(name, holder, ttlMs);
  }

  async unlock(name: string, holder: string): Promise<void> {
    this.#assertOpen();
    this.#coordination.unlock(name, holder);
  }

  async mark(name: string): Promise<number | undefined> {
    this.#assertOpen();
    return this.#coordination.mark(name);
  }

  async setMark(name: string, value: number): Promise<void> {
    this.#assertOpen();
    this.#coordination.setMark(name, value);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#expiry.stop();
    this.#batch.flush();
    this.#waiters.wakeAll();
    await this.#checkpointer?.close();
    if (this.#closeDatabase) this.#db.close();
    // The application goes on with its database: SQLite checkpoints on it again as by default.
    else if (this.#checkpointer) this.#db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    await this.#wal?.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('The SQLite inbox is closed.');
  }

  #write<T>(run: () => T, mustSync = true): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('The SQLite inbox is closed.'));
    return this.#batch.add(run, mustSync);
  }

  /** The worker's writes: a power cut may take them back without losing an event (see the top of this file). */
  #workerWrite<T>(run: () => T): Promise<T> {
    return this.#write(run, false);
  }

  /** See src/stores/sqlite/checkpointer.ts; should its worker stop, this connection checkpoints as SQLite does by default. */
  #checkpointOffTheLoop(path: string): Checkpointer | undefined {
    if (inMemory(path)) return undefined;
    this.#db.pragma('wal_autocheckpoint = 0');
    return startCheckpointer(path, BUSY_TIMEOUT_MS, () => {
      if (!this.#closed) this.#db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    });
  }

  /** Deletes one small batch of forgotten done rows, if there are any (a cheap read decides). */
  async #expire(): Promise<void> {
    if (this.#closed || !this.#sql.anyExpired.get(Date.now())) return;
    await this.#workerWrite(() => this.#sql.expire.run(Date.now()));
  }

  #takeOne(leaseMs: number): Promise<InboxClaim | undefined> {
    const token = newToken();
    return this.#workerWrite(() => {
      const now = Date.now();
      const row = this.#sql.claim.get({ now, leaseEnd: now + leaseMs, token }) as Row | undefined;
      return row && claimOfRow(row, token, eventOfRow);
    });
  }
}
