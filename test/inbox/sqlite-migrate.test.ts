/**
 * A SQLite file written before entries carried a traceparent: opening it adds the column, its entries are
 * still handed out (without one), and new entries keep theirs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { entry } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The schema as the previous release created it. */
const OLD_SCHEMA = `
CREATE TABLE inbox (key TEXT PRIMARY KEY, trigger TEXT NOT NULL, state INTEGER NOT NULL, due INTEGER NOT NULL,
  received_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, token TEXT, last_error TEXT, event TEXT, raw_body TEXT);
CREATE INDEX inbox_state_due ON inbox (state, due);`;

it('adds the traceparent column to an older file, keeping its entries', async () => {
  const path = join(dir, 'old.sqlite');
  const old = entry('old-key');
  const db = new Database(path);
  db.exec(OLD_SCHEMA);
  db.prepare('INSERT INTO inbox (key, trigger, state, due, received_at, raw_body) VALUES (?, ?, 0, 0, ?, ?)').run(old.key, old.trigger, old.receivedAt, old.rawBody);
  db.close();

  // Two openings of one file (two processes starting together): the second finds the column there.
  const inbox = sqliteInbox({ path });
  const again = sqliteInbox({ path });
  const lease = { leaseMs: 30_000, waitMs: 0 };
  try {
    const claim = await inbox.claim(lease);
    expect(claim).toMatchObject({ key: 'old-key', rawBody: old.rawBody, attempt: 1 });
    expect(claim?.traceparent).toBeUndefined();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await inbox.put({ ...entry('new-key'), traceparent });
    expect(await again.claim(lease)).toMatchObject({ key: 'new-key', traceparent });
  } finally {
    await inbox.close();
    await again.close();
  }
  const reader = new Database(path);
  const columns = reader.pragma('table_info(inbox)') as { name: string }[];
  reader.close();
  expect(columns.map((column) => column.name)).toContain('traceparent');
});
