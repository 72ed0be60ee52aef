/**
 * The SQLite inbox's table and statements (src/stores/sqlite/index.ts): one row per key, its state a small integer.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { INBOX_STATES, type InboxClaim, type InboxState } from '../../delivery/port.js';
import { EXPIRY_BATCH, type EntryRow } from '../kit/index.js';
import { eventOfBody } from '../../delivery/stored-event.js';

/** Rows per transaction of `retry()` and `purge()`: each holds the write lock for a few milliseconds. */
export const ADMIN_BATCH = 5000;

/** States as small integers: the (state, due) index stays compact. */
const PENDING = 0;
const RUNNING = 1;
const DONE = 2;
const DEAD = 3;
export const stateCode = (state: InboxState): number => INBOX_STATES.indexOf(state);

/*
 * `due` means, by state: pending: when it may run; running: when its lease ends; done: when it is forgotten;
 * dead: when it died. One index on (state, due) serves claiming, lease recovery and expiry.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox (
  key TEXT PRIMARY KEY,
  trigger TEXT NOT NULL,
  state INTEGER NOT NULL,
  due INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  token TEXT,
  last_error TEXT,
  event TEXT, -- written by earlier versions only: the event is raw_body parsed
  raw_body TEXT,
  traceparent TEXT -- the W3C traceparent of the span that stored it (telemetry on); added to older files on open
);
CREATE INDEX IF NOT EXISTS inbox_state_due ON inbox (state, due);
`;

/** A row as read back; `event` is only in rows an earlier version wrote. */
export interface Row extends EntryRow {
  received_at: number;
  token: string | null;
  event: string | null;
}

/** Every statement, prepared once per connection. */
export type Statements = Record<
  'put'
  | 'anyDue'
  | 'claim'
  | 'renew'
  | 'complete'
  | 'retryLater'
  | 'bury'
  | 'oldestPending'
  | 'counts'
  | 'list'
  | 'deadCount'
  | 'reviveSome'
  | 'revive'
  | 'purgeSome'
  | 'anyExpired'
  | 'expire',
  BetterSqlite3.Statement
>;

export function statements(db: BetterSqlite3.Database): Statements {
  return {
    // Positional: key, trigger, received at (twice), raw body, traceparent, now. Binding an object by names cost ~1 µs a put.
    put: db.prepare(
      `INSERT INTO inbox (key, trigger, state, due, received_at, attempts, event, raw_body, traceparent)
       VALUES (?, ?, ${PENDING}, ?, ?, 0, NULL, ?, ?)
       ON CONFLICT (key) DO UPDATE SET trigger = excluded.trigger, state = ${PENDING}, due = excluded.due,
         received_at = excluded.received_at, attempts = 0, token = NULL, last_error = NULL,
         event = NULL, raw_body = excluded.raw_body, traceparent = excluded.traceparent
       WHERE inbox.state = ${DONE} AND inbox.due <= ?`,
    ),
    anyDue: db.prepare(`SELECT 1 FROM inbox WHERE state IN (${PENDING}, ${RUNNING}) AND due <= ? LIMIT 1`).pluck(),
    claim: db.prepare(
      `UPDATE inbox SET state = ${RUNNING}, attempts = attempts + 1, due = @leaseEnd, token = @token
       WHERE key = (SELECT key FROM inbox WHERE state IN (${PENDING}, ${RUNNING}) AND due <= @now LIMIT 1)
       RETURNING key, trigger, received_at, attempts, event, raw_body, traceparent`,
    ),
    renew: db.prepare(`UPDATE inbox SET due = @leaseEnd WHERE key = @key AND state = ${RUNNING} AND token = @token`),
    complete: db.prepare(
      `UPDATE inbox SET state = ${DONE}, due = received_at + @windowMs, token = NULL, event = NULL, raw_body = NULL
       WHERE key = @key AND state = ${RUNNING} AND token = @token`,
    ),
    retryLater: db.prepare(
      `UPDATE inbox SET state = ${PENDING}, due = @due, token = NULL, last_error = @error
       WHERE key = @key AND state = ${RUNNING} AND token = @token`,
    ),
    bury: db.prepare(
      `UPDATE inbox SET state = ${DEAD}, due = @due, token = NULL, last_error = @error
       WHERE key = @key AND state = ${RUNNING} AND token = @token`,
    ),
    // Bounded: the first 1000 pending rows by due time (a retry's due time is later than its receipt).
    oldestPending: db
      .prepare(`SELECT min(received_at) FROM (SELECT received_at FROM inbox WHERE state = ${PENDING} ORDER BY due LIMIT 1000)`)
      .pluck(),
    counts: db.prepare(`SELECT state, count(*) AS n FROM inbox WHERE state <> ${DONE} OR due > ? GROUP BY state`),
    list: db.prepare(`SELECT * FROM inbox WHERE state = ? ORDER BY due LIMIT ?`),
    deadCount: db.prepare(`SELECT count(*) FROM inbox WHERE state = ${DEAD}`).pluck(),
    reviveSome: db.prepare(
      `UPDATE inbox SET state = ${PENDING}, due = ?, attempts = 0
       WHERE rowid IN (SELECT rowid FROM inbox WHERE state = ${DEAD} LIMIT ${ADMIN_BATCH})`,
    ),
    revive: db.prepare(`UPDATE inbox SET state = ${PENDING}, due = ?, attempts = 0 WHERE state = ${DEAD} AND key = ?`),
    purgeSome: db.prepare(`DELETE FROM inbox WHERE rowid IN (SELECT rowid FROM inbox WHERE state = ? LIMIT ${ADMIN_BATCH})`),
    anyExpired: db.prepare(`SELECT 1 FROM inbox WHERE state = ${DONE} AND due <= ? LIMIT 1`).pluck(),
    expire: db.prepare(
      `DELETE FROM inbox WHERE rowid IN
         (SELECT rowid FROM inbox WHERE state = ${DONE} AND due <= ? LIMIT ${EXPIRY_BATCH})`,
    ),
  };
}

/** The stored event (src/delivery/stored-event.ts); rows an earlier version wrote also hold it parsed. */
export function eventOfRow(row: Row): InboxClaim['event'] {
  return row.event !== null ? (JSON.parse(row.event) as InboxClaim['event']) : eventOfBody(row.raw_body as string);
}
