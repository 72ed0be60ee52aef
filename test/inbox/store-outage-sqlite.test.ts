/**
 * A SQLite file another process holds the write lock of (`BEGIN IMMEDIATE`, as a long migration or a backup
 * would), then lets go: one warning, one "answers again", `health()` failing meanwhile
 * (test/inbox/store-outage.ts). The memory inbox cannot go away.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, it } from 'vitest';
import { sqliteInbox } from '../../src/stores/sqlite/index.js';
import { runOutage } from './store-outage.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-outage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a worker on a SQLite file locked by another process for a while', () => {
  it('warns once, says once that it is back, and is failing meanwhile', async () => {
    const path = join(dir, 'inbox.sqlite');
    const inbox = sqliteInbox({ path });
    const other = new Database(path, { timeout: 0 });
    try {
      await runOutage({
        inbox,
        downMs: 2500,
        // An idle worker only reads, which a write lock allows: the handled event falls due again just after
        // the lock is taken (as `inbox retry` would make it, with a due time), so claiming it is a write.
        breakStore: async () => {
          other.prepare('UPDATE inbox SET state = 0, due = ?, attempts = 0 WHERE key = ?').run(Date.now() + 300, 'before');
          other.exec('BEGIN IMMEDIATE');
        },
        restoreStore: async () => void other.exec('ROLLBACK'),
      });
    } finally {
      other.close();
      await inbox.close();
    }
  }, 30_000);
});
