/**
 * The PostgreSQL inbox's statements (src/stores/postgres/index.ts), for one schema; named, so each connection parses
 * and plans them once.
 */
import type * as Pg from 'pg';
import { EXPIRY_BATCH } from '../kit/index.js';
import { DEAD, DONE, PENDING, quotedSchema, RUNNING } from './schema.js';

/**
 * Marks the token of a claim held by a transaction (src/stores/postgres/transactions.ts): its row is locked
 * while its handlers run, so its short lease says nothing of when it may be taken again.
 */
export const TRANSACTION_TOKEN = 'tx.';

/** Rows per admin statement (retry, purge) and keys per put statement. */
export const BATCH = 1000;

/**
 * The put statement for `rows` rows (a power of two: a handful of prepared statements per connection serve
 * every batch size; the rows past the batch are NULLs, skipped). Each value is a parameter of its own, as a
 * hand-written multi-row INSERT would send it: packing them into arrays for `unnest` cost the receiver the
 * escaping of every body's quotes and the server the parsing of it back (bench/postgres.mjs).
 * $1 is now: a known key whose done row has expired is stored again.
 */
export function putStatement(schema: string, rows: number): Pg.QueryArrayConfig {
  const t = `${quotedSchema(schema)}.inbox`;
  const values = Array.from({ length: rows }, (_, row) => {
    const n = 2 + row * 5;
    return `($${n}::text, $${n + 1}::text, $${n + 2}::int8, $${n + 3}::text, $${n + 4}::text)`;
  }).join(', ');
  return {
    name: `${schema}.put.${rows}`,
    text: `WITH stored AS (
  INSERT INTO ${t} AS i (key, trigger, state, due, received_at, attempts, raw_body, traceparent)
  SELECT k, t, ${PENDING}, r, r, 0, b, p FROM (VALUES ${values}) AS v(k, t, r, b, p) WHERE k IS NOT NULL
  ON CONFLICT (key) DO UPDATE SET trigger = excluded.trigger, state = ${PENDING}, due = excluded.due,
    received_at = excluded.received_at, attempts = 0, token = NULL, last_error = NULL,
    raw_body = excluded.raw_body, traceparent = excluded.traceparent
  WHERE i.state = ${DONE} AND i.due <= $1
  RETURNING key)
SELECT key, (SELECT pg_notify('${schema}.inbox', count(*)::text) FROM stored)::text FROM stored`,
    // A row per stored key, as arrays: no object per row, no array literal to build and parse back.
    rowMode: 'array',
  };
}

/** Rows of the put statement for a batch of `count`: the next power of two. */
export const paddedRows = (count: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, count)));

/** The statements, for one schema. */
export function statements(schema: string) {
  const t = `${quotedSchema(schema)}.inbox`;
  const channel = `${schema}.inbox`;
  return {
    channel,
    claim: {
      name: `${schema}.claim`,
      text: `UPDATE ${t} AS i SET state = ${RUNNING}, attempts = i.attempts + 1, due = $2, token = $3
FROM (SELECT key FROM ${t} WHERE state IN (${PENDING}, ${RUNNING}) AND due <= $1 LIMIT $4 FOR UPDATE SKIP LOCKED) AS picked
WHERE i.key = picked.key
RETURNING i.key, i.trigger, i.received_at, i.attempts, i.raw_body, i.traceparent`,
    },
    nextDue: {
      name: `${schema}.nextDue`,
      // A transaction's running row counts only until its short lease ends (its holder may have died before
      // it took the lock): past that its lock holds it, and waiting for that due would have every idle worker
      // look again every few milliseconds. A holder that died later is found by the next look (pollMs at the
      // latest) or the next notification. $1 is now.
      text: `SELECT least((SELECT min(due) FROM ${t} WHERE state = ${PENDING}),
  (SELECT min(due) FROM ${t} WHERE state = ${RUNNING} AND (token NOT LIKE '${TRANSACTION_TOKEN}%' OR due > $1))) AS due`,
    },
    complete: {
      name: `${schema}.complete`,
      text: `UPDATE ${t} AS i SET state = ${DONE}, due = i.received_at + $1, token = NULL, raw_body = NULL, traceparent = NULL
FROM unnest($2::text[], $3::text[]) AS c(key, token)
WHERE i.key = c.key AND i.token = c.token AND i.state = ${RUNNING}`,
    },
    ...singleStatements(schema, t, channel),
  };
}

/** The statements sent one at a time, by text. */
function singleStatements(schema: string, t: string, channel: string) {
  return {
    renew: `UPDATE ${t} SET due = $3 WHERE key = $1 AND token = $2 AND state = ${RUNNING}`,
    retryLater: `WITH moved AS (UPDATE ${t} SET state = ${PENDING}, due = $3, token = NULL, last_error = $4
  WHERE key = $1 AND token = $2 AND state = ${RUNNING} RETURNING key)
SELECT pg_notify('${channel}', '1')::text FROM moved`,
    // In a claim's transaction (transactions.ts): by text, no prepared statement lives on a pooled connection.
    lockClaimed: `SELECT 1 FROM ${t} WHERE key = $1 AND token = $2 AND state = ${RUNNING} FOR UPDATE`,
    completeOne: `UPDATE ${t} SET state = ${DONE}, due = received_at + $1, token = NULL, raw_body = NULL, traceparent = NULL
  WHERE key = $2 AND token = $3 AND state = ${RUNNING}`,
    bury: `UPDATE ${t} SET state = ${DEAD}, due = $3, token = NULL, last_error = $4 WHERE key = $1 AND token = $2 AND state = ${RUNNING}`,
    counts: `SELECT state, count(*)::int AS n FROM ${t} WHERE state <> ${DONE} OR due > $1 GROUP BY state`,
    // A bounded scan on the (state, due) index, as SQLite's: the oldest among the 1 000 pending rows due first.
    oldestPending: `SELECT min(received_at) AS at FROM (SELECT received_at FROM ${t} WHERE state = ${PENDING} ORDER BY due LIMIT 1000) AS first`,
    list: `SELECT * FROM ${t} WHERE state = $1 ORDER BY due LIMIT $2`,
    reviveSome: `UPDATE ${t} SET state = ${PENDING}, due = $1, attempts = 0 WHERE key IN
  (SELECT key FROM ${t} WHERE state = ${DEAD} LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`,
    reviveKeys: `UPDATE ${t} SET state = ${PENDING}, due = $1, attempts = 0 WHERE state = ${DEAD} AND key = ANY($2::text[])`,
    purgeSome: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE state = $1 LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`,
    expire: `DELETE FROM ${t} WHERE key IN
  (SELECT key FROM ${t} WHERE state = ${DONE} AND due <= $1 LIMIT ${EXPIRY_BATCH} FOR UPDATE SKIP LOCKED)`,
    notify: `SELECT pg_notify('${channel}', $1)::text`,
  };
}

export type Statements = ReturnType<typeof statements>;
