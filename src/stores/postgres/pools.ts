/**
 * The PostgreSQL inbox's connections (src/stores/postgres/index.ts): the pool for puts and admin (the application's,
 * or one made here), the worker's own pool, and the settings of the listening connection.
 */
import type * as Pg from 'pg';
import { requirePeers } from '#platform';

const [pg] = requirePeers('chat-webhooks/postgres', ['pg']) as [typeof Pg];

/** What of `PostgresInboxOptions` (src/stores/postgres/index.ts) says how to connect. */
export interface PoolOptions {
  connectionString?: string | undefined;
  pool?: object | undefined;
  statementTimeoutMs?: number | undefined;
  poolSize?: number | undefined;
}

export interface Pools {
  /** Puts and admin: commits as durable as the server's `synchronous_commit`. */
  pool: Pg.Pool;
  owned: boolean;
  /** The worker's writes: `synchronous_commit = off` (see WORKER_COMMITS). Always this inbox's own. */
  worker: Pg.Pool;
  /** The listening connection's settings. */
  listen: Pg.ClientConfig;
  /**
   * The pool of the handlers' transactions (`transaction: true`), sized by the workers that use it. Commits as
   * durable as the server's `synchronous_commit` (they hold the handlers' writes), with no startup parameter of
   * ours: its limits are SET LOCAL in each transaction, so a pooler in transaction mode may carry it.
   */
  transactions(max: number): Pg.Pool;
}

/**
 * The worker's claims, renewals, completions and failures commit without waiting for the WAL flush
 * (`synchronous_commit = off`), as the SQLite inbox's worker writes are not fsynced: the server loses none of
 * them on a crash of this process, and what a crash of the server itself (or a power cut) may take back is
 * its last few hundred milliseconds of them, whose events then run again (delivery to handlers is
 * at-least-once anyway); the next put's commit flushes them too, the WAL being one log. Measured on the bench
 * machine: 8 workers handled 760/s with each completion flushed, 1 630/s without.
 */
const WORKER_COMMITS = '-c synchronous_commit=off';

export function makePools(options: PoolOptions): Pools {
  const statementTimeout = options.statementTimeoutMs ?? 1500;
  const given = options.pool as Pg.Pool | undefined;
  const base: Pg.PoolConfig = given
    ? { ...(given.options as Pg.PoolConfig) }
    : // A server that cannot be reached fails the statement instead of holding it for the OS's TCP timeout.
      { connectionString: options.connectionString, statement_timeout: statementTimeout, connectionTimeoutMillis: 5000 };
  const worker = new pg.Pool({ ...base, max: 4, options: [base.options, WORKER_COMMITS].filter(Boolean).join(' ') });
  // An idle connection the server dropped (a restart) is an 'error' event: without a listener it would end
  // the process. The pool replaces it; the queries that needed it failed and said so.
  worker.on('error', () => undefined);
  const { max: _max, ...listen } = base;
  const transactions = (max: number): Pg.Pool => {
    const { statement_timeout: _timeout, ...settings } = listen;
    const made = new pg.Pool({ ...(given ? listen : settings), max });
    made.on('error', () => undefined);
    return made;
  };
  // The pool's own settings (connectionString, host, user…) serve the worker's and the listening connections.
  if (given) return { pool: given, owned: false, worker, listen, transactions };
  const pool = new pg.Pool({ ...base, max: options.poolSize ?? 10 });
  pool.on('error', () => undefined);
  return { pool, owned: true, worker, listen, transactions };
}

