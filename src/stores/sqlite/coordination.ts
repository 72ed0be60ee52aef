/**
 * The SQLite inbox's coordination operations (the port's "Coordination": catch-up's leased lock and marks),
 * one row per name in their own table of the inbox's file, so every process on that file shares them.
 */
import type BetterSqlite3 from 'better-sqlite3';

export const COORDINATION_SCHEMA = `
CREATE TABLE IF NOT EXISTS coordination (
  name TEXT PRIMARY KEY,
  holder TEXT,
  expires INTEGER,
  mark INTEGER
);`;

export interface Coordination {
  tryLock(name: string, holder: string, ttlMs: number): boolean;
  unlock(name: string, holder: string): void;
  mark(name: string): number | undefined;
  setMark(name: string, value: number): void;
}

export function coordination(db: BetterSqlite3.Database): Coordination {
  // One statement: the row is taken only when free, this holder's, or its lease ran out (no change otherwise).
  const lock = db.prepare(`INSERT INTO coordination (name, holder, expires) VALUES (@name, @holder, @expires)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
    WHERE coordination.holder IS NULL OR coordination.holder = excluded.holder OR coordination.expires <= @now`);
  const unlock = db.prepare('UPDATE coordination SET holder = NULL, expires = NULL WHERE name = ? AND holder = ?');
  const mark = db.prepare('SELECT mark FROM coordination WHERE name = ?').pluck();
  const setMark = db.prepare(`INSERT INTO coordination (name, mark) VALUES (?, ?)
    ON CONFLICT (name) DO UPDATE SET mark = max(coalesce(coordination.mark, excluded.mark), excluded.mark)`);
  return {
    tryLock: (name, holder, ttlMs) => {
      const now = Date.now();
      return lock.run({ name, holder, expires: now + ttlMs, now }).changes === 1;
    },
    unlock: (name, holder) => void unlock.run(name, holder),
    mark: (name) => (mark.get(name) as number | null | undefined) ?? undefined,
    setMark: (name, value) => void setMark.run(name, value),
  };
}
