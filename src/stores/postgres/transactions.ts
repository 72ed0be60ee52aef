/**
 * The PostgreSQL inbox's claims in a transaction (`transaction: true` workers, src/stores/postgres/index.ts):
 * the claim itself commits at once, as every claim does (the attempt counts, a crash included); then a
 * transaction on a connection of its own locks the entry's row (`FOR UPDATE`) and the handlers write through
 * it. Every other claim statement takes due rows `FOR UPDATE SKIP LOCKED`, so the lock, not the lease, is what
 * keeps the entry this worker's: the lease is only LOCK_GRACE_MS, for the moment between the claim and the
 * lock. When the process dies its connection drops, the server rolls the transaction back, and the entry is
 * due again at once. The completion is an UPDATE in the same transaction; a failure rolls back to the
 * savepoint taken after the lock (the handlers' writes go) and records the attempt's outcome before the commit.
 *
 * Nothing of the connection's session is used (no prepared statement, no SET without LOCAL, no LISTEN): a
 * pooler in transaction mode (PgBouncer) may hand each transaction to another server connection.
 */
import type * as Pg from 'pg';
import type { ClaimOptions, FailOutcome, InboxClaim, InboxTransaction, InboxTransactions } from '../../delivery/port.js';
import type { Statements } from './statements.js';

/** The lease of a claim in a transaction until its lock is taken: a few round trips, with room for a slow server. */
export const LOCK_GRACE_MS = 2000;
/** A statement that would end or nest the handlers' transaction (its first word; see complete() for the rest). */
const TRANSACTION_CONTROL = /^\s*(begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|prepare\s+transaction)\b/i;
/** How long past the handlers' limit a transaction may sit idle before the server ends it (a frozen process). */
const IDLE_MARGIN_MS = 5000;

export interface TransactionSettings {
  /** Makes the pool, sized `max`, once a worker reserves connections. */
  pool(max: number): Pg.Pool;
  /** A claim whose token marks it as held by a transaction (see nextDue in statements.ts). */
  claim(options: ClaimOptions): Promise<InboxClaim | undefined>;
  sql: Statements;
  windowMs: number;
  /** Text safe for a column (the inbox's NUL replacement). */
  columnText(text: string): string;
}

export class PgTransactions implements InboxTransactions {
  readonly #settings: TransactionSettings;
  /** Connections that have their 'error' listener (pg's Pool listens only while a connection is idle). */
  readonly #listened = new WeakSet<Pg.PoolClient>();
  #pool: Pg.Pool | undefined;
  #reserved = 0;

  constructor(settings: TransactionSettings) {
    this.#settings = settings;
  }

  /** One connection per handler in flight: the pool grows and shrinks with the workers that reserve. */
  reserve(count: number): () => void {
    this.#reserved += count;
    this.#pool ??= this.#settings.pool(this.#reserved);
    // pg's Pool reads `options.max` on every checkout: more loops, more connections; beyond them, a wait.
    (this.#pool.options as { max: number }).max = Math.max(1, this.#reserved);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#reserved -= count;
      (this.#pool!.options as { max: number }).max = Math.max(1, this.#reserved);
    };
  }

  async claimInTransaction(options: ClaimOptions & { timeoutMs: number }): Promise<InboxTransaction | undefined> {
    if (!this.#pool) throw new Error('No connections were reserved for transactions.');
    // The connection first: a claim never waits for one while its short lease runs.
    const client = await this.#pool.connect();
    // A connection held by a claim or a handler whose server went away (a restart, a crash) emits 'error':
    // without a listener that would end the process. Its queries fail and say so; it is then destroyed.
    if (!this.#listened.has(client)) {
      this.#listened.add(client);
      client.on('error', () => undefined);
    }
    let claim: InboxClaim | undefined;
    try {
      claim = await this.#settings.claim({ leaseMs: LOCK_GRACE_MS, waitMs: options.waitMs, signal: options.signal });
    } catch (error) {
      client.release();
      throw error;
    }
    if (!claim) {
      client.release();
      return undefined;
    }
    return this.#open(client, claim, options.timeoutMs);
  }

  async close(): Promise<void> {
    await this.#pool?.end();
  }

  /** BEGIN, the server-side limits, the row lock, the savepoint; undefined when another holder took the row. */
  async #open(client: Pg.PoolClient, claim: InboxClaim, timeoutMs: number): Promise<InboxTransaction | undefined> {
    try {
      // Whole milliseconds of our own: safe to inline, and one round trip for the three statements.
      const limits =
        timeoutMs > 0
          ? `; SET LOCAL statement_timeout = ${Math.ceil(timeoutMs)}; SET LOCAL idle_in_transaction_session_timeout = ${Math.ceil(timeoutMs) + IDLE_MARGIN_MS}`
          : '';
      await client.query(`BEGIN${limits}`);
      const locked = await client.query(this.#settings.sql.lockClaimed, [claim.key, claim.token]);
      if (locked.rowCount === 0) {
        await client.query('ROLLBACK');
        client.release();
        return undefined;
      }
      await client.query('SAVEPOINT handlers');
    } catch (error) {
      // Destroyed, not reused: its transaction may still be open. The server rolls it back as it closes.
      client.release(error as Error);
      throw error;
    }
    return new OpenTransaction(client, claim, this.#settings);
  }
}

class OpenTransaction implements InboxTransaction {
  readonly claim: InboxClaim;
  readonly #client: Pg.PoolClient;
  readonly #settings: TransactionSettings;
  #open = true;
  readonly transaction: InboxTransaction['transaction'];

  constructor(client: Pg.PoolClient, claim: InboxClaim, settings: TransactionSettings) {
    this.#client = client;
    this.claim = claim;
    this.#settings = settings;
    this.transaction = {
      query: (text, values) => {
        // A handler still running after its timeout (or one that kept the object) must not write outside
        // the transaction, nor into the next one this connection carries.
        if (!this.#open) return Promise.reject(new Error('This transaction has ended (the handler returned, failed or timed out); it takes no more queries.'));
        // Ending it here would commit the writes apart from the completion, or complete the entry without them.
        if (typeof text === 'string' && TRANSACTION_CONTROL.test(text)) {
          return Promise.reject(new Error(`context.transaction ends with the event's completion: "${text.trim().split(/\s+/)[0]}" is not for handlers (throw to roll back).`));
        }
        return this.#client.query(text, values as unknown[]) as never;
      },
    };
  }

  complete(): Promise<void> {
    return this.#end(async () => {
      // Fails when the handler ended the transaction anyway (a statement after another in one text): the
      // entry is then not completed, so it runs again rather than counting as done without its effects.
      await this.#client.query('RELEASE SAVEPOINT handlers');
      await this.#client.query(this.#settings.sql.completeOne, [this.#settings.windowMs, this.claim.key, this.claim.token]);
      await this.#client.query('COMMIT');
    });
  }

  fail(outcome: FailOutcome): Promise<void> {
    const { sql, columnText } = this.#settings;
    const error = columnText(outcome.error);
    return this.#end(async () => {
      await this.#client.query('ROLLBACK TO SAVEPOINT handlers');
      if ('dead' in outcome) await this.#client.query(sql.bury, [this.claim.key, this.claim.token, Date.now(), error]);
      else await this.#client.query(sql.retryLater, [this.claim.key, this.claim.token, outcome.retryAt, error]);
      await this.#client.query('COMMIT');
    });
  }

  /** Ends the transaction once; a connection whose ending failed is destroyed (the server rolls it back). */
  async #end(work: () => Promise<void>): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    try {
      await work();
    } catch (error) {
      this.#client.release(error as Error);
      throw error;
    }
    this.#client.release();
  }
}
