/** `sqliteInbox({ database })`: the inbox in a better-sqlite3 database the application opened itself. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestEvent } from '../../src/testing/index.js';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';

const folder = mkdtempSync(join(tmpdir(), 'chat-webhooks-sqlite-db-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const entry = (key: string) => {
  const event = createTestEvent('message_sent');
  return { key, trigger: 'message_sent', event, rawBody: JSON.stringify(event), receivedAt: Date.now() };
};

describe('sqliteInbox({ database })', () => {
  it('keeps its table in the given database, next to the application’s own, and leaves it open when closed', async () => {
    const db = new Database(join(folder, 'app.db'));
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY)');
    const inbox = sqliteInbox({ database: db });
    expect(await inbox.put(entry('k1'))).toBe('stored');
    expect(await inbox.put(entry('k1'))).toBe('duplicate');
    await inbox.close();
    expect(db.open).toBe(true);
    // The entry is in the application's own database file, beside its table.
    expect(db.prepare('SELECT key FROM inbox').pluck().all()).toEqual(['k1']);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'orders'").pluck().get()).toBe('orders');
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    // SQLite checkpoints on the application's connection again once the inbox's worker thread is gone.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
  });

  it('closes the database with the inbox when closeDatabase says so', async () => {
    const db = new Database(join(folder, 'owned.db'));
    const inbox = sqliteInbox({ database: db, closeDatabase: true });
    await inbox.put(entry('k2'));
    await inbox.close();
    expect(db.open).toBe(false);
  });

  it('works on an in-memory database', async () => {
    const db = new Database(':memory:');
    const inbox = sqliteInbox({ database: db });
    await inbox.put(entry('k3'));
    const claim = await inbox.claim({ leaseMs: 1000, waitMs: 0 });
    expect(claim?.key).toBe('k3');
    await inbox.close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('refuses both path and database, neither, or a closed or read-only database', () => {
    const db = new Database(join(folder, 'both.db'));
    expect(() => sqliteInbox({ path: join(folder, 'x.db'), database: db })).toThrow(/`path`.*or `database`/);
    expect(() => sqliteInbox({})).toThrow(/`path`.*or `database`/);
    const readOnly = new Database(join(folder, 'both.db'), { readonly: true });
    expect(() => sqliteInbox({ database: readOnly })).toThrow(/open for writing/);
    readOnly.close();
    db.close();
    expect(() => sqliteInbox({ database: db })).toThrow(/open for writing/);
  });
});
